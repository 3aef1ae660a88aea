"""The suspect-pairs table, read from the run's own judgement (suspect_pairs, written by the C++
writer; the fixtures get it from tests/unit/matrix_findings): the deliberately slow pair is
found, ranked by shortfall; same-GPU pairs and pairs of another link class are not; exit status
and formats of `suspects`; older files that list only their suspects."""

from __future__ import annotations

import copy
import csv
import io
import json

import make_fixtures
import pytest
from p2pbench_report.loader import load_results
from p2pbench_report.suspects import find_suspects

SLOW = make_fixtures.SLOW_PAIR


def test_the_slow_pair_and_only_it_is_suspect(group_path):
    report = find_suspects(load_results(group_path))
    assert report.suspects, "the deliberately slow pair was not found"
    assert {(s.src_rank, s.dst_rank) for s in report.suspects} == {SLOW}
    cases = {(s.group.method, s.group.mode, s.measured_as) for s in report.suspects}
    assert cases == {("ce", "uni", "matrix sequential"), ("ldst", "uni", "matrix sequential"),
                     ("ce", "bidir", "matrix sequential"), ("ce", "uni", "matrix rounds")}
    for suspect in report.suspects:
        assert suspect.shortfall == pytest.approx(1 - make_fixtures.SLOW_PAIR_FACTOR, abs=0.02)
        assert suspect.link_class == "nvlink NV18" and suspect.comparable == 3
        assert (suspect.src_gpu, suspect.dst_gpu) == (make_fixtures.GPU_B, make_fixtures.GPU_A)


def test_suspects_are_ranked_by_shortfall(group_path):
    shortfalls = [s.shortfall for s in find_suspects(load_results(group_path)).suspects]
    assert shortfalls == sorted(shortfalls, reverse=True)


def test_same_gpu_pairs_are_never_judged(group_path, group_document):
    """Ranks 0 and 1 share a GPU and measured far below every other pair (deliberately): not suspect,
    and not part of any reference."""
    low = [r["bandwidth_gbps"]["median"] for r in group_document["results"]
           if r["status"] == "ok" and r.get("src_rank") == 0 and r.get("dst_rank") == 1 and r["method"] == "ce"]
    assert low and max(low) < 0.5 * make_fixtures.GROUP_MODEL["ce"]["nvlink"]
    report = find_suspects(load_results(group_path))
    assert not any({s.src_rank, s.dst_rank} == {0, 1} for s in report.suspects)
    assert all(s.reference > 300 for s in report.suspects if s.link_class == "nvlink NV18")


def test_pairs_are_compared_within_their_link_class(group_path, write_analysed_json, group_document):
    """The PCIe pairs (~52 GB/s) lie far below the NVLink ones but are not suspect; call one of
    them NVLink and it is judged among the NVLink pairs, and found."""
    assert not any(s.link_class == "pcie PHB" for s in find_suspects(load_results(group_path)).suspects)
    document = copy.deepcopy(group_document)
    for pair in document["meta"]["pairs"]:
        if (pair["src_rank"], pair["dst_rank"]) == (3, 0):
            assert pair["link_type"] == "pcie"
            pair.update(link_type="nvlink", topo_label="NV18")
    report = find_suspects(load_results(write_analysed_json("one-class.json", document)))
    flagged = {(s.src_rank, s.dst_rank, s.link_class) for s in report.suspects}
    assert (3, 0, "nvlink NV18") in flagged


def test_a_slower_pair_in_another_class_is_found_there(write_analysed_json, group_document):
    document = make_fixtures.scaled(group_document, [i for i, r in enumerate(group_document["results"])
                                                     if r.get("src_rank") == 3 and r.get("dst_rank") == 1], 0.8)
    report = find_suspects(load_results(write_analysed_json("pcie-slow.json", document)))
    pcie = [s for s in report.suspects if s.link_class == "pcie PHB"]
    assert {(s.src_rank, s.dst_rank) for s in pcie} == {(3, 1)}
    assert pcie[0].shortfall == pytest.approx(0.2, abs=0.02)


def test_the_margin_decides(group_path):
    assert find_suspects(load_results(group_path), margin=0.35).suspects == []
    assert len(find_suspects(load_results(group_path), margin=0.25).suspects) == 4


def test_the_command_exits_1_on_suspects_and_0_without(cli, group_path, one_baseline_path):
    code, out, err = cli("suspects", group_path)
    assert code == 1, err
    lines = out.splitlines()
    assert lines[0].startswith("## Suspect pairs of group-4ranks: 1 pair (2→0) in 4 cases")
    assert "| 1 |" in out and "2→0" in lines[4] and "7b2d4410→3f1e9a0c" in lines[4]
    code, out, _ = cli("suspects", group_path, "--margin", "35%")
    assert code == 0 and "none (" in out
    code, out, _ = cli("suspects", one_baseline_path)
    assert code == 0 and "none to judge" in out


def test_csv_and_json_formats(cli, group_path):
    code, out, _ = cli("suspects", group_path, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 1 and len(rows) == 4
    assert {(int(r["src_rank"]), int(r["dst_rank"])) for r in rows} == {SLOW}
    assert float(rows[0]["shortfall_pct"]) >= float(rows[-1]["shortfall_pct"]) > 25
    code, out, _ = cli("suspects", group_path, "--format", "json")
    document = json.loads(out)
    found = document["files"][0]["suspects"]
    assert code == 1 and len(found) == 4 and found[0]["link_class"] == "nvlink NV18"
    assert found[0]["median_gbps"] < 0.75 * found[0]["reference_gbps"]


def test_help_states_the_exit_status(cli):
    code, out, _ = cli("suspects", "--help")
    assert code == 0 and "exit status: 0 no suspect pair; 1 some pair is suspect" in out
    assert "--margin" in out and "the same link class" in " ".join(out.split())


def test_the_report_reads_the_runs_judgement_and_never_judges(write_json, group_document):
    """Remove the run's judgement and the report has nothing to name, whatever the rows say;
    change a judged pair's figures there and the report follows the file."""
    document = copy.deepcopy(group_document)
    del document["suspect_pairs"]
    report = find_suspects(load_results(write_json("no-judgement.json", document)))
    assert report.version_1 and report.suspects == []
    document = copy.deepcopy(group_document)
    judged = document["suspect_pairs"]["judged"]
    fine = next(e for e in judged if (e["src_rank"], e["dst_rank"]) != SLOW)
    fine.update(bandwidth_gbps=0.5 * fine["reference_gbps"], shortfall_pct=50.0)
    found = {(s.src_rank, s.dst_rank) for s in find_suspects(load_results(write_json("edited.json", document))).suspects}
    assert (fine["src_rank"], fine["dst_rank"]) in found


def test_an_older_file_that_lists_only_its_suspects(cli, write_json, group_document):
    """Files written before every judged pair was kept: their suspects at the run's margin, and a
    tighter margin says it can name no more."""
    document = copy.deepcopy(group_document)
    del document["suspect_pairs"]["judged"]
    path = write_json("older.json", document)
    report = find_suspects(load_results(path))
    assert {(s.src_rank, s.dst_rank) for s in report.suspects} == {SLOW} and report.judged_at == 0.10
    code, out, _ = cli("suspects", path, "--margin", "5%")
    assert code == 1 and "can name no more" in out
