"""The results JSON Schemas: documents written by the real writer pass; malformed ones fail.

schema/results.schema.json is the current version (2: N ranks, rows of flows, docs/groups.md);
schema/results-v1.schema.json version 1 (two ranks). A document is checked against the schema of
its own schema_version, as the report tool does. The validator is the report's (jsonschema's where
installed, else the built-in one: test_validators_agree.py shows they agree).
"""
import copy
import json
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "report"))
sys.path.insert(0, str(REPO / "scripts"))
from p2pbench_report.schema import schema_validator  # noqa: E402

SCHEMAS = {1: json.loads((REPO / "schema" / "results-v1.schema.json").read_text()),
           2: json.loads((REPO / "schema" / "results.schema.json").read_text())}
SCHEMA = SCHEMAS[2]
VALIDATORS = {version: schema_validator(schema) for version, schema in SCHEMAS.items()}
EXAMPLES = pathlib.Path(os.environ.get("P2PBENCH_EXAMPLE_RESULTS", "/nonexistent"))


def errors(doc):
    """The errors of `doc` against the schema of its schema_version (the current one for an unknown version)."""
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    return list(VALIDATORS.get(version, VALIDATORS[max(VALIDATORS)]).iter_errors(doc))


def example(name="example-complete.json"):
    path = EXAMPLES / name
    if not path.exists():
        pytest.fail(f"{path} missing: run through ctest (the write_example_results fixture makes it)")
    return json.loads(path.read_text())


@pytest.mark.parametrize("version", sorted(SCHEMAS))
def test_each_schema_declares_its_version(version):
    # Against draft 7's meta-schema: test_validators_agree.py (it needs jsonschema).
    assert SCHEMAS[version]["properties"]["schema_version"] == {"const": version}


@pytest.mark.parametrize("name", ["example-complete.json", "example-incomplete.json"])
def test_written_documents_validate(name):
    assert errors(example(name)) == []


@pytest.mark.parametrize("override", [None, 2, {"ranks_per_node": 2}])
def test_node_override_integer_null_and_the_older_object_validate(override):
    doc = group_document()
    doc["meta"]["group"]["node_override"] = override
    assert errors(doc) == []


@pytest.mark.parametrize("override", [0, "2", {"ranks_per_node": 0}, {"ranks_per_node": "2"}, {}, {"ranks_per_node": 2, "x": 1}])
def test_malformed_node_overrides_are_rejected(override):
    doc = group_document()
    doc["meta"]["group"]["node_override"] = override
    assert errors(doc), f"accepted node_override = {override!r}"


def mutate(path, value, delete=False):
    doc = copy.deepcopy(example())
    target = doc
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


MALFORMED = [
    (("schema_version",), 3, False),  # no such version
    (("results", 0, "bandwidth_gbps", "median"), "390.1", False),  # a number written as a string
    (("results", 0, "bytes"), -1, False),
    (("results", 0, "bytes"), "1073741824", False),
    (("results", 0, "status"), "great", False),
    (("results", 0, "method"), "dma", False),
    (("results", 0, "verified"), None, True),
    (("results", 0, "bandwidth_gbps"), None, False),  # ok rows need figures
    (("results", 1, "overlap"), None, True),  # bidir rows need their overlap
    (("results", 6, "error"), None, True),  # failed rows say why
    (("meta", "gpus", 0, "uuid"), None, True),
    (("meta", "timestamp_utc"), "yesterday", False),
    (("incomplete",), None, True),
]


@pytest.mark.parametrize("path,value,delete", MALFORMED)
def test_malformed_documents_are_rejected(path, value, delete):
    assert errors(mutate(path, value, delete)), f"accepted a document with {path} = {value!r} (delete={delete})"


def committed(name="default.json"):
    path = REPO / "results" / "h200-nv18" / name
    if not path.exists():
        pytest.skip(f"{path} is not committed")
    return json.loads(path.read_text())


VERDICTS = {"status": "warn", "contention": True, "throttled": False, "link_errors": True,
            "items": [{"code": "contention", "severity": "warn", "rank": 1, "gpu_uuid": "GPU-x",
                       "message": "pid 4242 used 2.0 GiB on GPU 1 during the run", "evidence": {"pid": 4242}},
                      {"code": "health_unavailable", "severity": "info", "rank": None, "gpu_uuid": None,
                       "message": "NVML not found", "evidence": {}}]}


