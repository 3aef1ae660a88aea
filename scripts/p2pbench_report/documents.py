"""Building schema-valid results documents: the statistics p2pbench records, a row, a meta block.

Used by the importers (nvbandwidth, nccl-tests) and by the tests' synthetic fixtures, so that
every document this package writes has the shape the driver writes (src/results/result_writer.cpp):
sample standard deviation (n - 1), linearly interpolated median, bidir rows without ranks and
with per-direction figures. Version 1 (two ranks) is what the importers write; the group
builders (flow, group_row, pair_entry, add_group) make version 2 rows and meta (docs/groups.md).
"""

from __future__ import annotations

import datetime
import statistics
from typing import Any, Iterable, Sequence

from p2pbench_report import __version__
from p2pbench_report.methods import names_of_kinds

SCHEMA_VERSION = 1        # what the importers write: a pair of ranks
GROUP_SCHEMA_VERSION = 2  # rows of flows, meta.group and meta.pairs (docs/groups.md)
UNITS = {"bandwidth": "GB/s, 1 GB = 1e9 bytes", "time": "microseconds", "size": "bytes"}  # as the driver
# The schemas' rule: an ok bidir row of these carries `overlap` and each direction's figures
# (version 1: `directions`; version 2: a flow per direction).
BIDIR_METHODS_NEEDING_DIRECTIONS = names_of_kinds("copy", "two_sided_baseline")


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def summarize(samples: Iterable[float]) -> dict[str, float]:
    """The schema's `stats` object for a list of samples (as the driver computes it)."""
    values = sorted(float(v) for v in samples)
    if not values:
        raise ValueError("no samples to summarize")
    return {
        "min": values[0],
        "median": _quantile(values, 0.5),
        "mean": statistics.fmean(values),
        "max": values[-1],
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
    }


def summarize_latency(samples: Iterable[float]) -> dict[str, float]:
    """The schema's `latency_stats` object (adds p95)."""
    stats = summarize(samples)
    stats["p95"] = _quantile(sorted(float(v) for v in samples), 0.95)
    return stats


def transfer_time_us(bytes_moved: float, gbps: float) -> float:
    """Time to move `bytes_moved` at `gbps` (1 GB = 1e9 B), in microseconds."""
    return bytes_moved / (gbps * 1e3) if gbps > 0 else 0.0


def direction_figures(src_rank: int, dst_rank: int, size: int, samples_gbps: Sequence[float]) -> dict:
    """One entry of a bidir row's `directions`."""
    return {
        "src_rank": src_rank,
        "dst_rank": dst_rank,
        "bandwidth_gbps": summarize(samples_gbps),
        "time_us": summarize(transfer_time_us(size, g) for g in samples_gbps),
        "samples_gbps": list(samples_gbps),
    }


def bandwidth_row(method: str, direction: str, mode: str, size: int, samples_gbps: Sequence[float], *,
                  src_rank: int | None = 0, dst_rank: int | None = 1, blocks: int | None = None,
                  threads: int | None = None, unroll: int | None = None, smem_bytes: int | None = None,
                  stages: int | None = None, sms_used: int | None = None, buffer_pool_bytes: int = 0,
                  iterations: int = 1, verified: bool = False, status: str = "ok", error: str | None = None,
                  directions: list[dict] | None = None, overlap: float | None = None) -> dict[str, Any]:
    """A bandwidth row. A bidir row's bandwidth is the total of both directions and its
    time the time to move both directions' bytes, as the driver writes it."""
    uni = mode == "uni"
    row: dict[str, Any] = {
        "method": method, "direction": direction, "mode": mode, "bytes": int(size),
        "src_rank": src_rank if uni else None, "dst_rank": dst_rank if uni else None,
        "blocks": blocks, "threads": threads, "unroll": unroll, "smem_bytes": smem_bytes, "stages": stages,
        "sms_used": sms_used, "gbps_per_sm": None, "buffer_pool_bytes": int(buffer_pool_bytes),
        "iterations": int(iterations), "samples": len(samples_gbps) if status == "ok" else 0,
        "bandwidth_gbps": None, "time_us": None,
        "samples_gbps": list(samples_gbps) if status == "ok" else [],
        "verified": bool(verified), "status": status,
    }
    if error is not None or status != "ok":
        row["error"] = error or status
    if status != "ok":
        return row
    stats = summarize(samples_gbps)
    bytes_moved = size * (1 if uni else 2)
    row["bandwidth_gbps"] = stats
    row["time_us"] = summarize(transfer_time_us(bytes_moved, g) for g in samples_gbps)
    if sms_used:
        row["gbps_per_sm"] = stats["median"] / (sms_used * (1 if uni else 2))
    if not uni:
        row["overlap"] = overlap
        row["directions"] = directions or []
    return row


