"""Every p2pbench results file committed under results/ (at any depth) is read by the report tool:
a newcomer's first command is `p2pbench-report plot` on one of them, and a file the tool refuses
(exit 2) is the first thing they meet. Also: meta.group.node_override in both of its written forms.

Every file is loaded and its figures built as `plot` does (load_many, then build_figures, as
cli.run_plot; in-process, one worker process per CPU): the loader validated it and kept every
row, in order; every figure has its series; the size, bar, latency and atomics figures are the
ones the file's rows call for (expected_figures.py). Writing a figure to PNG is most of a plot's
time and depends on the kind of figure, not on the file: the CLI's own `plot` writes PNGs for a
few files chosen so that every kind of figure any committed file has (matrix, size, heatmap_tma,
burn_in, ...) is written at least once, and for a file without ok rows, which must say it has no
figure. For those: the plot exits 0, every figure is a PNG of some size listed with its series.
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
from p2pbench_report.loader import load_many
from p2pbench_report.plots.figures import build_figures, close_figures


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


def build_and_look(name: str) -> dict:
    """In a worker: the file loaded and its figures built as `plot` does, nothing written."""
    try:
        result_sets = load_many([REPO / name])
        figures = build_figures(result_sets)
    except Exception as error:  # noqa: BLE001  (reported as this file's failure, not the pool's)
        return {"error": f"{type(error).__name__}: {error}"}
    try:
        return {"error": None, "row_indexes": [int(i) for i in result_sets[0].rows["row_index"]],
                "figures": {f.name: (f.kind, list(f.series)) for f in figures}}
    finally:
        close_figures(figures)


def plot_and_look(name: str) -> dict:
    """In a worker: the CLI's `plot` on one file into a folder of its own, PNGs written."""
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["plot", str(REPO / name), "-o", folder, "--format", "png"])
        except Exception as error:  # noqa: BLE001
            return {"code": None, "out": out.getvalue(), "err": f"{err.getvalue()}{type(error).__name__}: {error}"}
        pngs = {path.stem: (path.read_bytes()[:len(PNG_MAGIC)] == PNG_MAGIC, path.stat().st_size)
                for path in Path(folder).glob("*.png")}
    return {"code": code, "out": out.getvalue(), "err": err.getvalue(), "pngs": pngs}


def _in_workers(function, names: list[str]) -> dict[str, dict]:
    """function over names in one worker process per CPU, the largest files first so that the
    workers end together."""
    largest_first = sorted(names, key=lambda name: -(REPO / name).stat().st_size)
    workers = max(1, min(len(names), len(os.sched_getaffinity(0))))
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return dict(zip(largest_first, pool.map(function, largest_first, chunksize=1)))


def files_to_write(built: dict[str, dict]) -> list[str]:
    """The fewest files (greedily, the smaller first among equals) whose figures hold every kind
    of figure that any file has, and the smallest file without a figure, if there is one."""
    kinds = {name: {kind for kind, _ in result["figures"].values()}
             for name, result in built.items() if result["error"] is None}
    by_size = sorted(kinds, key=lambda name: (REPO / name).stat().st_size)
    chosen, missing = [], set().union(*kinds.values())
    while missing:
        best = max(by_size, key=lambda name: len(kinds[name] & missing))  # max keeps the first (smallest) of equals
        chosen.append(best)
        missing -= kinds[best]
    chosen += [name for name in by_size if not kinds[name]][:1]
    return chosen


@pytest.fixture(scope="module")
def built() -> dict[str, dict]:
    return _in_workers(build_and_look, COMMITTED)


@pytest.fixture(scope="module")
def written(built) -> dict[str, dict]:
    return _in_workers(plot_and_look, files_to_write(built))


def test_the_walk_finds_files_in_subfolders():
    assert "results/h200-nv18/groups/crossnode/results.json" in COMMITTED
    assert "results/h200-nv18/interference/hbm-stream-v3/interference.json" in COMMITTED
    assert not any(name.endswith("gbench.json") for name in COMMITTED)  # Google Benchmark's own JSON
    assert "results/h200/collectives-2026-11-27/collectives-4-ranks-h200.json.gz" in COMMITTED


@pytest.mark.parametrize("name", COMMITTED)
def test_every_committed_file_loads_and_gets_its_figures(built, name):
    result = built[name]
    assert result["error"] is None, f"{name}: {result['error']}"
    document = _document(REPO / name)
    assert result["row_indexes"] == list(range(len(document["results"]))), f"{name}: rows lost or reordered"
    figures = result["figures"]
    if not any(row.get("status") == "ok" for row in document["results"]):
        assert not figures, f"{name}: figures from a file without ok rows: {sorted(figures)}"
        return
    assert figures, f"{name}: no figure"
    for figure, (_, series) in figures.items():
        assert series, f"{name}: {figure} has no series"
    drawn = {figure for figure in figures if figure.startswith(PREFIXES)}
    assert drawn == expected_figure_names(document), f"{name}: figures by size, bars, latency and atomics"


def test_every_kind_of_figure_is_written_by_plot(built, written):
    kinds = {kind for result in built.values() if result["error"] is None for kind, _ in result["figures"].values()}
    assert {"size", "bars", "matrix", "latency"} <= kinds, f"the committed files' figures: {sorted(kinds)}"
    for name, result in written.items():
        assert result["code"] == 0, f"{name}: exit {result['code']}: {result['err']}"
        assert set(result["pngs"]) == set(built[name]["figures"]), f"{name}: written {sorted(result['pngs'])}"
        if not result["pngs"]:  # a waiver's record (every row skipped with the reason): it says so
            assert "no figure" in result["err"], f"{name}: {result['err'].strip()}"
        for stem, (is_png, size) in result["pngs"].items():
            assert is_png and size > 10_000, f"{name}: {stem}.png is not a PNG of some size ({size} bytes)"
            assert f"  {stem}: " in result["out"], f"{name}: {stem} is not listed with its series"
    assert kinds <= {built[name]["figures"][stem][0] for name in written for stem in written[name]["pngs"]}


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
