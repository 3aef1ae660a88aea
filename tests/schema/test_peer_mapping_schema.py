"""meta.peer_mapping and the row's `allocator` (docs/allocators.md) against the results schema:
what the writer produces for each allocator validates, malformed values do not, and files
written before the allocators (no such fields) still validate."""
import copy
import json
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "report"))
sys.path.insert(0, str(REPO / "scripts"))
from p2pbench_report.schema import schema_validator  # noqa: E402  (jsonschema's, or the built-in one)

VALIDATOR = schema_validator(json.loads((REPO / "schema" / "results.schema.json").read_text()))
EXAMPLES = pathlib.Path(os.environ.get("P2PBENCH_EXAMPLE_RESULTS", "/nonexistent"))

MAPPED_VMM = {"allocator": "vmm", "mapped": True, "map_ms": 38.2, "map_ms_by_rank": [38.2, 35.9], "unmap_ms": 1.7,
              "unmap_ms_by_rank": [1.7, 1.2], "granularity_bytes": 2097152, "own_buffers": "cuMemCreate"}
FABRIC_WITHOUT_IMEX = {"allocator": "fabric", "mapped": False, "map_ms": None, "own_buffers": "cudaMalloc",
                       "reason": "the ranks cannot share memory with --allocator fabric: ranks 0, 1: fabric handles: "
                                 "cuMemCreate: CUDA_ERROR_NOT_PERMITTED: no IMEX channel (...)"}
CHECKPOINT_LEGACY = {"allocator": "legacy", "mapped": True, "map_ms": 12.0, "map_ms_by_rank": [12.0, 11.0],
                     "own_buffers": "cudaMalloc"}  # no unmap_ms yet
NO_P2P_WITH_FALLBACK = {"allocator": "vmm", "mapped": False, "map_ms": None, "own_buffers": "mixed",
                        "reason": "peer access turned off (--no-p2p)",
                        "own_buffers_reason": "rank 1: vmm handles: cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY (...)"}


def document():
    """A version 2 document as the writer makes it (the synthetic group run when the writer's
    example is not at hand, e.g. pytest run by hand)."""
    path = EXAMPLES / "example-complete.json"
    if path.exists():
        return json.loads(path.read_text())
    import make_fixtures

    return make_fixtures.synthetic_group_results()


def with_mapping(mapping, allocator=None):
    doc = copy.deepcopy(document())
    doc["meta"]["peer_mapping"] = mapping
    for row in doc["results"]:
        row["allocator"] = allocator or mapping.get("allocator", "legacy")
    return doc


def errors(doc):
    return [e.message for e in VALIDATOR.iter_errors(doc)]


@pytest.mark.parametrize("mapping", [MAPPED_VMM, FABRIC_WITHOUT_IMEX, CHECKPOINT_LEGACY, NO_P2P_WITH_FALLBACK],
                         ids=["vmm", "fabric-no-imex", "legacy-checkpoint", "no-p2p-fallback"])
def test_what_the_writer_produces_validates(mapping):
    assert errors(with_mapping(mapping)) == []


def test_files_before_the_allocators_still_validate():
    doc = copy.deepcopy(document())
    doc["meta"].pop("peer_mapping", None)
    for row in doc["results"]:
        row.pop("allocator", None)
    assert errors(doc) == []


def test_the_writers_example_has_the_fields():
    path = EXAMPLES / "example-complete.json"
    if not path.exists():
        pytest.skip("run through ctest (the write_example_results fixture makes the example)")
    doc = json.loads(path.read_text())
    assert doc["meta"]["peer_mapping"]["allocator"] in ("legacy", "vmm", "fabric")
    assert doc["results"] and all(row["allocator"] == "legacy" for row in doc["results"])


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.update(allocator="ipc"),
        lambda m: m.pop("allocator"),
        lambda m: m.pop("map_ms"),
        lambda m: m.update(map_ms=-1.0),
        lambda m: m.update(map_ms="38 ms"),
        lambda m: m.update(mapped="yes"),
        lambda m: m.update(granularity_bytes=0),
        lambda m: m.update(own_buffers="malloc"),
        lambda m: m.update(unmap_ms_by_rank=[1.0, -2.0]),
        lambda m: m.update(reason=42),
    ],
    ids=["unknown allocator", "no allocator", "no map_ms", "negative map_ms", "map_ms as text", "mapped as text",
         "zero granularity", "unknown own_buffers", "negative unmap time", "reason not text"],
)
def test_malformed_peer_mappings_are_rejected(change):
    mapping = copy.deepcopy(MAPPED_VMM)
    change(mapping)
    assert errors(with_mapping(mapping)), f"accepted peer_mapping {mapping}"


def test_a_row_with_an_unknown_allocator_is_rejected():
    assert errors(with_mapping(MAPPED_VMM, allocator="cudaMallocManaged"))
