"""A run's health and contention verdicts: meta.verdicts as the driver writes it, or, for files
written before it did, derived from meta.health_before / meta.health_after / meta.health_delta.

meta.verdicts = {"status": "ok" | "warn", "contention": bool, "throttled": bool,
                 "link_errors": bool, "items": [{"code", "severity", "rank", "gpu_uuid",
                 "message", "evidence"}]}
Derived for older files (same meaning as the driver's):
  contention   a process other than the run's own ranks (meta.ranks[].pid) on one of its GPUs in
               either health snapshot. `is_self` is not used: it compares with one rank's pid only.
  throttled    a clock-event reason other than gpu_idle / applications_clocks_setting set in
               either snapshot (those two say the GPU was idle or runs at set clocks, not slowed).
  link_errors  meta.health_delta.errors_increased (NVLink error counters rose during the run).
A file with neither verdicts nor health snapshots has status "unknown".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BENIGN_CLOCK_REASONS = frozenset({"gpu_idle", "applications_clocks_setting"})
SNAPSHOTS = ("health_before", "health_after")


@dataclass(frozen=True)
class RunVerdicts:
    status: str                      # "ok", "warn" or "unknown"
    contention: bool
    throttled: bool
    link_errors: bool
    messages: tuple[str, ...] = field(default_factory=tuple)
    source: str = "meta.verdicts"   # or "derived from meta.health_*", or "not recorded"

    @property
    def unreliable(self) -> bool:
        """Figures of this run may be low for reasons outside the link: another job, slowed clocks."""
        return self.contention or self.throttled

    def summary(self) -> str:
        """'ok', 'warn: contention, throttled', 'unknown (not recorded)'."""
        if self.status == "unknown":
            return f"unknown ({self.source})"
        flags = [name for name, on in (("contention", self.contention), ("throttled", self.throttled),
                                       ("link errors", self.link_errors)) if on]
        return self.status + (f": {', '.join(flags)}" if flags else "")


def _from_meta_verdicts(verdicts: dict) -> RunVerdicts:
    items = verdicts.get("items") if isinstance(verdicts.get("items"), list) else []
    messages = tuple(str(i.get("message")) for i in items if isinstance(i, dict) and i.get("message"))
    return RunVerdicts(status=str(verdicts.get("status", "unknown")), contention=bool(verdicts.get("contention")),
                       throttled=bool(verdicts.get("throttled")), link_errors=bool(verdicts.get("link_errors")),
                       messages=messages)


def _gpus(snapshot: Any) -> list[dict]:
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("gpus"), list):
        return []
    return [g for g in snapshot["gpus"] if isinstance(g, dict)]


def _foreign_processes(meta: dict) -> list[str]:
    own = {r.get("pid") for r in meta.get("ranks") or [] if isinstance(r, dict) and r.get("pid") is not None}
    found = []
    for when in SNAPSHOTS:
        for gpu in _gpus(meta.get(when)):
            for process in gpu.get("processes") or []:
                pid = process.get("pid") if isinstance(process, dict) else None
                if pid is not None and own and pid not in own:
                    memory = process.get("used_memory_bytes")
                    used = f", {memory / 2**20:.0f} MiB" if isinstance(memory, (int, float)) else ""
                    found.append(f"contention: pid {pid} (not a rank of this run) on {gpu.get('uuid', '?')} "
                                 f"in {when}{used}")
    return found


def _throttle_reasons(meta: dict) -> list[str]:
    found = []
    for when in SNAPSHOTS:
        for gpu in _gpus(meta.get(when)):
            reasons = gpu.get("clock_event_reasons")
            names = reasons.get("names") if isinstance(reasons, dict) else None
            slowing = [n for n in names or [] if n not in BENIGN_CLOCK_REASONS]
            if slowing:
                found.append(f"throttle: {', '.join(slowing)} on {gpu.get('uuid', '?')} in {when}")
    return found


def _link_error_messages(delta: dict) -> list[str]:
    """'link errors on GPU-...: crc_data +759, ecc_data +1770 (NVLink counters during the run)'."""
    messages = []
    for gpu in delta.get("gpus") or []:
        counters = gpu.get("nvlink_errors") if isinstance(gpu, dict) else None
        rose = {k: v for k, v in (counters or {}).items() if isinstance(v, (int, float)) and v > 0}
        down = gpu.get("links_down") if isinstance(gpu, dict) else None
        if rose or down:
            parts = [f"{name} +{count:g}" for name, count in rose.items()] + ([f"links down {down}"] if down else [])
            messages.append(f"link errors on {gpu.get('uuid', '?')}: {', '.join(parts)} (NVLink counters during the run)")
    return messages or ["link errors: NVLink error counters rose during the run (meta.health_delta)"]


def _derived(meta: dict) -> RunVerdicts:
    if not any(_gpus(meta.get(when)) for when in SNAPSHOTS):
        return RunVerdicts("unknown", False, False, False, source="not recorded")
    contention, throttle = _foreign_processes(meta), _throttle_reasons(meta)
    delta = meta.get("health_delta") if isinstance(meta.get("health_delta"), dict) else {}
    link_errors = bool(delta.get("errors_increased"))
    messages = contention + throttle + (_link_error_messages(delta) if link_errors else [])
    status = "warn" if messages else "ok"
    return RunVerdicts(status, bool(contention), bool(throttle), link_errors, tuple(messages),
                       source="derived from meta.health_*")


def run_verdicts(meta: dict) -> RunVerdicts:
    """The run's verdicts: meta.verdicts where written, else derived from the health snapshots."""
    verdicts = meta.get("verdicts")
    if isinstance(verdicts, dict):
        return _from_meta_verdicts(verdicts)
    return _derived(meta)
