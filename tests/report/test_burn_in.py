"""Tails and burn-in (docs/burn-in.md): the schema, the loader's checks, the CSV tail columns, the
`burn-in` summary and timelines, the `tails` table, and the Prometheus window series with and
without timestamps, on a synthetic burn-in of two ranks on two GPUs built here:

  * 6 windows of 10 s; each runs ce push uni 1 GiB 0->1 and 1->0 (one flow each) and a
    latency_signal 8 B 0->1 row;
  * window 3 of 0->1 is slow (injected: its slowest transfer takes SLOW_FACTOR x as long), and GPU A
    counted 4 crc_data errors on NVLink 2 in it; window 4 saw GPU B throttled (sw_thermal_slowdown);
  * the driver's verdicts name exactly these (intermittent_flow, error_burst, throttled_window).
"""

from __future__ import annotations

import copy
import json
import statistics

import pytest
from p2pbench_report.burn_in import burn_in_of
from p2pbench_report.consistency import linear_quantile
from p2pbench_report.documents import (GROUP_SCHEMA_VERSION, add_group, flow, gpu_entry, group_row, latency_row,
                                       new_document, new_meta, pair_entry)
from p2pbench_report.errors import InputError
from p2pbench_report.export import read_csv
from p2pbench_report.loader import load_results
from p2pbench_report.plots.burn_in import burn_in_figures
from p2pbench_report.plots.figures import build_figures, close_figures
from p2pbench_report.schema import validate

GIB = 2**30
GPU_A, GPU_B = "GPU-aaaaaaaa-0000-0000-0000-000000000000", "GPU-bbbbbbbb-0000-0000-0000-000000000000"
GPU_OF_RANK = {0: GPU_A, 1: GPU_B}
WINDOWS, WINDOW_S = 6, 10.0
SLOW_WINDOW, THROTTLED_WINDOW, SLOW_FACTOR = 3, 4, 2.0
STARTED, STARTED_UNIX = "2026-11-28T04:00:00Z", 1795838400.0
BASE_GBPS = {(0, 1): 390.0, (1, 0): 380.0}


def _transfer_times(src: int, dst: int, window: int) -> list[float]:
    """Per-transfer times (µs) of the window's tail sample: 40 transfers near the flow's rate."""
    nominal = GIB / (BASE_GBPS[(src, dst)] * 1e3)
    times = [nominal * (1 + 0.001 * ((i * 7 + window) % 11)) for i in range(40)]
    if (src, dst, window) == (0, 1, SLOW_WINDOW):
        times[17] = nominal * SLOW_FACTOR
    return times


def tails_of(values: list[float]) -> dict:
    return {"count": len(values), "p50": linear_quantile(values, 0.5), "p90": linear_quantile(values, 0.9),
            "p99": linear_quantile(values, 0.99), "p99_9": linear_quantile(values, 0.999), "max": max(values)}


def _bandwidth_row(src: int, dst: int, window: int) -> dict:
    gbps = BASE_GBPS[(src, dst)] * (1 + 0.002 * window)
    samples = [round(gbps * (1 + 0.001 * k), 4) for k in (-2, -1, 0, 1, 2)]
    item = flow(src, dst, GPU_OF_RANK[src], GPU_OF_RANK[dst], GIB, samples, peak_gbps=478.1)
    times = _transfer_times(src, dst, window)
    item.update(iteration_time_us=tails_of(times), gbps_min_iteration=GIB / (max(times) * 1e3))
    row = group_row("ce", "push", "uni", GIB, [item], samples_gbps=samples, ranks_of_gpu={GPU_A: [0], GPU_B: [1]},
                    iterations=40)
    row.update(iteration_time_us=tails_of(times), tails_of="transfer", window=window)
    return row


def _latency_row(window: int) -> dict:
    samples = [1.20 + 0.01 * ((k * 3 + window) % 7) for k in range(9)]
    row = latency_row("latency_signal", 8, samples, src_rank=0, dst_rank=1, iterations=20000,
                      protocol="flag_in_data")
    row["latency_us"].update({q: linear_quantile(samples, p) for q, p in
                              (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999))})
    item = flow(0, 1, GPU_A, GPU_B, 8, [])
    row.update(pattern="matrix", schedule="sequential", round=None, flows=[item], aggregate=None, gpus=[],
               overlap=None, tails_of="sample", iteration_time_us=None, window=window)
    return row


