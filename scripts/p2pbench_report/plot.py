"""Figures of one or several results files (matplotlib, Agg backend; PNG and SVG).

Drawn only where the data supports them:
  size_<direction>_<mode>            bandwidth vs message size, one series per system x method
                                     (x uni orientation); a dashed line at the link's peak when the
                                     file records meta.topology.peak_gbps_per_direction (x2 for bidir).
                                     A method's series follows the kernel shape measured at the
                                     most sizes (or the best of several such shapes at each size).
  bars_<direction>_<mode>            instead of size_*, where no method spans two sizes (a file of a
                                     few cases at one size): one bar per case, min–max whisker.
  heatmap_ldst_<dir>_<mode>_<system> median GB/s over blocks x threads at the largest size
                                     (needs >= 2 block counts and >= 2 thread counts).
  heatmap_tma_<dir>_<mode>_<system>  median GB/s over blocks x smem_bytes (best over stages).
  sm_scaling_<direction>_<mode>      bandwidth vs SMs (sms_used, else blocks) at the largest size,
                                     knee marked: the fewest SMs reaching 90% of the method's best.
  uni_vs_bidir_<direction>           bars: uni, bidir per direction, bidir total (largest common size).
  latency_<direction>_<mode>         latency rows (latency_us, µs) vs message size, one series per
                                     system x method x protocol (x orientation); band min–p95.
  latency_bars_<direction>_<mode>    instead of latency_*, where no series spans two sizes
                                     (latency_read: one chain size): one bar per case.
Heatmaps, SM scaling and uni-vs-bidir use the first uni orientation (0->1 where measured).
Several files -> overlaid series labelled by system (meta.label).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from p2pbench_report.cases import (BANDWIDTH, LATENCY, METHOD_ORDER, PAYLOAD_VARIABLES,  # noqa: E402
                                   Metric, describe_config, describe_ranks, plain_value)
from p2pbench_report.loader import ResultSet  # noqa: E402
from p2pbench_report.plot_interference import interference_figures  # noqa: E402  (issue 13)
from p2pbench_report.plot_shapes import (heatmap_figures, knee, sm_scaling_figures,  # noqa: E402,F401 (knee: public)
                                         uni_vs_bidir_figures)
from p2pbench_report.plot_style import (METHOD_COLORS, MODE_WORDS, SYSTEM_STYLES, PlottedFigure,  # noqa: E402
                                         draw_peak_lines, link_peaks, new_figure, set_headroom, set_title,
                                         shaded_color)
from p2pbench_report.units import (BANDWIDTH_AXIS_LABEL, LATENCY_AXIS_LABEL, SIZE_AXIS_LABEL,  # noqa: E402
                                   format_size, format_value)


FORMATS = ("png", "svg")
SHAPE_AXES = ("blocks", "threads", "unroll", "smem_bytes", "stages", "buffer_pool_bytes") + PAYLOAD_VARIABLES
PALETTE = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive",
           "tab:cyan", "tab:gray")
MAX_BARS = 24  # more single-size cases than this: only the best shape of each method, pair and size


@dataclass(frozen=True)
class Measure:
    """What a family of figures shows: which rows, the y axis, which end is better."""

    metric: Metric
    title: str
    axis_label: str
    band: str                  # what the shaded band (curves) or whisker (bars) spans
    low_column: str
    high_column: str
    split_by: tuple[str, ...]  # payload variables that make separate series (not shapes of one series)
    curve_name: str            # figure names: <curve_name>_<direction>_<mode>, <bars_name>_<direction>_<mode>
    bars_name: str
    fixed_colors: bool         # each method's own color (METHOD_COLORS), else the palette in order
    mode_words: dict

    @property
    def higher_is_better(self) -> bool:
        return self.metric.higher_is_better


BANDWIDTH_MEASURE = Measure(BANDWIDTH, "Bandwidth", BANDWIDTH_AXIS_LABEL, "min–max", "bandwidth_gbps_min",
                            "bandwidth_gbps_max", (), "size", "bars", True, MODE_WORDS)
# Latency bands stop at p95: the max of a few thousand round trips is one preempted sample.


LATENCY_MEASURE = Measure(LATENCY, "Latency", LATENCY_AXIS_LABEL, "min–p95", "latency_us_min", "latency_us_p95",
                          ("protocol",), "latency", "latency_bars", False,
                          {"uni": "one direction", "bidir": "both directions at once"})


def measured_rows(result_set: ResultSet, measure: Measure) -> pd.DataFrame:
    """The file's ok rows of the measure's metric with plotting columns: median, low, high,
    series (the method, with the split_by values: 'latency_signal flag_in_data'), shape (the other
    kernel and payload axes as (axis, value) pairs), pair."""
    frame = result_set.rows
    metric = measure.metric
    frame = frame[(frame["status"] == "ok") & (frame["metric"] == metric.name)
                  & frame[metric.median_column].notna()
                  & (frame["method"] != "interference")].copy()  # issue 13: plot_interference.py draws those
    if frame.empty:
        return frame
    frame["median"] = frame[metric.median_column]
    frame["low"] = frame[measure.low_column].fillna(frame["median"])
    frame["high"] = frame[measure.high_column].fillna(frame["median"])
    frame["series"] = [" ".join([row["method"]] + [str(v) for v in (plain_value(row.get(c)) for c in measure.split_by)
                                                   if v is not None])
                       for _, row in frame.iterrows()]
    shape_axes = [a for a in SHAPE_AXES if a not in measure.split_by]  # split_by is in the series name
    frame["shape"] = [tuple((a, plain_value(row.get(a))) for a in shape_axes) for _, row in frame.iterrows()]
    frame["pair"] = [describe_ranks(row) for _, row in frame.iterrows()]
    return frame


def bandwidth_rows(result_set: ResultSet) -> pd.DataFrame:
    """The file's ok bandwidth rows (see measured_rows), with sms: SMs used, else blocks."""
    frame = measured_rows(result_set, BANDWIDTH_MEASURE)
    if not frame.empty:
        frame["sms"] = frame["sms_used"].fillna(frame["blocks"])
    return frame


