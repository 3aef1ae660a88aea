"""OpenMetrics / Prometheus text export of a results file, for node-exporter's textfile
collector (written atomically: a temporary file renamed into place, as the collector needs).

Metrics (gauges), one sample per case; labels method, direction, mode, bytes, shape (the kernel
shape and payload as `compare` prints them, e.g. "b132 t512 u4"; "" for the copy engine),
src_rank, dst_rank ("" for a version 1 bidir row; they tell apart two ranks on one GPU),
src_gpu_uuid, dst_gpu_uuid (a version 1 bidir row: rank 0's and rank 1's GPU), gpu_uuids (every
GPU of the row's flows, sources and destinations, in flow order, once each), same_gpu ("true"
when every flow stays within one GPU, "false" when none does, "mixed"), host and label
(meta.label). In a row of several flows (version 2), src_rank, dst_rank, src_gpu_uuid and
dst_gpu_uuid list every flow's, comma-joined in flow order.
  p2pbench_bandwidth_gbps           median of the raw samples, GB/s (1 GB = 1e9 B), ok bandwidth
                                    rows between two GPUs only (same_gpu="false"): P2P figures
  p2pbench_same_gpu_bandwidth_gbps  the same for ok rows with a flow within one GPU (two ranks
                                    sharing it; same_gpu "true" or "mixed"): memory bandwidth of
                                    that GPU, never a P2P figure, so never in the metric above
  p2pbench_latency_seconds          median of the raw samples, seconds, ok latency rows between
                                    two GPUs; p2pbench_same_gpu_latency_seconds: the same within one
  p2pbench_case_ok                  1 when the case ran (status ok), 0 when it failed or was skipped
  p2pbench_transfer_time_seconds    per-transfer time tails of ok bandwidth rows between two GPUs
                                    (iteration_time_us), the case labels + quantile "0.99" / "0.999";
                                    p2pbench_same_gpu_transfer_time_seconds: the same within one GPU
Per run (labels host, label): p2pbench_run_health_ok (1: verdict status ok, 0: warn or unknown),
p2pbench_run_contention, p2pbench_run_throttled, p2pbench_run_link_errors (1/0), and
p2pbench_run_timestamp_seconds (meta.timestamp_utc, Unix time) so stale files can be alerted on.
A burn-in adds its window series (prometheus_windows.py). No sample of the textfile carries a
timestamp: node-exporter's textfile collector skips a file that has one. `with_timestamps` writes
OpenMetrics text of the window series alone, each sample stamped with its window's end, for a
path that keeps timestamps (backfill, remote write); every sample there has a timestamp.
prometheus_client is imported only here: without it this export fails with a clear message and
every other subcommand still works.
"""

from __future__ import annotations

import calendar
import os
import sys
import time
from pathlib import Path

from p2pbench_report.cases import describe_config, identity
from p2pbench_report.errors import InputError, require
from p2pbench_report.export import identity_of
from p2pbench_report.prometheus_windows import window_families
from p2pbench_report.expectations import figure_of, metric_of
from p2pbench_report.row_gpus import row_gpus
from p2pbench_report.verdicts import run_verdicts

CASE_LABELS = ("method", "direction", "mode", "bytes", "shape", "src_rank", "dst_rank", "src_gpu_uuid", "dst_gpu_uuid",
               "gpu_uuids", "same_gpu", "host", "label")
RUN_LABELS = ("host", "label")
NEEDED_FOR = "for the Prometheus export (pip install prometheus-client)"
TAIL_QUANTILES = (("0.99", "p99"), ("0.999", "p99_9"))  # quantile label -> iteration_time_us key


def _case_labels(meta: dict, row: dict, occurrence: int) -> list[str]:
    where = identity_of(meta, row)
    key = identity(row) + (occurrence,)
    gpus = row_gpus(meta, row)
    ranks = ["" if row.get(name) is None else str(row.get(name)) for name in ("src_rank", "dst_rank")]
    uuids = [str(where["src_gpu_uuid"] or ""), str(where["dst_gpu_uuid"] or "")]
    flows = [f for f in row.get("flows") or [] if isinstance(f, dict)]
    if len(flows) > 1:  # several flows: name each flow's ranks and GPUs, not the first flow's alone
        ranks = [",".join(str(f.get(name)) for f in flows) for name in ("src_rank", "dst_rank")]
        uuids = [",".join(u or "" for u in gpus.src), ",".join(u or "" for u in gpus.dst)]
    return [str(row.get("method")), str(row.get("direction")), str(row.get("mode")), str(row.get("bytes")),
            describe_config(key), *ranks, *uuids, ",".join(gpus.uuids), gpus.same_gpu,
            str(where["host"] or ""), str(meta.get("label") or "")]


