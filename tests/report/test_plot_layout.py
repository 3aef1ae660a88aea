"""Figure layout and honesty: nothing cut at the figure's edge, legends outside the data, colour
scales from 0, atomics by type x pattern, time per transfer on log-log axes, honest knee labels."""

from __future__ import annotations

import copy

import pytest
from make_fixtures import REAL_RESULTS
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from p2pbench_report.loader import load_many
from p2pbench_report.plots.figures import build_figures, close_figures

TOLERANCE_PX = 1.0


@pytest.fixture(scope="module")
def synthetic_figures(synthetic_path):
    figures = build_figures(load_many([synthetic_path]))
    yield {f.name: f for f in figures}
    close_figures(figures)


def _rendered(figure):
    """Draws the figure as `plot` saves it (Agg) and returns the renderer that placed its texts."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def _texts_outside(figure) -> list[str]:
    """Drawn texts whose box leaves the figure (figure.get_tightbbox covers what was drawn: tick
    labels of ticks outside the view limits are not)."""
    renderer = _rendered(figure)
    drawn = figure.get_tightbbox(renderer)  # inches
    width, height = figure.get_size_inches()
    tolerance = TOLERANCE_PX / figure.dpi
    if drawn.x0 >= -tolerance and drawn.y0 >= -tolerance and drawn.x1 <= width + tolerance \
            and drawn.y1 <= height + tolerance:
        return []
    bounds = figure.bbox
    outside = []
    for text in figure.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if (box.x0 < bounds.x0 - TOLERANCE_PX or box.y0 < bounds.y0 - TOLERANCE_PX
                or box.x1 > bounds.x1 + TOLERANCE_PX or box.y1 > bounds.y1 + TOLERANCE_PX):
            outside.append(text.get_text()[:60])
    return outside or [f"something drawn reaches {drawn} (figure {width} x {height} in)"]


def test_no_title_or_label_is_cut(synthetic_figures):
    for name, plotted in synthetic_figures.items():
        assert plotted.figure.get_suptitle(), name
        assert _texts_outside(plotted.figure) == [], name


def test_long_titles_wrap_inside_a_narrow_figure(write_json, synthetic_document):
    """A heatmap is narrow and its title long (several systems' lines): wrapped, never cut."""
    document = copy.deepcopy(synthetic_document)
    document["meta"]["label"] = "a-very-long-system-label-that-names-the-cluster-rack-and-node-of-this-run"
    figures = build_figures(load_many([write_json("long.json", document)]))
    try:
        heatmap = next(f for f in figures if f.kind == "heatmap_ldst")
        assert heatmap.figure.get_figwidth() < 8
        title = heatmap.figure._suptitle
        box = title.get_window_extent(_rendered(heatmap.figure))
        assert box.x1 <= heatmap.figure.bbox.x1 + TOLERANCE_PX and box.y1 <= heatmap.figure.bbox.y1 + TOLERANCE_PX
        assert title.get_text().count("\n") >= 2  # wrapped
    finally:
        close_figures(figures)


def test_legends_sit_outside_the_data(synthetic_figures):
    for name in ("size_push_uni", "size_pull_bidir", "sm_scaling_push_uni", "uni_vs_bidir_push", "time_push_uni"):
        figure = synthetic_figures[name].figure
        renderer = _rendered(figure)
        ax = figure.axes[0]
        legend = ax.get_legend()
        assert legend is not None, name
        assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)), name
    labels = [t.get_text() for t in synthetic_figures["size_push_uni"].figure.axes[0].get_legend().get_texts()]
    assert len([label for label in labels if "peak" not in label]) == 3  # ce, ldst, tma: one entry each


