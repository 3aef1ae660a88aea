"""Figures of one or several results files (matplotlib, Agg backend; PNG and SVG).

Drawn only where the data supports them:
  size_<direction>_<mode>            bandwidth vs message size, one series per system x method, the
                                     two orientations of a uni case (0->1, 1->0) one shaded band;
                                     a dashed line at the link's peak when the
                                     file records meta.topology.peak_gbps_per_direction (x2 for bidir).
                                     A method's series follows the kernel shape measured at the
                                     most sizes (or the best of several such shapes at each size).
                                     Legends sit right of the axes, outside the data.
  time_<direction>_<mode>            time per transfer (time_us) vs size on log-log axes, where some
                                     series has a size below 1 MiB (small messages get their decade);
                                     the time axis labelled at 1, 2 and 5 of every decade.
  atomics_<direction>                remote atomics: Gops/s per atomic type x access pattern (bars).
  chunks_<direction>_<mode>          put with signal: GB/s vs bytes per put, per method x transfer size,
                                     the same file's bulk copies of that size as dashed lines (plots/chunks.py).
  bars_<direction>_<mode>            instead of size_*, where no method spans two sizes (a file of a
                                     few cases at one size): one bar per case, min–max whisker.
  heatmap_ldst_<dir>_<mode>_<system> median GB/s over blocks x threads at the largest size
                                     (needs >= 2 block counts and >= 2 thread counts); colours from
                                     0 to the link's peak (to the best cell where no peak is known).
  heatmap_tma_<dir>_<mode>_<system>  median GB/s over blocks x smem_bytes (best over stages).
  sm_scaling_<direction>_<mode>      bandwidth vs SMs (sms_used, else blocks) at the largest size,
                                     knee marked: the fewest SMs reaching 90% of the method's best
                                     ("knee <= N SMs" when that is the first point measured).
  uni_vs_bidir_<direction>           bars: uni, bidir per direction, bidir total (largest common size).
  latency_<direction>_<mode>         latency rows (latency_us, µs) vs message size, one series per
                                     system x method x protocol (x orientation); band min–p95.
  latency_bars_<direction>_<mode>    instead of latency_*, where no series spans two sizes
                                     (latency_read: one chain size): one bar per case.
  matrix_<case>_<schedule>_<system>  version 2 files: the N x N matrix of each case (plots/matrix.py),
                                     colours from 0 to the link peak; agreement_<case>_<system>: rounds
                                     vs pairs re-measured alone.
  patterns_<method>_<dir>_<mode>_<system>  version 2 files: aggregate of each pattern case vs the
                                     sum of its flows' peaks (plots/patterns.py).
  collectives_<op>_<n>ranks          collectives: nccl-tests' bus bandwidth vs size per method, and
  collectives_time_<op>_<n>ranks     time per operation vs size (plots/collectives.py).
  pipeline_<m>x<k>_<n>ranks_<b>sms_<system>  the GEMM -> reduce-scatter pipeline: each variant's time
                                     and the overlap efficiency against the tile count (plots/pipeline.py).
  burn_in_<method>_<dir>_<mode>_<size>_<src>to<dst>_<system>  files with a burn_in block: bandwidth per
                                     window vs time, NVLink error rises, slow / throttled windows
                                     (plots/burn_in.py); none for other files.
Heatmaps, SM scaling and uni-vs-bidir use the first uni orientation (0->1 where measured).
The curves and bars above show rows of one pair measured alone (series.pair_cases; a round
holding one pair only counts, an alone_check repeating such a pair does not, a `flows` case of one
flow does): a version 2 file's
rounds of several pairs, patterns and same-GPU pairs are in the matrix and pattern figures (a
file of same-GPU pairs only, a one-GPU run, is drawn as it is, each series marked "same GPU"), and
its bars' title says how many of the ordered pairs of two GPUs they show.
Several files -> overlaid series labelled by system (meta.label).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import names_of_kinds
from p2pbench_report.plots.atomics import atomic_figures
from p2pbench_report.plots.bars import bar_figure
from p2pbench_report.plots.burn_in import burn_in_figures
from p2pbench_report.plots.chunks import chunk_figures
from p2pbench_report.plots.collectives import collective_figures
from p2pbench_report.plots.tokens import token_figures
from p2pbench_report.plots.series import (BANDWIDTH_MEASURE, LATENCY_MEASURE, TIME_MEASURE, Measure,  # noqa: F401
                                         bandwidth_rows, direction_mode_combos, measured_rows, of_direction_mode,
                                         power_of_two_axis, series_colors, series_order, size_series)
from p2pbench_report.plots.interference import interference_figures
from p2pbench_report.plots.matrix import matrix_figures
from p2pbench_report.plots.patterns import pattern_figures
from p2pbench_report.plots.pipeline import pipeline_figures
from p2pbench_report.plots.shapes import (heatmap_figures, knee, sm_scaling_figures,  # noqa: F401 (knee: public)
                                         uni_vs_bidir_figures)
from p2pbench_report.plots.style import (SYSTEM_STYLES, PlottedFigure, draw_peak_lines, label_log_axis,
                                         new_figure, place_legend, set_headroom, set_title)
from p2pbench_report.units import SIZE_AXIS_LABEL

FORMATS = ("png", "svg")
TIME_FIGURE_BELOW_BYTES = 2**20  # drawn when some series has a size below 1 MiB
CURVE_COLUMNS = ("series", "method", "pair", "shape", "bytes", "median", "low", "high")
NOT_SIZE_SWEPT = names_of_kinds("atomic")  # bytes follow from the launch shape: drawn by type x pattern instead


def _orientation_band(series_rows: pd.DataFrame, measure: Measure) -> tuple[pd.DataFrame, str, list[str]]:
    """One series over its rank pairs (the two orientations of a uni case): per size the median of
    the pairs' medians, the band from the lowest low to the highest high of them. Returns (points,
    shape description, pairs)."""
    pairs = sorted(series_rows["pair"].unique())
    per_pair = [size_series(series_rows[series_rows["pair"] == pair], measure) for pair in pairs]
    descriptions = {description for _, description in per_pair}
    joined = pd.concat([points for points, _ in per_pair])
    points = joined.groupby("bytes").agg(median=("median", "median"), low=("low", "min"),
                                         high=("high", "max")).reset_index().sort_values("bytes")
    return points, (descriptions.pop() if len(descriptions) == 1 else "shapes differ by pair"), pairs


def _curve_series(result_sets: list[ResultSet], prepared: list[pd.DataFrame], measure: Measure, direction: str,
                  mode: str) -> list[tuple[int, str, str, pd.DataFrame, list[str]]]:
    """(file index, series name, label, points, pairs) of every series of the direction and mode."""
    series = []
    for index, (result_set, rows) in enumerate(zip(result_sets, prepared)):
        # Only the columns a curve reads: filtering a row frame of every field copies each column.
        group = of_direction_mode(rows, direction, mode)[list(CURVE_COLUMNS)] if not rows.empty else rows
        for name in (series_order(group) if not group.empty else []):
            points, description, pairs = _orientation_band(group[group["series"] == name], measure)
            label = f"{result_set.name} · {name}" + (f" ({description})" if description else "")
            series.append((index, name, label, points, pairs))
    return series


def _curve_figure(result_sets: list[ResultSet], prepared: list[pd.DataFrame], measure: Measure, direction: str,
                  mode: str) -> PlottedFigure | None:
    """The measure vs message size, one series per system x series (its orientations as one band);
    None unless some series spans two sizes or more."""
    series = _curve_series(result_sets, prepared, measure, direction, mode)
    if not any(len(points) > 1 for _, _, _, points, _ in series):
        return None  # decided before drawing: an empty figure costs as much as a drawn one
    figure = new_figure(10.5, 5.6)
    ax = figure.add_subplot()
    colors = series_colors(prepared, measure)
    labels, all_sizes, all_pairs = [], [], set()
    for index, name, label, points, pairs in series:
        linestyle, marker = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
        all_pairs.update(pairs)
        x = points["bytes"].astype(float).to_numpy()
        ax.plot(x, points["median"], linestyle=linestyle if len(x) > 1 else "none", marker=marker,
                markersize=4 if len(x) > 1 else 8, color=colors[name], label=label, linewidth=1.6)
        if len(x) > 1:
            ax.fill_between(x, points["low"], points["high"], color=colors[name], alpha=0.18, linewidth=0)
        labels.append(label)
        all_sizes += list(x)
    _size_axes(ax, result_sets, measure, mode, all_sizes)
    pairs = [p for p in sorted(all_pairs) if p != "both"]
    band = f"band: {measure.band}" + (f" over both orientations ({', '.join(pairs)})" if len(pairs) == 2
                                      else " over the rank pairs" if len(pairs) > 2 else "")
    ax.set_ylabel(f"{measure.axis_label}\n{measure.mode_words[mode]}\nline: median; {band}", fontsize=9)
    place_legend(ax)
    set_title(figure, f"{measure.title} vs message size — {direction}, {mode}", result_sets)
    return PlottedFigure(f"{measure.curve_name}_{direction}_{mode}", measure.curve_name, figure, labels)


def _size_axes(ax, result_sets: list[ResultSet], measure: Measure, mode: str, sizes: list[float]) -> None:
    """Log-2 size axis; y from 0 with headroom and the link's peak, or log-scaled (log_y)."""
    if measure.higher_is_better:
        draw_peak_lines(ax, result_sets, mode)
    ax.set_xscale("log", base=2)
    power_of_two_axis(ax.xaxis, sizes)
    ax.set_xlabel(SIZE_AXIS_LABEL)
    if measure.log_y:
        ax.set_yscale("log")
        label_log_axis(ax.yaxis, measure.metric.unit)
        ax.grid(True, which="minor", alpha=0.12)
    else:
        set_headroom(ax, result_sets, mode if measure.higher_is_better else None)
    ax.grid(True, which="major", alpha=0.3)


