"""compare (Markdown table, metadata diff, HTML page) and export (CSV round trip)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import make_fixtures
import pandas as pd
from p2pbench_report.documents import bandwidth_row, new_document, new_meta
from p2pbench_report.export import IDENTITY_COLUMNS, read_csv
from p2pbench_report.loader import load_results

METHOD_LIST = Path(__file__).resolve().parents[2] / "schema" / "methods.json"


def cells(line: str) -> list[str] | None:
    """The cells of a Markdown table line, or None for other lines and rules."""
    if not line.startswith("| ") or set(line) <= set("|-: "):
        return None
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_compare_prints_metadata_diff_and_median_table(cli, write_json, one_baseline_path, one_baseline_document):
    other = make_fixtures.perturbed(one_baseline_document, relative=0.01)
    other["meta"]["label"] = "candidate-node"
    other["meta"]["hosts"] = ["another-host"]
    for gpu in other["meta"]["gpus"]:
        gpu["driver_version"] = "999.1"
    code, out, err = cli("compare", one_baseline_path, write_json("other.json", other))
    assert code == 0, err
    label = one_baseline_document["meta"]["label"]
    assert "## Metadata" in out and "| driver" in out and "999.1" in out and "another-host" in out
    rows = {c[0]: c for c in map(cells, out.splitlines()) if c}
    assert rows["driver"][-1] == "≠" and rows["hosts"][-1] == "≠" and rows["label"][-1] == "≠"
    assert rows["GPU"][-1] == "" and rows["link"][-1] == ""
    header = next(c for c in map(cells, out.splitlines()) if c and c[0] == "method")
    assert header[-3:] == [label, "candidate-node", f"candidate-node / {label}"]
    ok_bandwidth = sum(1 for r in one_baseline_document["results"]
                       if r["status"] == "ok" and isinstance(r.get("bandwidth_gbps"), dict))
    data = [c for c in map(cells, out.splitlines()) if c and c[0] in {"ce", "ldst", "tma", "nccl", "staged"}]
    assert len(data) == ok_bandwidth
    assert all(0.98 < float(c[-1]) < 1.02 for c in data)


def test_compare_three_files_and_cases_in_one_file_only(cli, write_json):
    def run(label, median):
        return write_json(f"{label}.json", new_document(new_meta(label), [
            bandwidth_row("ce", "push", "uni", 2**30, [median] * 3),
            bandwidth_row("ce", "push", "uni", 2**20 * (1 + (label == "c")), [median / 2] * 3)]))
    code, out, _ = cli("compare", run("a", 400.0), run("b", 300.0), run("c", 200.0))
    assert code == 0
    line = next(c for c in map(cells, out.splitlines()) if c and c[0] == "ce" and c[3] == "1G")
    assert line[-5:] == ["400.0", "300.0", "200.0", "0.750", "0.500"]
    assert "1 case measured in fewer than two files is not listed" in out
    code, out_all, _ = cli("compare", run("a", 400.0), run("b", 300.0), run("c", 200.0), "--all-cases")
    assert out_all.count("| ce ") == 3


def test_compare_html_is_self_contained(cli, write_json, synthetic_document, tmp_path):
    small = copy.deepcopy(synthetic_document)
    small["results"] = [r for r in small["results"] if r["method"] == "ce"]
    other = copy.deepcopy(small)
    other["meta"]["label"] = "other"
    page = tmp_path / "report.html"
    code, out, _ = cli("compare", write_json("a.json", small), write_json("b.json", other), "--html", page)
    assert code == 0 and f"wrote {page}" in out
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.count("data:image/png;base64,") >= 2
    assert "<h2>Metadata</h2>" in html and "other" in html
    assert "src=\"http" not in html and "<link" not in html


def test_csv_round_trips_the_rows(cli, baseline_path, baseline_document, tmp_path):
    csv_path = tmp_path / "rows.csv"
    code, _, err = cli("export", baseline_path, "--csv", csv_path)
    assert code == 0, err
    exported = read_csv(csv_path)
    original = load_results(baseline_path).rows
    assert len(exported) == len(baseline_document["results"])
    # The case's identity first: the kernel-shape axes in the registry's order, read from the method
    # list itself rather than from the report's constants under test.
    axes = [a["name"] for a in json.loads(METHOD_LIST.read_text())["shape_axes"]]
    expected = ["method", "direction", "mode", "bytes", "src_rank", "dst_rank", *axes, "buffer_pool_bytes"]
    assert list(exported.columns[:len(expected)]) == expected
    for column in (c for c in exported.columns if c not in IDENTITY_COLUMNS):  # those: test_exports.py
        for mine, theirs in zip(exported[column], original[column]):
            if isinstance(theirs, list) or isinstance(mine, list):  # samples: absent reads back as []
                assert mine == (theirs if isinstance(theirs, list) else []), column
            elif pd.isna(theirs):
                assert pd.isna(mine) or mine == "", column
            elif isinstance(theirs, float):
                assert math.isclose(float(mine), theirs, rel_tol=0, abs_tol=0), column
            else:
                assert str(mine) == str(theirs), column
    for index, row in enumerate(baseline_document["results"]):
        assert exported.loc[index, "samples_gbps"] == row.get("samples_gbps", [])
        if isinstance(row.get("bandwidth_gbps"), dict):
            assert exported.loc[index, "bandwidth_gbps_median"] == row["bandwidth_gbps"]["median"]
        for field, value in row.items():  # latency, issue interval, cycles, ops/s ...: every statistic and list
            if isinstance(value, dict):
                assert all(exported.loc[index, f"{field}_{stat}"] == v for stat, v in value.items()), field
            elif field.startswith("samples_"):
                assert exported.loc[index, field] == value, field
            elif isinstance(value, int) and not isinstance(value, bool):
                assert exported.loc[index, field] == value and str(exported[field].dtype) == "Int64", field


def test_csv_to_stdout(cli, one_baseline_path):
    code, out, _ = cli("export", one_baseline_path, "--csv", "-")
    assert code == 0 and out.splitlines()[0].startswith("method,direction,mode,bytes")
