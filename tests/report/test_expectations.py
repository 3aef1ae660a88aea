"""expect make / check: expectations from a known-good run, PASS/FAIL with margins, refusals."""

from __future__ import annotations

import copy
import json

import make_fixtures
import pytest
from make_fixtures import REAL_RESULTS, REPO
from p2pbench_report.expectations import MATCH_FIELDS
from p2pbench_report.verdicts import run_verdicts

SHIPPED = REPO / "expectations" / "h200-nv18.json"


def result_lines(out: str) -> list[list[str]]:
    """The cells of the check table's data lines."""
    lines = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| ") else []
        if cells and cells[0] in ("PASS", "FAIL", "no expectation"):
            lines.append(cells)
    return lines


@pytest.fixture
def made(cli, tmp_path, one_baseline_path) -> tuple[dict, object]:
    expect = tmp_path / "expect.json"
    # --allow-warnings: the committed runs carry a WARN verdict (NVLink error counters rose)
    code, _, err = cli("expect", "make", one_baseline_path, "-o", expect, "--tolerance", "5", "--allow-warnings")
    assert code == 0, err
    return json.loads(expect.read_text(encoding="utf-8")), expect


def test_make_writes_the_agreed_format(made, one_baseline_document):
    document, _ = made
    warned = run_verdicts(one_baseline_document["meta"]).status == "warn"
    assert [k for k in document if k != "made_with"] == ["format", "version", "system", "made_from", "sources",
                                                         "tolerance_pct"] + ["allow_warnings"] * warned + ["expectations"]
    assert document["format"] == "p2pbench-expectations" and document["version"] == 1
    assert document["tolerance_pct"] == 5.0 and document["system"] == one_baseline_document["meta"]["label"]
    ok_rows = [r for r in one_baseline_document["results"] if r["status"] == "ok"]
    cases = {tuple(r.get(k) for k in MATCH_FIELDS) for r in ok_rows}  # both orientations share an entry
    assert len(document["expectations"]) == len(cases)
    pair_class = one_baseline_document["meta"]["topology"]["topo_label"]
    for entry in document["expectations"]:
        assert entry["pair_class"] == pair_class
        assert set(entry["match"]) == set(MATCH_FIELDS) and "src_rank" not in entry["match"]
        assert entry["runs"] == 1 and "worst_run_pct" not in entry  # one run: no spread to state
        if entry["metric"] == "bandwidth_gbps":
            assert entry["floor"] == pytest.approx(entry["reference"] * 0.95, abs=2e-4) and "ceiling" not in entry
        else:
            assert entry["ceiling"] == pytest.approx(entry["reference"] * 1.05, abs=2e-4) and "floor" not in entry


def test_a_run_passes_its_own_expectations(cli, made, one_baseline_path, one_baseline_document):
    _, expect = made
    code, out, err = cli("check", one_baseline_path, "--expect", expect)
    assert code == 0, err
    ok_rows = sum(1 for r in one_baseline_document["results"] if r["status"] == "ok")
    lines = result_lines(out)
    assert len(lines) == ok_rows and {c[0] for c in lines} == {"PASS"}
    assert all(c[10].startswith("+") and c[10].endswith("%") for c in lines)  # margin in %
    assert all(c[9].split()[-1] in ("GB/s", "µs") for c in lines)            # margin in the unit
    assert out.rstrip().splitlines()[-1].startswith(f"check PASS: {ok_rows} PASS, 0 FAIL")