def test_verdicts_sanitizer_mode_and_progress_validate():
    doc = committed()
    doc["meta"].update(verdicts=VERDICTS, sanitizer_mode=False)
    doc["progress"] = {"cases_done": 10, "cases_total": 144}
    assert errors(doc) == []


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["meta"].update(sanitizer_mode="no"),
        lambda d: d["meta"].update(verdicts=dict(VERDICTS, status="bad")),
        lambda d: d["meta"].update(verdicts={k: v for k, v in VERDICTS.items() if k != "contention"}),
        lambda d: d["meta"].update(verdicts=dict(VERDICTS, items=[dict(VERDICTS["items"][0], code="oops")])),
        lambda d: d["meta"].update(verdicts=dict(VERDICTS, items=[dict(VERDICTS["items"][0], severity="fatal")])),
        lambda d: d.update(progress={"cases_done": -1, "cases_total": 3}),
        lambda d: d.update(progress={"cases_done": 1}),
    ],
)
def test_malformed_verdicts_and_progress_are_rejected(change):
    doc = committed()
    change(doc)
    assert errors(doc), "accepted a malformed meta.verdicts / meta.sanitizer_mode / progress"


def interference_index(engine):
    return next(i for i, r in enumerate(example()["results"]) if r["method"] == "interference" and r["engine"] == engine)


def test_interference_rows_validate_and_say_when_overlap_is_low():
    doc = example()
    low = doc["results"][interference_index("ldst")]
    assert low["overlap_min"] < 0.95 and "overlap_note" in low
    assert errors(doc) == []


@pytest.mark.parametrize(
    "engine,key,value,delete",
    [
        ("ldst", "overlap_note", None, True),  # a low-overlap row must say so
        ("ce", "workload_together", None, True),  # ok rows carry both figures
        ("ce", "samples_transfer_alone_gbps", None, True),
        ("ce", "workload_slowdown_pct", "7%", False),
        ("ce", "sm_partition", -4, False),
        ("ce", "workload", "fft", False),
        ("tma", "engine", None, True),  # even a skipped row names its engine
        ("tma", "engine", None, False),  # and not as null, which only other methods' rows hold
        ("ce", "both_gpus_busy", None, False),
        ("ce", "workload_unit", "TFLOPS", False),
    ],
)
def test_malformed_interference_rows_are_rejected(engine, key, value, delete):
    path = ("results", interference_index(engine), key)
    assert errors(mutate(path, value, delete)), f"accepted an interference row with {key} = {value!r} (delete={delete})"


# ---- version 2 (docs/groups.md): the 4-rank synthetic run of tests/report/make_fixtures.py ----

def group_document():
    import make_fixtures

    return make_fixtures.synthetic_group_results()


def test_the_group_fixture_validates_against_version_2_only():
    doc = group_document()
    assert errors(doc) == []
    assert list(VALIDATORS[1].iter_errors(doc)), "a version 2 document passed the version 1 schema"


def test_a_version_1_document_labelled_2_is_rejected():
    doc = committed()
    doc["schema_version"] = 2
    assert errors(doc), "a version 1 document passed as version 2 (no meta.group, no flows)"


def _row(doc, **wanted):
    return next(i for i, r in enumerate(doc["results"]) if all(r.get(k) == v for k, v in wanted.items()))


GROUP_BREAKAGES = {
    "no meta.pairs": lambda d: d["meta"].pop("pairs"),
    "a group of no ranks": lambda d: d["meta"]["group"].update(ranks=0),
    "a pair without its peak": lambda d: d["meta"]["pairs"][0].pop("peak_gbps_per_direction"),
    "an unknown pattern": lambda d: d["results"][0].update(pattern="star"),
    "a row without flows": lambda d: d["results"][0].pop("flows"),
    "a row with no flow": lambda d: d["results"][0].update(flows=[]),
    "a flow without its GPU": lambda d: d["results"][0]["flows"][0].pop("src_gpu"),
    "an ok flow without figures": lambda d: d["results"][1]["flows"][0].update(bandwidth_gbps=None),
    "an ok row without its aggregate": lambda d: d["results"][1].update(aggregate=None),
    "a rounds row without its round": lambda d: d["results"][_row(d, schedule="rounds")].update(round=None),
    "a round number outside rounds": lambda d: d["results"][1].update(round=2),
    "a schedule outside the matrix": lambda d: d["results"][_row(d, pattern="ring")].update(schedule="rounds"),
    "a bidir row of one flow": lambda d: d["results"][_row(d, mode="bidir")]["flows"].pop(),
    "a single flow with an overlap": lambda d: d["results"][1].update(overlap=0.9),
    "a GPU entry without egress": lambda d: d["results"][1]["gpus"][0].pop("egress_gbps"),
}


@pytest.mark.parametrize("name", sorted(GROUP_BREAKAGES))
def test_malformed_group_documents_are_rejected(name):
    doc = group_document()
    GROUP_BREAKAGES[name](doc)
    assert errors(doc), f"accepted a version 2 document with {name}"
