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
import re
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from p2pbench_report.cases import (BANDWIDTH, LATENCY, METHOD_ORDER, PAYLOAD_VARIABLES,  # noqa: E402
                                   Metric, describe_config, describe_ranks, plain_value)
from p2pbench_report.loader import ResultSet  # noqa: E402
from p2pbench_report.units import (BANDWIDTH_AXIS_LABEL, LATENCY_AXIS_LABEL, SIZE_AXIS_LABEL,  # noqa: E402
                                   format_size, format_value)

KNEE_FRACTION = 0.9
FORMATS = ("png", "svg")
SHAPE_AXES = ("blocks", "threads", "unroll", "smem_bytes", "stages", "buffer_pool_bytes") + PAYLOAD_VARIABLES
METHOD_COLORS = {"ce": "tab:blue", "ldst": "tab:orange", "tma": "tab:green", "nccl": "tab:red",
                 "staged": "tab:purple", "h2d": "tab:brown", "d2h": "tab:pink"}
METHOD_TITLES = {"ce": "copy engine", "ldst": "LD/ST kernel", "tma": "TMA kernel", "nccl": "NCCL",
                 "staged": "staged", "h2d": "host→device", "d2h": "device→host"}
SYSTEM_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v")]
MODE_WORDS = {"uni": "one direction", "bidir": "both directions, total"}
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


@dataclass
class PlottedFigure:
    """A figure and what it shows, for writing and for tests."""

    name: str
    kind: str
    figure: Figure
    series: list[str] = field(default_factory=list)


# ---- data preparation ------------------------------------------------------------------------

def measured_rows(result_set: ResultSet, measure: Measure) -> pd.DataFrame:
    """The file's ok rows of the measure's metric with plotting columns: median, low, high,
    series (the method, with the split_by values: 'latency_signal flag_in_data'), shape (the other
    kernel and payload axes as (axis, value) pairs), pair."""
    frame = result_set.rows
    metric = measure.metric
    frame = frame[(frame["status"] == "ok") & (frame["metric"] == metric.name)
                  & frame[metric.median_column].notna()].copy()
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


def _first_pair(rows: pd.DataFrame) -> pd.DataFrame:
    """Uni rows of the first orientation (0->1 where measured); bidir rows unchanged."""
    if rows.empty or (rows["mode"] != "uni").all():
        return rows
    first = sorted(rows["pair"].unique())[0]
    return rows[rows["pair"] == first]


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


def _peaks(result_sets: list[ResultSet], mode: str) -> list[tuple[float, str]]:
    """Distinct link peaks of the files: per direction, x2 for a bidir total."""
    peaks = {}
    for result_set in result_sets:
        peak = result_set.system.peak_gbps_per_direction
        if peak:
            total = peak * (2 if mode == "bidir" else 1)
            link = result_set.system.link or "link"
            peaks.setdefault(round(total, 3), f"{link} peak {total:.0f} GB/s" + (" (2 × per direction)" if mode == "bidir" else ""))
    return sorted(peaks.items())


# ---- styling -------------------------------------------------------------------------------

def _color(method: str, shade: int = 0) -> tuple:
    return _shaded(METHOD_COLORS.get(method, "tab:gray"), shade)


def _shaded(color: str, shade: int = 0) -> tuple:
    """The color, lighter for shade 1, 2 (the second and third rank pair of a series)."""
    base = mcolors.to_rgb(color)
    mix = min(0.55, 0.45 * shade)
    return tuple(c + (1 - c) * mix for c in base)


def _title(figure: Figure, headline: str, result_sets: list[ResultSet]) -> None:
    lines = [headline] + [r.system.title_line() if r.name == r.system.label else f"{r.name}: {r.system.title_line()}"
                          for r in result_sets]
    figure.suptitle("\n".join(lines), fontsize=10, x=0.01, ha="left")


def _power_of_two_axis(axis, values) -> None:
    """Log-2 axis with ticks at powers of two labelled 4K/1M/1G, at most ~10 labels."""
    values = [v for v in values if v and v > 0]
    low, high = int(math.floor(math.log2(min(values)))), int(math.ceil(math.log2(max(values))))
    step = max(1, math.ceil((high - low + 1) / 10))
    ticks = [2.0**e for e in range(low, high + 1) if (e - low) % step == 0]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: format_size(v)))


