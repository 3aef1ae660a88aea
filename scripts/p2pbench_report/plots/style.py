"""Styling and drawing helpers shared by the figure modules (plots/figures.py, plots/shapes.py): colors per
method, line styles per system, titles, the link's peak lines, axis headroom, new figures."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import matplotlib.colors as mcolors
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet


SYSTEM_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v")]
MODE_WORDS = {"uni": "one direction", "bidir": "both directions, total"}


@dataclass
class PlottedFigure:
    """A figure and what it shows, for writing and for tests."""

    name: str
    kind: str
    figure: Figure
    series: list[str] = field(default_factory=list)


# ---- data preparation ------------------------------------------------------------------------


def link_peaks(result_sets: list[ResultSet], mode: str) -> list[tuple[float, str]]:
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


def shaded_color(color: str, shade: int = 0) -> tuple:
    """The color, lighter for shade 1, 2 (the second and third rank pair of a series)."""
    base = mcolors.to_rgb(color)
    mix = min(0.55, 0.45 * shade)
    return tuple(c + (1 - c) * mix for c in base)


TITLE_FONT_SIZE = 10
TITLE_CHARACTERS_PER_INCH = 72 / (0.62 * TITLE_FONT_SIZE)  # DejaVu Sans averages ~0.6 em per character


def set_title(figure: Figure, headline: str, result_sets: list[ResultSet]) -> None:
    """The headline and a line per system, wrapped to the figure's width so that no line is cut
    (constrained layout then makes room for however many lines there are)."""
    lines = [headline] + [r.system.title_line() if r.name == r.system.label else f"{r.name}: {r.system.title_line()}"
                          for r in result_sets]
    width = max(20, int((figure.get_figwidth() - 0.2) * TITLE_CHARACTERS_PER_INCH))
    wrapped = [part for line in lines for part in textwrap.wrap(line, width, subsequent_indent="  ")]
    figure.suptitle("\n".join(wrapped), fontsize=TITLE_FONT_SIZE, x=0.01, ha="left")


def place_legend(ax, **options) -> None:
    """The legend right of the axes, outside the data (constrained layout narrows the axes)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **options)


def draw_peak_lines(ax, result_sets: list[ResultSet], mode: str) -> None:
    for value, label in link_peaks(result_sets, mode):
        ax.axhline(value, color="0.3", linestyle="--", linewidth=1.1, label=label, zorder=1)


def set_headroom(ax, result_sets: list[ResultSet], mode: str | None) -> None:
    """y from 0 to 12% above the highest curve, band or peak line (mode None: no peak line), so
    that nothing sits on the frame."""
    bands = [float(np.nanmax(c.get_paths()[0].vertices[:, 1])) for c in ax.collections if c.get_paths()]
    highest = max([float(np.nanmax(line.get_ydata())) for line in ax.get_lines() if len(line.get_ydata())] + bands
                  + ([value for value, _ in link_peaks(result_sets, mode)] if mode else []) + [1e-3])
    ax.set_ylim(0, highest * 1.12)


LOG_LABELLED = (1.0, 2.0, 5.0)  # labelled ticks of each decade: no two labels more than 2.5x apart


def plain_number(value: float) -> str:
    """A tick value as people write it: 2, 0.5, 1,000 (never 10^3 or 2e+03)."""
    if value >= 1:
        return f"{value:,.0f}"
    return f"{value:.6f}".rstrip("0").rstrip(".")


def label_log_axis(axis, unit: str) -> None:
    """A base-10 log axis labelled at 1, 2 and 5 of every decade, as plain numbers with the unit
    ('2 µs', '50 µs', '1,000 µs'): matplotlib's default labels decades only, so data between two
    decades (1.6–3 µs) had no labelled tick to read it against."""
    axis.set_major_locator(LogLocator(base=10, subs=LOG_LABELLED))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(s for s in range(3, 10) if s != 5)))
    axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{plain_number(value)} {unit}".strip()))


def new_figure(width: float = 9.0, height: float = 5.6) -> Figure:
    return Figure(figsize=(width, height), layout="constrained", dpi=100)


# ---- figures -------------------------------------------------------------------------------
