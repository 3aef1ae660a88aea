"""Put with signal by chunk size: chunks_<direction>_<mode>, GB/s against the bytes per put.

Methods that cut a transfer into chunks, each followed by its signal (rows with chunk_bytes and
no router: tokens rows are tokens.py's),
drawn per system x method x transfer size against the chunk size: at each chunk size the best
median over the other axes (SMs, warps, chunks in flight), the band its min–max. The bulk copies
of the same transfer size in the same file (ldst, tma, ce rows) are dashed lines in their
method's colour: what the same bytes cost without a signal per chunk. The first uni orientation
(0->1 where measured), as the shape figures.
"""

from __future__ import annotations

import pandas as pd

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import METHOD_COLORS, METHODS
from p2pbench_report.plots.series import direction_mode_combos, of_direction_mode, power_of_two_axis
from p2pbench_report.plots.style import (SYSTEM_STYLES, PlottedFigure, draw_peak_lines, new_figure, place_legend,
                                         set_headroom, set_title, shaded_color)
from p2pbench_report.units import BANDWIDTH_AXIS_LABEL, format_size

# The bulk copies: one-sided copies that move a transfer whole, with no signal per chunk.
BULK_METHODS = tuple(m["name"] for m in METHODS if m["kind"] == "copy" and "chunk_bytes" not in m["axes"])


def first_pair(rows: pd.DataFrame) -> pd.DataFrame:
    """The first orientation of uni rows (0->1 where measured); other modes whole."""
    if rows.empty or (rows["mode"] != "uni").all():
        return rows
    return rows[rows["pair"] == sorted(rows["pair"].unique())[0]]


def _chunked(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of put_signal methods: a chunk size and no router (the tokens methods have their figure)."""
    if rows.empty or "chunk_bytes" not in rows:
        return rows.iloc[0:0]
    routed = rows["routing_skew"].notna() if "routing_skew" in rows else False
    return rows[rows["chunk_bytes"].notna() & ~routed]


def draw_method_series(ax, rows: pd.DataFrame, shade_column: str, x_column: str, describe, prefix: str,
                       style) -> list[str]:
    """One line per method x value of shade_column (shades of the method's colour), labelled
    "<series>, describe(value)": at each x the best median over the other axes, its min–max band."""
    linestyle, marker = style
    labels = []
    for method in sorted(rows["method"].unique()):
        for shade, value in enumerate(sorted(rows[shade_column].unique())):
            series = rows[(rows["method"] == method) & (rows[shade_column] == value)]
            if series.empty:
                continue
            label = prefix + f"{series['series'].iloc[0]}, {describe(value)}"
            color = shaded_color(METHOD_COLORS.get(method, "tab:gray"), shade)
            best = series.loc[series.groupby(x_column)["median"].idxmax()].sort_values(x_column)
            x = best[x_column].astype(float).to_numpy()
            ax.plot(x, best["median"], linestyle=linestyle, marker=marker, markersize=4, color=color, label=label)
            ax.fill_between(x, best["low"], best["high"], color=color, alpha=0.18, linewidth=0)
            labels.append(label)
    return labels


def finish_axes(figure, ax, result_sets: list[ResultSet], mode: str, title: str, drawn: list[ResultSet]) -> None:
    """Head room above the peaks, the grid, the legend and the title naming the drawn systems."""
    set_headroom(ax, result_sets, mode)
    ax.grid(True, alpha=0.3)
    place_legend(ax)
    set_title(figure, title, drawn)


def _draw_system(ax, rows: pd.DataFrame, system: str, index: int, several: bool) -> list[str]:
    linestyle, marker = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
    chunked = first_pair(_chunked(rows))
    sizes = sorted(chunked["bytes"].unique())
    labels = draw_method_series(ax, chunked, "bytes", "chunk_bytes", lambda size: f"{format_size(int(size))} transfers",
                                f"{system} · " if several else "", (linestyle, marker))
    bulk = first_pair(rows[rows["method"].isin(BULK_METHODS) & rows["bytes"].isin(sizes)])
    for (method, size), group in bulk.groupby(["method", "bytes"]):
        best = group.loc[group["median"].idxmax()]
        label = (f"{system} · " if several else "") + f"{group['series'].iloc[0]} bulk copy, {format_size(int(size))}"
        ax.axhline(best["median"], linestyle="--", linewidth=1.1, color=METHOD_COLORS.get(method, "tab:gray"),
                   label=label)
        labels.append(label)
    return labels


def chunk_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = []
    chunked = [_chunked(rows) for rows in prepared]
    for direction, mode in direction_mode_combos(chunked):
        figure = new_figure(10.5, 5.6)
        ax = figure.add_subplot()
        labels, chunk_sizes = [], []
        drawn = [(r, of_direction_mode(rows, direction, mode)) for r, rows in zip(result_sets, prepared)]
        drawn = [(r, rows) for r, rows in drawn if not _chunked(rows).empty]
        for index, (result_set, rows) in enumerate(drawn):
            labels += _draw_system(ax, rows, result_set.name, index, len(drawn) > 1)
            chunk_sizes += list(_chunked(rows)["chunk_bytes"].astype(float))
        if not labels:
            continue
        draw_peak_lines(ax, result_sets, mode)
        ax.set_xscale("log", base=2)
        power_of_two_axis(ax.xaxis, chunk_sizes)
        ax.set_xlabel("bytes per put (each followed by its signal)")
        ax.set_ylabel(f"{BANDWIDTH_AXIS_LABEL}\nline: best median over SMs, warps and chunks in flight; band: min–max")
        finish_axes(figure, ax, result_sets, mode, f"Put with signal by chunk size — {direction}, {mode}",
                    [r for r, _ in drawn])
        figures.append(PlottedFigure(f"chunks_{direction}_{mode}", "chunks", figure, labels))
    return figures
