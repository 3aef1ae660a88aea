"""Figures readable at a glance, on the committed runs a newcomer plots first: every log axis is
labelled across its data, point labels never overprint, trade axes fit their data, a bar chart
says which pairs it shows, and no two bars or pattern cases carry the same label."""

from __future__ import annotations

import copy
import itertools
import math

import pytest
from make_fixtures import REPO, perturbed
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Annotation, Text
from p2pbench_report.compare import compare
from p2pbench_report.loader import load_many, load_results
from p2pbench_report.plots.figures import build_figures, close_figures
from p2pbench_report.plots.interference import interference_figures
from p2pbench_report.plots.labels import PointLabel, place_point_labels
from p2pbench_report.plots.ratio import ratio_figures
from p2pbench_report.plots.style import new_figure
from test_plot_layout import _texts_outside as texts_outside

RUNS = REPO / "results" / "h200-nv18"
INTERFERENCE = [RUNS / "interference/hbm-stream-v3/interference.json", RUNS / "interference/interference.json"]


@pytest.fixture(scope="module")
def default_figures():
    figures = build_figures([load_results(RUNS / "default.json")])
    yield figures
    close_figures(figures)


def renderer_of(figure):
    FigureCanvasAgg(figure)
    figure.draw_without_rendering()
    return figure.canvas.get_renderer()


def data_values(ax, which: str) -> list[float]:
    """The plotted data's values along one axis (lines drawn in data coordinates only)."""
    values = []
    for line in ax.get_lines():
        if line.get_transform() != ax.transData:
            continue  # axhline / axvline: half in axes coordinates
        values += [float(v) for v in (line.get_ydata() if which == "y" else line.get_xdata()) if v and v > 0]
    return values


def labelled_ticks(ax, which: str) -> list[float]:
    axis = ax.yaxis if which == "y" else ax.xaxis
    low, high = sorted(ax.get_ylim() if which == "y" else ax.get_xlim())
    return sorted(tick.get_loc() for tick in axis.get_major_ticks()
                  if tick.label1.get_visible() and tick.label1.get_text() and low <= tick.get_loc() <= high)


def assert_log_axis_readable(ax, which: str, name: str) -> None:
    """Labelled ticks across the data: none more than 4x apart (2.5x on a base-10 axis, where 1-2-5
    steps are the rule), the lowest at most that far below the smallest value, the highest at
    most that far above the largest."""
    values = data_values(ax, which)
    ticks = labelled_ticks(ax, which)
    base = (ax.yaxis if which == "y" else ax.xaxis).get_transform().base
    step = 2.5 if base == 10 else 4.0
    assert len(ticks) >= 2, f"{name}: {which} axis has {len(ticks)} labelled ticks"
    assert max(b / a for a, b in zip(ticks, ticks[1:])) <= step * 1.001, f"{name}: {which} ticks {ticks}"
    assert ticks[0] <= min(values) * step and ticks[-1] >= max(values) / step, f"{name}: {ticks} vs data"


def test_every_log_axis_is_labelled_across_its_data(default_figures):
    logged = 0
    for plotted in default_figures:
        renderer_of(plotted.figure)
        for ax in plotted.figure.axes:
            for which in ("x", "y"):
                if (ax.get_yscale() if which == "y" else ax.get_xscale()) == "log" and data_values(ax, which):
                    assert_log_axis_readable(ax, which, plotted.name)
                    logged += 1
    assert logged >= 8  # size axes and the time per transfer axes


def test_time_per_transfer_reads_microseconds_below_ten(default_figures):
    """The small messages' 1.6–3 µs: a labelled tick at 2 µs, written plainly with its unit."""
    time = next(p for p in default_figures if p.name == "time_push_uni")
    ax = time.figure.axes[0]
    renderer_of(time.figure)
    texts = {tick.get_loc(): tick.label1.get_text() for tick in ax.yaxis.get_major_ticks()}
    assert min(data_values(ax, "y")) < 3 and texts[2.0] == "2 µs" and texts[1000.0] == "1,000 µs"


