"""Figures of interference rows: per workload, the trade between the link and the
workload (x: link GB/s beside the workload, y: the workload's figure beside the transfer; one
point per SM partition K, one line per engine, the alone figures as reference lines; axes fitted
to the data, not from 0; point labels placed where they overprint nothing: plots/labels.py), and
the slowdown of each in % as bars. Rows whose windows overlapped less than 0.95 are marked."""

from __future__ import annotations

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.loader import ResultSet
from p2pbench_report.plots.labels import PointLabel, place_point_labels
from p2pbench_report.methods import INTERFERENCE_ENGINES, METHOD_COLORS, names_of_kinds
from p2pbench_report.plots.style import SYSTEM_STYLES, PlottedFigure, new_figure, place_legend, set_title

MIN_OVERLAP = 0.95
ENGINES = INTERFERENCE_ENGINES  # any method that may run beside a workload (the row's engine)


def interference_rows(result_set: ResultSet) -> list[dict]:
    """The file's measured interference rows (status ok, both figures present)."""
    return [r for r in result_set.document.get("results", [])
            if r.get("method") in names_of_kinds("interference") and r.get("status") == "ok"
            and isinstance(r.get("workload_together"), dict) and isinstance(r.get("transfer_together_gbps"), dict)]


def _k_label(row: dict) -> str:
    k = row.get("sm_partition") or 0
    if k == 0:
        return "all SMs"
    granted = row.get("transfer_group_sms")
    return f"K={k}" if granted in (None, k) else f"K={k}→{granted}"


def _low_overlap(row: dict) -> bool:
    least = row.get("overlap_min")
    return least is not None and least < MIN_OVERLAP


def _curves(rows: list[dict]) -> dict[tuple, list[dict]]:
    """(workload, direction, mode, bytes) -> rows, in the order first seen."""
    curves: dict[tuple, list[dict]] = {}
    for row in rows:
        curves.setdefault((row["workload"], row["direction"], row["mode"], row["bytes"]), []).append(row)
    return curves


def _series_label(engine: str, result_set: ResultSet, several: bool) -> str:
    return f"{engine} ({result_set.name})" if several else engine


def _fit(values: list[float], margin: float = 0.08) -> tuple[float, float]:
    """Limits around the values with a margin on each side: a trade figure's zero is no reading
    (no run moves 0 GB/s), and starting there squeezed every point into one corner."""
    low, high = min(values), max(values)
    pad = (high - low) * margin or abs(high) * 0.05 or 1.0
    return low - pad, high + pad


def _engine_curve(ax, result_set: ResultSet, rows: list[dict], engine: str, style: tuple, several: bool,
                  extent: dict) -> tuple[str | None, list[PointLabel]]:
    """One engine's points (one per SM partition K) with min–max whiskers and its link-alone
    line; returns (series label, point labels) and widens `extent` ('x', 'y' lists)."""
    points = sorted((r for r in rows if r.get("engine") == engine), key=lambda r: r.get("sm_partition") or 0)
    if not points:
        return None, []
    color, (linestyle, marker) = METHOD_COLORS.get(engine, "0.2"), style
    x = [r["transfer_together_gbps"]["median"] for r in points]
    y = [r["workload_together"]["median"] for r in points]
    x_range = [(r["transfer_together_gbps"]["min"], r["transfer_together_gbps"]["max"]) for r in points]
    y_range = [(r["workload_together"]["min"], r["workload_together"]["max"]) for r in points]
    label = _series_label(engine, result_set, several)
    ax.errorbar(x, y, xerr=[[v - lo for v, (lo, _) in zip(x, x_range)], [hi - v for v, (_, hi) in zip(x, x_range)]],
                yerr=[[v - lo for v, (lo, _) in zip(y, y_range)], [hi - v for v, (_, hi) in zip(y, y_range)]],
                color=color, linestyle=linestyle, marker=marker, capsize=3, label=label)
    alone = [r["transfer_alone_gbps"]["median"] for r in points if isinstance(r.get("transfer_alone_gbps"), dict)]
    if alone:
        ax.axvline(max(alone), color=color, linestyle=":", linewidth=1.0, label=f"{label} alone ({max(alone):.1f} GB/s)")
    extent["x"] += [v for pair in x_range for v in pair] + ([max(alone)] if alone else [])
    extent["y"] += [v for pair in y_range for v in pair]
    texts = [_k_label(r) + (" (overlap < 0.95)" if _low_overlap(r) else "") for r in points]
    return label, [PointLabel(xv, yv, text, "red" if _low_overlap(r) else color)
                   for xv, yv, text, r in zip(x, y, texts, points)]


