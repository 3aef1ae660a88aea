"""compare's summary per method, ratio figure and highlighted ratio cells (compare_view.py)."""

from __future__ import annotations

import math
import re

import pytest
from make_fixtures import DATA
from p2pbench_report.compare import compare
from p2pbench_report.compare_view import highlight_ratio_cells, render_html, summaries, summary_lines
from p2pbench_report.importers import import_nvbandwidth
from p2pbench_report.loader import load_many
from p2pbench_report.plots.figures import close_figures
from p2pbench_report.plots.ratio import ratio_figures
from test_equivalent_configs import _load_config, synthetic_run


@pytest.fixture
def equivalent_pair(write_json):
    """A synthetic nvbandwidth-equivalent run (380.4 GB/s one way, 0.855 µs) and the real import,
    both without the host link (its rows would be 380 GB/s beside nvbandwidth's 55: these tests
    are about the device-to-device view)."""
    config = _load_config("nvbandwidth-equivalent.json")
    config["methods"] = [m for m in config["methods"] if m in ("ce", "ldst", "tma", "latency_read")]
    run = write_json("p2pbench.json", synthetic_run(config))
    imported = import_nvbandwidth(DATA / "nvbandwidth-h200-nv18.json")
    imported["results"] = [r for r in imported["results"] if r["method"] not in ("h2d", "d2h")]
    nvb = write_json("nvbandwidth.json", imported)
    return run, nvb


def test_one_summary_line_per_method_with_geometric_mean_and_worst_case(equivalent_pair):
    comparison = compare(load_many(equivalent_pair))
    by_method = {s.method: s for s in summaries(comparison)}
    assert set(by_method) == {"ce", "ldst", "tma", "latency_read"}
    ldst = by_method["ldst"]
    values = [r.value for r in ldst.ratios]
    assert ldst.geometric_mean == pytest.approx(math.exp(sum(map(math.log, values)) / len(values)))
    assert ldst.worst.value == min(values)  # bandwidth: the lowest ratio is the worst
    assert by_method["latency_read"].worst.value == max(r.value for r in by_method["latency_read"].ratios)
    lines = summary_lines(comparison, 0.03)
    line = next(x for x in lines if "· ldst " in x)
    assert f"geometric-mean ratio {ldst.geometric_mean:.3f} over 6 cases" in line
    assert f"worst {min(values):.3f}" in line and "pull bidir 512M both b132 t512 u4" in line
    assert f"{ldst.outside(0.03)} outside ±3%" in line
    assert ldst.outside(0.03) == sum(abs(round(v, 3) - 1) > 0.03 + 1e-12 for v in values) == 2


def test_ratio_cells_outside_the_threshold_are_highlighted(equivalent_pair, monkeypatch):
    monkeypatch.setattr("p2pbench_report.plots.figures.build_figures", lambda result_sets: [])  # the tables are the point
    comparison = compare(load_many(equivalent_pair))
    page = render_html(comparison, 0.03)
    marked = re.findall(r'<td class="num (outside-(?:low|high))" title="([^"]*)">([0-9.]+)</td>', page)
    expected = sum(s.outside(0.03) for s in summaries(comparison))
    assert len(marked) == expected > 0
    for kind, title, text in marked:
        assert abs(float(text) - 1) > 0.03 + 1e-12 and "outside ±3%" in title
    assert '<td class="num">1.030</td>' in page  # exactly 3% off as printed: not outside
    # latency: a lower ratio is better (green); bandwidth: a higher one
    latency_part = page[page.index("<h2>Latency"):]
    assert "outside-high" in latency_part and "outside-low" not in latency_part
    assert 'class="num outside-high"' in page[:page.index("<h2>Latency")]
    assert page.index("Summary: ratio to the first file") < page.index("<h2>Metadata</h2>")
    assert 'alt="ratio_1_nvbandwidth"' in page and "data:image/png;base64," in page
    wider = render_html(comparison, 0.2)
    assert len(re.findall(r'class="num outside-', wider)) == 0  # ±20%: nothing marked


def test_highlighting_leaves_tables_without_ratio_columns_alone():
    table = ('<h2>Metadata</h2><table>\n<thead><tr><th>field</th><th>a</th></tr></thead>\n<tbody>\n'
             '<tr><td>x</td><td class="num">1.5</td></tr>\n</tbody>\n</table>')
    assert highlight_ratio_cells(table, 0.03) == table


def test_ratio_figure_per_method_against_size(equivalent_pair):
    comparison = compare(load_many(equivalent_pair))
    figures = ratio_figures(comparison, 0.03)
    try:
        assert [f.name for f in figures] == ["ratio_1_nvbandwidth"]
        ax = figures[0].figure.axes[0]
        assert ax.get_xscale() == "log"
        labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
        assert labels == ["ce (6 cases)", "ldst (6 cases)", "tma (6 cases)", "latency_read (2 cases)"]  # one chase variant, both ways
        ce = ax.get_lines()[0]
        ce_summary = next(s for s in summaries(comparison) if s.method == "ce")
        assert ce.get_ydata()[0] == pytest.approx(ce_summary.geometric_mean)  # one size: the mean of all
        low, high = ax.get_ylim()
        assert low < 0.889 and high > 1.041
    finally:
        close_figures(figures)


def test_cli_compare_prints_the_summary_and_takes_a_threshold(cli, equivalent_pair, tmp_path):
    code, out, err = cli("compare", *equivalent_pair, "--threshold", "5%", "--html", tmp_path / "page.html")
    assert code == 0, err
    assert "## Summary: ratio to the first file, per method" in out
    assert sum(1 for line in out.splitlines() if line.startswith("- nvbandwidth / p2pbench · ")) == 4
    assert "outside ±5%" in out and "outside ±3%" not in out
    assert "outside ±5%" in (tmp_path / "page.html").read_text(encoding="utf-8")
    code, _, err = cli("compare", *equivalent_pair, "--threshold", "150%")
    assert code == 2 and "--threshold" in err
