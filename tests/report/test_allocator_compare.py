"""Comparing runs of two allocators (docs/allocators.md): `compare` matches their cases (the
allocator is a condition of the run, not of a case), shows the allocator and the mapping times
in its metadata table and flags the allocator as a difference; a file from before the allocators
reads as legacy."""

from __future__ import annotations

import copy

from p2pbench_report.conditions import allocator_of, peer_mapping_times

VMM = {"allocator": "vmm", "mapped": True, "map_ms": 38.24, "map_ms_by_rank": [38.24, 35.0], "unmap_ms": 1.71,
       "unmap_ms_by_rank": [1.71, 1.5], "granularity_bytes": 2097152, "own_buffers": "cuMemCreate"}


def cells(line: str) -> list[str] | None:
    if not line.startswith("| ") or set(line) <= set("|-: "):
        return None
    return [c.strip() for c in line.strip().strip("|").split("|")]


def with_allocator(document: dict, mapping: dict | None) -> dict:
    out = copy.deepcopy(document)
    out["meta"].pop("peer_mapping", None)
    if mapping is not None:
        out["meta"]["peer_mapping"] = mapping
    for row in out["results"]:
        row.pop("allocator", None)
        if mapping is not None:
            row["allocator"] = mapping["allocator"]
    return out


def test_legacy_and_vmm_runs_are_compared_side_by_side(cli, write_json, group_document):
    legacy = with_allocator(group_document, dict(VMM, allocator="legacy", map_ms=12.0, unmap_ms=0.4,
                                                 own_buffers="cudaMalloc"))
    vmm = with_allocator(group_document, VMM)
    code, out, err = cli("compare", write_json("legacy.json", legacy), write_json("vmm.json", vmm))
    assert code == 0, err
    rows = {c[0]: c for c in map(cells, out.splitlines()) if c}
    assert rows["allocator"][1:] == ["legacy", "vmm", "≠"]
    times = ["map 12.0 ms, unmap 0.4 ms", "map 38.2 ms, unmap 1.7 ms", "≠"]
    assert rows["peer mapping (max over ranks)"][1:] == times
    warning = next(line for line in out.splitlines() if "WARNING: the runs were made differently" in line)
    assert "allocator: legacy / vmm" in warning
    assert "No case was measured in two of the files" not in out  # the cases matched across the allocators
    assert any(c and c[-1] == "1.000" for c in map(cells, out.splitlines())), "a ratio column of matched cases"


def test_a_file_before_the_allocators_reads_as_legacy(cli, write_json, group_document):
    old = with_allocator(group_document, None)
    assert allocator_of(old["meta"]) == "legacy" and peer_mapping_times(old["meta"]) == "not recorded"
    code, out, _ = cli("compare", write_json("old.json", old),
                       write_json("new.json", with_allocator(group_document, dict(VMM, allocator="legacy"))))
    assert code == 0
    rows = {c[0]: c for c in map(cells, out.splitlines()) if c}
    assert rows["allocator"][1:] == ["legacy", "legacy", ""] and "allocator: legacy /" not in out


def test_a_run_without_mapping_says_why():
    meta = {"peer_mapping": {"allocator": "fabric", "mapped": False, "map_ms": None, "own_buffers": "cudaMalloc",
                             "reason": "fabric handles: cuMemCreate: CUDA_ERROR_NOT_PERMITTED: no IMEX channel (...)"}}
    assert allocator_of(meta) == "fabric"
    assert peer_mapping_times(meta) == ("no peer mapping: fabric handles: cuMemCreate: CUDA_ERROR_NOT_PERMITTED: "
                                        "no IMEX channel (...)")
    assert peer_mapping_times({"peer_mapping": {"allocator": "vmm", "mapped": True, "map_ms": 3.0}}) == "map 3.0 ms"
