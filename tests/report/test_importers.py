"""Importers: the real nvbandwidth and nccl-tests samples in data/, mapped onto p2pbench rows."""

from __future__ import annotations

import json

import pytest
from make_fixtures import DATA
from p2pbench_report.errors import InputError
from p2pbench_report.importers import import_nccl_tests, import_nvbandwidth
from p2pbench_report.loader import load_many
from p2pbench_report.plots.figures import build_figures, close_figures
from p2pbench_report.schema import first_error

NVBANDWIDTH = DATA / "nvbandwidth-h200-nv18.json"
NCCL_TEXT = DATA / "nccl-tests-sendrecv-h200-nv18.txt"
NCCL_JSON = DATA / "nccl-tests-sendrecv-h200-nv18.synthetic-J.json"  # -J layout, numbers from NCCL_TEXT


def row(document: dict, **wanted) -> dict:
    matches = [r for r in document["results"] if all(r.get(k) == v for k, v in wanted.items())]
    assert len(matches) == 1, wanted
    return matches[0]


def test_nvbandwidth_mapping():
    document = import_nvbandwidth(NVBANDWIDTH)
    assert first_error(document) is None
    meta = document["meta"]
    assert meta["tool"]["name"] == "p2pbench" and meta["label"] == "nvbandwidth"
    assert meta["config"]["imported_from"] == "nvbandwidth" and meta["config"]["source_version"] == "v0.8"
    assert meta["config"]["skipped_testcases"] == ["device_local_copy"]
    assert "device_to_device_latency_sm" not in meta["config"]["skipped_testcases"]
    assert [g["name"] for g in meta["gpus"]] == ["NVIDIA H200", "NVIDIA H200"]
    assert meta["gpus"][0]["driver_version"] == "580.159.04" and meta["cuda_runtime_version"] == 13000
    size = 512 * 2**20
    push = row(document, method="ce", direction="push", mode="uni", src_rank=0, dst_rank=1)
    assert push["bytes"] == size and push["bandwidth_gbps"]["median"] == pytest.approx(396.142)
    assert push["samples"] == 1 and push["bandwidth_gbps"]["stdev"] == 0
    assert push["bandwidth_gbps"]["min"] == push["bandwidth_gbps"]["max"] == push["bandwidth_gbps"]["mean"]
    # read_ce: row GPU reads from column GPU: matrix[0][1] is the copy 1 -> 0.
    assert row(document, method="ce", direction="pull", mode="uni", src_rank=1, dst_rank=0)[
        "bandwidth_gbps"]["median"] == pytest.approx(393.745)
    bidir = row(document, method="ce", direction="push", mode="bidir")
    assert bidir["bandwidth_gbps"]["median"] == pytest.approx(783.574)
    assert {(d["src_rank"], d["dst_rank"]): d["bandwidth_gbps"]["median"] for d in bidir["directions"]} == {
        (0, 1): pytest.approx(391.769), (1, 0): pytest.approx(391.805)}
    assert row(document, method="ldst", direction="push", mode="uni", src_rank=0, dst_rank=1)[
        "bandwidth_gbps"]["median"] == pytest.approx(369.83)
    assert row(document, method="ldst", direction="pull", mode="bidir")["bandwidth_gbps"]["median"] == \
        pytest.approx(676.405)
    # the pointer chase: the row GPU reads the column GPU's chain; 827.953 ns is matrix[0][1]
    chase = row(document, method="latency_read", src_rank=1, dst_rank=0)
    assert chase["latency_us"]["median"] == pytest.approx(0.827953) and chase["bytes"] == 2 * 2**20
    assert chase["direction"] == "pull" and chase["protocol"] is None and chase["blocks"] is None
    assert row(document, method="latency_read", src_rank=0, dst_rank=1)["latency_us"]["median"] == \
        pytest.approx(0.829575)
    assert meta["config"]["mapping"]["device_to_device_latency_sm"] == "latency_read pull uni"
    # the host link: one matrix row (the host), a column per GPU -> rows r -> r
    h2d = row(document, method="h2d", src_rank=1, dst_rank=1)
    assert h2d["bandwidth_gbps"]["median"] == pytest.approx(55.1673) and h2d["direction"] == "push"
    assert h2d["mode"] == "uni" and h2d["bytes"] == size
    assert row(document, method="d2h", src_rank=0, dst_rank=0)["bandwidth_gbps"]["median"] == pytest.approx(54.9879)
    assert meta["config"]["mapping"]["host_to_device_memcpy_ce"] == "h2d push uni"
    assert len(document["results"]) == 18