def _shape_text(shape: tuple) -> str:
    return describe_config(pd.Series(dict(shape)))


def _shape_order(shape: tuple) -> tuple:
    """Sorts shapes by their numbers (b8 before b132), null axes last."""
    return tuple((value is None, value if isinstance(value, (int, float)) else 0, str(value)) for _, value in shape)


def _size_series(rows: pd.DataFrame, measure: Measure = BANDWIDTH_MEASURE) -> tuple[pd.DataFrame, str]:
    """(per-size points, description) of one series: the shape measured at the most sizes, or
    the best (highest bandwidth, lowest latency) of several such shapes at each size."""
    sizes_per_shape = rows.groupby("shape")["bytes"].nunique()
    spanning = sizes_per_shape[sizes_per_shape == sizes_per_shape.max()].index.tolist()
    chosen = rows[rows["shape"].isin(spanning)]
    per_size = chosen.groupby("bytes")["median"]
    best = chosen.loc[per_size.idxmax() if measure.higher_is_better else per_size.idxmin()].sort_values("bytes")
    if len(spanning) == 1:
        return best, _shape_text(spanning[0])
    return best, f"best of {len(spanning)} shapes"


def _power_of_two_axis(axis, values) -> None:
    """Log-2 axis with ticks at powers of two labelled 4K/1M/1G, at most ~10 labels."""
    values = [v for v in values if v and v > 0]
    low, high = int(math.floor(math.log2(min(values)))), int(math.ceil(math.log2(max(values))))
    step = max(1, math.ceil((high - low + 1) / 10))
    ticks = [2.0**e for e in range(low, high + 1) if (e - low) % step == 0]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: format_size(v)))


def _direction_mode_combos(prepared: list[pd.DataFrame]) -> list[tuple[str, str]]:
    return sorted({(d, m) for rows in prepared if not rows.empty for d, m in zip(rows["direction"], rows["mode"])},
                  key=lambda dm: (dm[0] != "push", dm[1] != "uni"))


def _series_order(rows: pd.DataFrame) -> list[str]:
    """The rows' series names, methods in the fixed order (then by name)."""
    firsts = rows.drop_duplicates("series")
    ranked = [(METHOD_ORDER.index(m) if m in METHOD_ORDER else 99, name)
              for m, name in zip(firsts["method"], firsts["series"])]
    return [name for _, name in sorted(ranked)]


