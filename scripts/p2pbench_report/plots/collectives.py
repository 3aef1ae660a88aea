"""Collectives (rows with a `collective` object): per operation and rank count,
  collectives_<operation>_<n>ranks       bus bandwidth (nccl-tests' busbw, GB/s) vs size, one line
                                         per system x method: at each size the best median over
                                         the kernel shapes (blocks, threads), the band its min–max;
  collectives_time_<operation>_<n>ranks  time per operation (µs) vs size on log-log axes, the
                                         fastest shape's median at each size.
NCCL's collectives and those built from puts in one figure: where the lines cross is the size
below which a put-built collective beats NCCL on that node."""

from __future__ import annotations

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import METHOD_COLORS, METHOD_TITLES
from p2pbench_report.plots.style import (SYSTEM_STYLES, PlottedFigure, label_log_axis, new_figure, place_legend,
                                         set_title)
from p2pbench_report.units import SIZE_AXIS_LABEL


def collective_rows(result_set: ResultSet) -> list[dict]:
    """The file's measured collective rows."""
    return [r for r in result_set.document.get("results") or []
            if r.get("status") == "ok" and isinstance(r.get("collective"), dict) and "gemm_rs" not in r  # plots/pipeline.py
            and isinstance(r["collective"].get("busbw_gbps"), dict) and isinstance(r.get("time_us"), dict)]


def _best_by_size(rows: list[dict], time: bool) -> list[tuple[int, float, float, float]]:
    """(bytes, median, low, high) per size of the best shape: least time, or most bus bandwidth."""
    best: dict[int, dict] = {}
    for row in rows:
        size = row["collective"]["bytes"]
        figure = row["time_us"]["median"] if time else row["collective"]["busbw_gbps"]["median"]
        kept = best.get(size)
        if kept is None or (figure < kept["figure"] if time else figure > kept["figure"]):
            stats = row["time_us"] if time else row["collective"]["busbw_gbps"]
            best[size] = {"figure": figure, "low": stats["min"], "high": stats["max"]}
    return [(size, b["figure"], b["low"], b["high"]) for size, b in sorted(best.items())]


def _figure(result_sets: list[ResultSet], by_set: list[dict], key: tuple[str, int], time: bool) -> PlottedFigure | None:
    operation, ranks = key
    figure = new_figure(10.5, 5.6)
    ax = figure.add_subplot()
    labels = []
    several = sum(1 for groups in by_set if key in groups) > 1
    for index, (result_set, groups) in enumerate(zip(result_sets, by_set)):
        linestyle, marker = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
        for method, rows in sorted(groups.get(key, {}).items()):
            points = _best_by_size(rows, time)
            if not points:
                continue
            same_gpu = any(f.get("same_device") for row in rows for f in row.get("flows") or [])
            label = ((f"{result_set.name} · " if several else "") + METHOD_TITLES.get(method, method)
                     + (" (same GPU: no P2P figure)" if same_gpu else ""))
            sizes = [p[0] for p in points]
            color = METHOD_COLORS.get(method) or None
            ax.plot(sizes, [p[1] for p in points], linestyle=linestyle, marker=marker, color=color, label=label)
            ax.fill_between(sizes, [p[2] for p in points], [p[3] for p in points], alpha=0.15, color=color)
            labels.append(label)
    if not labels:
        return None
    ax.set_xscale("log", base=2)
    ax.set_xlabel(SIZE_AXIS_LABEL)
    if time:
        ax.set_yscale("log")
        label_log_axis(ax.yaxis, "µs")
        ax.set_ylabel("time per operation (µs): the fastest shape's median; band: min–max")
    else:
        ax.set_ylabel("bus bandwidth (GB/s, 1 GB = 1e9 B; nccl-tests' busbw)\nline: the best shape's median; band: min–max")
    ax.grid(True, alpha=0.3)
    place_legend(ax)
    what = "time" if time else "bus bandwidth"
    set_title(figure, f"{operation.replace('_', '-')} on {ranks} ranks: {what} by size", result_sets)
    name = f"collectives_{'time_' if time else ''}{operation}_{ranks}ranks"
    return PlottedFigure(name, "collectives", figure, labels)


def collective_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    by_set = []
    for result_set in result_sets:
        groups: dict[tuple[str, int], dict[str, list[dict]]] = {}
        for row in collective_rows(result_set):
            key = (row["collective"]["operation"], row["collective"]["ranks"])
            groups.setdefault(key, {}).setdefault(row["method"], []).append(row)
        by_set.append(groups)
    keys = sorted({key for groups in by_set for key in groups})
    figures = []
    for key in keys:
        for time in (False, True):
            plotted = _figure(result_sets, by_set, key, time)
            if plotted:
                figures.append(plotted)
    return figures
