"""A burn-in's windows, flows and verdicts as the driver wrote them (docs/burn-in.md), for the
`burn-in` summary, its timeline figures (plots/burn_in.py) and the Prometheus window series.

The document's `burn_in` block lists the windows (time since `started_utc`, the `results` rows run
in each, and per GPU its clocks, clock-event reasons and NVLink error-counter rises) and, once the
run ended, `verdicts`. A flow is (method, bytes, src_rank, dst_rank, direction, mode); per window
its figures are its row's: the median and min of bandwidth_gbps over the window's samples (the
flow's own where the row has several flows) and `gbps_min_iteration`, its bytes over its longest
transfer of the window.

The driver owns the verdict rules; this module never judges a finished run. A window is shown
slow or throttled for a flow where a verdict item names it (intermittent_flow: that window and
those ranks; throttled_window: that window and a GPU of the flow, or no GPU). Only a checkpoint
without verdicts (a killed run) is read with the rules written down in docs/burn-in.md (slow:
min per transfer below (1 - margin) x the flow's median over the windows; throttled: a clock-event
reason other than gpu_idle / applications_clocks_setting, or power / thermal violation time),
and every output says so (`judged_by`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from p2pbench_report.cases import ARROW
from p2pbench_report.units import format_size
from p2pbench_report.verdicts import BENIGN_CLOCK_REASONS

BY_DRIVER = "the driver's verdicts"
BY_REPORT = "derived by the report (this checkpoint has no verdicts yet)"
VIOLATIONS_THAT_SLOW = ("power", "thermal")


@dataclass(frozen=True)
class FlowKey:
    """What identifies a flow within a burn-in."""

    method: str
    bytes: int
    src_rank: int | None
    dst_rank: int | None
    direction: str
    mode: str

    def ranks(self) -> str:
        return f"{self.src_rank}{ARROW}{self.dst_rank}"

    def describe(self) -> str:
        """'ce push uni 1G 0→1'."""
        return f"{self.method} {self.direction} {self.mode} {format_size(self.bytes)} {self.ranks()}"

    def slug(self) -> str:
        """A file-name part that stays the same run after run: 'ce_push_uni_1G_0to1'."""
        return f"{self.method}_{self.direction}_{self.mode}_{format_size(self.bytes)}_{self.src_rank}to{self.dst_rank}"


@dataclass(frozen=True)
class FlowWindow:
    """One flow's figures in one window (GB/s, 1 GB = 1e9 B; µs)."""

    window: int
    start_s: float
    end_s: float
    median_gbps: float | None
    min_sample_gbps: float | None
    min_transfer_gbps: float | None       # gbps_min_iteration
    p99_9_transfer_us: float | None

    @property
    def worst_gbps(self) -> float | None:
        """The window's lowest figure: its slowest transfer, else its slowest sample."""
        return self.min_transfer_gbps if self.min_transfer_gbps is not None else self.min_sample_gbps


@dataclass
class BurnInFlow:
    key: FlowKey
    gpus: tuple[str, ...]                 # the GPU UUIDs it touches (source, destination; once each)
    windows: list[FlowWindow] = field(default_factory=list)

    @property
    def median_gbps(self) -> float | None:
        """The median over the windows of the window's median."""
        values = [w.median_gbps for w in self.windows if w.median_gbps is not None]
        return statistics.median(values) if values else None

    @property
    def worst(self) -> FlowWindow | None:
        """The window with the lowest figure (its slowest transfer, else sample)."""
        measured = [w for w in self.windows if w.worst_gbps is not None]
        return min(measured, key=lambda w: w.worst_gbps) if measured else None


