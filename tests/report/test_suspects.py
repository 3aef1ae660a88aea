"""The suspect-pairs table: the deliberately slow pair is found, ranked by shortfall; same-GPU
pairs and pairs of another link class are not; exit status and formats of `suspects`."""

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


def test_pairs_are_compared_within_their_link_class(group_path, write_json, group_document):
    """The PCIe pairs (~52 GB/s) lie far below the NVLink ones but are not suspect; put them in the
    NVLink class and the PCIe pair re-measured alone beside two NVLink pairs (3 -> 0) is."""
    assert not any(s.link_class == "pcie PHB" for s in find_suspects(load_results(group_path)).suspects)
    document = copy.deepcopy(group_document)
    for pair in document["meta"]["pairs"]:
        if pair["link_type"] == "pcie":
            pair.update(link_type="nvlink", topo_label="NV18")
    report = find_suspects(load_results(write_json("one-class.json", document)))
    flagged = {(s.src_rank, s.dst_rank, s.measured_as) for s in report.suspects}
    assert (3, 0, "matrix alone_check") in flagged


def test_a_slower_pair_in_another_class_is_found_there(write_json, group_document):
    document = make_fixtures.scaled(group_document, [i for i, r in enumerate(group_document["results"])
                                                     if r.get("src_rank") == 3 and r.get("dst_rank") == 1], 0.8)
    report = find_suspects(load_results(write_json("pcie-slow.json", document)))
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


# The one definition of a suspect pair, shared with the C++ writer's suspect_pairs
# (src/results/pair_matrix.hpp; tests/unit/test_pair_matrix.cpp's SuspectPairs tests use these
# same figures): judged against the median of the OTHER pairs of its class.
def _figures(medians: dict[tuple[int, int], float]):
    from p2pbench_report.pair_figures import CaseGroup, PairFigure
    group = CaseGroup("ce", "push", "uni", 2**30, ())
    return [PairFigure(group, "matrix", "sequential", None, i, src, dst, None, None, False, "ok", None, value, (value,), None)
            for i, ((src, dst), value) in enumerate(medians.items())]


def test_the_definition_the_cxx_writer_uses():
    from p2pbench_report.suspects import _judge
    nvlink = {(0, 2): 340.0, (0, 3): 389.0, (1, 0): 390.0, (1, 3): 390.0, (2, 1): 300.0, (2, 3): 391.0,
              (3, 1): 392.0, (3, 2): 393.0}
    found, judged = _judge(("ce", "matrix sequential", "nvlink NV18"), _figures(nvlink), 0.10)
    assert judged == 8
    by_pair = {(s.src_rank, s.dst_rank): s for s in found}
    assert set(by_pair) == {(2, 1), (0, 2)}
    assert by_pair[(2, 1)].reference == 390.0 and by_pair[(2, 1)].comparable == 7
    assert by_pair[(2, 1)].shortfall == pytest.approx(90 / 390)
    # Two pairs of a class: each is judged against the other (C++: reference_gbps 392).
    found, _ = _judge(("ce", "matrix sequential", "pcie PXB"), _figures({(2, 1): 300.0, (1, 2): 392.0}), 0.10)
    assert [(s.src_rank, s.dst_rank, s.reference) for s in found] == [(2, 1, 392.0)]
