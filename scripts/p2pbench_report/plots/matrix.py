"""Heatmaps of the all-pairs matrix of version 2 files (docs/groups.md), one per file, case and
schedule:

  matrix_<case>_<schedule>_<system>     N x N, rows = source rank, columns = destination rank,
                                        each labelled by rank and short GPU UUID; a cell is the
                                        pair's median GB/s (bidir: each direction's own figure
                                        while both ran; rounds: the pair's flow in its round).
  agreement_<case>_<system>             rounds vs the pair alone, % difference per pair: its
                                        alone_check, else its figure in the sequential matrix
                                        ("vs seq."), as the run wrote them (rounds_agreement).

Drawn for groups of MIN_MATRIX_RANKS ranks or more: two ranks' matrix is their one pair, which
the size figures show already. <case> is method_direction_mode_size[_shape] (pair_figures.CaseGroup.slug). The colour scale
runs from 0 to the link peak per direction (meta.pairs; the highest where pairs differ), or from
0 to the best cell where no peak is known (and to the best cell where one exceeds the peak):
never the data's own min–max, which would paint 1% of noise as the whole scale. Cells of two
ranks on one GPU are hatched grey and say "same GPU" (never a P2P figure); skipped and failed
cases say so; the diagonal (a rank to itself) is no pair. The agreement map's scale is symmetric
around 0, at least ±AGREEMENT_SCALE_PCT.
"""

from __future__ import annotations

import math
import re

import matplotlib

import numpy as np
from matplotlib.patches import Rectangle

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.agreement import Agreement, agreements
from p2pbench_report.group import Group, describe_group
from p2pbench_report.loader import ResultSet
from p2pbench_report.pair_figures import CaseGroup, PairFigure, by_pair, pair_figures, pair_median
from p2pbench_report.plots.style import PlottedFigure, new_figure, set_title

HEATMAP_SCHEDULES = ("sequential", "rounds")
AGREEMENT_SCALE_PCT = 10.0
MIN_MATRIX_RANKS = 3
BLANK = "#f2f2f2"
SAME_GPU_COLOR = "0.78"
NOT_MEASURED_COLOR = "0.9"
DIAGONAL_COLOR = "0.55"  # a rank to itself: no pair


def system_slug(result_set: ResultSet) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", result_set.name).strip("-") or "system"


def colour_scale(group: Group, values: np.ndarray) -> tuple[float, float, str]:
    """(vmin, vmax, what they are): 0 to the highest link peak of the file's pairs; 0 to the best
    cell without a known peak or where a cell exceeds it."""
    best = float(np.nanmax(values)) if np.isfinite(values).any() else 0.0
    peak = group.max_peak()
    if peak and peak >= best:
        return 0.0, peak, f"0 to the link peak ({peak:.0f} GB/s per direction" + \
            (", the highest of the pairs')" if len({p.peak_gbps for p in group.pairs.values() if p.peak_gbps}) > 1
             else ")")
    if peak:
        return 0.0, best, f"0 to the best cell (above the link peak of {peak:.0f} GB/s)"
    return 0.0, max(best, 1e-3), "0 to the best cell (no link peak recorded)"


def _cell_text(figures: list[PairFigure]) -> tuple[str, str]:
    """(text, kind) of an unmeasured cell: kind 'skipped', 'failed' or 'not run'."""
    if not figures:
        return "not run", "not run"
    status = figures[0].status
    return status, status


def _grid(group: Group, cells: dict[tuple[int, int], list[PairFigure]]) -> np.ndarray:
    grid = np.full((group.ranks, group.ranks), np.nan)
    for (src, dst), figures in cells.items():
        value = pair_median(figures)
        if value is not None and not group.same_device(src, dst) and not figures[0].same_device \
                and 0 <= src < group.ranks and 0 <= dst < group.ranks:
            grid[src, dst] = value
    return grid


def _shade(ax, row: int, column: int, color, hatch: str | None = None) -> None:
    ax.add_patch(Rectangle((column - 0.5, row - 0.5), 1, 1, facecolor=color, edgecolor="0.55", hatch=hatch,
                           linewidth=0.4))


def _label_cells(ax, group: Group, grid: np.ndarray, cells: dict, low: float, high: float) -> None:
    size = max(5.5, 10.0 - group.ranks / 4)  # cells shrink as N grows
    for src in range(group.ranks):
        for dst in range(group.ranks):
            value = grid[src, dst]
            if src == dst:
                _shade(ax, src, dst, DIAGONAL_COLOR)
                ax.text(dst, src, "—", ha="center", va="center", fontsize=size, color="white")
            elif group.same_device(src, dst) or any(f.same_device for f in cells.get((src, dst), [])):
                _shade(ax, src, dst, SAME_GPU_COLOR, "///")
                ax.text(dst, src, "same GPU", ha="center", va="center", fontsize=size - 1, color="black",
                        bbox={"facecolor": SAME_GPU_COLOR, "edgecolor": "none", "pad": 0.5})
            elif not math.isnan(value):
                bright = (value - low) / (high - low) > 0.6 if high > low else True
                ax.text(dst, src, f"{value:.0f}", ha="center", va="center", fontsize=size,
                        color="black" if bright else "white")
            else:
                text, _ = _cell_text(cells.get((src, dst), []))
                _shade(ax, src, dst, NOT_MEASURED_COLOR)
                ax.text(dst, src, text, ha="center", va="center", fontsize=size - 1, color="0.3")


