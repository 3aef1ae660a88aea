"""Figures of kernel shapes: heatmaps over blocks x threads (LD/ST) and blocks x shared memory
(TMA), SM scaling with the knee, and uni vs bidir bars. plot.build_figures draws them."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.cases import BYTE_AXES, plain_value
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import METHOD_COLORS, METHOD_TITLES, METHODS
from p2pbench_report.units import BANDWIDTH_AXIS_LABEL, format_size
from p2pbench_report.plots.style import (MODE_WORDS, SYSTEM_STYLES, PlottedFigure,
                                         draw_peak_lines, link_peaks, new_figure, place_legend, set_headroom,
                                         set_title, shaded_color)


KNEE_FRACTION = 0.9
SM_SCALING_COLUMNS = ("method", "direction", "mode", "pair", "bytes", "sms", "median")


def _first_pair(rows: pd.DataFrame) -> pd.DataFrame:
    """Uni rows of the first orientation (0->1 where measured); bidir rows unchanged."""
    if rows.empty or (rows["mode"] != "uni").all():
        return rows
    first = sorted(rows["pair"].unique())[0]
    return rows[rows["pair"] == first]


def _color(method: str, shade: int = 0) -> tuple:
    return shaded_color(METHOD_COLORS.get(method, "tab:gray"), shade)


def _sm_ticks(values) -> list[int]:
    """Every SM count when there are few; else the powers of two and the largest count."""
    distinct = sorted(set(int(v) for v in values))
    if len(distinct) <= 10:
        return distinct
    return [v for v in distinct if v & (v - 1) == 0 or v == distinct[-1]]


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
    figure = new_figure(max(6.5, 2.4 + 1.15 * len(column_values)), 2.6 + 0.55 * len(block_values))
    ax = figure.add_subplot()
    low, high, scale = _colour_scale(result_set, grid, mode)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", aspect="auto", origin="lower", vmin=low, vmax=high)
    figure.colorbar(image, ax=ax, label=f"median GB/s (1 GB = 1e9 B)\nscale: {scale}")
    vary = len({v for v in best_setting.values() if v is not None}) > 1
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
                  [format_size(c) if column_axis in BYTE_AXES else str(c) for c in column_values])
    ax.set_yticks(range(len(block_values)), [str(b) for b in block_values])
    ax.set_xlabel(AXIS_LABELS.get(column_axis, column_axis))
    ax.set_ylabel("blocks")
    pair = rows["pair"].iloc[0]
    headline = (f"{METHOD_TITLES[method]} {direction} {mode} ({pair}) at {format_size(size)}: "
                f"median GB/s, best over {best_over}")
    set_title(figure, headline, [result_set])
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", result_set.name).strip("-") or "system"
    return PlottedFigure(f"heatmap_{method}_{direction}_{mode}_{slug}", f"heatmap_{method}", figure,
                         [result_set.name])


def _colour_scale(result_set: ResultSet, grid: np.ndarray, mode: str) -> tuple[float, float, str]:
    """(vmin, vmax, what they are): from 0 to the link's peak (x2 for a bidir total), or to the best
    cell where the file records no peak. Never the data's min–max: 1% noise would fill the scale."""
    best = float(np.nanmax(grid))
    peaks = [value for value, _ in link_peaks([result_set], mode)]
    if peaks and peaks[-1] >= best:
        return 0.0, peaks[-1], f"0 to the link peak ({peaks[-1]:.0f} GB/s)"
    return 0.0, best, "0 to the best cell (no link peak recorded)"


AXIS_LABELS = {"threads": "threads per block", "smem_bytes": "shared memory per block (bytes)"}


def _heatmap_methods() -> tuple[tuple[str, str, str], ...]:
    """(method, column axis, axis taken at its best) of each copy method that sweeps blocks and two
    axes more: a grid of blocks x its second axis, the best over its third in each cell (ldst:
    threads, unroll; tma: smem_bytes, stages), in report order."""
    return tuple((m["name"], m["axes"][1], m["axes"][2]) for m in sorted(METHODS, key=lambda m: m["report_order"])
                 if m["kind"] == "copy" and len(m["axes"]) == 3 and m["axes"][0] == "blocks")


HEATMAP_METHODS = _heatmap_methods()


def heatmap_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = []
    for result_set, rows in zip(result_sets, prepared):
        if rows.empty:
            continue
        for method, column_axis, best_over in HEATMAP_METHODS:
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


def knee_text(points: pd.DataFrame, point: pd.Series) -> str:
    """'knee 8 SMs: 352 GB/s', or 'knee ≤ 8 SMs: first point measured' when fewer SMs were not run."""
    sms = int(point["sms"])
    if sms == int(points["sms"].min()):
        return f"knee ≤ {sms} SMs: first point measured ({point['median']:.0f} GB/s)"
    return f"knee {sms} SMs: {point['median']:.0f} GB/s"