def test_heatmap_colours_run_from_zero_to_the_link_peak(synthetic_figures, write_json, synthetic_document):
    uni = synthetic_figures["heatmap_ldst_push_uni_h200-nv18"].figure.axes[0].images[0]
    assert uni.norm.vmin == 0 and uni.norm.vmax == pytest.approx(478.1)
    bidir = synthetic_figures["heatmap_tma_push_bidir_h200-nv18"].figure.axes[0].images[0]
    assert bidir.norm.vmin == 0 and bidir.norm.vmax == pytest.approx(2 * 478.1)
    document = copy.deepcopy(synthetic_document)
    document["meta"].pop("topology")
    figures = build_figures(load_many([write_json("nopeak.json", document)]))
    try:
        image = next(f for f in figures if f.name == "heatmap_ldst_push_uni_h200-nv18").figure.axes[0].images[0]
        best = float(image.get_array().max())
        assert image.norm.vmin == 0 and image.norm.vmax == pytest.approx(best)
    finally:
        close_figures(figures)


def test_time_per_transfer_is_log_log_and_shows_small_messages(synthetic_figures, synthetic_document):
    plotted = synthetic_figures["time_push_uni"]
    ax = plotted.figure.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "µs" in ax.get_ylabel()
    ce = next(line for line in ax.get_lines() if line.get_label().endswith("· ce"))
    smallest = min(r["bytes"] for r in synthetic_document["results"] if r["method"] == "ce" and r["mode"] == "uni")
    assert ce.get_xdata()[0] == smallest
    times = sorted(r["time_us"]["median"] for r in synthetic_document["results"]
                   if r["method"] == "ce" and r["mode"] == "uni" and r["direction"] == "push" and r["bytes"] == smallest)
    assert ce.get_ydata()[0] == pytest.approx(sum(times) / len(times))  # median of the two orientations


def test_knee_label_inside_the_axes_and_honest_at_the_first_point(write_json, synthetic_document):
    document = copy.deepcopy(synthetic_document)
    # keep only SM counts from 8 up: the knee (90% of the best) is then the first point measured
    document["results"] = [r for r in document["results"] if r["method"] == "ldst" and (r.get("blocks") or 0) >= 8]
    figures = build_figures(load_many([write_json("from8.json", document)]))
    try:
        figure = next(f for f in figures if f.name == "sm_scaling_push_uni").figure
        ax = figure.axes[0]
        renderer = _rendered(figure)
        labels = [t for t in ax.texts if "knee" in t.get_text()]
        assert labels and "knee ≤ 8 SMs: first point measured" in labels[0].get_text()
        inside = ax.get_window_extent(renderer)
        for label in labels:
            box = label.get_window_extent(renderer)
            assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
    finally:
        close_figures(figures)


@pytest.mark.skipif(not (REAL_RESULTS / "atomics.json").is_file(), reason="no committed atomics run")
def test_atomics_are_bars_by_type_and_pattern():
    result_sets = load_many([REAL_RESULTS / "atomics.json"])
    figures = build_figures(result_sets)
    try:
        names = {f.name for f in figures}
        assert "atomics_push" in names and not any(n.startswith(("size_", "bars_", "time_")) for n in names)
        plotted = next(f for f in figures if f.name == "atomics_push")
        ax = plotted.figure.axes[0]
        rows = result_sets[0].rows
        types = list(dict.fromkeys(rows["atomic_type"]))
        assert {t.get_text() for t in ax.get_xticklabels()} == set(types)
        assert {s.split(" · ")[1].split()[0] for s in plotted.series} == set(rows["atomic_pattern"])
        first = rows[(rows["src_rank"] == 0) & (rows["atomic_type"] == "u32") & (rows["atomic_pattern"] == "distinct")
                     & (rows["blocks"] == rows["blocks"].max())]
        heights = [bar.get_height() for bar in ax.patches]
        assert first["atomic_ops_per_s_median"].iloc[0] / 1e9 == pytest.approx(max(
            h for h in heights if abs(h - first["atomic_ops_per_s_median"].iloc[0] / 1e9) < 1e-6))
        assert _texts_outside(plotted.figure) == []
    finally:
        close_figures(figures)