def latency_row(method: str, size: int, samples_us: Sequence[float], *, direction: str = "push",
                src_rank: int | None = 0, dst_rank: int | None = 1, iterations: int = 1,
                status: str = "ok", error: str | None = None, **extra: Any) -> dict[str, Any]:
    """A latency row (latency_us / samples_us; lower is better). `extra` adds fields such as
    payload descriptions."""
    row: dict[str, Any] = {
        "method": method, "direction": direction, "mode": "uni", "bytes": int(size),
        "src_rank": src_rank, "dst_rank": dst_rank, "blocks": None, "threads": None, "unroll": None,
        "smem_bytes": None, "stages": None, "sms_used": None, "gbps_per_sm": None, "buffer_pool_bytes": 0,
        "iterations": int(iterations), "samples": len(samples_us) if status == "ok" else 0,
        "bandwidth_gbps": None, "time_us": None, "samples_gbps": [],
        "latency_us": summarize_latency(samples_us) if status == "ok" else None,
        "samples_us": list(samples_us) if status == "ok" else [],
        "verified": False, "status": status, **extra,
    }
    if error is not None or status != "ok":
        row["error"] = error or status
    return row


def gpu_entry(rank: int, name: str, *, pci_bus_id: str = "unknown", uuid: str = "unknown", sm_count: int = 0,
              compute_capability: str = "unknown", driver_version: str | None = None, **extra: Any) -> dict:
    return {"rank": rank, "name": name, "uuid": uuid, "pci_bus_id": pci_bus_id, "sm_count": sm_count,
            "compute_capability": compute_capability, "driver_version": driver_version, **extra}


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_meta(label: str, *, config: dict | None = None, gpus: list[dict] | None = None,
             hosts: list[str] | None = None, command_line: list[str] | None = None,
             cuda_driver_version: int = 0, cuda_runtime_version: int = 0, topology: dict | None = None,
             p2p: dict | None = None, timestamp_utc: str | None = None, verify: bool = False) -> dict:
    """A meta block. meta.tool.name is "p2pbench" by the schema's rule, also for imports."""
    hosts = hosts or []
    meta = {
        "tool": {"name": "p2pbench", "version": f"p2pbench-report {__version__}", "git_sha": "unknown"},
        "timestamp_utc": timestamp_utc or utc_now(),
        "command_line": command_line or [],
        "label": label,
        "config": config or {},
        "units": dict(UNITS),
        "hosts": hosts,
        "ranks": [{"rank": g["rank"], "host": hosts[0] if hosts else "unknown", "cpu_binding": {}}
                  for g in (gpus or [])],
        "gpus": gpus or [],
        "cuda_driver_version": int(cuda_driver_version),
        "cuda_runtime_version": int(cuda_runtime_version),
        "p2p": p2p or {"known": False, "reason": "not recorded"},
        "same_device": False,
        "verify": verify,
    }
    if topology:
        meta["topology"] = topology
    return meta


def new_document(meta: dict, rows: list[dict], *, incomplete: bool = False, reason: str | None = None,
                 schema_version: int = SCHEMA_VERSION) -> dict:
    document = {"schema_version": schema_version, "incomplete": incomplete, "meta": meta, "results": rows}
    if incomplete:
        document["incomplete_reason"] = reason or "unknown"
    return document


# ---- version 2: flows, the aggregate, per-GPU traffic, the group and its pairs ------------------

def pct_of(median: float | None, peak: float | None) -> float | None:
    return 100.0 * median / peak if median is not None and peak else None


def flow(src_rank: int, dst_rank: int, src_gpu: str, dst_gpu: str, size: int, samples_gbps: Sequence[float], *,
         same_device: bool = False, same_node: bool = True, peak_gbps: float | None = None) -> dict:
    """One entry of a version 2 row's `flows`; no samples: the figures are null (a failed or
    skipped row, or a latency row whose figures are the row's)."""
    stats = summarize(samples_gbps) if samples_gbps else None
    return {
        "src_rank": src_rank, "dst_rank": dst_rank, "src_gpu": src_gpu, "dst_gpu": dst_gpu,
        "same_device": same_device, "same_node": same_node, "bytes": int(size),
        "bandwidth_gbps": stats,
        "time_us": summarize(transfer_time_us(size, g) for g in samples_gbps) if stats else None,
        "samples_gbps": list(samples_gbps), "peak_gbps": peak_gbps,
        "pct_of_peak": pct_of(stats["median"], peak_gbps) if stats else None,
    }


