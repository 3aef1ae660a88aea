"""Every p2pbench results file committed under results/ (at any depth) is read by the report tool:
a newcomer's first command is `p2pbench-report plot` on one of them, and a file the tool refuses
(exit 2) is the first thing they meet. Also: meta.group.node_override in both of its written forms.
"""

from __future__ import annotations

import copy
import gzip
import json

import pytest
from make_fixtures import REPO
from p2pbench_report.conditions import run_conditions
from p2pbench_report.group import describe_group, node_override_of


def committed_results() -> list[str]:
    """The p2pbench results files under results/ (large ones gzip-compressed, .json.gz), relative
    to the repository; other tools' JSON (Google Benchmark output, workload descriptions) is left out."""
    names = []
    for path in sorted([*(REPO / "results").rglob("*.json"), *(REPO / "results").rglob("*.json.gz")]):
        text = gzip.decompress(path.read_bytes()).decode("utf-8") if path.suffix == ".gz" else path.read_text(encoding="utf-8")
        document = json.loads(text)
        if isinstance(document, dict) and isinstance(document.get("schema_version"), int) and "meta" in document:
            names.append(str(path.relative_to(REPO)))
    return names


COMMITTED = committed_results()


def test_the_walk_finds_files_in_subfolders():
    assert "results/h200-nv18/groups/crossnode/results.json" in COMMITTED
    assert "results/h200-nv18/interference/hbm-stream-v3/interference.json" in COMMITTED
    assert not any(name.endswith("gbench.json") for name in COMMITTED)  # Google Benchmark's own JSON
    assert "results/h200/collectives-2026-11-27/collectives-4-ranks-h200.json.gz" in COMMITTED


@pytest.mark.parametrize("name", COMMITTED)
def test_plot_reads_every_committed_file(cli, tmp_path, name):
    code, out, err = cli("plot", REPO / name, "-o", tmp_path, "--format", "png")
    assert code == 0, f"{name}: exit {code}: {err}"
    if not any(row.get("status") == "ok" for row in _document(name)["results"]):
        # A waiver's record (every row skipped with the reason): nothing to draw, and it says so.
        assert "no figure" in err and not list(tmp_path.glob("*.png")), f"{name}: {err.strip()}"
        return
    assert list(tmp_path.glob("*.png")), f"{name}: no figure written ({err.strip()})"


def _document(name: str) -> dict:
    path = REPO / name
    text = gzip.decompress(path.read_bytes()).decode("utf-8") if path.suffix == ".gz" else path.read_text(encoding="utf-8")
    return json.loads(text)


@pytest.mark.parametrize("written,expected", [
    (None, None), (2, 2), ({"ranks_per_node": 2}, 2), ({"ranks_per_node": None}, None), ({}, None)])
def test_node_override_is_read_in_either_form(written, expected):
    assert node_override_of({"node_override": written}) == expected
    assert node_override_of(None) is None  # a version 1 file has no group


def test_the_crossnode_run_names_its_override():
    """The committed run was written in the older object form ({"ranks_per_node": 2})."""
    meta = json.loads((REPO / "results/h200-nv18/groups/crossnode/results.json").read_text(encoding="utf-8"))["meta"]
    assert describe_group(meta).ranks_per_node == 2
    plain = copy.deepcopy(meta)
    plain["group"]["node_override"] = 2  # as the writer writes it now
    assert run_conditions(plain)["nodes"] == run_conditions(meta)["nodes"] == \
        "every 2 ranks of a host (--ranks-per-node 2)"
    plain["group"]["node_override"] = None
    assert describe_group(plain).ranks_per_node is None and run_conditions(plain)["nodes"] == "by host"
