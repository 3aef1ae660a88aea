"""The run's own all-pairs findings, as p2pbench wrote them: `suspect_pairs` (every judged pair
with its reference, and the suspects at the run's margin) and `rounds_agreement`
(src/results/pair_matrix.cpp computes both). The report tool reads them and never judges pairs
itself, so a file and its report cannot disagree.

A finding names its case as the writer's matrix key: method, direction, mode, bytes, the shape
as text ("blocks:132/threads:512/unroll:4") and the schedule; `case_of` turns that into the
CaseGroup the figures and tables use.
"""

from __future__ import annotations

from p2pbench_report.pair_figures import SHAPE_VARIABLES, CaseGroup


def _shape_value(text: str):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text.strip('"')


def case_of(entry: dict) -> CaseGroup:
    """The CaseGroup of a finding's matrix key (shape fields the key leaves out are None; the
    buffer pool, which the key does not carry, 0)."""
    named = dict(part.split(":", 1) for part in (entry.get("shape") or "").split("/") if ":" in part)
    shape = tuple((name, _shape_value(named[name]) if name in named else (0 if name == "buffer_pool_bytes" else None))
                  for name in SHAPE_VARIABLES)
    return CaseGroup(entry["method"], entry["direction"], entry["mode"], int(entry["bytes"]), shape)


def measured_as(schedule: str) -> str:
    """'matrix sequential', 'matrix rounds', 'sampled' (the writer's schedule of a sampled
    pattern is 'sampled')."""
    return "sampled" if schedule == "sampled" else f"matrix {schedule}"


def suspect_findings(document: dict) -> dict | None:
    """The file's `suspect_pairs` ({margin_pct, pairs, judged}), or None where the run wrote none
    (a version 1 file, or one from before the writer judged pairs)."""
    found = document.get("suspect_pairs")
    return found if isinstance(found, dict) else None


def agreement_findings(document: dict) -> list[dict]:
    found = document.get("rounds_agreement")
    return found if isinstance(found, list) else []