def test_a_degraded_copy_fails_exactly_there(cli, made, write_json, one_baseline_document, one_baseline_path):
    _, expect = made
    stable = make_fixtures.stable_bandwidth_rows(one_baseline_document)
    dropped = stable[:: max(1, len(stable) // 6)]
    slower = write_json("slower.json", make_fixtures.scaled(one_baseline_document, dropped, 0.90))
    code, out, _ = cli("check", slower, "--expect", expect)
    assert code == 1
    failed = [c for c in result_lines(out) if c[0] == "FAIL"]
    assert len(failed) == len(dropped)
    # 0.90 x its median against 0.95 x the worse orientation's: short by 5.3% at most
    assert all(-100 * 0.05 / 0.95 - 0.1 < float(c[10].rstrip("%")) < 0 for c in failed)
    assert f"{len(dropped)} FAIL" in out.rstrip().splitlines()[-1] and "check FAIL" in out
    code, _, _ = cli("check", write_json("noisy.json", make_fixtures.scaled(one_baseline_document, dropped, 0.97)),
                     "--expect", expect)
    assert code == 0  # 3% lower is within a 5% tolerance


def test_latency_rows_get_ceilings(cli, write_json, tmp_path):
    path = REAL_RESULTS / "latency.json"
    if not path.exists():
        pytest.skip("no committed latency run")
    document = json.loads(path.read_text(encoding="utf-8"))
    expect = tmp_path / "lat.json"
    assert cli("expect", "make", path, "-o", expect, "--allow-warnings")[0] == 0
    stable = make_fixtures.stable_latency_rows(document)[:3]
    slower = write_json("lat-slow.json", make_fixtures.scaled(document, stable, 1 / 1.10))  # +10% latency
    code, out, _ = cli("check", slower, "--expect", expect)
    assert code == 1 and len([c for c in result_lines(out) if c[0] == "FAIL"]) == len(stable)
    assert "≤" in out and "µs" in out


def test_rows_without_expectation_and_expectations_not_measured(cli, made, write_json, one_baseline_document):
    _, expect = made
    document = make_fixtures.without(one_baseline_document, [0, 1])
    extra = copy.deepcopy(document["results"][-1])
    extra["bytes"] = 12345
    document["results"].append(extra)
    code, out, _ = cli("check", write_json("partial.json", document), "--expect", expect)
    assert code == 0
    assert len([c for c in result_lines(out) if c[0] == "no expectation"]) == 1
    removed = {tuple(one_baseline_document["results"][i].get(k) for k in MATCH_FIELDS) for i in (0, 1)}
    remaining = {tuple(r.get(k) for k in MATCH_FIELDS) for r in document["results"]}
    gone = len(removed - remaining)  # a case neither orientation of which is left
    assert gone >= 1 and out.count("  not measured: ") == gone
    assert f"1 rows without expectation; {gone} expectations not measured" in out


def _changed(document: dict, change) -> dict:
    out = copy.deepcopy(document)
    change(out)
    return out


REFUSALS = {
    "verify off": (lambda d: d["meta"].update(verify=False), "verification was off"),
    "fewer samples": (lambda d: d["meta"]["config"].update(samples=3), "3 samples per case"),
    "shorter samples": (lambda d: d["meta"]["config"].update(min_sample_time_ms=0.1), "samples of 0.1 ms"),
    "sanitizer": (lambda d: d["meta"].update(sanitizer_mode=True), "sanitizer_mode is true"),
    "incomplete": (lambda d: d.update(incomplete=True, incomplete_reason="rank 1 died"), "incomplete (rank 1 died)"),
    "contention": (lambda d: d["meta"].update(verdicts={"status": "warn", "contention": True, "throttled": False,
                                                         "link_errors": False, "items": []}), "contention"),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_runs_made_differently_are_refused_unless_forced(cli, made, write_json, one_baseline_document, name):
    _, expect = made
    change, reason = REFUSALS[name]
    path = write_json("different.json", _changed(one_baseline_document, change))
    code, out, err = cli("check", path, "--expect", expect)
    assert code == 2 and out == "" and "refused" in err and reason in err and "--force" in err
    code, out, _ = cli("check", path, "--expect", expect, "--force")
    assert code == 0 and "WARNING (forced)" in out and reason in out


def test_another_systems_expectations_are_unusable(cli, made, write_json, one_baseline_document):
    _, expect = made
    other = _changed(one_baseline_document, lambda d: d["meta"]["topology"].update(topo_label="PIX"))
    code, _, err = cli("check", write_json("pcie.json", other), "--expect", expect)
    assert code == 2 and "pair class is PIX" in err


def test_make_refuses_sources_that_are_not_known_good(cli, write_json, one_baseline_document, tmp_path):
    unverified = _changed(one_baseline_document, REFUSALS["verify off"][0])
    code, _, err = cli("expect", "make", write_json("unverified.json", unverified), "-o", tmp_path / "e.json",
                       "--allow-warnings")
    assert code == 2 and "not a known-good run" in err and "--force" in err and not (tmp_path / "e.json").exists()
    untagged = _changed(one_baseline_document, lambda d: d["meta"].pop("topology"))
    path = write_json("untagged.json", untagged)
    code, _, err = cli("expect", "make", path, "-o", tmp_path / "e.json", "--allow-warnings")
    assert code == 2 and "--pair-class" in err
    assert cli("expect", "make", path, "-o", tmp_path / "e.json", "--pair-class", "NV18", "--allow-warnings")[0] == 0


def test_bad_expectations_files_are_named(cli, write_json, one_baseline_path):
    code, _, err = cli("check", one_baseline_path, "--expect", write_json("x.json", {"format": "other"}))
    assert code == 2 and "$.format" in err
    bad = {"format": "p2pbench-expectations", "version": 1, "expectations": [{"match": {}, "metric": "watts"}]}
    code, _, err = cli("check", one_baseline_path, "--expect", write_json("y.json", bad))
    assert code == 2 and "$.expectations[0]" in err and "watts" in err


def test_the_shipped_expectations_are_what_the_tool_makes(cli, tmp_path, monkeypatch):
    """expectations/h200-nv18.json is reproduced by `expect make` from its made_from files, and
    each of them passes it."""
    shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    monkeypatch.chdir(REPO)  # made_from paths are relative to the repository
    remade = tmp_path / "remade.json"
    allow = ["--allow-warnings"] if shipped.get("allow_warnings") else []
    code, _, err = cli("expect", "make", *shipped["made_from"], "--tolerance", str(shipped["tolerance_pct"]),
                       "--system", shipped["system"], "-o", remade, *allow)
    assert code == 0, err
    assert json.loads(remade.read_text(encoding="utf-8")) == shipped
    for source in shipped["made_from"]:
        code, out, _ = cli("check", source, "--expect", SHIPPED)
        assert code == 0 and "check PASS" in out, source


def test_check_judges_with_the_runs_code_or_says_how_to_get_it(cli, made, one_baseline_path, monkeypatch, tmp_path):
    """`check` never judges a case itself: without p2pbench-check it stops (exit 2) and says where
    the judge comes from."""
    from p2pbench_report import check
    _, expect = made
    monkeypatch.setenv("P2PBENCH_CHECK", str(tmp_path / "missing"))
    monkeypatch.setattr(check.shutil, "which", lambda name: None)
    monkeypatch.setattr(check, "REPO", tmp_path)
    code, _, err = cli("check", one_baseline_path, "--expect", expect)
    assert code == 2
    assert "p2pbench-check" in err and "P2PBENCH_CHECK" in err
