"""`check`: a run's figures against an expectations file (expectations.py), case by case.

The cases are judged by p2pbench's own code (`p2pbench-check`, built beside p2pbench: the judgement
of the run's --expect); this module refuses runs made differently, renders the judgement and
never judges a case itself.

  PASS            the median of the raw samples is at or above the floor (bandwidth) or at or
                  below the ceiling (latency)
  FAIL            below the floor / above the ceiling, or the case failed or was skipped
  no expectation  a row of the run that no entry matches (listed, never fails)
  not measured    an entry that no row of the run matches (listed, never fails)
A run none of whose rows matches an entry is unusable input (exit 2): another system's file.
Margin: how far the figure is on the good side of the limit, in the metric's unit and in % of the
limit (negative: the FAIL's shortfall). Exit status 1 on any FAIL, else 0.

A run made with less care than the expectations' sources is refused (InputError: exit 2) unless
forced: incomplete, verification off, fewer samples per case or shorter samples than the
sources (`made_with`), sanitizer mode, or contention / throttled clocks in its health verdicts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from p2pbench_report.cases import describe_case, identity
from p2pbench_report.errors import InputError
from p2pbench_report.expectations import METRICS, figure_of, metric_of, pair_class_of, read_expectations
from p2pbench_report.loader import read_document
from p2pbench_report.tables import Table
from p2pbench_report.units import format_value
from p2pbench_report.verdicts import run_verdicts

UNITS = {"bandwidth_gbps": "GB/s", "latency_us": "µs"}


@dataclass
class Judged:
    row_index: int
    row: dict
    entry: dict | None
    result: str               # PASS, FAIL, NO EXPECTATION
    figure: float | None = None
    margin: float | None = None          # in the metric's unit, positive = on the good side
    margin_pct: float | None = None      # margin / limit x 100
    note: str = ""


@dataclass
class CheckReport:
    results_path: str
    expectations_path: str
    expectations: dict
    pair_class: str
    judged: list[Judged] = field(default_factory=list)
    not_measured: list[dict] = field(default_factory=list)
    forced_past: list[str] = field(default_factory=list)

    def count(self, result: str) -> int:
        return sum(1 for j in self.judged if j.result == result)

    @property
    def exit_code(self) -> int:
        return 1 if self.count("FAIL") else 0


def refusal_reasons(document: dict, expectations: dict) -> list[str]:
    """Why the run is not comparable with the expectations' sources ([] when it is)."""
    meta, made_with = document["meta"], expectations.get("made_with") or {}
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    reasons = []
    if document.get("incomplete"):
        reasons.append(f"the run is incomplete ({document.get('incomplete_reason', 'no reason given')})")
    if made_with.get("verify", True) and meta.get("verify") is not True:
        reasons.append("verification was off (meta.verify false) and the expectations come from verified runs")
    if meta.get("sanitizer_mode") is True:
        reasons.append("meta.sanitizer_mode is true: the figures are not measurements")
    wanted_samples, samples = made_with.get("samples"), config.get("samples")
    if isinstance(wanted_samples, int) and (not isinstance(samples, int) or samples < wanted_samples):
        reasons.append(f"{samples if samples is not None else 'an unrecorded number of'} samples per case "
                       f"(meta.config.samples); the expectations' sources had {wanted_samples}")
    wanted_time, sample_time = made_with.get("min_sample_time_ms"), config.get("min_sample_time_ms")
    if isinstance(wanted_time, (int, float)) and (not isinstance(sample_time, (int, float)) or sample_time < wanted_time):
        reasons.append(f"samples of {sample_time if sample_time is not None else 'unrecorded'} ms "
                       f"(meta.config.min_sample_time_ms); the sources' were at least {wanted_time:g} ms")
    verdicts = run_verdicts(meta)
    if verdicts.unreliable:
        reasons.append(f"its health verdicts say {verdicts.summary()}: figures may be low for reasons outside the link")
    return reasons


REPO = Path(__file__).resolve().parents[2]
CHECKER = "p2pbench-check"


def checker_path() -> str:
    """$P2PBENCH_CHECK, else p2pbench-check on PATH, else the README's build directory's."""
    for candidate in (os.environ.get("P2PBENCH_CHECK"), shutil.which(CHECKER), REPO / "build" / "tools" / CHECKER):
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    raise InputError(CHECKER, f"not found: `check` judges with p2pbench's own code; build p2pbench "
                              f"(cmake --build build makes build/tools/{CHECKER}) or set P2PBENCH_CHECK=PATH")


