"""plot: files written, the figures the data supports, series labels, peak line, knee. Each
committed run's figures against what its rows call for: test_committed_files.py."""

from __future__ import annotations

import copy
import gzip
import json

import matplotlib
import pandas as pd
import pytest
from make_fixtures import REPO
from p2pbench_report.loader import load_many
from p2pbench_report.plots.figures import build_figures, close_figures, knee


@pytest.fixture(scope="module")
def synthetic_figures(synthetic_path):
    figures = build_figures(load_many([synthetic_path]))
    yield {f.name: f for f in figures}
    close_figures(figures)


def test_plot_default_formats_are_png_and_svg(cli, write_json, synthetic_document, tmp_path):
    document = copy.deepcopy(synthetic_document)
    document["results"] = [r for r in document["results"] if r["method"] == "ce"]
    code, _, err = cli("plot", write_json("ce.json", document), "-o", tmp_path / "figures")
    assert code == 0, err
    stems = {p.stem for p in (tmp_path / "figures").glob("*.png")}
    assert stems and stems == {p.stem for p in (tmp_path / "figures").glob("*.svg")}
    assert (tmp_path / "figures" / "size_push_uni.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert matplotlib.get_backend().lower() == "agg"


def test_synthetic_run_gets_every_kind_of_figure(synthetic_figures):
    names = set(synthetic_figures)
    for direction in ("push", "pull"):
        for mode in ("uni", "bidir"):
            assert f"size_{direction}_{mode}" in names
            assert f"sm_scaling_{direction}_{mode}" in names
            assert f"heatmap_ldst_{direction}_{mode}_h200-nv18" in names
            assert f"heatmap_tma_{direction}_{mode}_h200-nv18" in names
        assert f"uni_vs_bidir_{direction}" in names


def test_size_figure_series_axes_and_peak(synthetic_figures):
    plotted = synthetic_figures["size_push_uni"]
    assert {s.split(" · ")[1].split()[0] for s in plotted.series} == {"ce", "ldst", "tma"}
    # one entry per method: the orientations (0->1, 1->0) are one shaded band, not separate series
    assert not any("→" in s for s in plotted.series) and len(plotted.series) == 3
    ax = plotted.figure.axes[0]
    assert "over both orientations (0→1, 1→0)" in ax.get_ylabel() and len(ax.collections) == 3
    assert ax.get_xscale() == "log"
    assert "GB/s" in ax.get_ylabel() and "1e9" in ax.get_ylabel()
    tick_labels = [t.get_text() for t in ax.get_xticklabels()]
    assert {"4K", "1M", "1G"} <= set(tick_labels)
    peak_lines = [line for line in ax.get_lines() if line.get_linestyle() == "--" and "peak" in line.get_label()]
    assert peak_lines and peak_lines[0].get_ydata()[0] == pytest.approx(478.1)
    title = plotted.figure.get_suptitle()
    assert all(word in title for word in ("h200-nv18", "NVIDIA H200", "NV18 (NVLink 4.0)", "580.159.04"))
    bidir_peak = [l for l in synthetic_figures["size_push_bidir"].figure.axes[0].get_lines() if "peak" in l.get_label()]
    assert bidir_peak[0].get_ydata()[0] == pytest.approx(2 * 478.1)


def test_no_peak_line_without_topology(write_json, synthetic_document):
    document = copy.deepcopy(synthetic_document)
    document["meta"].pop("topology")
    document["results"] = [r for r in document["results"] if r["method"] == "ce"]
    figures = build_figures(load_many([write_json("nopeak.json", document)]))
    try:
        ax = next(f for f in figures if f.name == "size_push_uni").figure.axes[0]
        assert not [line for line in ax.get_lines() if "peak" in line.get_label()]
    finally:
        close_figures(figures)


def test_no_heatmap_or_scaling_with_a_single_block_count(write_json, synthetic_document):
    document = copy.deepcopy(synthetic_document)
    document["results"] = [r for r in document["results"] if r.get("blocks") in (None, 132)]
    figures = build_figures(load_many([write_json("oneblock.json", document)]))
    try:
        names = {f.name for f in figures}
        assert not any(n.startswith(("heatmap_", "sm_scaling_")) for n in names)
        assert "size_push_uni" in names
    finally:
        close_figures(figures)


def test_several_files_overlay_labelled_by_system(write_json, synthetic_document):
    one = copy.deepcopy(synthetic_document)
    one["results"] = [r for r in one["results"] if r["method"] in ("ce", "ldst")]
    other = copy.deepcopy(one)
    other["meta"]["label"] = "h200-other-node"
    figures = build_figures(load_many([write_json("a.json", one), write_json("b.json", other)]))
    try:
        size = next(f for f in figures if f.name == "size_push_bidir")
        systems = {s.split(" · ")[0] for s in size.series}
        assert systems == {"h200-nv18", "h200-other-node"}
        assert sum(1 for f in figures if f.kind == "heatmap_ldst") == 8  # per system, not overlaid
        scaling = next(f for f in figures if f.name == "sm_scaling_push_uni")
        assert {s.split(" · ")[0] for s in scaling.series} == {"h200-nv18", "h200-other-node"}
    finally:
        close_figures(figures)


def test_knee_is_the_fewest_sms_reaching_ninety_percent(synthetic_figures):
    points = pd.DataFrame({"sms": [1, 2, 4, 8, 16, 132], "median": [46, 92, 184, 340, 372, 375]})
    assert int(knee(points)["sms"]) == 8
    ax = synthetic_figures["sm_scaling_push_uni"].figure.axes[0]
    annotations = [t.get_text() for t in ax.texts]
    assert any("knee 8 SMs" in text for text in annotations)


def test_latency_figure_is_microseconds_vs_size_per_method_and_protocol(write_json, synthetic_document):
    document = copy.deepcopy(synthetic_document)
    signal = next(r for r in document["results"] if r["method"] == "latency_signal")
    other = [dict(copy.deepcopy(signal), bytes=size, protocol=protocol)
             for size in (8, 4096) for protocol in ("flag_in_data", "payload_then_flag")]
    document["results"] = [r for r in document["results"] if r["method"] == "latency_ce"] + other
    figures = build_figures(load_many([write_json("latency.json", document)]))
    try:
        assert [f.name for f in figures] == ["latency_push_uni"]
        plotted = figures[0]
        names = {s.split(" · ")[1] for s in plotted.series}
        assert names == {"latency_ce", "latency_signal flag_in_data", "latency_signal payload_then_flag"}
        ax = plotted.figure.axes[0]
        assert ax.get_xscale() == "log" and "µs" in ax.get_ylabel() and "bytes" in ax.get_xlabel()
        assert {"4", "4K"} <= {t.get_text() for t in ax.get_xticklabels()}  # powers of two, binary suffixes
        ce = next(line for line in ax.get_lines() if line.get_label().endswith("latency_ce"))
        medians = [r["latency_us"]["median"] for r in sorted(document["results"], key=lambda r: r["bytes"])
                   if r["method"] == "latency_ce"]
        assert list(ce.get_ydata()) == pytest.approx(medians)
        assert not [line for line in ax.get_lines() if "peak" in line.get_label()]  # no GB/s peak on a µs axis
    finally:
        close_figures(figures)


def test_cases_at_a_single_size_get_bars_not_a_size_figure(write_json, synthetic_document):
    document = copy.deepcopy(synthetic_document)
    document["results"] = [r for r in document["results"] if r["bytes"] == 2**30 and r["method"] == "ce"
                           and r["direction"] == "push" and r["mode"] == "uni"]
    figures = build_figures(load_many([write_json("one-size.json", document)]))
    try:
        assert [f.name for f in figures] == ["bars_push_uni"]
        ax = figures[0].figure.axes[0]
        bars = [patch for patch in ax.patches]
        assert [b.get_width() for b in bars] == pytest.approx([r["bandwidth_gbps"]["median"]
                                                               for r in document["results"]])
        assert "GB/s" in ax.get_xlabel() and "1e9" in ax.get_xlabel()
        assert all("at 1G" in s for s in figures[0].series) and len(figures[0].series) == len(document["results"])
    finally:
        close_figures(figures)



def test_put_signal_rows_get_a_chunk_figure_with_the_bulk_copy_beside_them(write_json):
    """The two-H200 put_signal run (its bulk copies did not run: one is added from a measured row)."""
    measured = REPO / "results" / "h200-nv18" / "put-signal-2026-11-27" / "put-signal-h200-nv18.json"
    document = json.loads(measured.read_text(encoding="utf-8"))
    row = next(r for r in document["results"] if r["method"] == "put_signal_tma" and r["status"] == "ok"
               and r["bytes"] == 256 << 20 and r["chunk_bytes"] == 1 << 20 and r["src_rank"] == 0)
    bulk = copy.deepcopy(row)
    bulk.update(method="tma", chunk_bytes=None, chunks_in_flight=None, threads=None, stages=4)
    document["results"].append(bulk)
    figures = build_figures(load_many([write_json("put-signal.json", document)]))
    try:
        named = {f.name: f for f in figures}
        ax = named["chunks_push_uni"].figure.axes[0]
        lines = {line.get_label(): line for line in ax.get_lines()}
        tma = lines["put_signal_tma, 256M transfers"]
        assert list(tma.get_xdata()) == [float(1 << k) for k in (9, 11, 12, 13, 14, 16, 18, 20)]
        assert tma.get_ydata()[-1] == pytest.approx(row["bandwidth_gbps"]["median"])
        assert "tma bulk copy, 256M" in lines, list(lines)
        assert "put_signal_ce, 4M transfers" in lines
    finally:
        close_figures(figures)


def test_token_rows_get_their_sm_figure_and_stay_out_of_the_chunk_figure():
    """The two-H200 tokens run: GB/s against SMs per method and router, the copy engine dashed;
    its rows (which carry chunk_bytes, the token's size) are not drawn against the chunk size."""
    measured = REPO / "results" / "h200-nv18" / "tokens-2026-11-27" / "tokens-h200-nv18.json"
    document = json.loads(measured.read_text(encoding="utf-8"))
    figures = build_figures(load_many([measured]))
    try:
        named = {f.name: f for f in figures}
        assert "chunks_push_uni" not in named
        lines = {line.get_label(): line for line in named["tokens_push_uni"].figure.axes[0].get_lines()}
        tma = lines["tokens_dispatch_tma, uniform routing"]
        assert list(tma.get_xdata()) == [4.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0]
        at_24 = max(r["bandwidth_gbps"]["median"] for r in document["results"]
                    if r["method"] == "tokens_dispatch_tma" and r["mode"] == "uni" and r["src_rank"] == 0
                    and r["blocks"] == 24 and r["routing_skew"] == 0)
        assert tma.get_ydata()[3] == pytest.approx(at_24)
        assert "tokens_combine_ldst, Zipf 1 routing" in lines
        assert any(label.startswith("ce bulk copy") for label in lines), list(lines)
    finally:
        close_figures(figures)


def test_a_run_on_one_gpu_is_drawn_and_says_so():
    """Two ranks on one H200 (every pair same_device): no P2P figure, but drawn, marked same GPU."""
    one_gpu = REPO / "results" / "h200" / "put-signal-2026-11-27" / "put-signal-h200.json"
    figures = build_figures(load_many([one_gpu]))
    try:
        named = {f.name: f for f in figures}
        assert {"size_push_uni", "chunks_push_uni", "latency_push_uni"} <= set(named)
        for name in ("size_push_uni", "chunks_push_uni"):
            labels = [line.get_label() for line in named[name].figure.axes[0].get_lines()
                      if not line.get_label().startswith("_")]
            assert labels and all("same GPU" in label for label in labels if "peak" not in label), labels
    finally:
        close_figures(figures)


def test_collective_rows_get_bus_bandwidth_and_time_figures():
    """Four ranks on one H200 (compressed results): per operation a bus-bandwidth and a time
    figure, each method's line at the best shape's median; the rows stay out of the pattern figures."""
    measured = REPO / "results" / "h200" / "collectives-2026-11-27" / "collectives-4-ranks-h200.json.gz"
    figures = build_figures(load_many([measured]))
    try:
        named = {f.name: f for f in figures}
        assert {"collectives_all_reduce_4ranks", "collectives_time_reduce_scatter_4ranks",
                "collectives_all_gather_4ranks"} <= set(named)
        assert not any(name.startswith("patterns_") for name in named)
        lines = {line.get_label(): line for line in named["collectives_all_reduce_4ranks"].figure.axes[0].get_lines()}
        one_shot = lines["all-reduce: one-shot loads (same GPU: no P2P figure)"]
        document = json.loads(gzip.decompress(measured.read_bytes()))
        at_1g = max(r["collective"]["busbw_gbps"]["median"] for r in document["results"]
                    if r["method"] == "all_reduce_one_shot" and r["bytes"] == 1 << 30)
        assert one_shot.get_xdata()[-1] == 1 << 30
        assert one_shot.get_ydata()[-1] == pytest.approx(at_1g)
    finally:
        close_figures(figures)


def test_pipeline_rows_get_time_by_tiles_and_the_overlap_efficiency():
    """Two ranks on one H200: per GEMM and SM count, each variant's time against the tiles, and the
    overlap efficiency (T_seq - T_fused) / min(T_gemm, T_rs) from the same rows."""
    from p2pbench_report.pipeline import pipeline_shapes
    measured = REPO / "results" / "h200" / "gemm-rs-2026-11-27" / "gemm-rs-2-ranks-h200.json.gz"
    document = json.loads(gzip.decompress(measured.read_bytes()))
    shapes = {(s["k"], s["tiles"], s["blocks"]): s for s in pipeline_shapes(document)}
    s = shapes[(2048, 8, 16)]
    t = s["times_us"]
    assert s["overlap_efficiency"] == pytest.approx((t["sequential"] - t["fused"]) / min(t["gemm_only"], t["rs_only"]))
    assert "overlap_efficiency" not in shapes[(2048, 1, 16)]  # its fused case failed: no efficiency
    figures = build_figures(load_many([measured]))
    try:
        named = {f.name: f for f in figures}
        lines = {line.get_label(): line for line in named["pipeline_8192x2048_2ranks_16sms_gemm-rs"].figure.axes[0].get_lines()}
        assert list(lines["sequential"].get_xdata()) == [1, 4, 8, 16, 32]
        assert not any(name.startswith("collectives_") for name in named)  # pipeline rows stay out of those
    finally:
        close_figures(figures)


def test_each_fused_variant_gets_its_overlap_efficiency():
    """Two H200: the fused pipeline with green-context SM groups has an efficiency of its own, from
    the same sequential, GEMM-only and RS-only times, drawn beside the unpartitioned one."""
    from p2pbench_report.pipeline import pipeline_shapes
    measured = REPO / "results" / "h200-nv18" / "gemm-rs-2026-11-28" / "gemm-rs-2gpu.json.gz"
    shapes = {(s["k"], s["tiles"], s["blocks"]): s for s in pipeline_shapes(json.loads(gzip.decompress(measured.read_bytes())))}
    s = shapes[(4096, 16, 16)]
    t = s["times_us"]
    shorter = min(t["gemm_only"], t["rs_only"])
    assert s["overlap_efficiency_green"] == pytest.approx((t["sequential"] - t["fused_green"]) / shorter)
    assert s["overlap_efficiency"] == pytest.approx((t["sequential"] - t["fused"]) / shorter)
    figures = build_figures(load_many([measured]))
    try:
        named = {f.name: f for f in figures}
        right = named["pipeline_8192x4096_2ranks_16sms_gemm-rs"].figure.axes[1]
        assert sorted(line.get_label() for line in right.get_lines()) == [
            "overlap efficiency, fused (right axis)", "overlap efficiency, fused_green (right axis)"]
    finally:
        close_figures(figures)