def _gpu_state(uuid: str, window: int) -> dict:
    links = [{"link": link, "crc_data": 0, "crc_flit": 0, "ecc_data": 0, "recovery": 0, "replay": 0}
             for link in range(4)]
    if uuid == GPU_A and window == SLOW_WINDOW:
        links[2]["crc_data"] = 4
    totals = {counter: sum(link[counter] for link in links) for counter in ("crc_data", "crc_flit", "ecc_data",
                                                                           "recovery", "replay")}
    throttled = uuid == GPU_B and window == THROTTLED_WINDOW
    return {"uuid": uuid, "pci_bus_id": "00000000:00:06.0", "ranks": [0 if uuid == GPU_A else 1],
            "sm_clock_mhz": 1600 if throttled else 1980, "mem_clock_mhz": 3201, "temperature_c": 45,
            "power_w": 512.3, "clock_event_reasons": ["sw_thermal_slowdown"] if throttled else [],
            "violation_ns_delta": {"power": 0, "thermal": 0}, "nvlink_errors_delta": totals,
            "nvlink_errors_by_link_delta": links, "unavailable": None}


VERDICTS = {"status": "warn", "items": [
    {"code": "intermittent_flow", "severity": "warn", "window": SLOW_WINDOW, "src_rank": 0, "dst_rank": 1,
     "gpu_uuid": None, "link": None, "counter": None,
     "message": "ce push uni 1 GiB 0->1: window 3 min per transfer 195.0 GB/s, 49% below its median 390.8 GB/s",
     "evidence": {"window_slowest_gbps": None, "window_median_gbps": 392.3, "flow_median_gbps": 391.9, "margin": 0.1}},
    {"code": "error_burst", "severity": "warn", "window": SLOW_WINDOW, "src_rank": 0, "dst_rank": 1,
     "gpu_uuid": GPU_A, "link": 2, "counter": "crc_data",
     "message": "NVLink 2 of GPU-aaaaaaaa: crc_data rose by 4 in slow window 3", "evidence": {"delta": 4}},
    {"code": "throttled_window", "severity": "warn", "window": THROTTLED_WINDOW, "src_rank": None,
     "dst_rank": None, "gpu_uuid": GPU_B, "link": None, "counter": None,
     "message": "GPU-bbbbbbbb throttled in window 4: sw_thermal_slowdown", "evidence": {}}]}


def burn_in_document(windows: int = WINDOWS, verdicts: bool = True) -> dict:
    rows, entries = [], []
    for index in range(windows):
        first = len(rows)
        rows += [_bandwidth_row(0, 1, index), _bandwidth_row(1, 0, index), _latency_row(index)]
        start = index * WINDOW_S + 0.02 * index
        entries.append({"index": index, "start_s": start, "end_s": start + WINDOW_S,
                        "start_utc": STARTED, "end_utc": STARTED, "rows": list(range(first, len(rows))),
                        "gpus": [_gpu_state(GPU_A, index), _gpu_state(GPU_B, index)]})
    gpus = [gpu_entry(rank, "NVIDIA H200", uuid=uuid, sm_count=132, compute_capability="9.0",
                      driver_version="580.159.04") for rank, uuid in GPU_OF_RANK.items()]
    meta = new_meta("burn-in-h200", gpus=gpus, hosts=["node-a"], verify=True, timestamp_utc=STARTED,
                    config={"samples": 5, "burn_in": {"duration_s": 60, "window_s": WINDOW_S}})
    add_group(meta, nodes=[[0, 1]], pairs=[pair_entry(0, 1, topo_label="NV18", nvlink_links=18,
                                                      peak_gbps_per_direction=478.1),
                                           pair_entry(1, 0, topo_label="NV18", nvlink_links=18,
                                                      peak_gbps_per_direction=478.1)])
    document = new_document(meta, rows, schema_version=GROUP_SCHEMA_VERSION)
    document["burn_in"] = {"duration_s": WINDOWS * WINDOW_S, "window_s": WINDOW_S, "margin": 0.10,
                           "started_utc": STARTED, "windows_planned": WINDOWS,
                           "inject_slow": {"window": SLOW_WINDOW, "src_rank": 0, "dst_rank": 1, "factor": SLOW_FACTOR},
                           "windows": entries}
    if verdicts:
        document["burn_in"]["verdicts"] = copy.deepcopy(VERDICTS)
        document["burn_in"]["verdicts"]["items"][0]["evidence"]["window_slowest_gbps"] = slow_window_min_gbps()
    return document


def slow_window_min_gbps() -> float:
    return GIB / (max(_transfer_times(0, 1, SLOW_WINDOW)) * 1e3)