def judgement(results_path: str, expectations_path: str, pair_class: str) -> dict:
    """p2pbench-check's judgement of every row (src/judgement/expectation_check.hpp)."""
    done = subprocess.run([checker_path(), str(results_path), str(expectations_path), pair_class],
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise InputError(str(results_path), f"{CHECKER} refused it: {done.stderr.strip() or done.returncode}")
    return json.loads(done.stdout)


def check(results_path: str, expectations_path: str, force: bool = False, pair_class: str | None = None) -> CheckReport:
    expectations = read_expectations(expectations_path)
    document = read_document(results_path)
    reasons = refusal_reasons(document, expectations)
    if reasons and not force:
        raise InputError(results_path, "refused: not made like the expectations' sources: " + "; ".join(reasons)
                         + " (--force checks it anyway)")
    report = CheckReport(str(results_path), str(expectations_path), expectations,
                         pair_class_of(document, pair_class, str(results_path)), forced_past=reasons)
    entries, rows = expectations["expectations"], document["results"]
    judged = judgement(results_path, expectations_path, report.pair_class)
    for j in judged["judged"]:
        entry = entries[j["entry"]] if j["entry"] is not None else None
        report.judged.append(Judged(j["case"], rows[j["case"]], entry, j["result"], j["figure"], j["margin"],
                                    j["margin_pct"], j["note"]))
    report.not_measured = [entries[i] for i in judged["not_measured"]]
    if not any(j.entry is not None for j in report.judged):  # another system's file would "pass" unchecked
        classes = sorted({str(e.get("pair_class")) for e in expectations["expectations"]})
        raise InputError(results_path, f"no row of the run matches an expectation of {expectations_path} (the run's "
                                       f"pair class is {report.pair_class}; the file's: {', '.join(classes) or 'none'}): "
                                       f"expectations of another system or sweep?")
    return report


# ---- rendering ------------------------------------------------------------------------------

def _limit_text(entry: dict) -> str:
    _, limit_key, higher_is_better = METRICS[entry["metric"]]
    sign = "≥" if higher_is_better else "≤"
    return f"{sign} {format_value(float(entry[limit_key]))} {UNITS[entry['metric']]}"


def _case_cells(row: dict) -> list[str]:
    return list(describe_case(identity(row)).values())


def summary_line(report: CheckReport) -> str:
    passed, failed = report.count("PASS"), report.count("FAIL")
    verdict = "FAIL" if failed else "PASS"
    worst = min((j for j in report.judged if j.margin_pct is not None), key=lambda j: j.margin_pct, default=None)
    worst_text = ""
    if worst is not None:
        case = " ".join(c for c in _case_cells(worst.row) if c)
        worst_text = f"; smallest margin {worst.margin_pct:+.1f}% ({case})"
    return (f"check {verdict}: {passed} PASS, {failed} FAIL of {passed + failed} cases with an expectation"
            f"{worst_text}; {report.count('NO EXPECTATION')} rows without expectation; "
            f"{len(report.not_measured)} expectations not measured")


def render_text(report: CheckReport, verbose: bool = True) -> str:
    e = report.expectations
    lines = [f"p2pbench check: {report.results_path} against {report.expectations_path}",
             f"expectations: system {e.get('system')}, tolerance {e.get('tolerance_pct')}%, made from "
             f"{', '.join(e.get('made_from') or []) or 'unknown'}; pair class {report.pair_class}",
             "figures: median of the raw samples; GB/s with 1 GB = 1e9 B; margin = distance to the limit "
             "on the good side, in the unit and in % of the limit", ""]
    lines += [f"WARNING (forced): {reason}" for reason in report.forced_past]
    table = Table(["result", "method", "direction", "mode", "size", "ranks", "config", "median", "limit",
                   "margin", "margin %", "note"], numeric={7, 9, 10})
    for j in report.judged:
        if j.result == "NO EXPECTATION" and not verbose:
            continue
        unit = UNITS.get(j.entry["metric"] if j.entry else metric_of(j.row) or "", "")
        table.add(j.result.lower() if j.result == "NO EXPECTATION" else j.result, *_case_cells(j.row),
                  f"{format_value(j.figure if j.figure is not None else _row_median(j.row))} {unit}".strip(),
                  _limit_text(j.entry) if j.entry else "-",
                  f"{j.margin:+.{3 if unit == 'µs' else 2}f} {unit}" if j.margin is not None else "-",
                  f"{j.margin_pct:+.1f}%" if j.margin_pct is not None else "-", j.note)
    if table.rows:
        lines.append(table.to_markdown())
    if report.not_measured:
        lines += ["", f"not measured ({len(report.not_measured)} expectations no row of the run matches):"]
        for entry in report.not_measured:
            described = dict(describe_case(identity(entry["match"])), ranks="")  # both orientations
            case = " ".join(c for c in described.values() if c)
            lines.append(f"  not measured: {case} {entry['metric']} {_limit_text(entry)}")
    return "\n".join(lines + ["", summary_line(report)]) + "\n"


def _row_median(row: dict) -> float | None:
    metric = metric_of(row)
    return figure_of(row, metric) if metric else None