def _with_host_testcases(tmp_path, testcases: list[dict]):
    """The real nvbandwidth file with `testcases` added: the host tests it did not run (their
    figures are made up; the layout is nvbandwidth's: one row, a column per GPU)."""
    data = json.loads(NVBANDWIDTH.read_text())
    data["nvbandwidth"]["testcases"] += testcases
    path = tmp_path / "nvbandwidth-host.json"
    path.write_text(json.dumps(data))
    return path


def _host_testcase(name: str, values: list[str], status: str = "Passed") -> dict:
    return {"name": name, "status": status, "bandwidth_matrix": [values]}


def test_nvbandwidth_host_testcases_map_to_rows_of_each_gpu(tmp_path):
    path = _with_host_testcases(tmp_path, [
        _host_testcase("host_to_device_memcpy_sm", ["51.15", "51.3"]),
        _host_testcase("device_to_host_memcpy_sm", ["52.55", "52.6"]),
        _host_testcase("host_to_device_bidirectional_memcpy_ce", ["46.85", "46.9"]),
        _host_testcase("device_to_host_bidirectional_memcpy_ce", ["51.2", "N/A"]),
        _host_testcase("host_device_latency_sm", ["1227.9", "1230.1"]),
    ])
    document = import_nvbandwidth(path)
    assert first_error(document) is None
    mapping = document["meta"]["config"]["mapping"]
    assert mapping["host_to_device_memcpy_sm"] == "h2d_sm push uni"
    assert mapping["device_to_host_bidirectional_memcpy_ce"] == "d2h_bidir push uni"
    assert mapping["host_device_latency_sm"] == "latency_host pull uni"
    sm = row(document, method="h2d_sm", src_rank=0, dst_rank=0)
    assert sm["bandwidth_gbps"]["median"] == pytest.approx(51.15) and sm["blocks"] is None and sm["threads"] is None
    assert row(document, method="d2h_sm", src_rank=1, dst_rank=1)["bandwidth_gbps"]["median"] == pytest.approx(52.6)
    assert row(document, method="h2d_bidir", src_rank=1, dst_rank=1)["bandwidth_gbps"]["median"] == pytest.approx(46.9)
    assert [r["src_rank"] for r in document["results"] if r["method"] == "d2h_bidir"] == [0]  # N/A: no row
    chase = row(document, method="latency_host", src_rank=0, dst_rank=0)
    assert chase["latency_us"]["median"] == pytest.approx(1.2279) and chase["bytes"] == 2 * 2**20
    assert chase["direction"] == "pull" and chase["protocol"] is None
    assert len(document["results"]) == 18 + 9


