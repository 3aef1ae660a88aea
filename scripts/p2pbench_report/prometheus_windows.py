"""A burn-in's windows as Prometheus series (burn_in.py), for a dashboard beside DCGM's exporter.

Families (gauges), one sample per window:
  p2pbench_window_bandwidth_gbps      a flow's median bandwidth in the window, GB/s (1 GB = 1e9 B)
  p2pbench_window_min_bandwidth_gbps  its bytes over its longest transfer in the window, GB/s
      labels: the case labels of prometheus.py for the flow (method, direction, mode, bytes, shape,
      src_rank, dst_rank, src_gpu_uuid, dst_gpu_uuid, gpu_uuids, same_gpu, host, label) + window
  p2pbench_window_nvlink_errors       rise of one NVLink error counter over the window; labels
      gpu_uuid, link (the link's index; "" where NVML gave the GPU's totals only), counter,
      window, host, label
  p2pbench_window_throttled           1 when the GPU was throttled in the window (a clock-event
      reason other than gpu_idle / applications_clocks_setting, or power / thermal violation
      time), else 0; labels gpu_uuid, window, host, label
Where the samples go decides whether they carry a timestamp:
  * with timestamps (`export --format prometheus --with-timestamps`): each sample carries its
    window's end (burn_in.started_utc + end_s) as its OpenMetrics timestamp, so the series lie on
    the time line where the windows ran. Meant for a path that keeps sample timestamps: Prometheus'
    backfill (`promtool tsdb create-blocks-from openmetrics`) or a remote-write / push bridge.
  * without (the textfile for node-exporter, the default): node-exporter's textfile collector
    refuses a file with any client-side timestamp (it skips the whole file), so the samples are
    plain and each window is told apart by its `window` label;
    p2pbench_window_end_timestamp_seconds (labels window, host, label) gives each window's end as
    a value instead.
"""

from __future__ import annotations

import calendar
import time
from typing import Callable, Iterator

from p2pbench_report.burn_in import BurnIn, burn_in_of, gpu_throttled, window_gpus
from p2pbench_report.cases import describe_config, identity
from p2pbench_report.export import identity_of

FLOW_LABELS = ("method", "direction", "mode", "bytes", "shape", "src_rank", "dst_rank", "src_gpu_uuid",
               "dst_gpu_uuid", "gpu_uuids", "same_gpu", "host", "label", "window")
ERROR_LABELS = ("gpu_uuid", "link", "counter", "window", "host", "label")
GPU_LABELS = ("gpu_uuid", "window", "host", "label")
WINDOW_LABELS = ("window", "host", "label")