@pytest.fixture
def burn_in_path(write_json):
    return write_json("burn-in.json", burn_in_document())


# ---- schema and loader ---------------------------------------------------------------------------

def test_schema_takes_burn_in_and_files_without_it(group_document):
    validate(burn_in_document(), "burn-in.json")
    validate(group_document, "group.json")  # written before the tails and burn-in: still valid
    older = burn_in_document()
    del older["burn_in"]
    for row in older["results"]:
        for key in ("iteration_time_us", "tails_of", "window"):
            row.pop(key)
        for item in row["flows"]:
            item.pop("iteration_time_us", None)
            item.pop("gbps_min_iteration", None)
    validate(older, "older.json")


@pytest.mark.parametrize("change", [
    lambda d: d["burn_in"]["verdicts"]["items"][0].update(code="bad_luck"),
    lambda d: d["results"][0]["iteration_time_us"].pop("p99"),
    lambda d: d["results"][0].update(tails_of="window"),
    lambda d: d["burn_in"].pop("windows"),
    lambda d: d["burn_in"]["windows"][0].update(rows=["12"]),
])
def test_schema_rejects_malformed_burn_in(change):
    document = burn_in_document()
    change(document)
    with pytest.raises(InputError):
        validate(document, "bad.json")


@pytest.mark.parametrize("change, field", [
    (lambda d: d["results"][2]["latency_us"].update(p99=9.0), "latency_us.p99"),
    (lambda d: d["results"][0]["flows"][0].update(gbps_min_iteration=300.0), "gbps_min_iteration"),
    (lambda d: d["results"][0]["iteration_time_us"].update(p90=1e9), "iteration_time_us"),
])
def test_loader_refuses_tails_that_disagree(cli, write_json, change, field):
    document = burn_in_document()
    change(document)
    code, _, err = cli("tails", write_json("edited.json", document))
    assert code == 2 and field in err, err


# ---- CSV and the tails table ---------------------------------------------------------------------

def test_csv_has_the_tail_columns(cli, burn_in_path, tmp_path):
    assert cli("export", burn_in_path, "--csv", tmp_path / "b.csv")[0] == 0
    frame = read_csv(tmp_path / "b.csv")
    document = burn_in_document()
    slow = document["results"][SLOW_WINDOW * 3]
    row = frame.iloc[SLOW_WINDOW * 3]
    assert row["iteration_time_us_p99_9"] == slow["iteration_time_us"]["p99_9"]
    assert row["iteration_time_us_max"] == pytest.approx(GIB / (slow_window_min_gbps() * 1e3), rel=1e-12)
    assert row["iteration_time_us_count"] == 40 and row["tails_of"] == "transfer" and row["window"] == SLOW_WINDOW
    assert row["flows_gbps_min_iteration"] == [pytest.approx(slow_window_min_gbps(), rel=1e-12)]
    latency = frame.iloc[2]
    assert latency["latency_us_p90"] == document["results"][2]["latency_us"]["p90"]
    assert latency["tails_of"] == "sample" and str(latency["iteration_time_us_p99"]) in ("nan", "<NA>")
    columns = list(frame.columns)
    assert columns.index("latency_us_stdev") < columns.index("latency_us_p50") < columns.index("iteration_time_us_p99_9")