def _trade_figure(key: tuple, by_set: list[tuple[ResultSet, list[dict]]]) -> PlottedFigure:
    workload, direction, mode, size = key
    unit = next(r.get("workload_unit", "") for _, rows in by_set for r in rows)
    figure = new_figure(10.5, 5.6)
    ax = figure.add_subplot()
    series, labels, extent = [], [], {"x": [], "y": []}
    several = len(by_set) > 1
    for index, (result_set, rows) in enumerate(by_set):
        style = SYSTEM_STYLES[index % len(SYSTEM_STYLES)]
        alone = [r["workload_alone"]["median"] for r in rows if isinstance(r.get("workload_alone"), dict)]
        if alone:
            ax.axhline(max(alone), color="0.3", linestyle=style[0], linewidth=1.0,
                       label=f"{workload} alone ({max(alone):.1f} {unit})" + (f" [{result_set.name}]" if several else ""))
            extent["y"].append(max(alone))
        for engine in ENGINES:
            label, points = _engine_curve(ax, result_set, rows, engine, style, several, extent)
            if label:
                series.append(label)
                labels += points
    ax.set_xlabel("link GB/s beside the workload (1 GB = 1e9 B; medians, whiskers min–max)")
    ax.set_ylabel(f"{workload} {unit} beside the transfer")
    ax.set_xlim(*_fit(extent["x"]))
    ax.set_ylim(*_fit(extent["y"], margin=0.12))  # room above and below for the points' labels
    ax.grid(True, alpha=0.3)
    place_legend(ax)
    size_text = f"{size / 2**30:g} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB"
    set_title(figure, f"{workload} against the link: {direction} {mode}, {size_text} per transfer, one point per "
                      "SM group K (K=a→b: a asked, b granted)", [s for s, _ in by_set])
    place_point_labels(ax, labels)
    return PlottedFigure(f"interference_trade_{workload}_{direction}_{mode}_{size}", "interference_trade", figure, series)


def _slowdown_figure(key: tuple, by_set: list[tuple[ResultSet, list[dict]]]) -> PlottedFigure:
    workload, direction, mode, size = key
    figure = new_figure(width=max(9.0, 0.55 * sum(len(rows) for _, rows in by_set) + 3))
    ax = figure.add_subplot()
    labels, workload_pct, transfer_pct, low = [], [], [], []
    several = len(by_set) > 1
    for result_set, rows in by_set:
        for row in sorted(rows, key=lambda r: (ENGINES.index(r["engine"]) if r["engine"] in ENGINES else 9,
                                                r.get("sm_partition") or 0)):
            labels.append(f"{_series_label(row['engine'], result_set, several)}\n{_k_label(row)}")
            workload_pct.append(row.get("workload_slowdown_pct") or 0.0)
            transfer_pct.append(row.get("transfer_slowdown_pct") or 0.0)
            low.append(_low_overlap(row))
    positions = list(range(len(labels)))
    width = 0.4
    bars_w = ax.bar([p - width / 2 for p in positions], workload_pct, width, color="tab:gray", label=f"{workload} slower, %")
    bars_t = ax.bar([p + width / 2 for p in positions], transfer_pct, width, color="tab:cyan", label="transfer slower, %")
    for index, flagged in enumerate(low):
        if flagged:
            bars_w[index].set_hatch("//")
            bars_t[index].set_hatch("//")
    ax.axhline(0, color="0.2", linewidth=0.8)
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("slowdown beside the other, % of alone (medians)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    note = "; hatched: overlap < 0.95" if any(low) else ""
    set_title(figure, f"What each costs the other: {workload} and the transfer ({direction} {mode}){note}",
              [s for s, _ in by_set])
    return PlottedFigure(f"interference_slowdown_{workload}_{direction}_{mode}_{size}", "interference_slowdown", figure,
                         labels)


def interference_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    """A trade figure and a slowdown figure per workload, direction, mode and size."""
    keys: list[tuple] = []
    per_set = []
    for result_set in result_sets:
        curves = _curves(interference_rows(result_set))
        per_set.append((result_set, curves))
        keys += [k for k in curves if k not in keys]
    figures = []
    for key in keys:
        by_set = [(s, curves[key]) for s, curves in per_set if key in curves]
        figures.append(_trade_figure(key, by_set))
        figures.append(_slowdown_figure(key, by_set))
    return figures
