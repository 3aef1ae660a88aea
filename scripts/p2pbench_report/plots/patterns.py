"""Bars of the traffic patterns of version 2 files (one_to_all, all_to_one, all_to_all, ring,
bisection, flows; docs/groups.md): per file, method, direction and mode a figure

  patterns_<method>_<direction>_<mode>_<system>

with one bar per pattern case: the aggregate's median GB/s (all bytes over the union of the
flows' windows), whisker min–max, and beside it the sum of the flows' link peaks (aggregate
peak_gbps) as a hollow bar with the share reached; x from 0. A case whose flows include two
ranks of one GPU says so ("incl. 1 same-GPU flow", "every flow within one GPU"): such a flow is
no P2P figure.
"""

from __future__ import annotations

import pandas as pd

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.cases import describe_config
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import METHOD_COLORS
from p2pbench_report.pair_figures import case_group
from p2pbench_report.plots.matrix import system_slug
from p2pbench_report.plots.style import PlottedFigure, new_figure, set_title
from p2pbench_report.units import BANDWIDTH_AXIS_LABEL, format_size

LOAD_PATTERNS = ("one_to_all", "all_to_one", "all_to_all", "ring", "bisection", "flows")


LISTED_FLOWS = 4  # patterns without a parameter (bisection, flows) name their flows up to this many


def _same_gpu_words(flows: list[dict]) -> str:
    """How many flows stay within one GPU: such a flow is memory bandwidth, no P2P figure."""
    same = sum(1 for f in flows if f.get("same_device"))
    if not same:
        return ""
    return "every flow within one GPU" if same == len(flows) else f"incl. {same} same-GPU flow{'s' if same > 1 else ''}"


def pattern_label(row: dict) -> str:
    """'one_to_all from r2 (3 flows)', 'ring shift 1 (4 flows)', 'bisection 0→2, 1→3 (2 flows,
    every flow within one GPU)', ... (the pattern's parameter read back from its flows; two cases
    of one pattern that differ only in their flows are told apart by listing them)."""
    flows = row.get("flows") or []
    pattern = row.get("pattern")
    sources = {f["src_rank"] for f in flows}
    destinations = {f["dst_rank"] for f in flows}
    words = [pattern]
    if pattern == "one_to_all" and len(sources) == 1:
        words.append(f"from r{next(iter(sources))}")
    elif pattern == "all_to_one" and len(destinations) == 1:
        words.append(f"to r{next(iter(destinations))}")
    elif pattern == "ring" and flows:
        ranks = len(sources | destinations)
        words.append(f"shift {(flows[0]['dst_rank'] - flows[0]['src_rank']) % max(ranks, 1)}")
    elif len(flows) <= LISTED_FLOWS:
        words.append(", ".join(f"{f['src_rank']}→{f['dst_rank']}" for f in flows))
    count = f"{len(flows)} flow{'s' if len(flows) != 1 else ''}"
    same = _same_gpu_words(flows)
    words.append(f"({count}, {same})" if same else f"({count})")
    return " ".join(words)


def _case_label(row: dict) -> str:
    config = describe_config(pd.Series(dict(case_group(row).shape)))
    return f"{pattern_label(row)} · {format_size(row['bytes'])}" + (f" {config}" if config else "")


def _pattern_rows(result_set: ResultSet) -> dict[tuple, list[dict]]:
    grouped: dict[tuple, list[dict]] = {}
    for row in result_set.document.get("results") or []:
        if row.get("pattern") in LOAD_PATTERNS and row.get("status") == "ok" \
                and isinstance(row.get("bandwidth_gbps"), dict) and "collective" not in row:  # plots/collectives.py
            grouped.setdefault((row["method"], row["direction"], row["mode"]), []).append(row)
    return grouped


def _bars(ax, rows: list[dict], color) -> float:
    """Draws the bars; returns the highest x drawn. Each legend entry goes with the first bar of
    its kind (the first case may have no peak bar)."""
    highest, named = 0.0, set()
    for y, row in enumerate(rows):
        stats = row["bandwidth_gbps"]
        median = stats["median"]
        peak = (row.get("aggregate") or {}).get("peak_gbps")
        ax.barh(y - 0.18, median, 0.36, color=color, edgecolor="black", linewidth=0.6,
                xerr=[[median - stats["min"]], [stats["max"] - median]], capsize=2, error_kw={"linewidth": 0.8},
                label=None if "aggregate" in named else "aggregate (median, min–max)")
        named.add("aggregate")
        ax.text(stats["max"], y - 0.18, f" {median:.0f}", va="center", fontsize=7)
        highest = max(highest, stats["max"])
        if peak:
            ax.barh(y + 0.18, peak, 0.36, facecolor="none", edgecolor="0.3", hatch="..", linewidth=0.8,
                    label=None if "peak" in named else "sum of the flows' link peaks")
            named.add("peak")
            ax.text(peak, y + 0.18, f" {peak:.0f} ({100 * median / peak:.0f}% reached)", va="center", fontsize=7)
            highest = max(highest, peak)
        else:
            why = ("a same-GPU flow has no link peak" if any(f.get("same_device") for f in row.get("flows") or [])
                   else "a flow without a link peak")
            ax.text(0, y + 0.18, f" sum of the flows' peaks unknown ({why})", va="center", fontsize=7, color="0.35")
    return highest


def pattern_figure(result_set: ResultSet, method: str, direction: str, mode: str,
                   rows: list[dict]) -> PlottedFigure:
    labels = [_case_label(row) for row in rows]
    figure = new_figure(10.0, 2.4 + 0.62 * len(rows))
    ax = figure.add_subplot()
    highest = _bars(ax, rows, METHOD_COLORS.get(method, "tab:gray"))
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(highest, 1e-3) * 1.25)
    # two lines: long case labels narrow the axes, and one line ran past the figure's edge
    ax.set_xlabel(f"{BANDWIDTH_AXIS_LABEL}\naggregate: all bytes over the union of the flows' windows")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    set_title(figure, f"Patterns — {method} {direction} {mode}: aggregate vs the sum of the flows' peaks",
              [result_set])
    return PlottedFigure(f"patterns_{method}_{direction}_{mode}_{system_slug(result_set)}", "patterns", figure,
                         [f"{result_set.name} · {label}" for label in labels])


def pattern_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    plotted = []
    for result_set in result_sets:
        for (method, direction, mode), rows in _pattern_rows(result_set).items():
            plotted.append(pattern_figure(result_set, method, direction, mode, rows))
    return plotted