def _peak_lines(ax, result_sets: list[ResultSet], mode: str) -> None:
    for value, label in _peaks(result_sets, mode):
        ax.axhline(value, color="0.3", linestyle="--", linewidth=1.1, label=label, zorder=1)


def _headroom(ax, result_sets: list[ResultSet], mode: str | None) -> None:
    """y from 0 to 12% above the highest curve, band or peak line (mode None: no peak line), so
    that nothing sits on the frame."""
    bands = [float(np.nanmax(c.get_paths()[0].vertices[:, 1])) for c in ax.collections if c.get_paths()]
    highest = max([float(np.nanmax(line.get_ydata())) for line in ax.get_lines() if len(line.get_ydata())] + bands
                  + ([value for value, _ in _peaks(result_sets, mode)] if mode else []) + [1e-3])
    ax.set_ylim(0, highest * 1.12)


def _sm_ticks(values) -> list[int]:
    """Every SM count when there are few; else the powers of two and the largest count."""
    distinct = sorted(set(int(v) for v in values))
    if len(distinct) <= 10:
        return distinct
    return [v for v in distinct if v & (v - 1) == 0 or v == distinct[-1]]


def _new_figure(width: float = 9.0, height: float = 5.6) -> Figure:
    return Figure(figsize=(width, height), layout="constrained", dpi=100)


# ---- figures -------------------------------------------------------------------------------

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
    figure = _new_figure()
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
                color = _shaded(colors[name], shade)
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
        _peak_lines(ax, result_sets, mode)
    ax.set_xscale("log", base=2)
    _power_of_two_axis(ax.xaxis, all_sizes)
    ax.set_xlabel(SIZE_AXIS_LABEL)
    ax.set_ylabel(f"{measure.axis_label}\n{measure.mode_words[mode]}; line: median, band: {measure.band}")
    _headroom(ax, result_sets, mode if measure.higher_is_better else None)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right" if measure.higher_is_better else "best")
    _title(figure, f"{measure.title} vs message size — {direction}, {mode}", result_sets)
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
    figure = _new_figure(9.0, 2.2 + 0.32 * len(cases))
    ax = figure.add_subplot()
    pair_shades = {pair: shade for shade, pair in enumerate(sorted({row["pair"] for _, row in cases}))}
    for y, (_, row) in enumerate(cases):
        median = float(row["median"])
        whisker = [[median - float(row["low"])], [float(row["high"]) - median]]
        ax.barh(y, median, 0.7, color=_shaded(colors[row["series"]], pair_shades[row["pair"]]), edgecolor="black",
                linewidth=0.6, xerr=whisker, capsize=2, error_kw={"linewidth": 0.8})
        ax.text(float(row["high"]), y, f" {format_value(median)}", ha="left", va="center", fontsize=7)
    peaks = _peaks(result_sets, mode) if measure.higher_is_better else []
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
    _title(figure, f"{measure.title} at a single message size — {direction}, {mode} ({shapes})", result_sets)
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