def measure_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame],
                    measure: Measure) -> list[PlottedFigure]:
    """Per direction and mode: the measure vs message size where a series spans several sizes,
    else bars of the cases at their single size."""
    figures = []
    for direction, mode in direction_mode_combos(prepared):
        plotted = (_curve_figure(result_sets, prepared, measure, direction, mode)
                   or bar_figure(result_sets, prepared, measure, direction, mode))
        if plotted:
            figures.append(plotted)
    return figures


def time_rows(prepared: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """The bandwidth rows with the time per transfer as median/low/high, where some series has a
    size below TIME_FIGURE_BELOW_BYTES (else empty frames: no time figure)."""
    out = []
    for rows in prepared:
        if rows.empty or "time_us_median" not in rows or rows["bytes"].min() >= TIME_FIGURE_BELOW_BYTES:
            out.append(rows.iloc[0:0])
            continue
        rows = rows[rows["time_us_median"].notna()].copy()
        rows["median"] = rows["time_us_median"]
        rows["low"] = rows["time_us_min"].fillna(rows["median"])
        rows["high"] = rows["time_us_max"].fillna(rows["median"])
        out.append(rows)
    return out


def time_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    """time_<direction>_<mode>: time per transfer vs size, log-log (curves only)."""
    timed = time_rows(prepared)
    figures = []
    for direction, mode in direction_mode_combos(timed):
        plotted = _curve_figure(result_sets, timed, TIME_MEASURE, direction, mode)
        if plotted:
            figures.append(plotted)
    return figures


def build_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    """Every figure the data supports, in reading order."""
    every = [bandwidth_rows(r) for r in result_sets]
    prepared = [rows[~rows["method"].isin(NOT_SIZE_SWEPT)] if not rows.empty else rows for rows in every]
    latency = [measured_rows(r, LATENCY_MEASURE) for r in result_sets]
    return (matrix_figures(result_sets) + pattern_figures(result_sets)
            + measure_figures(result_sets, prepared, BANDWIDTH_MEASURE) + time_figures(result_sets, prepared)
            + sm_scaling_figures(result_sets, prepared) + heatmap_figures(result_sets, prepared)
            + uni_vs_bidir_figures(result_sets, prepared) + chunk_figures(result_sets, prepared)
            + token_figures(result_sets, prepared) + collective_figures(result_sets) + pipeline_figures(result_sets)
            + atomic_figures(result_sets, every)
            + measure_figures(result_sets, latency, LATENCY_MEASURE)
            + interference_figures(result_sets) + burn_in_figures(result_sets))


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
