"""Two ranks written as schema version 2 (what the groups writer makes of default.json): the
same cases as version 1, so a v1 baseline and a v2 candidate compare case for case (by rank),
and v2 bidir rows still meet nvbandwidth's sum of directions through their flows."""

from __future__ import annotations

import json

import make_fixtures
import pytest
from p2pbench_report.cases import BANDWIDTH
from p2pbench_report.compare import compare
from p2pbench_report.loader import load_many, load_results
from p2pbench_report.schema import first_error
from test_equivalent_configs import _assert_every_row_matched, _load_config, nvbandwidth_with_host_tests, synthetic_run


@pytest.fixture
def version_2_path(write_json, baseline_document):
    return write_json("as-v2.json", make_fixtures.as_version_2(baseline_document))


def test_the_two_rank_v2_document_is_valid(baseline_document):
    assert first_error(make_fixtures.as_version_2(baseline_document)) is None


def test_a_v1_baseline_and_a_v2_candidate_match_case_for_case(cli, baseline_path, baseline_document, version_2_path):
    code, out, err = cli("regress", baseline_path, version_2_path, "--format", "json")
    report = json.loads(out)
    assert code == 0, err
    assert report["matched_by"] == "rank"  # a version 1 file among them
    assert set(k for k, v in report["counts"].items() if v) <= {"SAME", "UNMEASURED"}
    assert sum(report["counts"].values()) == len(baseline_document["results"])


def test_two_v2_files_of_two_ranks_match_by_gpu(cli, version_2_path, baseline_document):
    code, out, _ = cli("regress", version_2_path, version_2_path, "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["matched_by"] == "gpu"
    assert sum(report["counts"].values()) == len(baseline_document["results"])


def test_v2_bidir_rows_add_their_flows_against_nvbandwidth(write_json, tmp_path):
    imported = nvbandwidth_with_host_tests(tmp_path)  # every row of the config has an imported counterpart
    run = make_fixtures.as_version_2(dict(synthetic_run(_load_config("nvbandwidth-equivalent.json")), meta=dict(
        make_fixtures.synthetic_results()["meta"], config=_load_config("nvbandwidth-equivalent.json"))))
    comparison = compare(load_many([write_json("p2pbench-v2.json", run), write_json("imported.json", imported)]))
    _assert_every_row_matched(comparison, imported)
    bidir = [c for c in comparison.cases if c.key[0] == "ce" and c.key[2] == "bidir"]
    assert bidir and all(c.sums_directions() for c in bidir)
    for case in bidir:
        flows = case.rows[0]["flows_bandwidth_gbps_median"]
        assert len(flows) == 2 and case.figure(0, BANDWIDTH) == pytest.approx(sum(flows))


def test_version_1_file_and_its_v2_form_plot_alike(version_2_path, baseline_path):
    from p2pbench_report.plots.figures import build_figures, close_figures

    v1, v2 = build_figures([load_results(baseline_path)]), build_figures([load_results(version_2_path)])
    try:
        assert [(f.name, len(f.series)) for f in v1] == [(f.name, len(f.series)) for f in v2]
    finally:
        close_figures(v1 + v2)
