"""Regression check of a candidate run against a baseline run, case by case.

Verdicts, in the order they are listed:
  SLOWER      the median is worse by more than the threshold AND a one-sided Mann-Whitney U
              test on the raw samples says the candidate is worse (p < α = 0.05)   -> fails
  BROKEN      `ok` in the baseline, `failed` or `skipped` in the candidate         -> fails
  UNRELIABLE  would be SLOWER, but the candidate run had contention (another process on its
              GPUs) or throttled clocks (its health verdicts: verdicts.py): re-run it   -> exit 3
  MISSING     in the baseline, absent from the candidate              -> fails with --require-all
  AMBIGUOUS   the median moved past the threshold but the test cannot confirm it (too few
              samples for p < α to be reachable, or p >= α)
  FASTER      the median is better by more than the threshold and the test confirms it
  UNMEASURED  not `ok` in the baseline: nothing to compare against
  NEW         only in the candidate
  SAME        the median moved by no more than the threshold
Bandwidth rows: higher is better, `--threshold`. Latency rows (latency_us, samples_us): lower is
better, `--latency-threshold`. The figures compared are the medians of the raw samples
(samples_gbps / samples_us), and the test runs on those samples; the stored median is used only
for a row without samples (the loader has already checked that the two agree).
Files both of version 2 are matched pair by pair by GPU identity (pair_rows.py: the same
physical pair even where the ranks were numbered differently; rounds flow by flow), others by rank.
Exit status: 1 when a case fails (SLOWER, BROKEN, MISSING with --require-all); otherwise 3 when a
case is UNRELIABLE (the gate must neither pass nor blame the software: re-run on idle GPUs);
otherwise 0.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from enum import Enum

from p2pbench_report.cases import (KEY_VARIABLES, LATENCY, MatchedCase, Metric, describe_case,
                                   match_cases, median_of, samples_of, sort_key)
from p2pbench_report.conditions import conditions_warning, differing_conditions
from p2pbench_report.errors import InputError
from p2pbench_report.loader import ResultSet
from p2pbench_report.pair_rows import comparison_rows, matches_by_gpu
from p2pbench_report.significance import ALPHA, TEST_NAME, Significance, one_sided_greater, one_sided_less
from p2pbench_report.tables import Table
from p2pbench_report.units import format_percent, format_value
from p2pbench_report.verdicts import RunVerdicts, run_verdicts

EXIT_UNRELIABLE = 3


class Verdict(str, Enum):
    SLOWER = "SLOWER"
    BROKEN = "BROKEN"
    UNRELIABLE = "UNRELIABLE"
    MISSING = "MISSING"
    AMBIGUOUS = "AMBIGUOUS"
    FASTER = "FASTER"
    UNMEASURED = "UNMEASURED"
    NEW = "NEW"
    SAME = "SAME"


LISTING_ORDER = list(Verdict)
ALWAYS_FAILING = {Verdict.SLOWER, Verdict.BROKEN}
QUIET = {Verdict.SAME, Verdict.UNMEASURED}  # counted, listed in Markdown only with --verbose


@dataclass(frozen=True)
class Thresholds:
    bandwidth: float = 0.05
    latency: float = 0.15
    alpha: float = ALPHA

    def for_metric(self, metric: Metric) -> float:
        return self.latency if metric is LATENCY else self.bandwidth


@dataclass
class CaseVerdict:
    key: tuple
    verdict: Verdict
    reason: str
    metric: Metric | None = None
    baseline_median: float | None = None
    candidate_median: float | None = None
    change: float | None = None         # (candidate - baseline) / baseline
    worse_by: float | None = None       # the change in the bad direction (latency: up, bandwidth: down)
    significance: Significance | None = None

    def as_dict(self) -> dict:
        case = dict(zip(KEY_VARIABLES, self.key))
        return {
            "verdict": self.verdict.value, **case,
            "metric": self.metric.name if self.metric else None, "unit": self.metric.unit if self.metric else None,
            "baseline_median": self.baseline_median, "candidate_median": self.candidate_median,
            "change": self.change,
            "p_value": self.significance.p_value if self.significance else None,
            "min_p_value": self.significance.min_p_value if self.significance else None,
            "test_method": self.significance.method if self.significance else None,
            "reason": self.reason,
        }


def figure_of(row, metric: Metric) -> float | None:
    """The median of the row's raw samples; the stored median where the row has no samples."""
    if row is None or row.get("status") != "ok":
        return None
    samples = samples_of(row, metric)
    return statistics.median(samples) if samples else median_of(row, metric)