@dataclass
class BurnIn:
    """A document's burn_in block, its flows per window and what the windows were judged."""

    settings: dict
    windows: list[dict]
    flows: list[BurnInFlow]
    verdicts: dict | None
    incomplete: bool
    incomplete_reason: str | None
    failed_rows: dict[int, int]          # window index -> rows of that window not ok

    @property
    def judged_by(self) -> str:
        return BY_DRIVER if self.verdicts is not None else BY_REPORT

    @property
    def margin(self) -> float:
        return float(self.settings.get("margin") or 0.0)

    def items(self) -> list[dict]:
        items = (self.verdicts or {}).get("items")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    def slow_windows(self, flow: BurnInFlow) -> list[int]:
        """Windows slow for this flow: named by an intermittent_flow item, or (no verdicts) by the rule."""
        if self.verdicts is not None:
            by_window = {w.window: w for w in flow.windows}
            return sorted({i["window"] for i in self.items() if i.get("code") == "intermittent_flow"
                           and i.get("window") in by_window and _names_flow(i, flow.key, by_window[i["window"]])})
        median = flow.median_gbps
        if median is None:
            return []
        limit = (1.0 - self.margin) * median
        return [w.window for w in flow.windows if w.worst_gbps is not None and w.worst_gbps < limit]

    def throttled_windows(self, flow: BurnInFlow) -> list[int]:
        """Windows in which a GPU of the flow was throttled (throttled_window items, or the rule)."""
        if self.verdicts is not None:
            return sorted({i["window"] for i in self.items() if i.get("code") == "throttled_window"
                           and isinstance(i.get("window"), int) and i.get("gpu_uuid") in (None, *flow.gpus)})
        return [w["index"] for w in self.windows
                if any(gpu_throttled(g) for g in window_gpus(w) if g.get("uuid") in flow.gpus)]

    def error_rises(self, flow: BurnInFlow) -> dict[str, list[int]]:
        """Per GPU of the flow: the NVLink error counters' total rise in each window (0 where none)."""
        return {uuid: [nvlink_error_total(_gpu(w, uuid)) for w in self.windows] for uuid in flow.gpus}


def _names_flow(item: dict, key: FlowKey, window: FlowWindow) -> bool:
    """An item names a flow by its ranks; where its evidence says more (method, bytes, direction,
    mode, or the window's slowest figure, window_slowest_gbps), that must be the flow's too: two
    methods between the same ranks are two flows."""
    if (item.get("src_rank"), item.get("dst_rank")) != (key.src_rank, key.dst_rank):
        return False
    evidence = item.get("evidence") if isinstance(item.get("evidence"), dict) else {}
    if not all(evidence.get(name) in (None, getattr(key, name)) for name in ("method", "bytes", "direction", "mode")):
        return False
    slowest = evidence.get("window_slowest_gbps")
    return not isinstance(slowest, (int, float)) or (
        window.worst_gbps is not None and math.isclose(slowest, window.worst_gbps, rel_tol=1e-6))


def window_gpus(window: dict) -> list[dict]:
    return [g for g in window.get("gpus") or [] if isinstance(g, dict)]


def _gpu(window: dict, uuid: str) -> dict:
    return next((g for g in window_gpus(window) if g.get("uuid") == uuid), {})


def nvlink_error_total(gpu: dict) -> int:
    """The sum of a GPU's NVLink error-counter rises over a window (0 where NVML said none)."""
    deltas = gpu.get("nvlink_errors_delta") if isinstance(gpu.get("nvlink_errors_delta"), dict) else {}
    return int(sum(v for v in deltas.values() if isinstance(v, (int, float))))


def gpu_throttled(gpu: dict) -> bool:
    """The rule of docs/burn-in.md: a clock-event reason other than idle / set clocks, or power or
    thermal violation time in the window."""
    reasons = {r for r in gpu.get("clock_event_reasons") or [] if isinstance(r, str)}
    violations = gpu.get("violation_ns_delta") if isinstance(gpu.get("violation_ns_delta"), dict) else {}
    return bool(reasons - BENIGN_CLOCK_REASONS) or any((violations.get(k) or 0) > 0 for k in VIOLATIONS_THAT_SLOW)