def _per_sample_sums(flows: list[dict]) -> list[float]:
    counts = {len(f["samples_gbps"]) for f in flows}
    if len(counts) != 1:
        return []
    return [sum(values) for values in zip(*(f["samples_gbps"] for f in flows))]


def gpu_traffic(flows: list[dict], ranks_of_gpu: dict[str, list[int]]) -> list[dict]:
    """`gpus`: per GPU taking part, the median of its flows' per-sample sums leaving / arriving;
    its ranks from ranks_of_gpu (every rank of the run on it), else those of the flows."""
    entries = []
    for uuid in dict.fromkeys([f["src_gpu"] for f in flows] + [f["dst_gpu"] for f in flows]):
        seen = sorted({f[f"{side}_rank"] for f in flows for side in ("src", "dst") if f[f"{side}_gpu"] == uuid})
        sums = {side: _per_sample_sums([f for f in flows if f[f"{side}_gpu"] == uuid and f["samples_gbps"]])
                for side in ("src", "dst")}
        entries.append({"uuid": uuid, "ranks": ranks_of_gpu.get(uuid) or seen,
                        "egress_gbps": statistics.median(sums["src"]) if sums["src"] else None,
                        "ingress_gbps": statistics.median(sums["dst"]) if sums["dst"] else None})
    return entries


def group_row(method: str, direction: str, mode: str, size: int, flows: list[dict], *,
              samples_gbps: Sequence[float] = (), pattern: str = "matrix", schedule: str | None = "sequential",
              round_index: int | None = None, overlap: float | None = None, ranks_of_gpu: dict | None = None,
              status: str = "ok", error: str | None = None, iterations: int = 1, verified: bool = True,
              **shape: Any) -> dict[str, Any]:
    """A version 2 bandwidth row of `flows` (flow()): samples_gbps are the aggregate's (all bytes
    over the union of the windows). src_rank / dst_rank are set for a single flow; a failed or
    skipped row keeps its flows (figures null) with no aggregate and no per-GPU traffic."""
    single = flows[0] if len(flows) == 1 else {}
    row = bandwidth_row(method, direction, "uni", size, list(samples_gbps), status=status, error=error,
                        src_rank=single.get("src_rank"), dst_rank=single.get("dst_rank"),
                        iterations=iterations, verified=verified, **shape)
    row.update(mode=mode, pattern=pattern, schedule=schedule, round=round_index, flows=flows, aggregate=None,
               gpus=[], overlap=overlap if len(flows) > 1 else None)
    if status != "ok":
        return row
    row["gpus"] = gpu_traffic(flows, ranks_of_gpu or {})
    moved = sum(f["bytes"] for f in flows)
    row["time_us"] = summarize(transfer_time_us(moved, g) for g in samples_gbps)
    peaks = [f["peak_gbps"] for f in flows]
    peak = sum(peaks) if all(peaks) else None
    row["pct_of_peak"] = pct_of(row["bandwidth_gbps"]["median"], peak)
    row["aggregate"] = {"bandwidth_gbps": row["bandwidth_gbps"], "samples_gbps": list(samples_gbps),
                        "peak_gbps": peak, "pct_of_peak": row["pct_of_peak"]}
    return row


def pair_entry(src_rank: int, dst_rank: int, *, same_device: bool = False, same_node: bool = True,
               link_type: str = "nvlink", topo_label: str | None = None, nvlink_links: int | None = None,
               peak_gbps_per_direction: float | None = None) -> dict:
    """One entry of meta.pairs."""
    return {"src_rank": src_rank, "dst_rank": dst_rank, "same_device": same_device, "same_node": same_node,
            "link_type": link_type, "topo_label": topo_label, "nvlink_links": nvlink_links,
            "peak_gbps_per_direction": peak_gbps_per_direction}


def add_group(meta: dict, nodes: list[list[int]], pairs: list[dict], node_override: int | None = None) -> dict:
    """meta.group and meta.pairs of a version 2 document (meta changed in place and returned)."""
    meta["group"] = {"ranks": sum(len(n) for n in nodes), "nodes": nodes, "node_override": node_override}
    meta["pairs"] = pairs
    return meta
