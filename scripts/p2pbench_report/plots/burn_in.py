"""Burn-in timelines (burn_in.py): one figure per flow of a file with a `burn_in` block,
  burn_in_<method>_<direction>_<mode>_<size>_<src>to<dst>_<system>
bandwidth per window against time since the burn-in started (the window's median, and its min
per transfer: the flow's bytes over its longest transfer), the slow limit (1 - margin) x the
flow's median as a dashed line, slow windows shaded red and throttled windows hatched orange
(as the driver's verdicts name them; a checkpoint without verdicts: by the rule, and the title
says so), the injected-slowdown window marked, and on the right axis the rise of the NVLink error
counters of each GPU the flow touches in each window (bars; 0 where none rose).
A file without burn_in gives no figure, so `plot` draws what it drew before."""

from __future__ import annotations

import math

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.burn_in import BY_DRIVER, BurnIn, BurnInFlow, burn_in_of
from p2pbench_report.loader import ResultSet
from p2pbench_report.plots.matrix import system_slug
from p2pbench_report.plots.style import PlottedFigure, new_figure, set_title
from p2pbench_report.units import BANDWIDTH_AXIS_LABEL

SLOW_COLOR = "tab:red"
THROTTLED_COLOR = "tab:orange"
ERROR_COLORS = ("0.35", "0.65")  # source GPU, destination GPU


def _spans(ax, burn_in: BurnIn, indices: list[int], label: str, **style) -> None:
    """Shades each listed window over its time span; one legend entry for all of them."""
    by_index = {w["index"]: w for w in burn_in.windows}
    for n, index in enumerate(i for i in indices if i in by_index):
        window = by_index[index]
        ax.axvspan(float(window.get("start_s") or 0.0), float(window.get("end_s") or 0.0), zorder=0,
                   label=label if n == 0 else None, **style)


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _bandwidth(ax, burn_in: BurnIn, flow: BurnInFlow) -> float:
    """The window medians and mins, and the slow limit; returns the highest value drawn."""
    middles = [(w.start_s + w.end_s) / 2 for w in flow.windows]
    medians = [_nan(w.median_gbps) for w in flow.windows]
    worst = [_nan(w.worst_gbps) for w in flow.windows]
    ax.plot(middles, medians, marker="o", markersize=4, color="tab:blue", label="median of the window's samples")
    ax.plot(middles, worst, marker="v", markersize=4, linestyle="--", color="tab:purple",
            label="min per transfer in the window (bytes / longest transfer)")
    highest = max([v for v in medians + worst if not math.isnan(v)] + [1e-3])
    if flow.median_gbps is not None and burn_in.margin > 0:
        limit = (1.0 - burn_in.margin) * flow.median_gbps
        ax.axhline(limit, color="0.3", linestyle=":", linewidth=1.1,
                   label=f"slow below (1 − {burn_in.margin:.0%}) × median over windows = {limit:.1f} GB/s")
    return highest


def _errors(ax, burn_in: BurnIn, flow: BurnInFlow):
    """The NVLink error-counter rises per window on a right axis, one bar series per GPU."""
    right = ax.twinx()
    rises = burn_in.error_rises(flow)
    starts = [float(w.get("start_s") or 0.0) for w in burn_in.windows]
    widths = [float(w.get("end_s") or 0.0) - s for w, s in zip(burn_in.windows, starts)]
    share = 0.8 / max(1, len(rises))
    for n, (uuid, values) in enumerate(rises.items()):
        left = [s + width * (0.1 + n * share) for s, width in zip(starts, widths)]
        right.bar(left, values, width=[width * share for width in widths], align="edge", alpha=0.6,
                  color=ERROR_COLORS[n % len(ERROR_COLORS)], label=f"NVLink error-counter rise, {uuid[:12]} (right axis)")
    highest = max([v for values in rises.values() for v in values] + [0])
    right.set_ylim(0, max(4, highest * 1.5))
    right.set_ylabel("NVLink error counters: rise in the window\n(sum over counters, per GPU of the flow)", fontsize=9)
    return right


def _inject_mark(ax, burn_in: BurnIn) -> None:
    inject = burn_in.settings.get("inject_slow")
    if not isinstance(inject, dict):
        return
    window = next((w for w in burn_in.windows if w["index"] == inject.get("window")), None)
    if window is not None:
        middle = (float(window.get("start_s") or 0.0) + float(window.get("end_s") or 0.0)) / 2
        ax.axvline(middle, color="black", linestyle="-.", linewidth=1.2,
                   label=f"injected slowdown: window {inject.get('window')}, ranks {inject.get('src_rank')}→"
                         f"{inject.get('dst_rank')}, ×{inject.get('factor')}")


def _figure(result_set: ResultSet, burn_in: BurnIn, flow: BurnInFlow) -> PlottedFigure:
    figure = new_figure(10.5, 6.4)
    ax = figure.add_subplot()
    highest = _bandwidth(ax, burn_in, flow)
    slow, throttled = burn_in.slow_windows(flow), burn_in.throttled_windows(flow)
    _spans(ax, burn_in, slow, "slow window", color=SLOW_COLOR, alpha=0.15)
    _spans(ax, burn_in, throttled, "throttled window (a GPU of the flow)", facecolor="none",
           edgecolor=THROTTLED_COLOR, hatch="//", linewidth=0)
    _inject_mark(ax, burn_in)
    right = _errors(ax, burn_in, flow)
    ax.set_ylim(0, highest * 1.12)
    ax.set_xlim(0, max([float(w.get("end_s") or 0.0) for w in burn_in.windows] + [1.0]))
    ax.set_xlabel("time since the burn-in started (s)")
    ax.set_ylabel(f"{BANDWIDTH_AXIS_LABEL}\nper window", fontsize=9)
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(handles + more[0], labels + more[1], fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12),
              ncol=2, borderaxespad=0.0)
    judged = "" if burn_in.judged_by == BY_DRIVER else " — slow/throttled derived by the report: no verdicts yet"
    incomplete = " (incomplete: a checkpoint)" if burn_in.incomplete else ""
    set_title(figure, f"Burn-in{incomplete}: {flow.key.describe()}, bandwidth per window{judged}", [result_set])
    series = [f"slow windows: {slow}", f"throttled windows: {throttled}"]
    return PlottedFigure(f"burn_in_{flow.key.slug()}_{system_slug(result_set)}", "burn_in", figure, series)


def burn_in_figures(result_sets: list[ResultSet]) -> list[PlottedFigure]:
    """One timeline per flow of each file with a burn-in; [] for the others."""
    figures = []
    for result_set in result_sets:
        burn_in = burn_in_of(result_set.document)
        if burn_in is not None and burn_in.windows:
            figures += [_figure(result_set, burn_in, flow) for flow in burn_in.flows if flow.windows]
    return figures
