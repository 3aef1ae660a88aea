"""The GEMM -> reduce-scatter pipeline (pipeline.py): per file, GEMM (m, k), rank count and
reduce-scatter blocks,
  pipeline_<m>x<k>_<n>ranks_<blocks>sms_<system>
time per operation of each variant against the tile count (left axis, µs) and the overlap
efficiency of each fused variant (right axis, dashed)."""

from __future__ import annotations

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import METHOD_COLORS
from p2pbench_report.pipeline import EFFICIENCIES, VARIANTS, pipeline_shapes
from p2pbench_report.plots.matrix import system_slug
from p2pbench_report.plots.style import PlottedFigure, new_figure, set_title


def _figure(result_set: ResultSet, key: tuple, shapes: list[dict]) -> PlottedFigure:
    m, k, ranks, blocks = key
    figure = new_figure(10.5, 5.6)
    ax = figure.add_subplot()
    labels = []
    shapes = sorted(shapes, key=lambda s: s["tiles"])
    for method, variant in VARIANTS.items():
        points = [(s["tiles"], s["times_us"][variant]) for s in shapes if variant in s["times_us"]]
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=variant,
                    color=METHOD_COLORS.get(method) or None)
            labels.append(variant)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("column tiles of the GEMM")
    ax.set_ylabel("time per operation (µs, median)")
    ax.grid(True, alpha=0.3)
    handles = ax.get_legend_handles_labels()[0]
    right = None
    for (fused, key), marker in zip(EFFICIENCIES.items(), ("s", "^")):
        efficiency = [(s["tiles"], s[key]) for s in shapes if key in s]
        if not efficiency:
            continue
        right = right or ax.twinx()
        label = f"overlap efficiency, {fused} (right axis)"
        handles += right.plot([e[0] for e in efficiency], [e[1] for e in efficiency], linestyle="--", marker=marker,
                              color="black", label=label)
        labels.append(label)
    if right:
        right.set_ylabel("overlap efficiency: (T_seq − T_fused) / min(T_gemm, T_rs)")
    # Inside the axes: right of them sits the efficiency axis' label.
    ax.legend(handles=handles, fontsize=7, loc="upper left")
    set_title(figure, f"GEMM {m}×{m}×{k} → reduce-scatter on {ranks} ranks, {blocks} SMs for the reduce-scatter",
              [result_set])
    return PlottedFigure(f"pipeline_{m}x{k}_{ranks}ranks_{blocks}sms_{system_slug(result_set)}", "pipeline", figure, labels)


def pipeline_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    figures = []
    for result_set in result_sets:
        groups: dict[tuple, list[dict]] = {}
        for shape in pipeline_shapes(result_set.document):
            groups.setdefault((shape["m"], shape["k"], shape["ranks"], shape["blocks"]), []).append(shape)
        figures += [_figure(result_set, key, shapes) for key, shapes in groups.items()]
    return figures