def test_tails_table_lists_each_row(cli, burn_in_path):
    code, out, _ = cli("tails", burn_in_path)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()[2:]]
    headers = [c.strip() for c in out.splitlines()[0].strip("|").split("|")]
    assert code == 0 and headers[8:14] == ["p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "min per transfer GB/s"]
    assert [r[6] for r in rows] == ["transfer", "transfer", "sample"] * WINDOWS
    slow = next(r for r in rows if r[4] == "0→1" and r[0] == "ce" and r[14] == str(SLOW_WINDOW))
    times = _transfer_times(0, 1, SLOW_WINDOW)
    assert slow[7] == "40" and slow[11] == f"{linear_quantile(times, 0.999):.2f}" and slow[12] == f"{max(times):.2f}"
    assert slow[13] == f"{slow_window_min_gbps():.1f}"


# ---- the burn-in summary -------------------------------------------------------------------------

def test_summary_prints_flows_slow_window_and_verdicts(cli, burn_in_path):
    code, out, _ = cli("burn-in", burn_in_path)
    assert code == 1  # the driver's verdict is warn
    assert f"windows: {WINDOWS} of {WINDOWS} planned, 10 s each (60 s asked)" in out
    flow_line = next(line for line in out.splitlines() if "| 0→1 " in line)
    cells = [c.strip() for c in flow_line.strip("|").split("|")]
    rows = burn_in_document()["results"]
    medians = [rows[3 * w]["bandwidth_gbps"]["median"] for w in range(WINDOWS)]
    assert cells[:6] == ["ce", "push", "uni", "1G", "0→1", str(WINDOWS)]
    assert cells[6] == f"{statistics.median(medians):.1f}" and abs(float(cells[6]) - 391.95) < 0.06
    assert float(cells[7]) == pytest.approx(slow_window_min_gbps(), abs=0.05)
    assert cells[8] == str(SLOW_WINDOW) and cells[10] == str(SLOW_WINDOW) and cells[11] == str(THROTTLED_WINDOW)
    other = [c.strip() for c in next(line for line in out.splitlines() if "| 1→0 " in line).strip("|").split("|")]
    assert other[10] == "-" and other[11] == str(THROTTLED_WINDOW)  # GPU B is 1->0's source too
    assert "verdicts (the driver's verdicts): WARN, 3 items" in out
    assert "error_burst [window 3, ranks 0→1, GPU-aaaaaaaa-0000-0000-0000-000000000000, link 2, crc_data]" in out
    assert "injected slowdown" in out and "window 3, ranks 0→1" in out


def test_checkpoint_of_a_killed_run_says_incomplete(cli, write_json):
    document = burn_in_document(windows=SLOW_WINDOW + 1, verdicts=False)
    document.update(incomplete=True, incomplete_reason="killed by SIGTERM")
    code, out, _ = cli("burn-in", write_json("checkpoint.json", document))
    assert code == 0
    assert "INCOMPLETE" in out and "killed by SIGTERM" in out and f"windows: {SLOW_WINDOW + 1} of {WINDOWS} planned" in out
    assert "verdicts: none in this file" in out and "derived by the report" in out
    flow_line = next(line for line in out.splitlines() if "| 0→1 " in line)
    assert flow_line.strip("|").split("|")[10].strip() == str(SLOW_WINDOW)  # by the rule, said to be


def test_a_verdict_names_the_flow_whose_figure_it_quotes(write_json):
    """The driver's items name ranks, not the method: its evidence's window_slowest_gbps tells which
    flow between those ranks was slow."""
    document = burn_in_document()
    burn_in = burn_in_of(document)
    assert burn_in.slow_windows(burn_in.flows[0]) == [SLOW_WINDOW]
    document["burn_in"]["verdicts"]["items"][0]["evidence"]["window_slowest_gbps"] = 100.0  # another flow's
    burn_in = burn_in_of(document)
    assert burn_in.slow_windows(burn_in.flows[0]) == [] and burn_in.slow_windows(burn_in.flows[1]) == []


def test_burn_in_of_a_file_without_one_is_refused(cli, group_path):
    code, _, err = cli("burn-in", group_path)
    assert code == 2 and "no burn_in" in err


# ---- timelines ---------------------------------------------------------------------------------

def test_plots_one_png_per_flow(cli, burn_in_path, tmp_path):
    code, out, _ = cli("burn-in", burn_in_path, "--plot", tmp_path / "figures")
    names = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert names == ["burn_in_ce_push_uni_1G_0to1_burn-in-h200.png", "burn_in_ce_push_uni_1G_1to0_burn-in-h200.png"]
    assert all((tmp_path / "figures" / name).stat().st_size > 10_000 for name in names)


def test_timeline_shades_the_slow_window_and_draws_the_error_rise(burn_in_path):
    figures = burn_in_figures([load_results(burn_in_path)])
    try:
        slow_flow = next(f for f in figures if "0to1" in f.name)
        assert slow_flow.series == [f"slow windows: [{SLOW_WINDOW}]", f"throttled windows: [{THROTTLED_WINDOW}]"]
        bandwidth_axis, error_axis = slow_flow.figure.axes
        rises = [round(bar.get_height()) for bar in error_axis.patches]
        assert rises[:WINDOWS] == [4 if w == SLOW_WINDOW else 0 for w in range(WINDOWS)]  # GPU A
        assert rises[WINDOWS:] == [0] * WINDOWS                                              # GPU B
        worst_line = bandwidth_axis.get_lines()[1]
        assert min(worst_line.get_ydata()) == pytest.approx(slow_window_min_gbps(), rel=1e-9)
    finally:
        close_figures(figures)


def test_plot_draws_timelines_only_for_burn_in_files(burn_in_path, group_path):
    with_burn_in = build_figures([load_results(burn_in_path)])
    without = build_figures([load_results(group_path)])
    try:
        assert {f.name for f in with_burn_in if f.kind == "burn_in"} == {
            "burn_in_ce_push_uni_1G_0to1_burn-in-h200", "burn_in_ce_push_uni_1G_1to0_burn-in-h200"}
        assert not [f for f in without if f.kind == "burn_in" or f.name.startswith("burn_in")]
    finally:
        close_figures(with_burn_in + without)


# ---- Prometheus ----------------------------------------------------------------------------------

def test_textfile_carries_windows_without_timestamps(cli, burn_in_path):
    parser = pytest.importorskip("prometheus_client.parser")
    code, out, err = cli("export", "--format", "prometheus", burn_in_path, "-o", "-")
    assert code == 0, err
    families = {f.name: f for f in parser.text_string_to_metric_families(out)}
    samples = [s for f in families.values() for s in f.samples]
    assert samples and all(s.timestamp is None for s in samples)
    lowest = {(s.labels["src_rank"], s.labels["window"]): s.value
              for s in families["p2pbench_window_min_bandwidth_gbps"].samples}
    assert len(lowest) == 2 * WINDOWS
    assert lowest[("0", str(SLOW_WINDOW))] == pytest.approx(slow_window_min_gbps(), rel=1e-12)
    errors = {(s.labels["gpu_uuid"], s.labels["link"], s.labels["counter"], s.labels["window"]): s.value
              for s in families["p2pbench_window_nvlink_errors"].samples}
    assert errors[(GPU_A, "2", "crc_data", str(SLOW_WINDOW))] == 4.0 and sum(errors.values()) == 4.0
    throttled = {(s.labels["gpu_uuid"], s.labels["window"]): s.value for s in families["p2pbench_window_throttled"].samples}
    assert [k for k, v in throttled.items() if v == 1.0] == [(GPU_B, str(THROTTLED_WINDOW))]
    ends = {s.labels["window"]: s.value for s in families["p2pbench_window_end_timestamp_seconds"].samples}
    assert ends["0"] == pytest.approx(STARTED_UNIX + WINDOW_S)
    tails = [s for s in families["p2pbench_transfer_time_seconds"].samples if s.labels["quantile"] == "0.999"]
    first = burn_in_document()["results"][0]
    assert len(tails) == 2 * WINDOWS
    assert tails[0].value == pytest.approx(first["iteration_time_us"]["p99_9"] * 1e-6, rel=1e-12)


def test_with_timestamps_every_window_sample_is_stamped_with_its_end(cli, burn_in_path, tmp_path):
    parser = pytest.importorskip("prometheus_client.openmetrics.parser")
    output = tmp_path / "burn-in.om"
    code, _, err = cli("export", "--format", "prometheus", "--with-timestamps", burn_in_path, "-o", output)
    assert code == 0, err
    text = output.read_text(encoding="utf-8")
    assert text.rstrip().endswith("# EOF")
    families = {f.name: f for f in parser.text_string_to_metric_families(text)}
    assert set(families) == {"p2pbench_window_bandwidth_gbps", "p2pbench_window_min_bandwidth_gbps",
                             "p2pbench_window_nvlink_errors", "p2pbench_window_throttled"}
    windows = {w["index"]: w for w in burn_in_document()["burn_in"]["windows"]}
    for family in families.values():
        for sample in family.samples:
            end = STARTED_UNIX + windows[int(sample.labels["window"])]["end_s"]
            assert sample.timestamp is not None and float(sample.timestamp) == pytest.approx(end, abs=1e-3)


def test_with_timestamps_needs_a_burn_in(cli, group_path, tmp_path):
    pytest.importorskip("prometheus_client")
    code, _, err = cli("export", "--format", "prometheus", "--with-timestamps", group_path, "-o", tmp_path / "x.om")
    assert code == 2 and "burn_in" in err and not (tmp_path / "x.om").exists()


def test_burn_in_of_reads_flows_by_rank(burn_in_path):
    burn_in = burn_in_of(json.loads(burn_in_path.read_text(encoding="utf-8")))
    assert [f.key.describe() for f in burn_in.flows] == ["ce push uni 1G 0→1", "ce push uni 1G 1→0"]
    assert burn_in.flows[0].gpus == (GPU_A, GPU_B) and burn_in.flows[0].worst.window == SLOW_WINDOW
