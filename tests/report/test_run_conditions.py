"""How runs were made and their health: compare flags differing conditions, regress says
UNRELIABLE for a contended or throttled candidate and decides on the raw samples, the loader
rejects statistics that disagree with the samples."""

from __future__ import annotations

import copy
import json

import make_fixtures
import pytest
from p2pbench_report.cases import BANDWIDTH
from p2pbench_report.loader import load_results
from p2pbench_report.regress import Thresholds, Verdict, figure_of, regress
from p2pbench_report.verdicts import run_verdicts


def cells(line: str) -> list[str] | None:
    if not line.startswith("| ") or set(line) <= set("|-: "):
        return None
    return [c.strip() for c in line.strip().strip("|").split("|")]


CONTENDED = {"status": "warn", "contention": True, "throttled": False, "link_errors": False,
             "items": [{"code": "contention", "severity": "warn", "rank": 1, "gpu_uuid": "GPU-x",
                        "message": "pid 4242 (not a rank of this run) used 2.0 GiB on GPU 1", "evidence": {"pid": 4242}}]}


def test_compare_shows_and_flags_how_the_runs_were_made(cli, write_json, one_baseline_path, one_baseline_document):
    other = copy.deepcopy(one_baseline_document)
    other["meta"].update(verify=False, verdicts=CONTENDED, nccl_version="9.9.9", label="candidate-node")
    other["meta"]["config"].update(samples=3, min_sample_time_ms=0.1)
    code, out, err = cli("compare", one_baseline_path, write_json("other.json", other))
    assert code == 0, err
    rows = {c[0]: c for c in map(cells, out.splitlines()) if c}
    assert rows["verify"][1:] == ["on", "off", "≠"]
    assert rows["samples per case"][1:] == [str(one_baseline_document["meta"]["config"]["samples"]), "3", "≠"]
    assert rows["min sample time"][2:] == ["0.1 ms", "≠"] and rows["NCCL"][2:] == ["9.9.9", "≠"]
    assert rows["health verdicts"][2] == "warn: contention" and rows["health verdicts"][3] == "≠"
    assert rows["buffer pool"][-1] == "" and rows["clocks (current/max)"][-1] == ""
    warning = next(line for line in out.splitlines() if "WARNING: the runs were made differently" in line)
    assert "samples per case" in warning and "verify: on / off" in warning
    assert "- candidate-node: pid 4242 (not a rank of this run) used 2.0 GiB on GPU 1" in out
    code, out, _ = cli("compare", one_baseline_path, one_baseline_path)
    assert "WARNING: the runs were made differently" not in out