def _series_colors(prepared: list[pd.DataFrame], measure: Measure) -> dict[str, str]:
    """Bandwidth series keep their method's color (all bandwidth figures agree); latency series,
    several per method (one per protocol), take the palette's colors in order."""
    names = [n for rows in prepared if not rows.empty for n in _series_order(rows)]
    names = list(dict.fromkeys(names))
    if measure.fixed_colors:
        return {name: METHOD_COLORS.get(name, "tab:gray") for name in names}
    return {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(names)}


def _of(rows: pd.DataFrame, direction: str, mode: str) -> pd.DataFrame:
    return rows[(rows["direction"] == direction) & (rows["mode"] == mode)] if not rows.empty else rows


def _curve_figure(result_sets: list[ResultSet], prepared: list[pd.DataFrame], measure: Measure, direction: str,
                  mode: str) -> PlottedFigure | None:
    """The measure vs message size, one series per system x series x rank pair; None unless some
    series spans two sizes or more."""
    figure = new_figure()
    ax = figure.add_subplot()
    colors = _series_colors(prepared, measure)
    labels, all_sizes, has_curve = [], [], False
    for index, (result_set, rows) in enumerate(zip(result_sets, prepared)):
        linestyle, marker = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
        group = _of(rows, direction, mode)
        for name in (_series_order(group) if not group.empty else []):
            series_rows = group[group["series"] == name]
            pairs = sorted(series_rows["pair"].unique())
            for shade, pair in enumerate(pairs):
                points, description = _size_series(series_rows[series_rows["pair"] == pair], measure)
                label = f"{result_set.name} · {name}" + (f" {pair}" if len(pairs) > 1 else "")
                label += f" ({description})" if description else ""
                color = shaded_color(colors[name], shade)
                x = points["bytes"].astype(float).to_numpy()
                ax.plot(x, points["median"], linestyle=linestyle if len(x) > 1 else "none", marker=marker,
                        markersize=4 if len(x) > 1 else 8, color=color, label=label, linewidth=1.6)
                if len(x) > 1:
                    ax.fill_between(x, points["low"], points["high"], color=color, alpha=0.18, linewidth=0)
                    has_curve = True
                labels.append(label)
                all_sizes += list(x)
    if not has_curve:
        return None
    if measure.higher_is_better:
        draw_peak_lines(ax, result_sets, mode)
    ax.set_xscale("log", base=2)
    _power_of_two_axis(ax.xaxis, all_sizes)
    ax.set_xlabel(SIZE_AXIS_LABEL)
    ax.set_ylabel(f"{measure.axis_label}\n{measure.mode_words[mode]}; line: median, band: {measure.band}")
    set_headroom(ax, result_sets, mode if measure.higher_is_better else None)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right" if measure.higher_is_better else "best")
    set_title(figure, f"{measure.title} vs message size — {direction}, {mode}", result_sets)
    return PlottedFigure(f"{measure.curve_name}_{direction}_{mode}", measure.curve_name, figure, labels)


def _bar_order(row: pd.Series, best_only: bool) -> tuple:
    """Bars by size, then shape (b8 before b132; not when only the best shape is kept), then pair."""
    return (row["bytes"], () if best_only else _shape_order(row["shape"]), row["pair"])


def _bar_cases(result_sets: list[ResultSet], prepared: list[pd.DataFrame], measure: Measure, direction: str,
               mode: str) -> tuple[list[tuple[str, pd.Series]], bool]:
    """(label, row) per case to draw as a bar, and whether only the best shape per method, pair
    and size is kept (when there are more than MAX_BARS cases)."""
    groups = [(r, _of(rows, direction, mode)) for r, rows in zip(result_sets, prepared)]
    groups = [(r, rows) for r, rows in groups if not rows.empty]
    total = sum(len(rows) for _, rows in groups)
    best_only = total > MAX_BARS
    cases = []
    for result_set, rows in groups:
        if best_only:
            pick = rows.groupby(["series", "pair", "bytes"])["median"]
            rows = rows.loc[pick.idxmax() if measure.higher_is_better else pick.idxmin()]
        for name in _series_order(rows):
            series_rows = [row for _, row in rows[rows["series"] == name].iterrows()]
            for row in sorted(series_rows, key=lambda row: _bar_order(row, best_only)):
                shape = "" if best_only else _shape_text(row["shape"])
                system = f"{result_set.name} · " if len(result_sets) > 1 else ""
                cases.append((f"{system}{name}{' ' + shape if shape else ''} · {row['pair']} at "
                              f"{format_size(row['bytes'])}", row))
    return cases, best_only