def _heatmap(result_set: ResultSet, rows: pd.DataFrame, method: str, column_axis: str, best_over: str,
             direction: str, mode: str) -> PlottedFigure | None:
    rows = _first_pair(rows)
    if rows.empty or rows["blocks"].isna().all() or rows[column_axis].isna().all():
        return None
    size = rows["bytes"].max()
    rows = rows[(rows["bytes"] == size) & rows["blocks"].notna() & rows[column_axis].notna()]
    block_values = sorted(int(b) for b in rows["blocks"].unique())
    column_values = sorted(int(c) for c in rows[column_axis].unique())
    if len(block_values) < 2 or len(column_values) < 2:
        return None
    best = rows.loc[rows.groupby(["blocks", column_axis])["median"].idxmax()]
    grid = np.full((len(block_values), len(column_values)), np.nan)
    best_setting = {}
    for _, row in best.iterrows():
        i, j = block_values.index(int(row["blocks"])), column_values.index(int(row[column_axis]))
        grid[i, j] = row["median"]
        best_setting[(i, j)] = plain_value(row.get(best_over))
    figure = _new_figure(1.6 + 1.15 * len(column_values), 2.3 + 0.55 * len(block_values))
    ax = figure.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", aspect="auto", origin="lower")
    figure.colorbar(image, ax=ax, label="median GB/s (1 GB = 1e9 B)")
    vary = len({v for v in best_setting.values() if v is not None}) > 1
    low, high = np.nanmin(grid), np.nanmax(grid)
    for (i, j), setting in best_setting.items():
        value = grid[i, j]
        text = f"{value:.0f}" + (f"\n{best_over[:5]} {setting}" if vary and setting is not None else "")
        bright = (value - low) / (high - low) > 0.6 if high > low else True
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color="black" if bright else "white")
    for i in range(len(block_values)):
        for j in range(len(column_values)):
            if np.isnan(grid[i, j]):
                ax.text(j, i, "not run", ha="center", va="center", fontsize=7, color="0.4")
    ax.set_xticks(range(len(column_values)),
                  [format_size(c) if column_axis == "smem_bytes" else str(c) for c in column_values])
    ax.set_yticks(range(len(block_values)), [str(b) for b in block_values])
    ax.set_xlabel("threads per block" if column_axis == "threads" else "shared memory per block (bytes)")
    ax.set_ylabel("blocks")
    pair = rows["pair"].iloc[0]
    headline = (f"{METHOD_TITLES[method]} {direction} {mode} ({pair}) at {format_size(size)}: "
                f"median GB/s, best over {best_over}")
    _title(figure, headline, [result_set])
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", result_set.name).strip("-") or "system"
    return PlottedFigure(f"heatmap_{method}_{direction}_{mode}_{slug}", f"heatmap_{method}", figure,
                         [result_set.name])


def heatmap_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = []
    for result_set, rows in zip(result_sets, prepared):
        if rows.empty:
            continue
        for method, column_axis, best_over in (("ldst", "threads", "unroll"), ("tma", "smem_bytes", "stages")):
            for direction in ("push", "pull"):
                for mode in ("uni", "bidir"):
                    subset = rows[(rows["method"] == method) & (rows["direction"] == direction) & (rows["mode"] == mode)]
                    plotted = _heatmap(result_set, subset, method, column_axis, best_over, direction, mode)
                    if plotted:
                        figures.append(plotted)
    return figures


def knee(points: pd.DataFrame) -> pd.Series | None:
    """The fewest SMs whose median reaches 90% of the best median (points: sms, median)."""
    if points.empty:
        return None
    reaching = points[points["median"] >= KNEE_FRACTION * points["median"].max()]
    return reaching.sort_values("sms").iloc[0]


def sm_scaling_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = []
    for direction in ("push", "pull"):
        for mode in ("uni", "bidir"):
            figure = _new_figure()
            ax = figure.add_subplot()
            series, all_sms = [], []
            for index, (result_set, rows) in enumerate(zip(result_sets, prepared)):
                if rows.empty:
                    continue
                linestyle, marker = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
                group = rows[(rows["direction"] == direction) & (rows["mode"] == mode) & rows["sms"].notna()]
                for method in sorted(group["method"].unique()):
                    method_rows = _first_pair(group[group["method"] == method])
                    method_rows = method_rows[method_rows["bytes"] == method_rows["bytes"].max()]
                    if method_rows["sms"].nunique() < 3:
                        continue
                    points = method_rows.loc[method_rows.groupby("sms")["median"].idxmax()].sort_values("sms")
                    size = format_size(points["bytes"].iloc[0])
                    label = f"{result_set.name} · {method} at {size}"
                    color = _color(method)
                    ax.plot(points["sms"].astype(float), points["median"], linestyle=linestyle, marker=marker,
                            color=color, label=label, markersize=5)
                    point = knee(points)
                    ax.plot([float(point["sms"])], [point["median"]], marker="*", markersize=16, color=color,
                            markeredgecolor="black", linestyle="none")
                    ax.annotate(f"knee {int(point['sms'])} SMs\n{point['median']:.0f} GB/s",
                                (float(point["sms"]), point["median"]), textcoords="offset points",
                                xytext=(18, -45 - 32 * len(series)), fontsize=8, color=color,
                                arrowprops={"arrowstyle": "-", "color": color, "linewidth": 0.8})
                    series.append(label)
                    all_sms += list(points["sms"].astype(int))
            if not series:
                continue
            _peak_lines(ax, result_sets, mode)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(_sm_ticks(all_sms)))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.0f}"))
            ax.set_xlabel("SMs used (sms_used; blocks where not recorded)")
            ax.set_ylabel(f"{BANDWIDTH_AXIS_LABEL}\n{MODE_WORDS[mode]}; best over the other kernel axes")
            _headroom(ax, result_sets, mode)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8, loc="lower right")
            _title(figure, f"SM scaling — {direction}, {mode}; ★ knee: fewest SMs reaching "
                           f"{KNEE_FRACTION:.0%} of the method's best", result_sets)
            figures.append(PlottedFigure(f"sm_scaling_{direction}_{mode}", "sm_scaling", figure, series))
    return figures


