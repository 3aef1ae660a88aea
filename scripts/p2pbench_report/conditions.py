"""How a run was made, as far as it changes the figures: verification, samples per case, sample
time, buffer pool, how the buffers were allocated and mapped (the allocator), clocks, NCCL
version, how ranks were split into nodes, sanitizer mode, and the run's health verdicts.

`compare` lists these beside the system metadata and flags those that differ; `check` refuses a
file made with less care than the expectations' sources. Driver and CUDA versions are in
system.py's fields (the same table).
"""

from __future__ import annotations

from typing import Any

from p2pbench_report.group import node_override_of
from p2pbench_report.units import format_size
from p2pbench_report.verdicts import run_verdicts


def _config(meta: dict) -> dict:
    return meta.get("config") if isinstance(meta.get("config"), dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _clocks(meta: dict) -> str:
    """'SM 1980/1980 MHz, mem 3201/3201 MHz' per distinct GPU state (current/max at the start)."""
    health = meta.get("health_before") if isinstance(meta.get("health_before"), dict) else {}
    states = []
    for gpu in health.get("gpus") or []:
        clocks = gpu.get("clocks_mhz") if isinstance(gpu, dict) else None
        if isinstance(clocks, dict) and clocks.get("sm") is not None:
            states.append(f"SM {clocks.get('sm')}/{clocks.get('sm_max')} MHz, "
                          f"mem {clocks.get('mem')}/{clocks.get('mem_max')} MHz")
    if not states:  # older files: the clock the driver observed while timing, and the maximum
        for gpu in meta.get("gpus") or []:
            observed, peak = _number(gpu.get("observed_sm_clock_mhz")), _number(gpu.get("max_sm_clock_mhz"))
            if observed is not None or peak is not None:
                states.append(f"SM {observed:.0f}/{peak:.0f} MHz" if observed is not None and peak is not None
                              else f"SM max {peak:.0f} MHz" if peak is not None else f"SM {observed:.0f} MHz")
    distinct = list(dict.fromkeys(states))
    return "; ".join(distinct) if distinct else "unknown"


def _nodes(meta: dict) -> str:
    """How ranks were split into nodes: by host, or every K ranks of a host (--ranks-per-node K),
    which changes the methods a pair may use (no peer mapping across nodes)."""
    override = node_override_of(meta.get("group"))
    return f"every {override} ranks of a host (--ranks-per-node {override})" if override else "by host"


def _peer_mapping(meta: dict) -> dict:
    return meta.get("peer_mapping") if isinstance(meta.get("peer_mapping"), dict) else {}


def allocator_of(meta: dict) -> str:
    """The run's allocator (meta.peer_mapping.allocator, docs/allocators.md). Files written before
    the allocators mapped their buffers through CUDA IPC: legacy."""
    allocator = _peer_mapping(meta).get("allocator")
    return allocator if isinstance(allocator, str) else "legacy"


def peer_mapping_times(meta: dict) -> str:
    """'map 38.2 ms, unmap 1.7 ms' (max over ranks), 'no peer mapping: <reason>', or 'not recorded'.
    Shown beside the conditions, not among them: a time, not how the run was made."""
    mapping = _peer_mapping(meta)
    if not mapping:
        return "not recorded"
    if mapping.get("mapped") is False:
        return f"no peer mapping: {mapping.get('reason', 'no reason recorded')}"
    parts = [f"{name} {_number(mapping.get(key)):.1f} ms" for name, key in (("map", "map_ms"), ("unmap", "unmap_ms"))
             if _number(mapping.get(key)) is not None]
    return ", ".join(parts) or "not recorded"


def run_conditions(meta: dict) -> dict[str, str]:
    """Field -> its value as text, in a fixed order ('unknown' where the file does not say)."""
    config = _config(meta)
    samples = config.get("samples")
    sample_time = _number(config.get("min_sample_time_ms"))
    pool = config.get("buffer_pool_bytes")
    sanitizer = meta.get("sanitizer_mode")
    return {
        "verify": ("on" if meta.get("verify") else "off") if isinstance(meta.get("verify"), bool) else "unknown",
        "samples per case": str(samples) if isinstance(samples, int) else "unknown",
        "min sample time": f"{sample_time:g} ms" if sample_time is not None else "unknown",
        "buffer pool": ("none" if pool == 0 else format_size(pool) + " B") if isinstance(pool, int) else "unknown",
        "allocator": allocator_of(meta),
        "clocks (current/max)": _clocks(meta),
        "NCCL": str(meta["nccl_version"]) if meta.get("nccl_version") else "none recorded",
        "nodes": _nodes(meta),
        "sanitizer mode": "yes (not measurements)" if sanitizer is True else "no",  # absent: files before it
        "health verdicts": run_verdicts(meta).summary(),
    }


def differing_conditions(metas: list[dict]) -> list[str]:
    """The conditions that differ between runs, e.g. ['samples per case: 10 / 3']."""
    fields = [run_conditions(meta) for meta in metas]
    return [f"{name}: {' / '.join(f[name] for f in fields)}" for name in fields[0]
            if len({f[name] for f in fields}) > 1]


def conditions_warning(metas: list[dict]) -> str | None:
    """One sentence naming what differs, or None when the runs were made alike."""
    differing = differing_conditions(metas)
    if not differing:
        return None
    return ("WARNING: the runs were made differently, so their figures may differ for that reason "
            "alone: " + "; ".join(differing) + ".")
