"""regress: verdicts, exit codes, thresholds, the statistical test's sample-size floor."""

from __future__ import annotations

import json

import make_fixtures
import pytest
from p2pbench_report.documents import bandwidth_row, latency_row, new_document, new_meta
from p2pbench_report.significance import can_reach, min_one_sided_p, one_sided_less
from p2pbench_report.units import parse_fraction


def regress_json(cli, baseline, candidate, *options):
    code, out, err = cli("regress", baseline, candidate, "--format", "json", *options)
    assert code in (0, 1), err
    return code, json.loads(out)


def verdicts_by_row(report: dict, document: dict) -> dict[str, list[int]]:
    """Verdict -> indices of the baseline rows it was given to (matched on case identity)."""
    keys = ("method", "direction", "mode", "bytes", "src_rank", "dst_rank", "blocks", "threads", "unroll",
            "smem_bytes", "stages", "protocol", "atomic_type", "atomic_pattern", "hot_addresses")
    index_of = {}
    for index, row in enumerate(document["results"]):
        index_of.setdefault(tuple(row.get(k) for k in keys), []).append(index)
    grouped: dict[str, list[int]] = {}
    for case in report["cases"]:
        rows = index_of.get(tuple(case[k] for k in keys), [])
        grouped.setdefault(case["verdict"], []).extend(rows[:1])
    return grouped


def test_identical_files_are_all_same(cli, baseline_path, baseline_document):
    code, report = regress_json(cli, baseline_path, baseline_path)
    assert code == 0 and report["result"] == "pass"
    ok_rows = sum(1 for r in baseline_document["results"] if r["status"] == "ok")
    assert report["counts"]["SAME"] == ok_rows
    assert set(k for k, v in report["counts"].items() if v) <= {"SAME", "UNMEASURED"}


def ten_percent_slowdown(document: dict) -> tuple[list[int], float, float, list[str]]:
    """(rows, scaled() factor, expected change, regress options): stable bandwidth rows dropped by
    10%; in a file without any (latency only), stable latency rows made 10% slower, judged with a
    5% latency threshold (the default 15% would rightly call +10% SAME)."""
    stable = make_fixtures.stable_bandwidth_rows(document)
    if stable:
        return stable, 0.9, -0.10, []
    stable = make_fixtures.stable_latency_rows(document)
    return stable, 1 / 1.10, +0.10, ["--latency-threshold", "5%"]