def _per_direction_median(row: pd.Series) -> float:
    medians = [row[c] for c in row.index if re.fullmatch(r"directions_\d+_bandwidth_gbps_median", c)
               and not pd.isna(row[c])]
    return float(np.mean(medians)) if medians else row["median"] / 2


def uni_vs_bidir_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = []
    for direction in ("push", "pull"):
        groups = []  # (label, size, uni, bidir per direction, bidir total)
        for result_set, rows in zip(result_sets, prepared):
            if rows.empty:
                continue
            rows = rows[rows["direction"] == direction]
            for method in [m for m in METHOD_COLORS if m in set(rows["method"])]:
                uni = _first_pair(rows[(rows["method"] == method) & (rows["mode"] == "uni")])
                bidir = rows[(rows["method"] == method) & (rows["mode"] == "bidir")]
                common = sorted(set(uni["bytes"]) & set(bidir["bytes"]))
                if not common:
                    continue
                size = common[-1]
                best_uni = uni[uni["bytes"] == size]["median"].max()
                best_bidir = bidir.loc[bidir[bidir["bytes"] == size]["median"].idxmax()]
                groups.append((f"{result_set.name}\n{method} at {format_size(size)}", method, best_uni,
                               _per_direction_median(best_bidir), best_bidir["median"]))
        if not groups:
            continue
        figure = _new_figure(max(6.0, 1.9 * len(groups) + 2.5), 5.6)
        ax = figure.add_subplot()
        width = 0.26
        bars = (("uni (one direction)", 2, 0.0), ("bidir, per direction", 3, 0.35), ("bidir, total", 4, 0.65))
        for offset, (label, column, shade) in enumerate(bars):
            for g_index, group in enumerate(groups):
                x = g_index + (offset - 1) * width
                value = group[column]
                ax.bar(x, value, width, color=_color(group[1], 0) if shade == 0 else _color(group[1], 1),
                       hatch=("" if offset == 0 else ("//" if offset == 1 else "xx")), edgecolor="black",
                       linewidth=0.6, label=label if g_index == 0 else None)
                ax.text(x, value, f"{value:.0f}", ha="center", va="bottom", fontsize=7)
        for value, label in _peaks(result_sets, "uni"):
            ax.axhline(value, color="0.3", linestyle="--", linewidth=1, label=label)
        for value, label in _peaks(result_sets, "bidir"):
            ax.axhline(value, color="0.3", linestyle=":", linewidth=1, label=label)
        ax.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
        ax.set_ylabel(BANDWIDTH_AXIS_LABEL)
        ax.set_ylim(0, max(max(g[4] for g in groups), *(v for v, _ in _peaks(result_sets, "bidir")), 0) * 1.12)
        ax.legend(fontsize=7, loc="upper left", ncols=2)
        ax.grid(True, axis="y", alpha=0.3)
        _title(figure, f"Uni vs bidir — {direction} (best shape at the largest common size)", result_sets)
        figures.append(PlottedFigure(f"uni_vs_bidir_{direction}", "uni_vs_bidir", figure,
                                     [g[0].replace("\n", " · ") for g in groups]))
    return figures


def build_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    """Every figure the data supports, in reading order."""
    prepared = [bandwidth_rows(r) for r in result_sets]
    latency = [measured_rows(r, LATENCY_MEASURE) for r in result_sets]
    return (measure_figures(result_sets, prepared, BANDWIDTH_MEASURE) + sm_scaling_figures(result_sets, prepared)
            + heatmap_figures(result_sets, prepared) + uni_vs_bidir_figures(result_sets, prepared)
            + measure_figures(result_sets, latency, LATENCY_MEASURE))


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