def _slower_candidate(document: dict) -> tuple[dict, list[int]]:
    stable = make_fixtures.stable_bandwidth_rows(document)
    dropped = stable[:: max(1, len(stable) // 8)]
    return make_fixtures.scaled(document, dropped, 0.90), dropped


def test_regress_says_unreliable_for_a_contended_candidate(cli, write_json, one_baseline_path, one_baseline_document):
    candidate, dropped = _slower_candidate(one_baseline_document)
    code, out, _ = cli("regress", one_baseline_path, write_json("clean.json", candidate), "--format", "json")
    assert code == 1 and json.loads(out)["counts"]["SLOWER"] == len(dropped)  # control: the drop is real
    candidate["meta"]["verdicts"] = CONTENDED
    path = write_json("contended.json", candidate)
    code, out, _ = cli("regress", one_baseline_path, path, "--format", "json")
    report = json.loads(out)
    assert code == 3 and report["result"] == "unreliable" and report["exit_code"] == 3
    assert report["counts"]["SLOWER"] == 0 and report["counts"]["UNRELIABLE"] == len(dropped)
    assert report["candidate"]["health"]["contention"] is True
    assert all("contention" in c["reason"] for c in report["cases"] if c["verdict"] == "UNRELIABLE")
    code, out, _ = cli("regress", one_baseline_path, path)
    assert code == 3 and "regression check: UNRELIABLE" in out and "pid 4242" in out and "| UNRELIABLE" in out


def test_a_broken_case_still_fails_a_contended_candidate(cli, write_json, one_baseline_path, one_baseline_document):
    candidate, _ = _slower_candidate(one_baseline_document)
    ok_rows = [i for i, r in enumerate(candidate["results"]) if r["status"] == "ok"]
    candidate = make_fixtures.with_status(candidate, ok_rows[-1:], "failed")
    candidate["meta"]["verdicts"] = CONTENDED
    assert cli("regress", one_baseline_path, write_json("c.json", candidate))[0] == 1


def _with_health(document: dict, processes_gpu1: list[dict], reasons: list[str]) -> dict:
    out = copy.deepcopy(document)
    out["meta"].pop("verdicts", None)
    for when in ("health_before", "health_after"):
        for index, gpu in enumerate(out["meta"][when]["gpus"]):
            gpu["clock_event_reasons"] = {"names": list(reasons), "raw": 4 if reasons else 0}
            if index == 1:
                gpu["processes"] = list(processes_gpu1)
    return out


def test_verdicts_are_derived_from_older_files_health(one_baseline_document):
    meta = one_baseline_document["meta"]
    if "health_before" not in meta:
        pytest.skip("the baseline has no health snapshots")
    pids = [r["pid"] for r in meta["ranks"]]
    # Each rank's own process is listed with is_self false on the other GPU: not contention.
    own = _with_health(one_baseline_document, [{"pid": pids[1], "is_self": False, "used_memory_bytes": 1}], [])
    assert not run_verdicts(own["meta"]).contention and not run_verdicts(own["meta"]).throttled
    idle = _with_health(one_baseline_document, [], ["gpu_idle", "applications_clocks_setting"])
    assert not run_verdicts(idle["meta"]).throttled
    busy = _with_health(one_baseline_document, [{"pid": 99999, "is_self": False, "used_memory_bytes": 2**30}], [])
    verdicts = run_verdicts(busy["meta"])
    assert verdicts.contention and verdicts.status == "warn" and any("pid 99999" in m for m in verdicts.messages)
    hot = _with_health(one_baseline_document, [], ["sw_thermal_slowdown"])
    assert run_verdicts(hot["meta"]).throttled and "throttled" in run_verdicts(hot["meta"]).summary()
    assert run_verdicts({"label": "x"}).status == "unknown"


def test_regress_unreliable_from_derived_throttling(cli, write_json, one_baseline_path, one_baseline_document):
    if "health_before" not in one_baseline_document["meta"]:
        pytest.skip("the baseline has no health snapshots")
    candidate, dropped = _slower_candidate(one_baseline_document)
    candidate = _with_health(candidate, [], ["hw_slowdown"])
    code, out, _ = cli("regress", one_baseline_path, write_json("hot.json", candidate), "--format", "json")
    assert code == 3 and json.loads(out)["counts"]["UNRELIABLE"] == len(dropped)


@pytest.mark.parametrize("stat", ["median", "min", "max"])
def test_loader_rejects_statistics_that_disagree_with_the_samples(cli, write_json, one_baseline_document, stat):
    index = next(i for i, r in enumerate(one_baseline_document["results"]) if r["status"] == "ok")
    edited = copy.deepcopy(one_baseline_document)
    row = edited["results"][index]
    field = "bandwidth_gbps" if isinstance(row.get("bandwidth_gbps"), dict) else "latency_us"
    row[field][stat] *= 1.10
    code, _, err = cli("export", write_json("edited.json", edited), "--csv", "-")
    assert code == 2
    assert f"$.results[{index}].{field}.{stat}" in err and f"row {index} ({row['method']} " in err
    assert "do not match the raw samples" in err


def test_loader_checks_each_direction_of_a_bidir_row(cli, write_json, synthetic_document):
    edited = copy.deepcopy(synthetic_document)
    index = next(i for i, r in enumerate(edited["results"]) if r.get("directions"))
    edited["results"][index]["directions"][1]["bandwidth_gbps"]["median"] += 5.0
    code, _, err = cli("export", write_json("edited.json", edited), "--csv", "-")
    assert code == 2 and f"$.results[{index}].directions[1].bandwidth_gbps.median" in err


def test_regress_decides_on_the_samples_not_the_stored_median(one_baseline_path, one_baseline_document):
    """Stored medians that claim 'no change' do not hide a 10% drop of the samples."""
    candidate_document, dropped = _slower_candidate(one_baseline_document)
    baseline = load_results(one_baseline_path)
    candidate = load_results(one_baseline_path)  # the same figures, then the samples replaced
    for index in dropped:
        candidate.rows.at[index, "samples_gbps"] = candidate_document["results"][index]["samples_gbps"]
    assert figure_of(candidate.rows.loc[dropped[0]], BANDWIDTH) == pytest.approx(
        0.9 * baseline.rows.loc[dropped[0], "bandwidth_gbps_median"])
    report = regress(baseline, candidate, Thresholds())
    assert report.count(Verdict.SLOWER) == len(dropped) and report.exit_code == 1
