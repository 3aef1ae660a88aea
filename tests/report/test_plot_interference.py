"""Interference rows in the report tool: the trade and slowdown figures, the low-
overlap marks, their absence from the bandwidth figures, and their identity in compare/regress."""

from __future__ import annotations

import copy
import json

import pytest
from make_fixtures import synthetic_results
from p2pbench_report.cases import identity
from p2pbench_report.loader import load_many
from p2pbench_report.plots.figures import build_figures, close_figures
from p2pbench_report.plots.interference import interference_figures


def _stats(values):
    values = sorted(values)
    mean = sum(values) / len(values)
    return {"min": values[0], "median": values[len(values) // 2], "mean": mean, "max": values[-1], "stdev": 0.0}


def interference_row(engine, k, link_alone, link_together, wl_alone, wl_together, overlap=0.99, workload="gemm"):
    row = {"method": "interference", "engine": engine, "workload": workload, "sm_partition": k, "both_gpus_busy": False,
           "direction": "push", "mode": "uni", "bytes": 1 << 30, "src_rank": 0, "dst_rank": 1,
           "blocks": None if engine == "ce" else 32, "threads": 512 if engine == "ldst" else None,
           "unroll": 4 if engine == "ldst" else None, "smem_bytes": 131072 if engine == "tma" else None,
           "stages": 8 if engine == "tma" else None, "sms_used": None, "gbps_per_sm": None, "buffer_pool_bytes": 0,
           "iterations": 70, "samples": 3, "verified": True, "status": "ok", "pct_of_peak": None,
           "transfer_group_sms": (8 if k == 4 else k) or None, "workload_group_sms": (132 - (8 if k == 4 else k)) if k else None,
           "workload_unit": "TFLOP/s" if workload == "gemm" else "GB/s", "workload_gpus": 1}
    figures = {"workload_alone": [wl_alone] * 3, "workload_together": [wl_together, wl_together * 0.99, wl_together * 1.01],
               "transfer_alone_gbps": [link_alone] * 3,
               "transfer_together_gbps": [link_together, link_together * 0.98, link_together * 1.02]}
    for key, samples in figures.items():
        row[key] = _stats(samples)
        row[f"samples_{key}"] = samples
    row["bandwidth_gbps"] = row["transfer_together_gbps"]
    row["samples_gbps"] = row["samples_transfer_together_gbps"]
    row["time_us"] = _stats([1.0, 1.0, 1.0])
    row["workload_slowdown_pct"] = 100 * (1 - wl_together / wl_alone)
    row["transfer_slowdown_pct"] = 100 * (1 - link_together / link_alone)
    row["overlap"] = overlap
    row["overlap_min"] = overlap
    row["samples_overlap"] = [overlap] * 3
    if overlap < 0.95:
        row["overlap_note"] = "overlap below 0.95"
    return row


def rows_of_a_run():
    return [interference_row("ce", 0, 390, 380, 700, 660),
            interference_row("ldst", 0, 370, 250, 700, 640),
            interference_row("ldst", 4, 300, 290, 700, 670, overlap=0.90),
            interference_row("ldst", 16, 369, 360, 700, 610),
            interference_row("tma", 8, 350, 345, 700, 675),
            interference_row("ce", 0, 390, 385, 2100, 1700, workload="hbm")]


@pytest.fixture()
def run_path(tmp_path):
    document = synthetic_results()
    document["results"] = copy.deepcopy(document["results"]) + rows_of_a_run()
    path = tmp_path / "interference.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_trade_and_a_slowdown_figure_per_workload(run_path):
    figures = interference_figures(load_many([run_path]))
    try:
        names = [f.name for f in figures]
        size = 1 << 30
        assert names == [f"interference_trade_gemm_push_uni_{size}", f"interference_slowdown_gemm_push_uni_{size}",
                         f"interference_trade_hbm_push_uni_{size}", f"interference_slowdown_hbm_push_uni_{size}"]
        trade = figures[0]
        assert trade.series == ["ce", "ldst", "tma"]
        ax = trade.figure.axes[0]
        # One point per K on the ldst line, at the together figures, in K order.
        ldst_line = [c for c in ax.containers if c.get_label() == "ldst"][0].lines[0]
        assert list(ldst_line.get_xdata()) == pytest.approx([250, 290, 360])
        assert list(ldst_line.get_ydata()) == pytest.approx([640, 670, 610])
        texts = [t.get_text() for t in ax.texts]
        assert "K=4→8 (overlap < 0.95)" in texts and "K=16" in texts and "all SMs" in texts
        # The alone figures as reference lines: the GEMM's horizontal, each engine's link vertical.
        labels = [line.get_label() for line in ax.get_lines()]
        assert "gemm alone (700.0 TFLOP/s)" in labels
        assert "ldst alone (370.0 GB/s)" in labels
        slowdown = figures[1]
        bars = slowdown.figure.axes[0].patches
        assert len(bars) == 2 * 5
        heights = [b.get_height() for b in bars[:5]]
        assert heights == pytest.approx([100 * (1 - 660 / 700), 100 * (1 - 640 / 700), 100 * (1 - 670 / 700),
                                         100 * (1 - 610 / 700), 100 * (1 - 675 / 700)])
        hatched = [b.get_hatch() for b in bars[:5]]
        assert hatched == [None, None, "//", None, None]  # only the low-overlap row
    finally:
        close_figures(figures)


def test_bandwidth_figures_leave_interference_rows_out(run_path):
    figures = build_figures(load_many([run_path]))
    try:
        kinds = {f.kind for f in figures}
        assert {"interference_trade", "interference_slowdown"} <= kinds
        for f in figures:
            if not f.kind.startswith("interference"):
                assert not any("interference" in s for s in f.series), f.name
    finally:
        close_figures(figures)


def test_no_interference_rows_no_figures(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(synthetic_results()), encoding="utf-8")
    assert interference_figures(load_many([path])) == []


def test_partition_engine_and_workload_identify_a_case():
    a, b, c = (interference_row("ldst", 8, 1, 1, 1, 1), interference_row("ldst", 16, 1, 1, 1, 1),
               interference_row("ldst", 8, 1, 1, 1, 1, workload="hbm"))
    assert len({identity(a), identity(b), identity(c)}) == 3
    assert identity(a) == identity(interference_row("ldst", 8, 2, 2, 2, 2))


def test_cli_plot_and_compare_take_interference_runs(cli, run_path, tmp_path):
    code, out, err = cli("plot", run_path, "-o", tmp_path / "figures", "--format", "png")
    assert code == 0, err
    assert (tmp_path / "figures" / f"interference_trade_gemm_push_uni_{1 << 30}.png").stat().st_size > 0
    code, out, err = cli("compare", run_path, run_path)
    assert code == 0, err
