"""compare and regress between version 2 files match pair by pair by GPU identity: the same
physical pair is compared even when the second run numbered its ranks differently. Version 1
files keep matching by rank."""

from __future__ import annotations

import json

import make_fixtures
import pytest
from p2pbench_report.cases import KEY_VARIABLES, match_cases
from p2pbench_report.compare import compare
from p2pbench_report.loader import load_results
from p2pbench_report.pair_rows import comparison_rows

# Another rank order of the same GPUs: ranks 0, 1 (GPU A) become 3, 2; rank 2 (B) 0; rank 3 (C) 1.
PERMUTATION = {0: 3, 1: 2, 2: 0, 3: 1}
A, B, C = make_fixtures.GPU_A, make_fixtures.GPU_B, make_fixtures.GPU_C


@pytest.fixture
def permuted_path(write_json, group_document):
    return write_json("permuted.json", make_fixtures.relabel_ranks(group_document, PERMUTATION))


def regress_json(cli, *argv):
    code, out, err = cli("regress", *argv, "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def flows_of(case: dict) -> str:
    return case["flows"]


def test_rounds_are_compared_flow_by_flow(group_path, group_document):
    rows = comparison_rows(load_results(group_path))
    rounds = [r for r in group_document["results"] if r["schedule"] == "rounds"]
    split = rows[rows["schedule"] == "rounds"]
    assert len(split) == sum(len(r["flows"]) for r in rounds)
    assert (split["flow_count"] == 1).all()
    flow = rounds[0]["flows"][1]
    piece = split[(split["src_rank"] == flow["src_rank"]) & (split["dst_rank"] == flow["dst_rank"])].iloc[0]
    assert piece["bandwidth_gbps_median"] == flow["bandwidth_gbps"]["median"]
    assert piece["samples_gbps"] == flow["samples_gbps"] and piece["src_gpu"] == flow["src_gpu"]


def test_renumbered_ranks_still_match_every_case(cli, group_path, permuted_path, group_document):
    code, report = regress_json(cli, group_path, permuted_path)
    assert code == 0 and report["matched_by"] == "gpu"
    counts = {k: v for k, v in report["counts"].items() if v}
    assert set(counts) == {"SAME", "UNMEASURED"}
    split_rows = len(comparison_rows(load_results(group_path)))
    assert sum(counts.values()) == split_rows  # every baseline case found its own in the candidate
    assert all(case["change"] == pytest.approx(0.0, abs=1e-12) for case in report["cases"] if case["change"] is not None)


def test_matching_by_rank_would_compare_other_pairs(group_path, permuted_path):
    """What GPU matching prevents: by rank, renumbered runs pair up different GPUs."""
    baseline, candidate = comparison_rows(load_results(group_path)), comparison_rows(load_results(permuted_path))
    by_rank = match_cases([baseline, candidate], by_gpu=False)
    moved = [c for c in by_rank if all(r is not None and r["status"] == "ok" for r in c.rows)
             and abs(c.rows[1]["bandwidth_gbps_median"] / c.rows[0]["bandwidth_gbps_median"] - 1) > 0.10]
    assert moved, "the permutation should put other GPUs behind the same rank numbers"


def test_a_slower_physical_pair_is_found_whatever_its_ranks(cli, write_json, group_path, group_document):
    candidate = make_fixtures.scaled_flow(make_fixtures.relabel_ranks(group_document, PERMUTATION), B, C, 0.85)
    code, report = regress_json(cli, group_path, write_json("slower.json", candidate))
    assert code == 1 and report["result"] == "fail"
    slower = [case for case in report["cases"] if case["verdict"] == "SLOWER"]
    assert {flows_of(case) for case in slower} == {f"{B}→{C}"}
    assert {case["schedule"] for case in slower} == {"sequential", "rounds"}  # the matrix and its round
    for case in slower:
        assert case["src_rank"] is None and case["change"] == pytest.approx(-0.15, abs=0.02)
    assert all(case["verdict"] in ("SAME", "UNMEASURED") for case in report["cases"] if case not in slower)


def test_markdown_names_the_pairs_by_gpu(cli, write_json, group_path, group_document):
    candidate = make_fixtures.scaled_flow(make_fixtures.relabel_ranks(group_document, PERMUTATION), B, C, 0.85)
    code, out, _ = cli("regress", group_path, write_json("slower.json", candidate))
    assert code == 1 and "matched by GPU identity" in out
    assert "7b2d4410→c0ffee12" in out  # B -> C, short UUIDs


def test_compare_matches_by_gpu(group_path, permuted_path):
    comparison = compare([load_results(group_path), load_results(permuted_path)])
    assert comparison.by_gpu
    both = [c for c in comparison.cases if all(r is not None for r in c.rows)]
    assert len(both) == len(comparison.cases)
    for case in both:
        if case.rows[0]["status"] == "ok" and case.metric() is not None:
            metric = case.metric()
            assert case.figure(1, metric) == pytest.approx(case.figure(0, metric))
            assert case.rows[0]["row_index"] == case.rows[1]["row_index"]  # the same row of the same run


def test_compare_cli_says_how_it_matched(cli, group_path, permuted_path, one_baseline_path):
    code, out, _ = cli("compare", group_path, permuted_path)
    assert code == 0 and "matched by GPU identity" in out
    code, out, _ = cli("compare", one_baseline_path, one_baseline_path)
    assert code == 0 and "Cases matched by rank." in out


def test_version_1_files_match_by_rank_as_before(cli, baseline_path):
    code, report = regress_json(cli, baseline_path, baseline_path)
    assert code == 0 and report["matched_by"] == "rank"
    assert all(case["pattern"] == "matrix" for case in report["cases"])
    assert list(KEY_VARIABLES[-3:]) == ["pattern", "schedule", "flows"]
