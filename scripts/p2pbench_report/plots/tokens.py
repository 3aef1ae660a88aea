"""Expert-parallel dispatch and combine by SM budget: tokens_<direction>_<mode>, GB/s against SMs.

The tokens methods (rows with routing_skew) drawn per system x method x router against the
sender's SMs per destination (blocks): at each SM count the best median over the other axes
(warps, chunks in flight), the band its min–max. Their GB/s count the bytes that cross between
GPUs. The copy engine's bulk copy of the same bytes in the same file (its rows: a copy method
that takes no SM) is a dashed line: the figure dispatch is held against, with no SM at all. The first uni orientation (0->1 where
measured), as the shape figures.
"""

from __future__ import annotations

import pandas as pd

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import METHOD_COLORS, METHODS
from p2pbench_report.plots.chunks import draw_method_series, finish_axes, first_pair
from p2pbench_report.plots.series import direction_mode_combos, of_direction_mode
from p2pbench_report.plots.style import SYSTEM_STYLES, PlottedFigure, draw_peak_lines, new_figure
from p2pbench_report.units import BANDWIDTH_AXIS_LABEL, format_size

# The reference lines: the same bytes by a bulk copy that takes no SM (no kernel-shape axes: the
# copy engine).
NO_SM_COPIES = tuple(m["name"] for m in METHODS if m["kind"] == "copy" and m["runs_as_load"] and not m["axes"])


def token_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The tokens methods' rows (they alone carry a router)."""
    if rows.empty or "routing_skew" not in rows:
        return rows.iloc[0:0]
    return rows[rows["routing_skew"].notna()]


def _router(skew) -> str:
    return "uniform" if int(skew) == 0 else f"Zipf {int(skew) / 100:g}"


def _draw_system(ax, rows: pd.DataFrame, system: str, index: int, several: bool) -> list[str]:
    linestyle, marker = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
    tokens = first_pair(token_rows(rows))
    labels = draw_method_series(ax, tokens, "routing_skew", "blocks", lambda skew: f"{_router(skew)} routing",
                                f"{system} · " if several else "", (linestyle, marker))
    bulk = first_pair(rows[rows["method"].isin(NO_SM_COPIES) & rows["bytes"].isin(tokens["bytes"].unique())])
    for (method, size), group in bulk.groupby(["method", "bytes"]):
        label = (f"{system} · " if several else "") + f"{method} bulk copy, {format_size(int(size))} (no SM)"
        ax.axhline(group["median"].max(), linestyle="--", linewidth=1.1, color=METHOD_COLORS.get(method, "tab:blue"),
                   label=label)
        labels.append(label)
    return labels


def token_figures(result_sets: list[ResultSet], prepared: list[pd.DataFrame]) -> list[PlottedFigure]:
    figures = []
    for direction, mode in direction_mode_combos([token_rows(rows) for rows in prepared]):
        figure = new_figure(10.5, 5.6)
        ax = figure.add_subplot()
        drawn = [(r, of_direction_mode(rows, direction, mode)) for r, rows in zip(result_sets, prepared)]
        drawn = [(r, rows) for r, rows in drawn if not token_rows(rows).empty]
        labels = []
        for index, (result_set, rows) in enumerate(drawn):
            labels += _draw_system(ax, rows, result_set.name, index, len(drawn) > 1)
        if not labels:
            continue
        draw_peak_lines(ax, result_sets, mode)
        ax.set_xlabel("SMs of the sender per destination rank (blocks)")
        ax.set_ylabel(f"{BANDWIDTH_AXIS_LABEL} crossing between GPUs\nline: best median over warps and chunks in flight; "
                      "band: min–max")
        finish_axes(figure, ax, result_sets, mode, f"Token dispatch and combine by SMs — {direction}, {mode}",
                    [r for r, _ in drawn])
        figures.append(PlottedFigure(f"tokens_{direction}_{mode}", "tokens", figure, labels))
    return figures
