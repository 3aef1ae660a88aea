"""The known-good runs an expectations file is made from (`expect make`): which of them may serve,
and what the file records of each.

A source must be complete, verified, not a sanitizer run and not two ranks on one GPU (else
--force), and its health verdicts (meta.verdicts, or derived from the health snapshots of older
files: verdicts.py) must carry no warning (contention, throttled clocks, NVLink errors; else
--allow-warnings): a figure measured beside a warning may be low for that reason.

Each source is recorded in the file's "sources": its path, the tree it was built from
(provenance.py: commit, dirty, diff_sha256, source_sha256; files written before meta.provenance
give their git_sha with dirty null), when the run started (meta.timestamp_utc) and its verdicts.
"""

from __future__ import annotations

from typing import Any

from p2pbench_report.errors import InputError
from p2pbench_report.provenance import provenance_of
from p2pbench_report.verdicts import run_verdicts


def _problems(document: dict) -> list[str]:
    """Why a run cannot serve as a known-good source, its verdicts aside ([] when it can)."""
    meta = document["meta"]
    problems = []
    if document.get("incomplete"):
        problems.append(f"the run is incomplete ({document.get('incomplete_reason', 'no reason given')})")
    if meta.get("verify") is not True:
        problems.append("meta.verify is not true (the copies were not verified)")
    if meta.get("sanitizer_mode") is True:
        problems.append("meta.sanitizer_mode is true (the figures are not measurements)")
    if meta.get("same_device"):
        problems.append("meta.same_device is true (not a P2P figure)")
    return problems


def _warning(document: dict) -> str | None:
    """'meta.verdicts: warn: link errors (GPU0 ...; GPU1 ...)', or None without a warning."""
    verdicts = run_verdicts(document["meta"])
    if verdicts.status != "warn":
        return None
    evidence = "; ".join(verdicts.messages) or "no message recorded"
    return f"{verdicts.source}: {verdicts.summary()} ({evidence})"


def carries_warning(document: dict) -> bool:
    return _warning(document) is not None


def check_sources(paths: list[str], documents: list[dict], force: bool, allow_warnings: bool) -> None:
    """InputError, naming the file, for the first source that may not serve."""
    for path, document in zip(paths, documents):
        problems = _problems(document)
        if problems and not force:
            raise InputError(path, "not a known-good run: " + "; ".join(problems) + " (--force uses it anyway)")
        warning = _warning(document)
        if warning and not allow_warnings:
            raise InputError(path, f"its health verdicts carry a warning, so its figures may be low for that reason: "
                                   f"{warning} (--allow-warnings uses it anyway)", field="$.meta.verdicts")


def source_record(path: str, document: dict) -> dict[str, Any]:
    """What the expectations file says of one source run."""
    meta = document["meta"]
    p = provenance_of(meta)
    return {"path": str(path), "commit": p.commit or "unknown", "dirty": p.dirty, "diff_sha256": p.diff_sha256,
            "source_sha256": p.source_sha256, "started_utc": meta.get("timestamp_utc"),
            "verdicts": run_verdicts(meta).summary()}


def _config_number(document: dict, key: str) -> float | None:
    value = (document["meta"].get("config") or {}).get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def made_with(documents: list[dict]) -> dict[str, Any]:
    """How the sources were made, the least of them: `check` refuses a run made with less."""
    samples = [_config_number(d, "samples") for d in documents]
    sample_times = [_config_number(d, "min_sample_time_ms") for d in documents]
    made = {"verify": all(d["meta"].get("verify") is True for d in documents)}
    if all(s is not None for s in samples):
        made["samples"] = int(min(samples))
    if all(t is not None for t in sample_times):
        made["min_sample_time_ms"] = float(min(sample_times))
    return made
