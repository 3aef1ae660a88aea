"""Bars of cases measured at a single message size (bars_<direction>_<mode>,
latency_bars_<direction>_<mode>): one horizontal bar per case, min–max (or min–p95) whisker."""

from __future__ import annotations

import pandas as pd

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet
from p2pbench_report.plots.series import (Measure, of_direction_mode, series_colors, series_order,
                                         shape_order, shape_text)
from p2pbench_report.plots.style import PlottedFigure, link_peaks, new_figure, set_title, shaded_color
from p2pbench_report.units import format_size, format_value

MAX_BARS = 24  # more single-size cases than this: only the best shape of each method, pair and size


def _bar_order(row: pd.Series, best_only: bool) -> tuple:
    """Bars by size, then shape (b8 before b132; not when only the best shape is kept), then pair."""
    return (row["bytes"], () if best_only else shape_order(row["shape"]), row["pair"])


def _bar_cases(result_sets: list[ResultSet], prepared: list[pd.DataFrame], measure: Measure, direction: str,
               mode: str) -> tuple[list[tuple[str, pd.Series]], bool]:
    """(label, row) per case to draw as a bar, and whether only the best shape per method, pair
    and size is kept (when there are more than MAX_BARS cases)."""
    groups = [(r, of_direction_mode(rows, direction, mode)) for r, rows in zip(result_sets, prepared)]
    groups = [(r, rows) for r, rows in groups if not rows.empty]
    total = sum(len(rows) for _, rows in groups)
    best_only = total > MAX_BARS
    cases = []
    for result_set, rows in groups:
        if best_only:
            pick = rows.groupby(["series", "pair", "how", "bytes"])["median"]
            rows = rows.loc[pick.idxmax() if measure.higher_is_better else pick.idxmin()]
        for name in series_order(rows):
            series_rows = [row for _, row in rows[rows["series"] == name].iterrows()]
            for row in sorted(series_rows, key=lambda row: _bar_order(row, best_only)):
                shape = "" if best_only else shape_text(row["shape"])
                system = f"{result_set.name} · " if len(result_sets) > 1 else ""
                how = f" ({row['how']})" if row.get("how") else ""
                cases.append((f"{system}{name}{' ' + shape if shape else ''} · {row['pair']}{how} at "
                              f"{format_size(row['bytes'])}", row))
    return cases, best_only


def _cross_gpu_flows(rows) -> set[tuple]:
    """(source rank, destination rank) of every flow between two GPUs in version 2 rows."""
    flows = set()
    for row in rows:
        src, dst, same = (row.get(f"flows_{name}") for name in ("src_rank", "dst_rank", "same_device"))
        if isinstance(src, list) and isinstance(dst, list):
            flows |= {(s, d) for s, d, o in zip(src, dst, same if isinstance(same, list) else [False] * len(src)) if not o}
    return flows


def _pairs_shown(result_sets: list[ResultSet], shown: list[pd.Series], measure: Measure, direction: str,
                 mode: str) -> str:
    """For version 2 files, which pairs the bars cover ('all 8 ordered pairs of two GPUs, each
    measured alone; ...' or '4 of the 8 ...'), so that a chart of a subset never reads as the whole
    matrix; '' for version 1 files (every case of their one pair is drawn)."""
    if not all("flows_src_rank" in r.rows.columns for r in result_sets):
        return ""
    measured = [row for r in result_sets for _, row in r.rows.iterrows()
                if row["status"] == "ok" and row["metric"] == measure.metric.name
                and row["direction"] == direction and row["mode"] == mode]
    total, covered = _cross_gpu_flows(measured), _cross_gpu_flows(shown)
    if covered == total:
        return f"all {len(total)} ordered pairs of two GPUs, each measured alone; same-GPU pairs: matrix_* figures"
    return (f"{len(covered)} of the {len(total)} ordered pairs of two GPUs: those measured alone; "
            "the others and same-GPU pairs: matrix_* figures")


def bar_figure(result_sets: list[ResultSet], prepared: list[pd.DataFrame], measure: Measure, direction: str,
                mode: str) -> PlottedFigure | None:
    """One horizontal bar per case (median, whisker over the band), for cases that make no
    curve: every series measured at a single message size."""
    cases, best_only = _bar_cases(result_sets, prepared, measure, direction, mode)
    if not cases:
        return None
    colors = series_colors(prepared, measure)
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
    shown = [_pairs_shown(result_sets, [row for _, row in cases], measure, direction, mode),
             "best shape per method, pair and size" if best_only else ""]
    subset = "; ".join(part for part in shown if part) or "every case"
    set_title(figure, f"{measure.title} at a single message size — {direction}, {mode} ({subset})", result_sets)
    named = [label if len(result_sets) > 1 else f"{result_sets[0].name} · {label}" for label, _ in cases]
    return PlottedFigure(f"{measure.bars_name}_{direction}_{mode}", measure.bars_name, figure, named)