def _moved(case: MatchedCase, metric: Metric, thresholds: Thresholds) -> CaseVerdict:
    baseline, candidate = case.rows
    base, cand = figure_of(baseline, metric), figure_of(candidate, metric)
    if base is None or cand is None or base <= 0:
        return CaseVerdict(case.key, Verdict.AMBIGUOUS, f"no usable {metric.name} median in both files", metric,
                           base, cand)
    change = (cand - base) / base
    worse_by = -change if metric.higher_is_better else change
    threshold = thresholds.for_metric(metric)
    verdict = CaseVerdict(case.key, Verdict.SAME, f"within ±{format_percent(threshold, signed=False)}", metric,
                          base, cand, change, worse_by)
    if abs(worse_by) <= threshold:
        return verdict
    base_samples, cand_samples = samples_of(baseline, metric), samples_of(candidate, metric)
    candidate_lower = (worse_by > 0) == metric.higher_is_better
    test = one_sided_less if candidate_lower else one_sided_greater
    verdict.significance = test(cand_samples, base_samples, thresholds.alpha)
    if verdict.significance.significant(thresholds.alpha):
        verdict.verdict = Verdict.SLOWER if worse_by > 0 else Verdict.FASTER
        verdict.reason = verdict.significance.describe()
    else:
        verdict.verdict = Verdict.AMBIGUOUS
        verdict.reason = f"median {format_percent(change)} but {verdict.significance.describe()}"
    return verdict


def _unreliable(verdict: CaseVerdict, candidate_run: RunVerdicts) -> CaseVerdict:
    """A slowdown measured while another job shared the GPUs, or with throttled clocks, says
    nothing about the software under test."""
    if verdict.verdict is Verdict.SLOWER and candidate_run.unreliable:
        causes = [c for c, on in (("contention", candidate_run.contention), ("throttled clocks", candidate_run.throttled)) if on]
        verdict.verdict = Verdict.UNRELIABLE
        verdict.reason = (f"median {format_percent(verdict.change)} ({verdict.reason}) but the candidate run had "
                          f"{' and '.join(causes)}: re-run on idle GPUs")
    return verdict


def classify(case: MatchedCase, thresholds: Thresholds, candidate_run: RunVerdicts | None = None) -> CaseVerdict:
    verdict = _classify(case, thresholds)
    return _unreliable(verdict, candidate_run) if candidate_run is not None else verdict


def _classify(case: MatchedCase, thresholds: Thresholds) -> CaseVerdict:
    baseline, candidate = case.rows
    metric = case.metric()

    def median(row) -> float | None:
        return median_of(row, metric) if metric else None

    if baseline is None:
        return CaseVerdict(case.key, Verdict.NEW, "only in the candidate", metric, None, median(candidate))
    if candidate is None:
        return CaseVerdict(case.key, Verdict.MISSING, "absent from the candidate", metric, median(baseline))
    if baseline["status"] != "ok":
        return CaseVerdict(case.key, Verdict.UNMEASURED, f"{baseline['status']} in the baseline", metric)
    if candidate["status"] != "ok":
        error = candidate.get("error")
        detail = f": {error}" if isinstance(error, str) and error else ""
        return CaseVerdict(case.key, Verdict.BROKEN, f"ok in the baseline, {candidate['status']} now{detail}",
                           metric, median(baseline))
    if metric is None:
        return CaseVerdict(case.key, Verdict.AMBIGUOUS, "neither bandwidth nor latency figures")
    return _moved(case, metric, thresholds)


@dataclass
class RegressionReport:
    baseline: ResultSet
    candidate: ResultSet
    thresholds: Thresholds
    require_all: bool
    verdicts: list[CaseVerdict] = field(default_factory=list)
    by_gpu: bool = False  # cases matched by GPU identity (both files version 2), else by rank

    def count(self, verdict: Verdict) -> int:
        return sum(1 for v in self.verdicts if v.verdict is verdict)

    @property
    def failing(self) -> set[Verdict]:
        return ALWAYS_FAILING | ({Verdict.MISSING} if self.require_all else set())

    @property
    def passed(self) -> bool:
        return not any(v.verdict in self.failing for v in self.verdicts)

    @property
    def unreliable(self) -> bool:
        return self.count(Verdict.UNRELIABLE) > 0

    @property
    def result(self) -> str:
        return "fail" if not self.passed else "unreliable" if self.unreliable else "pass"

    @property
    def exit_code(self) -> int:
        return {"fail": 1, "unreliable": EXIT_UNRELIABLE, "pass": 0}[self.result]

    @property
    def baseline_verdicts(self) -> RunVerdicts:
        return run_verdicts(self.baseline.document["meta"])

    @property
    def candidate_verdicts(self) -> RunVerdicts:
        return run_verdicts(self.candidate.document["meta"])


def _listing_key(verdict: CaseVerdict) -> tuple:
    worse = verdict.worse_by if verdict.worse_by is not None and not math.isnan(verdict.worse_by) else 0.0
    return (LISTING_ORDER.index(verdict.verdict), -worse, sort_key(verdict.key))


