"""Matrix heatmaps (colour scale from 0 to the link peak, never the data's min-max; same-GPU and
skipped cells labelled), the rounds-vs-alone agreement, pattern bars, and `plot` on a v2 file."""

from __future__ import annotations

import copy

import make_fixtures
import numpy as np
import pandas as pd
import pytest
from p2pbench_report.agreement import agreements
from p2pbench_report.loader import load_results
from p2pbench_report.plots.figures import build_figures, close_figures
from p2pbench_report.plots.matrix import matrix_figures
from p2pbench_report.plots.patterns import pattern_figures
from p2pbench_report.plots.series import pair_cases

SEQUENTIAL = ("matrix_ce_push_uni_1G_sequential_group-4ranks", "matrix_ldst_push_uni_1G_sequential_group-4ranks",
              "matrix_ce_push_bidir_1G_sequential_group-4ranks")
ROUNDS = "matrix_ce_push_uni_1G_rounds_group-4ranks"
AGREEMENT = "agreement_ce_push_uni_1G_group-4ranks"


@pytest.fixture
def figures(group_path):
    plotted = {p.name: p for p in matrix_figures([load_results(group_path)])}
    yield plotted
    close_figures(list(plotted.values()))


def image_of(plotted):
    return plotted.figure.axes[0].images[0]


def cell_texts(plotted) -> dict[tuple[int, int], str]:
    """(source row, destination column) -> the text drawn in that cell."""
    return {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
            for t in plotted.figure.axes[0].texts}


def test_one_heatmap_per_case_and_schedule(figures):
    assert set(figures) == set(SEQUENTIAL) | {ROUNDS, AGREEMENT}


def test_the_colour_scale_runs_from_0_to_the_link_peak(figures):
    for name in SEQUENTIAL + (ROUNDS,):
        image = image_of(figures[name])
        data = image.get_array()
        assert image.get_clim() == (0.0, make_fixtures.NVLINK_PEAK), name
        assert image.norm.vmin == 0.0 and data.min() > 40  # not stretched to the data's minimum
        assert data.max() < make_fixtures.NVLINK_PEAK       # nor to its maximum


def test_the_highest_peak_tops_the_scale_where_pairs_differ(write_json, group_document):
    document = copy.deepcopy(group_document)
    document["meta"]["pairs"][2]["peak_gbps_per_direction"] = 900.0  # one pair's link is faster
    plotted = {p.name: p for p in matrix_figures([load_results(write_json("peaks.json", document))])}
    assert image_of(plotted[SEQUENTIAL[0]]).get_clim() == (0.0, 900.0)
    close_figures(list(plotted.values()))


def test_without_a_peak_the_scale_runs_from_0_to_the_best_cell(write_json, group_document):
    document = copy.deepcopy(group_document)
    for pair in document["meta"]["pairs"]:
        pair["peak_gbps_per_direction"] = None
    plotted = {p.name: p for p in matrix_figures([load_results(write_json("nopeak.json", document))])}
    image = image_of(plotted[SEQUENTIAL[0]])
    best = max(r["bandwidth_gbps"]["median"] for r in document["results"]
               if r["method"] == "ce" and r["mode"] == "uni" and r["schedule"] == "sequential"
               and not r["flows"][0]["same_device"])
    assert image.get_clim() == (0.0, pytest.approx(best))
    close_figures(list(plotted.values()))


def test_same_gpu_pairs_are_never_coloured(figures, group_document):
    """Ranks 0 and 1 share a GPU: their cells are masked, hatched and say so, in every map."""
    for name in SEQUENTIAL + (ROUNDS,):
        data = image_of(figures[name]).get_array()
        assert np.ma.is_masked(data[0, 1]) and np.ma.is_masked(data[1, 0]), name
        texts = cell_texts(figures[name])
        assert texts[(0, 1)] == texts[(1, 0)] == "same GPU", name
        assert any(p.get_hatch() == "///" for p in figures[name].figure.axes[0].patches)
    ce = cell_texts(figures[SEQUENTIAL[0]])
    measured = next(r for r in group_document["results"] if r["method"] == "ce" and r["src_rank"] == 0
                    and r["dst_rank"] == 2 and r["schedule"] == "sequential")
    assert ce[(0, 2)] == f"{measured['bandwidth_gbps']['median']:.0f}"
    assert ce[(2, 2)] == "—"


def test_skipped_pairs_are_labelled(figures):
    texts = cell_texts(figures["matrix_ldst_push_uni_1G_sequential_group-4ranks"])
    data = image_of(figures["matrix_ldst_push_uni_1G_sequential_group-4ranks"]).get_array()
    for pair in ((0, 3), (3, 0), (2, 3), (3, 2)):  # ldst skips the PCIe pairs
        assert texts[pair] == "skipped" and np.ma.is_masked(data[pair])