def _stat(figures, name: str) -> float | None:
    return figures.get(name) if isinstance(figures, dict) else None


def _row_flows(row: dict) -> list[dict]:
    """The row's flows; a row without (version 1) as one flow of its own ranks and figures."""
    flows = [f for f in row.get("flows") or [] if isinstance(f, dict)]
    return flows or [{"src_rank": row.get("src_rank"), "dst_rank": row.get("dst_rank")}]


def _flow_figures(row: dict, item: dict, window: dict) -> FlowWindow:
    """A flow's own figures where it has them (rows of several flows), else its row's."""
    own = item.get("bandwidth_gbps") if isinstance(item.get("bandwidth_gbps"), dict) else row.get("bandwidth_gbps")
    tails = item.get("iteration_time_us") if isinstance(item.get("iteration_time_us"), dict) \
        else row.get("iteration_time_us")
    return FlowWindow(int(window["index"]), float(window.get("start_s") or 0.0), float(window.get("end_s") or 0.0),
                      _stat(own, "median"), _stat(own, "min"), item.get("gbps_min_iteration"), _stat(tails, "p99_9"))


def _merge(a: FlowWindow, b: FlowWindow) -> FlowWindow:
    """The same flow twice in one window: the median of both medians, the lower of the lows."""
    def low(x, y):
        return min(v for v in (x, y) if v is not None) if x is not None or y is not None else None

    def high(x, y):
        return max(v for v in (x, y) if v is not None) if x is not None or y is not None else None

    medians = [v for v in (a.median_gbps, b.median_gbps) if v is not None]
    return FlowWindow(a.window, a.start_s, a.end_s, statistics.median(medians) if medians else None,
                      low(a.min_sample_gbps, b.min_sample_gbps), low(a.min_transfer_gbps, b.min_transfer_gbps),
                      high(a.p99_9_transfer_us, b.p99_9_transfer_us))


def _collect(document: dict, windows: list[dict]) -> tuple[dict[FlowKey, BurnInFlow], dict[int, int]]:
    rows = document.get("results") or []
    flows: dict[FlowKey, BurnInFlow] = {}
    failed: dict[int, int] = {}
    for window in windows:
        seen: dict[FlowKey, FlowWindow] = {}
        for index in window.get("rows") or []:
            row = rows[index] if isinstance(index, int) and 0 <= index < len(rows) else {}
            if row.get("status") != "ok":
                failed[window["index"]] = failed.get(window["index"], 0) + 1
                continue
            if not isinstance(row.get("bandwidth_gbps"), dict):
                continue  # latency rows: no flow figure in GB/s
            for item in _row_flows(row):
                key = FlowKey(str(row.get("method")), int(item.get("bytes") or row.get("bytes") or 0),
                              item.get("src_rank"), item.get("dst_rank"), str(row.get("direction")),
                              str(row.get("mode")))
                figures = _flow_figures(row, item, window)
                seen[key] = _merge(seen[key], figures) if key in seen else figures
                gpus = tuple(dict.fromkeys(u for u in (item.get("src_gpu"), item.get("dst_gpu")) if u))
                flows.setdefault(key, BurnInFlow(key, gpus))
        for key, figures in seen.items():
            flows[key].windows.append(figures)
    return flows, failed


def burn_in_of(document: dict) -> BurnIn | None:
    """The document's burn-in, or None for a file that is none."""
    settings = document.get("burn_in")
    if not isinstance(settings, dict):
        return None
    windows = sorted((w for w in settings.get("windows") or [] if isinstance(w, dict) and isinstance(w.get("index"), int)),
                     key=lambda w: w["index"])
    flows, failed = _collect(document, windows)
    verdicts = settings.get("verdicts") if isinstance(settings.get("verdicts"), dict) else None
    return BurnIn(settings, windows, list(flows.values()), verdicts, bool(document.get("incomplete")),
                  document.get("incomplete_reason"), failed)