@pytest.mark.parametrize("path", INTERFERENCE, ids=lambda p: p.parent.name)
def test_trade_labels_never_overprint_and_axes_fit_the_data(path):
    figures = [f for f in interference_figures([load_results(path)]) if f.kind == "interference_trade"]
    try:
        for plotted in figures:
            renderer = renderer_of(plotted.figure)
            ax = plotted.figure.axes[0]
            notes = [t for t in ax.texts if isinstance(t, Annotation)]
            boxes = [Text.get_window_extent(t, renderer) for t in notes]  # the text, not its leader line
            for (a, box_a), (b, box_b) in itertools.combinations(zip(notes, boxes), 2):
                assert not box_a.overlaps(box_b), f"{plotted.name}: {a.get_text()!r} over {b.get_text()!r}"
            frame = ax.get_window_extent(renderer)
            assert all(frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
                       for box in boxes), f"{plotted.name}: a label outside the axes"
            assert not any(t.get_text().startswith("KK") for t in notes)
            points = [line for c in ax.containers for line in c.lines[:1]]
            lowest_x = min(min(line.get_xdata()) for line in points)
            lowest_y = min(min(line.get_ydata()) for line in points)
            assert ax.get_xlim()[0] > lowest_x / 2 and ax.get_ylim()[0] > lowest_y / 2, "axes start at 0"
    finally:
        close_figures(figures)


def test_labels_of_coinciding_points_are_set_apart():
    figure = new_figure()
    ax = figure.add_subplot()
    ax.plot([1, 1, 1, 2], [5, 5, 5.001, 6], "o")
    ax.set_xlim(0, 3)
    ax.set_ylim(0, 10)
    labels = [PointLabel(1, 5, "K=4→8"), PointLabel(1, 5, "K=8"), PointLabel(1, 5.001, "all SMs"), PointLabel(2, 6, "K=16")]
    notes = place_point_labels(ax, labels)
    renderer = renderer_of(figure)
    boxes = [Text.get_window_extent(n, renderer) for n in notes]
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def test_matrix_bars_show_every_pair_of_two_gpus():
    """4 ranks on 2 GPUs: 8 ordered pairs of two GPUs, each measured alone (a round of one pair),
    and the title says so; the same-GPU pairs stay out."""
    plotted = build_figures([load_results(RUNS / "groups/matrix/results.json")])
    try:
        for name in ("bars_push_uni", "bars_pull_uni"):
            bars = next(p for p in plotted if p.name == name)
            for method in ("ce", "ldst", "tma"):
                pairs = {s.split(" · ")[-1].split(" at ")[0] for s in bars.series if s.split(" · ")[1].startswith(method)}
                assert pairs == {"0→1", "0→3", "1→0", "1→2", "2→1", "2→3", "3→0", "3→2"}, (name, method)
            title = bars.figure.get_suptitle()
            assert "all 8 ordered pairs of two GPUs" in title and "every case" not in title
    finally:
        close_figures(plotted)


def test_no_two_bars_or_pattern_cases_share_a_label_and_nothing_is_cut():
    plotted = build_figures([load_results(RUNS / "groups/patterns/results.json")])
    try:
        for figure in (p for p in plotted if p.kind in ("bars", "patterns")):
            labels = [t.get_text() for t in figure.figure.axes[0].get_yticklabels()]
            assert len(labels) == len(set(labels)), f"{figure.name}: {labels}"
            assert texts_outside(figure.figure) == [], figure.name  # long case labels once pushed the x label out
    finally:
        close_figures(plotted)


def test_ratio_figure_ticks_fall_on_measured_sizes(write_json, synthetic_document):
    """The methods' points are dodged sideways at each size; the size ticks must still name the
    sizes measured (the dodged positions once moved every tick half-way between two sizes)."""
    document = copy.deepcopy(synthetic_document)
    document["results"] = [r for r in document["results"] if r["method"] in ("ce", "ldst", "tma")]
    other = write_json("other.json", perturbed(copy.deepcopy(document)))
    result_sets = load_many([write_json("base.json", document), other])
    figures = ratio_figures(compare(result_sets), 0.03)
    try:
        sizes = {int(r["bytes"]) for r in document["results"]}
        ax = figures[0].figure.axes[0]
        ticks = [t for t in ax.xaxis.get_majorticklocs() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(int(round(t)) in sizes for t in ticks), ticks
        assert min(ticks) == min(sizes), "the smallest size measured has no tick of its own"
        assert all(math.log2(t).is_integer() for t in ticks)
    finally:
        close_figures(figures)
