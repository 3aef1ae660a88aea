"""Remote atomics by type x access pattern: atomics_<direction>, grouped bars of Gops/s.

An atomic case's `bytes` follows from its launch (blocks x threads x ops per thread x type size),
so bandwidth against size says nothing; what varies is the atomic type (u32, f32, f32x4, f16x2 ...)
and the pattern (every thread its own address, or all on a few hot addresses). One group of bars
per type, one bar per pattern (x launch shape, where several were run), median with a min–max
whisker; the first orientation (0->1 where measured) of the first file that has atomics per system.
"""

from __future__ import annotations

import pandas as pd

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.cases import plain_value
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import names_of_kinds
from p2pbench_report.plots.style import PlottedFigure, new_figure, place_legend, set_title, shaded_color

TYPE_ORDER = ("u32", "f32", "f32x4", "f16x2", "bf16x2", "f16x8", "bf16x8")
PATTERN_COLORS = {"distinct": "tab:blue", "hot_spot": "tab:red"}
SYSTEM_HATCHES = ("", "//", "xx", "..")
OPS_COLUMN = "atomic_ops_per_s"


def _atomic_rows(rows: pd.DataFrame, direction: str) -> pd.DataFrame:
    if rows.empty or f"{OPS_COLUMN}_median" not in rows:
        return rows.iloc[0:0]
    chosen = rows[rows["method"].isin(names_of_kinds("atomic")) & (rows["direction"] == direction)
                  & rows[f"{OPS_COLUMN}_median"].notna()]
    if chosen.empty:
        return chosen
    return chosen[chosen["pair"] == sorted(chosen["pair"].unique())[0]]


def _bar_key(row: pd.Series) -> str:
    """'distinct · b132 t256' (the pattern, the launch shape; hot spots with their address count)."""
    pattern = str(row["atomic_pattern"])
    hot = plain_value(row.get("hot_addresses"))
    if hot:
        pattern += f" ({hot} addresses)"
    return f"{pattern} · b{plain_value(row['blocks'])} t{plain_value(row['threads'])}"


def _type_rank(name: str) -> tuple:
    return (TYPE_ORDER.index(name) if name in TYPE_ORDER else len(TYPE_ORDER), name)


def _draw(ax, groups: list[tuple[str, pd.DataFrame]]) -> list[str]:
    """Grouped bars: x = type, one bar per (system, pattern, shape). Returns the bar labels."""
    types = sorted({t for _, rows in groups for t in rows["atomic_type"]}, key=_type_rank)
    bars = [(system_index, system, key) for system_index, (system, rows) in enumerate(groups)
            for key in sorted({_bar_key(row) for _, row in rows.iterrows()})]
    width = 0.8 / len(bars)
    shades = {key: rank for rank, key in enumerate(sorted({key.split(" · ")[1] for _, _, key in bars}))}
    for bar_index, (system_index, system, key) in enumerate(bars):
        rows = groups[system_index][1]
        pattern, shape = key.split(" · ")
        color = shaded_color(PATTERN_COLORS.get(pattern.split(" ")[0], "tab:gray"), shades[shape])
        label = f"{system} · {key}" if len(groups) > 1 else key
        labelled = False
        for type_index, atomic_type in enumerate(types):
            match = [row for _, row in rows[rows["atomic_type"] == atomic_type].iterrows() if _bar_key(row) == key]
            if not match:
                continue
            row = match[0]
            median = row[f"{OPS_COLUMN}_median"] / 1e9
            low, high = row[f"{OPS_COLUMN}_min"] / 1e9, row[f"{OPS_COLUMN}_max"] / 1e9
            x = type_index - 0.4 + width * (bar_index + 0.5)
            ax.bar(x, median, width, color=color, edgecolor="black", linewidth=0.5,
                   hatch=SYSTEM_HATCHES[system_index % len(SYSTEM_HATCHES)], yerr=[[median - low], [high - median]],
                   capsize=2, error_kw={"linewidth": 0.8}, label=None if labelled else label)
            labelled = True
    ax.set_xticks(range(len(types)), types)
    return [f"{system} · {key}" for _, system, key in bars]


def atomic_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = []
    for direction in ("push", "pull"):
        groups = [(r.name, _atomic_rows(rows, direction)) for r, rows in zip(result_sets, prepared)]
        groups = [(name, rows) for name, rows in groups if not rows.empty]
        if not groups:
            continue
        figure = new_figure(10.5, 5.2)
        ax = figure.add_subplot()
        labels = _draw(ax, groups)
        ax.set_xlabel("atomic type (one remote atomic per thread per operation)")
        ax.set_ylabel("remote atomics (Gops/s, 1 G = 1e9)\nbar: median, whisker: min–max")
        ax.set_ylim(0, max(float(rows[f"{OPS_COLUMN}_max"].max()) for _, rows in groups) / 1e9 * 1.12)
        ax.grid(True, axis="y", alpha=0.3)
        place_legend(ax, title="pattern · launch")
        pair = groups[0][1]["pair"].iloc[0]
        set_title(figure, f"Remote atomics by type and access pattern — {direction} ({pair})",
                  [r for r in result_sets if r.name in {name for name, _ in groups}])
        figures.append(PlottedFigure(f"atomics_{direction}", "atomics", figure, labels))
    return figures