def _bar_figure(result_sets: list[ResultSet], prepared: list[pd.DataFrame], measure: Measure, direction: str,
                mode: str) -> PlottedFigure | None:
    """One horizontal bar per case (median, whisker over the band), for cases that make no
    curve: every series measured at a single message size."""
    cases, best_only = _bar_cases(result_sets, prepared, measure, direction, mode)
    if not cases:
        return None
    colors = _series_colors(prepared, measure)
    figure = new_figure(9.0, 2.2 + 0.32 * len(cases))
    ax = figure.add_subplot()
    pair_shades = {pair: shade for shade, pair in enumerate(sorted({row["pair"] for _, row in cases}))}
    for y, (_, row) in enumerate(cases):
        median = float(row["median"])
        whisker = [[median - float(row["low"])], [float(row["high"]) - median]]
        ax.barh(y, median, 0.7, color=shaded_color(colors[row["series"]], pair_shades[row["pair"]]), edgecolor="black",
                linewidth=0.6, xerr=whisker, capsize=2, error_kw={"linewidth": 0.8})
        ax.text(float(row["high"]), y, f" {format_value(median)}", ha="left", va="center", fontsize=7)
    peaks = link_peaks(result_sets, mode) if measure.higher_is_better else []
    for value, label in peaks:
        ax.axvline(value, color="0.3", linestyle="--", linewidth=1.1, label=label, zorder=1)
    ax.set_yticks(range(len(cases)), [label for label, _ in cases], fontsize=7)
    ax.invert_yaxis()  # the first case on top
    # peaks are named under the axis: a legend box would cover the bars' ends
    ax.set_xlabel("\n".join([f"{measure.axis_label}; {measure.mode_words[mode]}; bar: median, whisker: {measure.band}"]
                            + [f"dashed: {label}" for _, label in peaks]))
    highest = max([float(row["high"]) for _, row in cases] + [value for value, _ in peaks])
    ax.set_xlim(0, highest * 1.12)
    ax.grid(True, axis="x", alpha=0.3)
    shapes = "best shape per method, pair and size" if best_only else "every case"
    set_title(figure, f"{measure.title} at a single message size — {direction}, {mode} ({shapes})", result_sets)
    named = [label if len(result_sets) > 1 else f"{result_sets[0].name} · {label}" for label, _ in cases]
    return PlottedFigure(f"{measure.bars_name}_{direction}_{mode}", measure.bars_name, figure, named)


def measure_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame],
                    measure: Measure) -> list[PlottedFigure]:
    """Per direction and mode: the measure vs message size where a series spans several sizes,
    else bars of the cases at their single size."""
    figures = []
    for direction, mode in _direction_mode_combos(prepared):
        plotted = (_curve_figure(result_sets, prepared, measure, direction, mode)
                   or _bar_figure(result_sets, prepared, measure, direction, mode))
        if plotted:
            figures.append(plotted)
    return figures


def build_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    """Every figure the data supports, in reading order."""
    prepared = [bandwidth_rows(r) for r in result_sets]
    latency = [measured_rows(r, LATENCY_MEASURE) for r in result_sets]
    return (measure_figures(result_sets, prepared, BANDWIDTH_MEASURE) + sm_scaling_figures(result_sets, prepared)
            + heatmap_figures(result_sets, prepared) + uni_vs_bidir_figures(result_sets, prepared)
            + measure_figures(result_sets, latency, LATENCY_MEASURE)
            + interference_figures(result_sets))  # issue 13


def write_figures(figures: list[PlottedFigure], directory: str | Path, formats=FORMATS) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for plotted in figures:
        for fmt in formats:
            path = directory / f"{plotted.name}.{fmt}"
            plotted.figure.savefig(path, format=fmt, dpi=120 if fmt == "png" else None)
            written.append(path)
    return written


def close_figures(figures: list[PlottedFigure]) -> None:
    """Releases the figures' memory (they are not registered with pyplot)."""
    for plotted in figures:
        plotted.figure.clear()
