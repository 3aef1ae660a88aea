"""The exports never present a same-GPU row as P2P: two ranks sharing a GPU move data within its
memory (thousands of GB/s), and a dashboard summing p2pbench_bandwidth_gbps must not see it.
Every exported row names each GPU its flows touch and says whether it stayed within one GPU.

Fixtures: the 4-rank synthetic run (ranks 0 and 1 share GPU A) and the committed matrix run of 4
ranks on 2 GPUs, whose rounds of two same-GPU flows measured about 2754.6 GB/s.
"""

from __future__ import annotations

import pytest
from make_fixtures import GPU_A, REPO
from p2pbench_report.export import read_csv

MATRIX = REPO / "results/h200-nv18/groups/matrix/results.json"
P2P, SAME_GPU = "p2pbench_bandwidth_gbps", "p2pbench_same_gpu_bandwidth_gbps"


def families(cli, path) -> dict:
    parser = pytest.importorskip("prometheus_client.parser")
    code, out, err = cli("export", "--format", "prometheus", path, "-o", "-")
    assert code == 0, err
    return {family.name: family for family in parser.text_string_to_metric_families(out)}


def flows_of(document: dict, kind: str) -> list[dict]:
    """The ok bandwidth rows of several or one flows whose flows are all ('all'), some ('some')
    or none ('none') within one GPU, judged from the file itself (the flows' own same_device)."""
    def kind_of(row):
        same = [bool(f["same_device"]) for f in row["flows"]]
        return "all" if all(same) else "some" if any(same) else "none"

    return [r for r in document["results"] if r["status"] == "ok" and isinstance(r.get("bandwidth_gbps"), dict)
            and kind_of(r) == kind]


def ranks_label(row: dict, name: str) -> str:
    return ",".join(str(f[name]) for f in row["flows"])


def key(sample_or_row) -> tuple:
    """A row's (method, src ranks, dst ranks, median) as its exported sample shows it."""
    if isinstance(sample_or_row, dict):
        row = sample_or_row
        return (row["method"], ranks_label(row, "src_rank"), ranks_label(row, "dst_rank"),
                round(row["bandwidth_gbps"]["median"], 6))
    labels = sample_or_row.labels
    return labels["method"], labels["src_rank"], labels["dst_rank"], round(sample_or_row.value, 6)


def test_same_gpu_rows_have_their_own_metric(cli, group_path, group_document):
    exported = families(cli, group_path)
    p2p = {key(s): s.labels for s in exported[P2P].samples}
    same_gpu = {key(s): s.labels for s in exported[SAME_GPU].samples}
    within, mixed, between = (flows_of(group_document, kind) for kind in ("all", "some", "none"))
    assert within and mixed, "the fixture lost its same-GPU rows"
    for row in within + mixed:
        assert key(row) not in p2p, f"a same-GPU row published as P2P: {key(row)}"
        assert same_gpu[key(row)]["same_gpu"] == ("true" if row in within else "mixed")
    for row in between:
        assert p2p[key(row)]["same_gpu"] == "false" and key(row) not in same_gpu
    assert len(p2p) == len(between) and len(same_gpu) == len(within) + len(mixed)
    assert all(s.labels["same_gpu"] in ("true", "false", "mixed") for s in exported["p2pbench_case_ok"].samples)


def test_every_gpu_of_a_row_is_named(cli, group_path, group_document):
    exported = families(cli, group_path)
    samples = {key(s): s.labels for name in (P2P, SAME_GPU) for s in exported[name].samples}
    several = [r for r in flows_of(group_document, "some") + flows_of(group_document, "none") if len(r["flows"]) > 1]
    assert any(len({f["src_gpu"] for f in r["flows"]} | {f["dst_gpu"] for f in r["flows"]}) == 3 for r in several)
    for row in several:
        labels = samples[key(row)]
        every = [u for f in row["flows"] for u in (f["src_gpu"], f["dst_gpu"])]
        assert labels["gpu_uuids"].split(",") == list(dict.fromkeys(every))  # flow order, once each
        assert labels["src_gpu_uuid"].split(",") == [f["src_gpu"] for f in row["flows"]]
        assert labels["dst_gpu_uuid"].split(",") == [f["dst_gpu"] for f in row["flows"]]


def test_the_committed_matrix_run_keeps_memory_bandwidth_out_of_p2p(cli):
    exported = families(cli, MATRIX)
    fastest_p2p = max(s.value for s in exported[P2P].samples)
    assert fastest_p2p < 2 * 478.2, "a figure above both directions of the NV18 link's peak is in the P2P metric"
    assert all(s.labels["same_gpu"] == "false" for s in exported[P2P].samples)
    same_gpu = [s for s in exported[SAME_GPU].samples if s.value == pytest.approx(2754.6, abs=0.1)]
    assert same_gpu, "the 2754.6 GB/s same-GPU row of the committed run is missing"
    for sample in same_gpu:  # rounds of 0 -> 1 and 2 -> 3 (ranks 0, 1 on one GPU; 2, 3 on the other)
        assert sample.labels["same_gpu"] == "true" and len(sample.labels["gpu_uuids"].split(",")) == 2


def test_csv_names_every_gpu_and_marks_same_gpu_rows(cli, tmp_path, group_path, group_document):
    assert cli("export", group_path, "--csv", tmp_path / "group.csv")[0] == 0
    frame = read_csv(tmp_path / "group.csv")
    for exported, row in zip(frame.to_dict("records"), group_document["results"]):
        same = [bool(f["same_device"]) for f in row["flows"]]
        assert exported["same_gpu"] == ("true" if all(same) else "mixed" if any(same) else "false")
        every = [u for f in row["flows"] for u in (f["src_gpu"], f["dst_gpu"])]
        assert exported["gpu_uuids"].split(";") == list(dict.fromkeys(every))
    assert set(frame[frame["same_gpu"] == "true"]["gpu_uuids"]) == {GPU_A}


def test_a_version_1_run_on_one_gpu_is_marked_too(cli, tmp_path):
    """default-same-device.json: two ranks on one GPU, schema version 1 (no flows)."""
    path = REPO / "results/h200-nv18/default-same-device.json"
    exported = families(cli, path)
    assert P2P not in exported or not exported[P2P].samples
    assert exported[SAME_GPU].samples and {s.labels["same_gpu"] for s in exported[SAME_GPU].samples} == {"true"}
    assert cli("export", path, "--csv", tmp_path / "one.csv")[0] == 0
    assert set(read_csv(tmp_path / "one.csv")["same_gpu"]) == {"true"}
    host_link = families(cli, REPO / "results/h200-nv18/host-link.json")  # host <-> GPU: one rank, not same-GPU
    assert {s.labels["same_gpu"] for s in host_link[P2P].samples} == {"false"}