def utc_seconds(text) -> float | None:
    """'2026-11-28T04:00:00Z' (fractional seconds allowed) -> Unix time; None when unreadable."""
    text = str(text or "")
    whole, _, fraction = text.rstrip("Z").partition(".")
    try:
        seconds = float(calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None
    return seconds + (float(f"0.{fraction}") if fraction.isdigit() else 0.0)


def window_end(burn_in: BurnIn, window: dict) -> float | None:
    """The window's end, Unix time: started_utc + end_s (end_utc where the start is unreadable)."""
    start = utc_seconds(burn_in.settings.get("started_utc"))
    if start is not None and isinstance(window.get("end_s"), (int, float)):
        return start + float(window["end_s"])
    return utc_seconds(window.get("end_utc"))


def _flow_labels(meta: dict, row: dict, item: dict, window: int) -> list[str]:
    """The case labels of prometheus.py, for one flow of the row."""
    where = identity_of(meta, row)
    src, dst = item.get("src_gpu") or where["src_gpu_uuid"] or "", item.get("dst_gpu") or where["dst_gpu_uuid"] or ""
    same = item.get("same_device")
    return [str(row.get("method")), str(row.get("direction")), str(row.get("mode")),
            str(item.get("bytes") or row.get("bytes")), describe_config(identity(row)),
            "" if item.get("src_rank") is None else str(item.get("src_rank")),
            "" if item.get("dst_rank") is None else str(item.get("dst_rank")), str(src), str(dst),
            ",".join(dict.fromkeys(u for u in (src, dst) if u)), "" if same is None else str(bool(same)).lower(),
            str(where["host"] or ""), str(meta.get("label") or ""), str(window)]


def _flows_of(row: dict) -> list[dict]:
    flows = [f for f in row.get("flows") or [] if isinstance(f, dict)]
    return flows or [{"src_rank": row.get("src_rank"), "dst_rank": row.get("dst_rank")}]


def _bandwidth_samples(document: dict, burn_in: BurnIn) -> Iterator[tuple[list[str], float | None, float | None, float | None]]:
    """(labels, median GB/s, min per transfer GB/s, window end) per flow and window."""
    meta, rows = document["meta"], document.get("results") or []
    for window in burn_in.windows:
        end = window_end(burn_in, window)
        for index in window.get("rows") or []:
            row = rows[index] if isinstance(index, int) and 0 <= index < len(rows) else {}
            if row.get("status") != "ok" or not isinstance(row.get("bandwidth_gbps"), dict):
                continue
            for item in _flows_of(row):
                own = item.get("bandwidth_gbps") if isinstance(item.get("bandwidth_gbps"), dict) else row["bandwidth_gbps"]
                yield (_flow_labels(meta, row, item, window["index"]), own.get("median"),
                       item.get("gbps_min_iteration"), end)


def _error_samples(burn_in: BurnIn, run: list[str]) -> Iterator[tuple[list[str], float, float | None]]:
    """(labels, rise, window end) per GPU, link and counter; a GPU's totals where no link is listed."""
    for window in burn_in.windows:
        end = window_end(burn_in, window)
        for gpu in window_gpus(window):
            by_link = [e for e in gpu.get("nvlink_errors_by_link_delta") or [] if isinstance(e, dict)]
            totals = gpu.get("nvlink_errors_delta") if isinstance(gpu.get("nvlink_errors_delta"), dict) else {}
            entries = by_link or ([dict(totals, link="")] if totals else [])
            for entry in entries:
                for counter, value in entry.items():
                    if counter != "link" and isinstance(value, (int, float)):
                        labels = [str(gpu.get("uuid")), str(entry.get("link")), counter, str(window["index"])]
                        yield labels + run, float(value), end


def window_families(document: dict, gauge: Callable, with_timestamps: bool) -> list:
    """The window families of a burn-in document ([] for any other)."""
    burn_in = burn_in_of(document)
    if burn_in is None:
        return []
    meta = document["meta"]
    run = [";".join(meta.get("hosts") or []), str(meta.get("label") or "")]

    def stamp(end: float | None) -> float | None:
        return end if with_timestamps else None

    median = gauge("p2pbench_window_bandwidth_gbps", "A flow's median bandwidth in a burn-in window, GB/s "
                   "(1 GB = 1e9 B)", labels=FLOW_LABELS)
    lowest = gauge("p2pbench_window_min_bandwidth_gbps", "A flow's bytes over its longest transfer in a burn-in "
                   "window, GB/s", labels=FLOW_LABELS)
    for labels, value, slowest, end in _bandwidth_samples(document, burn_in):
        if value is not None:
            median.add_metric(labels, value, timestamp=stamp(end))
        if slowest is not None:
            lowest.add_metric(labels, slowest, timestamp=stamp(end))
    errors = gauge("p2pbench_window_nvlink_errors", "Rise of an NVLink error counter over a burn-in window",
                   labels=ERROR_LABELS)
    for labels, value, end in _error_samples(burn_in, run):
        errors.add_metric(labels, value, timestamp=stamp(end))
    throttled = gauge("p2pbench_window_throttled", "1 when the GPU was throttled in the burn-in window (a "
                      "clock-event reason other than idle / set clocks, or power / thermal violation time)",
                      labels=GPU_LABELS)
    for window in burn_in.windows:
        for gpu in window_gpus(window):
            throttled.add_metric([str(gpu.get("uuid")), str(window["index"])] + run,
                                 1.0 if gpu_throttled(gpu) else 0.0, timestamp=stamp(window_end(burn_in, window)))
    families = [median, lowest, errors, throttled]
    if not with_timestamps:
        ends = gauge("p2pbench_window_end_timestamp_seconds", "When a burn-in window ended, Unix time",
                     labels=WINDOW_LABELS)
        for window in burn_in.windows:
            if (end := window_end(burn_in, window)) is not None:
                ends.add_metric([str(window["index"])] + run, end)
        families.append(ends)
    return families