def regress(baseline: ResultSet, candidate: ResultSet, thresholds: Thresholds = Thresholds(),
            require_all: bool = False) -> RegressionReport:
    """Classifies every case; raises InputError when the two files share no case at all."""
    by_gpu = matches_by_gpu([baseline, candidate])
    matched = match_cases([comparison_rows(baseline), comparison_rows(candidate)], by_gpu)
    if matched and not any(all(r is not None for r in case.rows) for case in matched):
        raise InputError(candidate.path, f"no case matches one of the baseline {baseline.path}: are these "
                                         f"results of the same sweep?")
    if not matched:
        raise InputError(baseline.path, "no result rows to compare")
    report = RegressionReport(baseline, candidate, thresholds, require_all, by_gpu=by_gpu)
    candidate_run = report.candidate_verdicts
    report.verdicts = sorted((classify(case, thresholds, candidate_run) for case in matched), key=_listing_key)
    return report


# ---- rendering ------------------------------------------------------------------------------

def _file_line(role: str, result_set: ResultSet) -> str:
    note = " (INCOMPLETE run)" if result_set.incomplete else ""
    verdicts = run_verdicts(result_set.document["meta"])
    return (f"- {role}: `{result_set.path}` — {result_set.system.title_line()}{note}; "
            f"health: {verdicts.summary()}")


def _verdict_lines(role: str, verdicts: RunVerdicts) -> list[str]:
    return [f"  - {role}: {message}" for message in verdicts.messages]


def render_markdown(report: RegressionReport, verbose: bool = False) -> str:
    t = report.thresholds
    counts = ", ".join(f"{report.count(v)} {v.value}" for v in LISTING_ORDER if report.count(v))
    lines = [
        f"## p2pbench regression check: {report.result.upper()}",
        "",
        _file_line("baseline", report.baseline),
        *_verdict_lines("baseline", report.baseline_verdicts),
        _file_line("candidate", report.candidate),
        *_verdict_lines("candidate", report.candidate_verdicts),
        f"- thresholds: bandwidth {format_percent(t.bandwidth, signed=False)}, latency "
        f"{format_percent(t.latency, signed=False)}; test: {TEST_NAME}, α = {t.alpha:g}",
        f"- fails on: {', '.join(sorted(v.value for v in report.failing))} (exit 1); "
        f"UNRELIABLE: exit {EXIT_UNRELIABLE} (re-run)",
        f"- cases: {counts}; matched by {'GPU identity (ranks column: GPUs by short UUID)' if report.by_gpu else 'rank'}",
        "",
    ]
    warning = conditions_warning([report.baseline.document["meta"], report.candidate.document["meta"]])
    if warning:
        lines[-1:-1] = [f"- **{warning}**"]
    table = Table(["verdict", "method", "direction", "mode", "size", "ranks", "config", "baseline", "candidate",
                   "change", "evidence"], numeric={7, 8, 9})
    listed = [v for v in report.verdicts if verbose or v.verdict not in QUIET]
    for v in listed:
        case = describe_case(v.key)
        unit = f" {v.metric.unit}" if v.metric else ""
        table.add(v.verdict.value, *case.values(),
                  format_value(v.baseline_median) + (unit if v.baseline_median is not None else ""),
                  format_value(v.candidate_median) + (unit if v.candidate_median is not None else ""),
                  format_percent(v.change), v.reason)
    if listed:
        lines.append(table.to_markdown())
    hidden = [v for v in QUIET if report.count(v) and not verbose]
    if hidden:
        counts = " and ".join(f"{report.count(v)} {v.value}" for v in LISTING_ORDER if v in hidden)
        lines += ([""] if listed else []) + [f"Not listed: {counts} (--verbose lists them)."]
    return "\n".join(lines) + "\n"


def _health(verdicts: RunVerdicts) -> dict:
    return {"status": verdicts.status, "contention": verdicts.contention, "throttled": verdicts.throttled,
            "link_errors": verdicts.link_errors, "messages": list(verdicts.messages), "source": verdicts.source}


def render_json(report: RegressionReport) -> str:
    t = report.thresholds
    document = {
        "result": report.result,
        "exit_code": report.exit_code,
        "baseline": {"path": str(report.baseline.path), "label": report.baseline.system.label,
                     "incomplete": report.baseline.incomplete, "health": _health(report.baseline_verdicts)},
        "candidate": {"path": str(report.candidate.path), "label": report.candidate.system.label,
                      "incomplete": report.candidate.incomplete, "health": _health(report.candidate_verdicts)},
        "thresholds": {"bandwidth": t.bandwidth, "latency": t.latency},
        "test": {"name": TEST_NAME, "alpha": t.alpha},
        "fails_on": sorted(v.value for v in report.failing),
        "differing_conditions": differing_conditions([report.baseline.document["meta"],
                                                      report.candidate.document["meta"]]),
        "counts": {v.value: report.count(v) for v in LISTING_ORDER},
        "matched_by": "gpu" if report.by_gpu else "rank",
        "cases": [v.as_dict() for v in report.verdicts],
    }
    return json.dumps(document, indent=2, allow_nan=False, default=str) + "\n"