def _rank_axes(ax, group: Group) -> None:
    labels = [group.rank_label(r) for r in range(group.ranks)]
    ax.set_xticks(range(group.ranks), labels, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(group.ranks), labels, fontsize=8)
    ax.set_xlabel("destination rank · GPU (short UUID)")
    ax.set_ylabel("source rank · GPU (short UUID)")
    ax.set_xlim(-0.5, group.ranks - 0.5)
    ax.set_ylim(group.ranks - 0.5, -0.5)  # source 0 on top, as nvbandwidth prints its matrix


def _new_matrix_figure(group: Group):
    side = max(5.5, 1.9 + 0.85 * group.ranks)
    figure = new_figure(side + 2.2, side + 0.6)
    return figure, figure.add_subplot()


MODE_CELLS = {"uni": "median GB/s per ordered pair", "bidir": "median GB/s of each direction while both ran"}


def matrix_heatmap(result_set: ResultSet, group: Group, case: CaseGroup, schedule: str,
                   figures: list[PairFigure]) -> PlottedFigure:
    cells = by_pair(figures)
    grid = _grid(group, cells)
    low, high, scale = colour_scale(group, grid)
    figure, ax = _new_matrix_figure(group)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=matplotlib.colormaps["viridis"].with_extremes(bad=BLANK),
                      vmin=low, vmax=high, aspect="equal")
    figure.colorbar(image, ax=ax, shrink=0.85, label=f"median GB/s (1 GB = 1e9 B)\nscale: {scale}")
    _label_cells(ax, group, grid, cells, low, high)
    _rank_axes(ax, group)
    how = {"sequential": "one pair at a time", "rounds": "in rounds of disjoint pairs"}.get(schedule, schedule)
    set_title(figure, f"Matrix {case.describe()}, {how}: {MODE_CELLS.get(case.mode, 'median GB/s')}", [result_set])
    name = f"matrix_{case.slug()}_{schedule}_{system_slug(result_set)}"
    return PlottedFigure(name, "matrix", figure, [result_set.name])


def agreement_heatmap(result_set: ResultSet, group: Group, case: CaseGroup,
                      found: list[Agreement]) -> PlottedFigure:
    grid = np.full((group.ranks, group.ranks), np.nan)
    from_sequential = set()
    for a in found:
        grid[a.src_rank, a.dst_rank] = 100 * a.difference
        if a.alone_from != "alone_check":
            from_sequential.add((a.src_rank, a.dst_rank))
    limit = max(AGREEMENT_SCALE_PCT, float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 0.0)
    figure, ax = _new_matrix_figure(group)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=matplotlib.colormaps["RdBu"].with_extremes(bad=BLANK),
                      vmin=-limit, vmax=limit, aspect="equal")
    figure.colorbar(image, ax=ax, shrink=0.85, label=f"rounds / alone − 1 (%)\nscale: ±{limit:.0f}%, 0 = agree")
    for src in range(group.ranks):
        for dst in range(group.ranks):
            if src == dst:
                _shade(ax, src, dst, DIAGONAL_COLOR)
            elif group.same_device(src, dst):
                _shade(ax, src, dst, SAME_GPU_COLOR, "///")
                ax.text(dst, src, "same GPU", ha="center", va="center", fontsize=7)
            elif not math.isnan(grid[src, dst]):
                label = f"{grid[src, dst]:+.1f}%" + ("\nvs seq." if (src, dst) in from_sequential else "")
                ax.text(dst, src, label, ha="center", va="center", fontsize=8)
            else:
                ax.text(dst, src, "not checked", ha="center", va="center", fontsize=6, color="0.45")
    _rank_axes(ax, group)
    set_title(figure, f"Rounds vs alone, {case.describe()}: % difference per checked pair "
                      f"(negative: slower in its round)", [result_set])
    return PlottedFigure(f"agreement_{case.slug()}_{system_slug(result_set)}", "agreement", figure, [result_set.name])


def _heatmaps_of(result_set: ResultSet, group: Group) -> list[PlottedFigure]:
    grouped: dict[tuple, list[PairFigure]] = {}
    for figure in pair_figures(result_set):
        schedule = figure.schedule or "sequential"
        if figure.pattern == "matrix" and schedule in HEATMAP_SCHEDULES:
            grouped.setdefault((figure.group, schedule), []).append(figure)
    return [matrix_heatmap(result_set, group, case, schedule, figures)
            for (case, schedule), figures in grouped.items() if any(f.measured for f in figures)]


def matrix_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    """Every matrix heatmap and rounds-vs-alone map of the version 2 files."""
    plotted = []
    for result_set in result_sets:
        group = describe_group(result_set.document["meta"])
        if group is None or group.ranks < MIN_MATRIX_RANKS:
            continue
        plotted += _heatmaps_of(result_set, group)
        checked: dict[CaseGroup, list[Agreement]] = {}
        for agreement in agreements(result_set):
            checked.setdefault(agreement.group, []).append(agreement)
        plotted += [agreement_heatmap(result_set, group, case, found) for case, found in checked.items()]
    return plotted