def test_nvbandwidth_host_testcase_that_failed_is_a_failed_row(tmp_path):
    path = _with_host_testcases(tmp_path, [
        {"name": "host_device_latency_sm", "status": "Error", "error": "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {"name": "host_to_device_memcpy_sm", "status": "Waived"}])
    document = import_nvbandwidth(path)
    assert first_error(document) is None
    failed = row(document, method="latency_host")
    assert failed["status"] == "failed" and "CUDA_ERROR_ILLEGAL_ADDRESS" in failed["error"]
    assert row(document, method="h2d_sm")["status"] == "skipped"


def test_nvbandwidth_options(tmp_path):
    document = import_nvbandwidth(NVBANDWIDTH, label="nvb h200", buffer_bytes=2**28, link="NV18", peak_gbps=478.1)
    assert document["meta"]["label"] == "nvb h200"
    assert {r["bytes"] for r in document["results"] if r["method"] != "latency_read"} == {2**28}
    assert {r["bytes"] for r in document["results"] if r["method"] == "latency_read"} == {2 * 2**20}  # fixed chain
    topology = document["meta"]["topology"]
    assert topology["topo_label"] == "NV18" and topology["peak_gbps_per_direction"] == 478.1


def test_nccl_text_mapping():
    document = import_nccl_tests(NCCL_TEXT)
    assert first_error(document) is None
    assert document["meta"]["config"]["imported_from"] == "nccl-tests" and document["meta"]["label"] == "nccl-tests"
    assert document["meta"]["hosts"] == ["vm"] and len(document["meta"]["gpus"]) == 2
    rows = document["results"]
    assert len(rows) == 14 and {(r["method"], r["direction"], r["mode"]) for r in rows} == {("nccl", "push", "bidir")}
    large = row(document, bytes=536870912)
    per_direction = 536870912 / 1513.56e3  # algbw 354.71, unrounded
    assert large["directions"][0]["bandwidth_gbps"]["median"] == pytest.approx(per_direction)
    assert large["bandwidth_gbps"]["median"] == pytest.approx(2 * per_direction)
    assert large["time_us"]["median"] == pytest.approx(1513.56)
    assert large["iterations"] == 20 and large["verified"] and large["samples"] == 1
    assert row(document, bytes=8)["bandwidth_gbps"]["median"] > 0  # from time, although algbw prints 0.00


def test_nccl_json_matches_the_text_table():
    from_json = import_nccl_tests(NCCL_JSON)
    from_text = import_nccl_tests(NCCL_TEXT)
    assert first_error(from_json) is None
    for imported in from_json["results"]:
        expected = row(from_text, bytes=imported["bytes"])
        assert imported["bandwidth_gbps"] == expected["bandwidth_gbps"]
    assert from_json["meta"]["command_line"][0].endswith("sendrecv_perf")


def test_nccl_in_place_columns():
    in_place = row(import_nccl_tests(NCCL_TEXT, in_place=True), bytes=536870912)
    assert in_place["time_us"]["median"] == pytest.approx(1516.81)
    assert not in_place["verified"]  # in-place #wrong reads N/A


def test_nccl_other_collectives_and_wrong_counts(tmp_path):
    text = NCCL_TEXT.read_text(encoding="utf-8")
    all_reduce = tmp_path / "all_reduce.txt"
    all_reduce.write_text(text.replace("sendrecv_perf", "all_reduce_perf"), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_nccl_tests(all_reduce)
    assert "all_reduce_perf" in str(caught.value)
    wrong = tmp_path / "wrong.txt"
    wrong.write_text(text.replace("354.71       0", "354.71       3"), encoding="utf-8")
    broken = row(import_nccl_tests(wrong), bytes=536870912)
    assert broken["status"] == "failed" and "3 wrong" in broken["error"]


def test_import_commands_write_files_that_plot_beside_p2pbench(cli, tmp_path, synthetic_path):
    nvb, nccl = tmp_path / "nvb.json", tmp_path / "nccl.json"
    code, _, err = cli("import-nvbandwidth", NVBANDWIDTH, "-o", nvb, "--link", "NV18", "--peak-gbps", "478.1")
    assert code == 0 and "18 rows" in err and "device_local_copy" in err
    code, _, err = cli("import-nccl-tests", NCCL_TEXT, "-o", nccl)
    assert code == 0 and "14 rows" in err
    code, out, _ = cli("import-nccl-tests", NCCL_TEXT)  # no -o: the document on stdout
    assert code == 0 and json.loads(out)["meta"]["label"] == "nccl-tests"
    figures = build_figures(load_many([synthetic_path, nvb, nccl]))
    try:
        size = next(f for f in figures if f.name == "size_push_bidir")
        systems = {s.split(" · ")[0] for s in size.series}
        assert systems == {"h200-nv18", "nvbandwidth", "nccl-tests"}
        assert any(s.startswith("nccl-tests · nccl") for s in size.series)
    finally:
        close_figures(figures)


def test_import_of_unusable_input_exits_2(cli, tmp_path):
    code, _, err = cli("import-nvbandwidth", NCCL_TEXT)
    assert code == 2 and NCCL_TEXT.name in err
    not_nvbandwidth = tmp_path / "x.json"
    not_nvbandwidth.write_text('{"something": []}', encoding="utf-8")
    code, _, err = cli("import-nvbandwidth", not_nvbandwidth)
    assert code == 2 and "$.nvbandwidth.testcases" in err
    code, _, err = cli("import-nccl-tests", NVBANDWIDTH)
    assert code == 2