def _mark_knee(ax, points: pd.DataFrame, color, order: int, label: str) -> None:
    """A star on the knee and its label inside the axes (lower right, one line per series)."""
    point = knee(points)
    ax.plot([float(point["sms"])], [point["median"]], marker="*", markersize=16, color=color,
            markeredgecolor="black", linestyle="none")
    ax.annotate(f"{label}: {knee_text(points, point)}", (float(point["sms"]), point["median"]),
                xytext=(0.98, 0.04 + 0.07 * order), textcoords="axes fraction", ha="right", va="bottom",
                fontsize=8, color=color, annotation_clip=False,
                bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": color, "alpha": 0.9},
                arrowprops={"arrowstyle": "-", "color": color, "linewidth": 0.8})


def _sm_points(group: pd.DataFrame, method: str) -> pd.DataFrame | None:
    """The method's best median per SM count at its largest size (first orientation); None below 3 counts."""
    method_rows = _first_pair(group[group["method"] == method])
    method_rows = method_rows[method_rows["bytes"] == method_rows["bytes"].max()]
    if method_rows["sms"].nunique() < 3:
        return None
    return method_rows.loc[method_rows.groupby("sms")["median"].idxmax()].sort_values("sms")


def _sm_scaling_series(result_sets: list[ResultSet], prepared: list[pd.DataFrame], direction: str,
                       mode: str) -> list[tuple[int, str, str, pd.DataFrame]]:
    """(file index, method, label, points) of every method with three SM counts or more."""
    series = []
    for index, (result_set, rows) in enumerate(zip(result_sets, prepared)):
        if rows.empty:
            continue
        rows = rows[list(SM_SCALING_COLUMNS)]  # filtering a frame of every field copies each column
        group = rows[(rows["direction"] == direction) & (rows["mode"] == mode) & rows["sms"].notna()]
        for method in sorted(group["method"].unique()):
            points = _sm_points(group, method)
            if points is not None:
                label = f"{result_set.name} · {method} at {format_size(points['bytes'].iloc[0])}"
                series.append((index, method, label, points))
    return series


def _sm_scaling_figure(result_sets: list[ResultSet], prepared: list[pd.DataFrame], direction: str,
                       mode: str) -> PlottedFigure | None:
    # The series first: most files have none, and an empty figure costs as much as a drawn one.
    series = _sm_scaling_series(result_sets, prepared, direction, mode)
    if not series:
        return None
    figure = new_figure(10.5, 5.6)
    ax = figure.add_subplot()
    all_sms = []
    for order, (index, method, label, points) in enumerate(series):
        linestyle, marker = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
        ax.plot(points["sms"].astype(float), points["median"], linestyle=linestyle, marker=marker,
                color=_color(method), label=label, markersize=5)
        _mark_knee(ax, points, _color(method), order, label)
        all_sms += list(points["sms"].astype(int))
    draw_peak_lines(ax, result_sets, mode)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(_sm_ticks(all_sms)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.0f}"))
    ax.set_xlabel("SMs used (sms_used; blocks where not recorded)")
    ax.set_ylabel(f"{BANDWIDTH_AXIS_LABEL}\n{MODE_WORDS[mode]}; best over the other kernel axes")
    set_headroom(ax, result_sets, mode)
    ax.grid(True, alpha=0.3)
    place_legend(ax)
    set_title(figure, f"SM scaling — {direction}, {mode}; ★ knee: fewest SMs reaching "
                      f"{KNEE_FRACTION:.0%} of the method's best", result_sets)
    return PlottedFigure(f"sm_scaling_{direction}_{mode}", "sm_scaling", figure, [label for _, _, label, _ in series])


def sm_scaling_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = [_sm_scaling_figure(result_sets, prepared, d, m) for d in ("push", "pull") for m in ("uni", "bidir")]
    return [f for f in figures if f]


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
            # the methods with a colour of their own (the link-bandwidth ones), in report order
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
        figure = new_figure(max(7.5, 1.9 * len(groups) + 4.5), 5.6)
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
        for value, label in link_peaks(result_sets, "uni"):
            ax.axhline(value, color="0.3", linestyle="--", linewidth=1, label=label)
        for value, label in link_peaks(result_sets, "bidir"):
            ax.axhline(value, color="0.3", linestyle=":", linewidth=1, label=label)
        ax.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
        ax.set_ylabel(BANDWIDTH_AXIS_LABEL)
        ax.set_ylim(0, max(max(g[4] for g in groups), *(v for v, _ in link_peaks(result_sets, "bidir")), 0) * 1.12)
        place_legend(ax)
        ax.grid(True, axis="y", alpha=0.3)
        set_title(figure, f"Uni vs bidir — {direction} (best shape at the largest common size)", result_sets)
        figures.append(PlottedFigure(f"uni_vs_bidir_{direction}", "uni_vs_bidir", figure,
                                     [g[0].replace("\n", " · ") for g in groups]))
    return figures
