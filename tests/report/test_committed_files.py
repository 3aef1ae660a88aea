"""Every p2pbench results file committed under results/ (at any depth) is read by the report tool:
a newcomer's first command is `p2pbench-report plot` on one of them, and a file the tool refuses
(exit 2) is the first thing they meet. Also: meta.group.node_override in both of its written forms.

The files are plotted in parallel, one worker process per CPU (a plot takes seconds; there are
over a hundred files), each by the CLI's own `plot`, in-process. Then, per file: the plot exits 0;
the loader validated the file and kept every row, in order; every figure written is a PNG of some
size that the output lists with its series; the size, bar, latency and atomics figures are the ones
the file's rows call for (expected_figures.py); a file without ok rows says it has no figure.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import multiprocessing
import os
import tempfile
from pathlib import Path

import pytest
from expected_figures import PNG_MAGIC, PREFIXES, expected_figure_names
from make_fixtures import REPO
from p2pbench_report.cli import main
from p2pbench_report.conditions import run_conditions
from p2pbench_report.group import describe_group, node_override_of
from p2pbench_report.loader import load_results


def _document(path: Path) -> dict:
    text = gzip.decompress(path.read_bytes()).decode("utf-8") if path.suffix == ".gz" else path.read_text(encoding="utf-8")
    return json.loads(text)


def committed_results() -> list[str]:
    """The p2pbench results files under results/ (large ones gzip-compressed, .json.gz), relative
    to the repository; other tools' JSON (Google Benchmark output, workload descriptions) is left out."""
    names = []
    for path in sorted([*(REPO / "results").rglob("*.json"), *(REPO / "results").rglob("*.json.gz")]):
        document = _document(path)
        if isinstance(document, dict) and isinstance(document.get("schema_version"), int) and "meta" in document:
            names.append(str(path.relative_to(REPO)))
    return names


COMMITTED = committed_results()


def plot_and_look(name: str) -> dict:
    """In a worker: `plot` on one file into a folder of its own, and what came of it."""
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["plot", str(REPO / name), "-o", folder, "--format", "png"])
        except Exception as error:  # noqa: BLE001  (reported as this file's failure, not the pool's)
            return {"code": None, "out": out.getvalue(), "err": f"{err.getvalue()}{type(error).__name__}: {error}"}
        pngs = {path.stem: (path.read_bytes()[:len(PNG_MAGIC)] == PNG_MAGIC, path.stat().st_size)
                for path in Path(folder).glob("*.png")}
    result = {"code": code, "out": out.getvalue(), "err": err.getvalue(), "pngs": pngs}
    if code == 0:  # read again: the loader's cache spares the validation, the rows are flattened anew
        result["row_indexes"] = [int(i) for i in load_results(REPO / name).rows["row_index"]]
    return result


@pytest.fixture(scope="module")
def plotted() -> dict[str, dict]:
    """plot_and_look of every committed file, the largest first so that the workers end together."""
    workers = min(len(COMMITTED), len(os.sched_getaffinity(0)))
    largest_first = sorted(COMMITTED, key=lambda name: -(REPO / name).stat().st_size)
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return dict(zip(largest_first, pool.map(plot_and_look, largest_first, chunksize=1)))


def test_the_walk_finds_files_in_subfolders():
    assert "results/h200-nv18/groups/crossnode/results.json" in COMMITTED
    assert "results/h200-nv18/interference/hbm-stream-v3/interference.json" in COMMITTED
    assert not any(name.endswith("gbench.json") for name in COMMITTED)  # Google Benchmark's own JSON
    assert "results/h200/collectives-2026-11-27/collectives-4-ranks-h200.json.gz" in COMMITTED


@pytest.mark.parametrize("name", COMMITTED)
def test_plot_reads_every_committed_file(plotted, name):
    result = plotted[name]
    assert result["code"] == 0, f"{name}: exit {result['code']}: {result['err']}"
    document = _document(REPO / name)
    assert result["row_indexes"] == list(range(len(document["results"]))), f"{name}: rows lost or reordered"
    pngs = result["pngs"]
    if not any(row.get("status") == "ok" for row in document["results"]):
        # A waiver's record (every row skipped with the reason): nothing to draw, and it says so.
        assert "no figure" in result["err"] and not pngs, f"{name}: {result['err'].strip()}"
        return
    assert pngs, f"{name}: no figure written ({result['err'].strip()})"
    for stem, (is_png, size) in pngs.items():
        assert is_png and size > 10_000, f"{name}: {stem}.png is not a PNG of some size ({size} bytes)"
        assert f"  {stem}: " in result["out"], f"{name}: {stem} is not listed with its series"
    drawn = {stem for stem in pngs if stem.startswith(PREFIXES)}
    assert drawn == expected_figure_names(document), f"{name}: figures by size, bars, latency and atomics"


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
