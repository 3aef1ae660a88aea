"""The `burn-in` command's one-screen summary: how much of the burn-in ran, per flow its median
over the windows and its worst window, then the verdict items as the driver wrote them (or, for
a checkpoint of a killed run, that it is incomplete and what the windows so far show)."""

from __future__ import annotations

from p2pbench_report.burn_in import BurnIn, BurnInFlow
from p2pbench_report.cases import ARROW
from p2pbench_report.tables import Table
from p2pbench_report.units import format_size, format_value

FLOW_HEADERS = ["method", "direction", "mode", "bytes", "src→dst", "windows", "median GB/s",
                "worst window min GB/s", "worst window", "p99.9 per transfer µs (worst window)",
                "slow windows", "throttled windows"]


def _seconds(value) -> str:
    return f"{float(value):g} s" if isinstance(value, (int, float)) else "? s"


def _indices(values: list[int]) -> str:
    return ", ".join(str(v) for v in values) or "-"


def _flow_line(burn_in: BurnIn, flow: BurnInFlow) -> list[object]:
    worst = flow.worst
    key = flow.key
    return [key.method, key.direction, key.mode, format_size(key.bytes), key.ranks(), len(flow.windows),
            format_value(flow.median_gbps), format_value(worst.worst_gbps) if worst else "-",
            worst.window if worst else "-",
            format_value(worst.p99_9_transfer_us, 2) if worst and worst.p99_9_transfer_us is not None else "-",
            _indices(burn_in.slow_windows(flow)), _indices(burn_in.throttled_windows(flow))]


def flow_table(burn_in: BurnIn) -> Table:
    table = Table(list(FLOW_HEADERS), numeric={3, 5, 6, 7, 8, 9})
    for flow in burn_in.flows:
        table.add(*_flow_line(burn_in, flow))
    return table


def _headline(burn_in: BurnIn, name: str) -> list[str]:
    settings, windows = burn_in.settings, burn_in.windows
    ran_s = max((float(w.get("end_s") or 0.0) for w in windows), default=0.0)
    lines = [f"burn-in of {name}",
             f"windows: {len(windows)} of {settings.get('windows_planned')} planned, {_seconds(settings.get('window_s'))}"
             f" each ({_seconds(settings.get('duration_s'))} asked); {_seconds(ran_s)} run from "
             f"{settings.get('started_utc')}",
             f"slow window: its min per transfer below (1 - {burn_in.margin:.0%}) x the flow's median over the "
             f"windows; figures in GB/s (1 GB = 1e9 B)"]
    if burn_in.incomplete:
        lines.append(f"INCOMPLETE: a checkpoint of a run that did not finish ({burn_in.incomplete_reason or 'no reason'}"
                     f"): the {len(windows)} windows below are all there is")
    inject = settings.get("inject_slow")
    if isinstance(inject, dict):
        lines.append(f"injected slowdown (a test of the verdicts): window {inject.get('window')}, ranks "
                     f"{inject.get('src_rank')}{ARROW}{inject.get('dst_rank')}, transfers x{inject.get('factor')} as long")
    failed = sum(burn_in.failed_rows.values())
    if failed:
        lines.append(f"rows not ok: {failed} (windows {_indices(sorted(burn_in.failed_rows))})")
    return lines


def _item_line(item: dict) -> str:
    where = []
    if item.get("window") is not None:
        where.append(f"window {item['window']}")
    if item.get("src_rank") is not None or item.get("dst_rank") is not None:
        where.append(f"ranks {item.get('src_rank')}{ARROW}{item.get('dst_rank')}")
    if item.get("gpu_uuid"):
        where.append(str(item["gpu_uuid"]))
    if item.get("link") is not None:
        where.append(f"link {item['link']}")
    if item.get("counter"):
        where.append(str(item["counter"]))
    return f"  {item.get('severity', '?'):<4} {item.get('code', '?')} [{', '.join(where) or 'run'}]: {item.get('message', '')}"


def _verdict_lines(burn_in: BurnIn) -> list[str]:
    if burn_in.verdicts is None:
        return ["verdicts: none in this file (the driver judges the windows when the run ends); slow and "
                f"throttled windows above are {burn_in.judged_by}"]
    items = burn_in.items()
    status = str(burn_in.verdicts.get("status", "?")).upper()
    lines = [f"verdicts ({burn_in.judged_by}): {status}, {len(items)} item{'s' if len(items) != 1 else ''}"]
    order = {"warn": 0, "info": 1}
    return lines + [_item_line(i) for i in sorted(items, key=lambda i: order.get(i.get("severity"), 2))]


def render_summary(burn_in: BurnIn, name: str) -> str:
    lines = _headline(burn_in, name) + [""]
    if burn_in.flows:
        lines.append(flow_table(burn_in).to_markdown())
    else:
        lines.append("no ok bandwidth row in any window: no flow to summarise")
    return "\n".join(lines + [""] + _verdict_lines(burn_in)) + "\n"


def exit_status(burn_in: BurnIn) -> int:
    """1 when the driver's verdict is warn (a gate treats it as not passed), else 0."""
    return 1 if burn_in.verdicts is not None and burn_in.verdicts.get("status") == "warn" else 0