def _timestamp(meta: dict) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(str(meta.get("timestamp_utc")), "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _case_families(gauge):
    """(P2P bandwidth, same-GPU bandwidth, P2P latency, same-GPU latency, case ok) families."""
    bandwidth_text = "Median bandwidth of the raw samples, GB/s (1 GB = 1e9 B)"
    return (gauge("p2pbench_bandwidth_gbps", bandwidth_text + ", between two GPUs (P2P)", labels=CASE_LABELS),
            gauge("p2pbench_same_gpu_bandwidth_gbps", bandwidth_text + ", of rows with a flow within one GPU "
                  "(two ranks sharing it): not P2P", labels=CASE_LABELS),
            gauge("p2pbench_latency_seconds", "Median latency of the raw samples, seconds, between two GPUs",
                  labels=CASE_LABELS),
            gauge("p2pbench_same_gpu_latency_seconds", "Median latency of the raw samples, seconds, within one "
                  "GPU (two ranks sharing it): not P2P", labels=CASE_LABELS),
            gauge("p2pbench_case_ok", "1 when the case ran (status ok), 0 when it failed or was skipped",
                  labels=CASE_LABELS))


def _tail_families(gauge):
    """(P2P, same-GPU) families of the per-transfer time tails."""
    text = "Time per transfer of the row's tail sample at a quantile, seconds"
    labels = CASE_LABELS + ("quantile",)
    return (gauge("p2pbench_transfer_time_seconds", text + ", between two GPUs (P2P)", labels=labels),
            gauge("p2pbench_same_gpu_transfer_time_seconds", text + ", of rows with a flow within one GPU: not P2P",
                  labels=labels))


def _add_tails(family, labels: list[str], row: dict) -> None:
    tails = row.get("iteration_time_us")
    if row.get("status") != "ok" or not isinstance(tails, dict):
        return
    for quantile, key in TAIL_QUANTILES:
        if isinstance(tails.get(key), (int, float)):
            family.add_metric(labels + [quantile], tails[key] * 1e-6)


def _families(document: dict):
    """The metric families of one results document."""
    metrics = require("prometheus_client.core", NEEDED_FOR)
    meta = document["meta"]
    bandwidth, same_gpu_bandwidth, latency, same_gpu_latency, case_ok = _case_families(metrics.GaugeMetricFamily)
    tails, same_gpu_tails = _tail_families(metrics.GaugeMetricFamily)
    seen: dict[tuple, int] = {}
    for row in document["results"]:
        key = identity(row)
        seen[key] = seen.get(key, 0) + 1
        labels = _case_labels(meta, row, seen[key])
        case_ok.add_metric(labels, 1.0 if row.get("status") == "ok" else 0.0)
        metric = metric_of(row)
        p2p = row_gpus(meta, row).is_p2p  # a row with a flow within one GPU is never a P2P figure
        if row.get("status") == "ok" and metric == "bandwidth_gbps":
            (bandwidth if p2p else same_gpu_bandwidth).add_metric(labels, figure_of(row, metric))
            _add_tails(tails if p2p else same_gpu_tails, labels, row)
        elif row.get("status") == "ok" and metric == "latency_us":
            (latency if p2p else same_gpu_latency).add_metric(labels, figure_of(row, metric) * 1e-6)
    yield from (bandwidth, same_gpu_bandwidth, latency, same_gpu_latency, case_ok)
    yield from (family for family in (tails, same_gpu_tails) if family.samples)  # files before the tails: none
    yield from _run_families(metrics.GaugeMetricFamily, meta)
    yield from window_families(document, metrics.GaugeMetricFamily, with_timestamps=False)


def _run_families(gauge, meta: dict):
    verdicts = run_verdicts(meta)
    hosts = meta.get("hosts") or []
    run_labels = [";".join(hosts), str(meta.get("label") or "")]
    for name, value, text in (
            ("p2pbench_run_health_ok", verdicts.status == "ok", "1 when the run's health verdict is ok (0: warn or unknown)"),
            ("p2pbench_run_contention", verdicts.contention, "1 when another process used a GPU of the run"),
            ("p2pbench_run_throttled", verdicts.throttled, "1 when a clock-slowing reason was set during the run"),
            ("p2pbench_run_link_errors", verdicts.link_errors, "1 when NVLink error counters rose during the run")):
        family = gauge(name, text, labels=RUN_LABELS)
        family.add_metric(run_labels, 1.0 if value else 0.0)
        yield family
    stamp = _timestamp(meta)
    if stamp is not None:
        family = gauge("p2pbench_run_timestamp_seconds", "When the run was made (meta.timestamp_utc), Unix time",
                       labels=RUN_LABELS)
        family.add_metric(run_labels, stamp)
        yield family


class _DocumentCollector:
    def __init__(self, document: dict, with_timestamps: bool = False):
        self.document = document
        self.with_timestamps = with_timestamps

    def collect(self):
        if self.with_timestamps:
            gauge = require("prometheus_client.core", NEEDED_FOR).GaugeMetricFamily
            return iter(window_families(self.document, gauge, with_timestamps=True))
        return _families(self.document)


def registry_of(document: dict, with_timestamps: bool = False):
    registry_module = require("prometheus_client", NEEDED_FOR)
    registry = registry_module.CollectorRegistry(auto_describe=False)
    registry.register(_DocumentCollector(document, with_timestamps))
    return registry


def _write_atomically(text: bytes, destination: Path) -> None:
    """A temporary file beside the destination, renamed into place (no half-written file)."""
    temporary = destination.with_name(f".{destination.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(text)
        os.replace(temporary, destination)
    finally:
        temporary.unlink(missing_ok=True)


def write_prometheus(document: dict, destination: str | Path, with_timestamps: bool = False,
                     source: str = "results") -> None:
    """Writes the text exposition to `destination` (atomically), or to standard output for '-'.
    with_timestamps: the burn-in's window series alone, OpenMetrics text, every sample stamped
    with its window's end (InputError for a file without a burn-in)."""
    client = require("prometheus_client", NEEDED_FOR)
    if with_timestamps and not isinstance(document.get("burn_in"), dict):
        raise InputError(source, "--with-timestamps exports a burn-in's windows, and this file has no burn_in "
                                 "(a run of p2pbench --duration ... --window ...)", field="$.burn_in")
    registry = registry_of(document, with_timestamps)
    if with_timestamps:
        text = require("prometheus_client.openmetrics.exposition", NEEDED_FOR).generate_latest(registry)
    else:
        text = client.generate_latest(registry)
    if str(destination) == "-":
        sys.stdout.write(text.decode("utf-8"))
    elif with_timestamps:
        _write_atomically(text, Path(destination))
    else:
        client.write_to_textfile(str(destination), registry)
