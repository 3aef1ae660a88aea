"""The compare page's ratio figure: ratio_<file>, each later file's median over the first file's
per case against message size, one colour per method; per size the line is the geometric mean of
the method's cases (directions, modes, pairs, shapes) and the band their min–max; the threshold
(±3% by default) a grey band around 1."""

from __future__ import annotations

import math
import re

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.compare import Comparison
from p2pbench_report.ratios import Ratio, ratios
from p2pbench_report.methods import METHOD_COLORS
from p2pbench_report.plots.series import PALETTE, power_of_two_axis
from p2pbench_report.plots.style import PlottedFigure, new_figure, place_legend, set_title
from p2pbench_report.units import SIZE_AXIS_LABEL


def _per_size(items: list[Ratio]) -> list[tuple[float, float, float, float]]:
    """(size, geometric mean, min, max) per size."""
    sizes: dict[int, list[float]] = {}
    for ratio in items:
        sizes.setdefault(int(ratio.case.key[3]), []).append(ratio.value)
    return [(float(size), math.exp(sum(math.log(v) for v in values) / len(values)), min(values), max(values))
            for size, values in sorted(sizes.items())]


def _ratio_figure(comparison: Comparison, index: int, items: list[Ratio], threshold: float) -> PlottedFigure:
    reference, other = comparison.result_sets[0], comparison.result_sets[index]
    figure = new_figure(10.5, 5.2)
    ax = figure.add_subplot()
    methods = list(dict.fromkeys(r.case.key[0] for r in items))
    extra_colors = iter(c for c in PALETTE if c not in METHOD_COLORS.values())
    labels, sizes, values = [], [], []
    for order, method in enumerate(methods):
        points = _per_size([r for r in items if r.case.key[0] == method])
        color = METHOD_COLORS.get(method) or next(extra_colors, "tab:gray")
        dodge = 2 ** (0.08 * (order - (len(methods) - 1) / 2))  # methods side by side at a size, not on top
        x = [p[0] * dodge for p in points]
        count = sum(1 for r in items if r.case.key[0] == method)
        label = f"{method} ({count} case{'s' if count != 1 else ''})"
        ax.plot(x, [p[1] for p in points], marker="o", markersize=5, color=color, label=label,
                linestyle="-" if len(x) > 1 else "none")
        ax.vlines(x, [p[2] for p in points], [p[3] for p in points], color=color, linewidth=3, alpha=0.35)
        labels.append(label)
        sizes += [p[0] for p in points]  # the measured sizes, not the dodged x: ticks must fall on them
        values += [v for p in points for v in p[1:]]
    ax.axhspan(1 - threshold, 1 + threshold, color="0.85", zorder=0, label=f"±{threshold * 100:g}%")
    ax.axhline(1.0, color="0.3", linewidth=1.0)
    ax.set_xscale("log", base=2)
    power_of_two_axis(ax.xaxis, sizes)
    ax.set_xlabel(SIZE_AXIS_LABEL)
    spread = max([abs(v - 1) for v in values] + [threshold]) * 1.25
    ax.set_ylim(1 - spread, 1 + spread)
    ax.set_ylabel(f"{other.name} / {reference.name} (median)\n"
                  "point: geometric mean over the method's cases;\nbar: their min–max", fontsize=9)
    ax.grid(True, alpha=0.3)
    place_legend(ax, title="method")
    set_title(figure, f"Ratio {other.name} / {reference.name} per method vs message size "
                      f"(bandwidth: >1 faster; latency: >1 slower)", [reference, other])
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", other.name).strip("-") or "file"
    return PlottedFigure(f"ratio_{index}_{slug}", "ratio", figure, labels)


def ratio_figures(comparison: Comparison, threshold: float) -> list[PlottedFigure]:
    """One figure per later file that shares cases with the first."""
    found = ratios(comparison)
    return [_ratio_figure(comparison, index, items, threshold)
            for index in range(1, len(comparison.result_sets))
            if (items := [r for r in found if r.file_index == index])]