def test_bidir_cells_are_each_directions_own_figure(figures, group_document):
    row = next(r for r in group_document["results"] if r["mode"] == "bidir" and
               {f["src_rank"] for f in r["flows"]} == {0, 2})
    data = image_of(figures["matrix_ce_push_bidir_1G_sequential_group-4ranks"]).get_array()
    for item in row["flows"]:
        assert data[item["src_rank"], item["dst_rank"]] == pytest.approx(item["bandwidth_gbps"]["median"])


def test_rounds_agree_with_pairs_alone_and_show_where_not(figures, group_path):
    found = {(a.src_rank, a.dst_rank): a for a in agreements(load_results(group_path))}
    # The run compares against each pair's alone check, else its figure in the sequential matrix.
    assert {pair for pair, a in found.items() if a.alone_from == "alone_check"} == set(make_fixtures.ALONE_CHECKED)
    assert {a.alone_from for a in found.values()} == {"alone_check", "sequential"}
    assert found[make_fixtures.ROUNDS_PAIR].difference == pytest.approx(-make_fixtures.ROUNDS_DISAGREEMENT, abs=0.01)
    others = [a for pair, a in found.items() if pair != make_fixtures.ROUNDS_PAIR]
    assert all(abs(a.difference) < 0.015 for a in others)
    image = image_of(figures[AGREEMENT])
    assert image.get_clim()[0] == -image.get_clim()[1] and image.get_clim()[1] >= 10
    texts = cell_texts(figures[AGREEMENT])
    assert texts[make_fixtures.ROUNDS_PAIR] == f"{100 * found[make_fixtures.ROUNDS_PAIR].difference:+.1f}%"
    assert texts[(1, 3)] == f"{100 * found[(1, 3)].difference:+.1f}%\nvs seq."
    assert (0, 1) not in found and texts[(0, 1)] == "same GPU"


def test_pattern_bars_set_the_aggregate_against_the_sum_of_peaks(group_path, group_document):
    plotted = pattern_figures([load_results(group_path)])
    assert [p.name for p in plotted] == ["patterns_ce_push_uni_group-4ranks"]
    ax = plotted[0].figure.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("one_to_all from r2 (3 flows)")
    assert labels[1].startswith("ring shift 1 (4 flows, incl. 1 same-GPU flow)")  # 0 -> 1: ranks on one GPU
    one_to_all = next(r for r in group_document["results"] if r["pattern"] == "one_to_all")
    widths = sorted(round(p.get_width(), 6) for p in ax.patches if p.get_width() > 0)
    assert round(one_to_all["bandwidth_gbps"]["median"], 6) in widths
    assert round(2 * make_fixtures.NVLINK_PEAK + make_fixtures.PCIE_PEAK, 6) in widths  # Σ of the 3 flows' peaks
    assert ax.get_xlim()[0] == 0
    close_figures(plotted)


def test_version_1_files_get_no_matrix(one_baseline_path):
    assert matrix_figures([load_results(one_baseline_path)]) == []
    assert pattern_figures([load_results(one_baseline_path)]) == []


def test_size_figures_show_pairs_alone_only(group_path):
    """Rounds, patterns and same-GPU rows stay out of the bandwidth-vs-size bars."""
    plotted = build_figures([load_results(group_path)])
    bars = next(p for p in plotted if p.name == "bars_push_uni")
    assert not any("0→1" in s or "1→0" in s for s in bars.series)  # same GPU
    # ce: 10 cross-GPU pairs, ldst: 4 (PCIe skipped); the alone_check rows repeat pairs the
    # sequential matrix measured alone already (the agreement figure compares them): left out
    assert len(bars.series) == 10 + 4
    assert "all 10 ordered pairs of two GPUs" in bars.figure.get_suptitle()
    close_figures(plotted)


def test_plot_prints_the_suspect_pairs_first(cli, tmp_path, group_path):
    code, out, err = cli("plot", group_path, "-o", tmp_path / "figs", "--format", "png")
    assert code == 0, err
    assert out.startswith("## Suspect pairs of group-4ranks: 1 pair (2→0)")
    assert "rounds vs alone: 10 pair figures checked" in out
    for name in SEQUENTIAL + (ROUNDS, AGREEMENT, "patterns_ce_push_uni_group-4ranks"):
        assert (tmp_path / "figs" / f"{name}.png").stat().st_size > 10_000, name


def test_a_flows_case_of_one_flow_is_a_pair_alone():
    """One flow of the `flows` pattern measures a pair on its own (the size figures draw it); two
    flows at once, or another pattern's case, do not."""
    frame = pd.DataFrame({"pattern": ["flows", "flows", "ring"], "flows_src_rank": [[0], [0, 1], [0]],
                          "flows_dst_rank": [[1], [1, 0], [1]]})
    assert list(pair_cases(frame)) == [True, False, False]