def test_a_ten_percent_drop_is_slower_exactly_there(cli, write_json, baseline_path, baseline_document):
    stable, factor, change, options = ten_percent_slowdown(baseline_document)
    assert stable, "the baseline has no case with >= 5 samples within 4% of their median"
    dropped = stable[:: max(1, len(stable) // 12)]
    candidate = write_json("slower.json", make_fixtures.scaled(baseline_document, dropped, factor))
    code, report = regress_json(cli, baseline_path, candidate, *options)
    assert code == 1 and report["result"] == "fail"
    grouped = verdicts_by_row(report, baseline_document)
    assert sorted(grouped["SLOWER"]) == sorted(dropped)
    assert report["counts"]["SLOWER"] == len(dropped)
    # SLOWER cases come first, each with its test's p-value and a 10% change for the worse.
    first = report["cases"][: len(dropped)]
    assert {c["verdict"] for c in first} == {"SLOWER"}
    assert all(c["p_value"] < 0.05 and c["change"] == pytest.approx(change, abs=1e-6) for c in first)


def test_one_percent_noise_is_same(cli, write_json, baseline_path, baseline_document):
    candidate = write_json("noisy.json", make_fixtures.perturbed(baseline_document, relative=0.01))
    code, report = regress_json(cli, baseline_path, candidate)
    assert code == 0
    assert report["counts"]["SLOWER"] == report["counts"]["FASTER"] == report["counts"]["AMBIGUOUS"] == 0
    ok_rows = sum(1 for r in baseline_document["results"] if r["status"] == "ok")
    assert report["counts"]["SAME"] == ok_rows


def test_faster_never_fails(cli, write_json, one_baseline_path, one_baseline_document):
    faster = make_fixtures.stable_bandwidth_rows(one_baseline_document)[:5]
    candidate = write_json("faster.json", make_fixtures.scaled(one_baseline_document, faster, 1.10))
    code, report = regress_json(cli, one_baseline_path, candidate)
    assert code == 0 and report["counts"]["FASTER"] == len(faster)


def test_ok_turned_failed_is_broken(cli, write_json, one_baseline_path, one_baseline_document):
    ok_rows = [i for i, r in enumerate(one_baseline_document["results"]) if r["status"] == "ok"]
    broken = [ok_rows[0], ok_rows[-1]]
    candidate = write_json("broken.json", make_fixtures.with_status(one_baseline_document, broken[:1], "failed"))
    candidate = write_json("broken.json", make_fixtures.with_status(json.loads(candidate.read_text()),
                                                                    broken[1:], "skipped", "peer access lost"))
    code, report = regress_json(cli, one_baseline_path, candidate)
    assert code == 1
    assert sorted(verdicts_by_row(report, one_baseline_document)["BROKEN"]) == sorted(broken)
    assert report["cases"][0]["verdict"] == "BROKEN"  # listed first (there is no SLOWER case)
    code, out, _ = cli("regress", one_baseline_path, candidate)
    assert code == 1 and "| BROKEN" in out and "peer access lost" in out


def test_missing_cases_fail_only_with_require_all(cli, write_json, one_baseline_path, one_baseline_document):
    gone = [0, 1, 2]
    candidate = write_json("partial.json", make_fixtures.without(one_baseline_document, gone))
    code, report = regress_json(cli, one_baseline_path, candidate)
    assert code == 0 and report["counts"]["MISSING"] == len(gone)
    code, report = regress_json(cli, one_baseline_path, candidate, "--require-all")
    assert code == 1 and "MISSING" in report["fails_on"]
    code, out, _ = cli("regress", one_baseline_path, candidate)
    assert code == 0 and out.count("| MISSING") == len(gone)


def test_thresholds_accept_percent_and_fraction(cli, write_json, one_baseline_path, one_baseline_document):
    dropped = make_fixtures.stable_bandwidth_rows(one_baseline_document)[:3]
    candidate = write_json("drop3.json", make_fixtures.scaled(one_baseline_document, dropped, 0.97))
    assert regress_json(cli, one_baseline_path, candidate)[0] == 0                       # 3% < 5% default
    assert regress_json(cli, one_baseline_path, candidate, "--threshold", "2%")[0] == 1
    assert regress_json(cli, one_baseline_path, candidate, "--threshold", "0.02")[0] == 1
    assert parse_fraction("5%") == parse_fraction("0.05") == pytest.approx(0.05)
    code, _, err = cli("regress", one_baseline_path, candidate, "--threshold", "five")
    assert code == 2 and "--threshold" in err


def test_latency_rows_use_the_latency_threshold(cli, write_json, synthetic_document):
    document = dict(synthetic_document, results=[r for r in synthetic_document["results"]
                                                 if r["method"] in ("ce", "latency_signal", "latency_ce")])
    synthetic_path = write_json("latency-base.json", document)
    latency = [i for i, r in enumerate(document["results"]) if r["method"].startswith("latency_")]
    slower_10 = write_json("lat10.json", make_fixtures.scaled(document, latency, 1 / 1.10))
    code, report = regress_json(cli, synthetic_path, slower_10)  # +10% latency < 15%
    assert code == 0 and report["counts"]["SLOWER"] == 0
    slower_25 = write_json("lat25.json", make_fixtures.scaled(document, latency, 1 / 1.25))
    code, report = regress_json(cli, synthetic_path, slower_25)
    assert code == 1 and report["counts"]["SLOWER"] == len(latency)
    assert {c["metric"] for c in report["cases"] if c["verdict"] == "SLOWER"} == {"latency"}
    code, report = regress_json(cli, synthetic_path, slower_25, "--latency-threshold", "30%")
    assert code == 0


def _tiny_run(samples: list[float], label: str) -> dict:
    return new_document(new_meta(label), [bandwidth_row("ce", "push", "uni", 2**30, samples)])


def test_too_few_samples_are_ambiguous_not_slower(cli, write_json):
    baseline = write_json("b.json", _tiny_run([390.0, 391.0, 392.0], "base"))
    candidate = write_json("c.json", _tiny_run([300.0, 301.0, 302.0], "cand"))  # -23%, 3 vs 3
    code, report = regress_json(cli, baseline, candidate)
    assert code == 0 and report["cases"][0]["verdict"] == "AMBIGUOUS"
    assert report["cases"][0]["min_p_value"] == pytest.approx(0.05)
    candidate = write_json("c4.json", _tiny_run([300.0, 301.0, 302.0, 303.0], "cand"))  # 3 vs 4
    code, report = regress_json(cli, baseline, candidate)
    assert code == 1 and report["cases"][0]["verdict"] == "SLOWER"


def test_noisy_drop_without_significance_is_ambiguous(cli, write_json):
    baseline = write_json("b.json", _tiny_run([300, 390, 480, 310, 470, 395, 385, 305, 475, 390], "base"))
    candidate = write_json("c.json", _tiny_run([290, 360, 470, 300, 460, 350, 345, 295, 465, 355], "cand"))
    code, report = regress_json(cli, baseline, candidate)
    assert code == 0 and report["cases"][0]["verdict"] == "AMBIGUOUS"
    assert report["cases"][0]["p_value"] >= 0.05


def test_minimum_reachable_p_value():
    assert min_one_sided_p(3, 3) == pytest.approx(0.05)
    assert not can_reach(3, 3) and can_reach(3, 4) and can_reach(10, 10)
    assert not can_reach(1, 1) and not can_reach(0, 10)
    assert one_sided_less([1.0, 2.0], [3.0, 4.0]).p_value is None  # 1/6 floor: not run
    assert one_sided_less([1, 2, 3, 4], [5, 6, 7, 8]).p_value == pytest.approx(1 / 70)


def test_latency_row_helper_is_lower_is_better(cli, write_json):
    base = new_document(new_meta("a"), [latency_row("latency_signal", 8, [1.0 + i / 100 for i in range(10)])])
    cand = new_document(new_meta("b"), [latency_row("latency_signal", 8, [1.3 + i / 100 for i in range(10)])])
    code, report = regress_json(cli, write_json("a.json", base), write_json("b.json", cand))
    assert code == 1 and report["cases"][0]["verdict"] == "SLOWER" and report["cases"][0]["unit"] == "µs"


def test_files_sharing_no_case_are_unusable(cli, write_json, one_baseline_path):
    other = new_document(new_meta("other"), [bandwidth_row("ce", "push", "uni", 12345, [1.0, 2.0, 3.0])])
    code, _, err = cli("regress", one_baseline_path, write_json("other.json", other))
    assert code == 2 and "no case matches" in err
