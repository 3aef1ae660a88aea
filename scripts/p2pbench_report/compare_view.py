"""What a comparison says at a glance, on top of compare.py's tables: per case the ratio of each
file to the first (the reference), one summary line per file and method (geometric-mean ratio over
its cases, the worst case and which it is, how many lie outside the threshold), a ratio-vs-size
figure per file, and in the HTML page the ratio cells outside the threshold highlighted.

"Worst" is the least favourable ratio for the later file: the lowest for bandwidth (higher is
better), the highest for latency. The threshold is symmetric: a ratio r is outside when
|r - 1| > threshold (default 3%), judged on r as the tables print it (3 decimals), so that the
summary's count and the highlighted cells agree.
"""

from __future__ import annotations

import html
import re

from p2pbench_report.compare import Comparison, _figure_html, render_html as render_tables_html
from p2pbench_report.plots.figures import close_figures
from p2pbench_report.plots.ratio import ratio_figures
from p2pbench_report.provenance import provenance_warning
from p2pbench_report.ratios import (DEFAULT_THRESHOLD, MethodSummary, Ratio, is_outside,  # noqa: F401
                                    ratios, summaries)

HIGHLIGHT_STYLE = """
td.outside-low { background: #f8d0cc; font-weight: 600; }
td.outside-high { background: #cfe8cf; font-weight: 600; }
p.summary { font-family: ui-monospace, monospace; font-size: 0.9em; margin: 0.2em 0; }
"""


TREES_CAVEAT = ("The files may come from different source trees (WARNING under Metadata): the ratios include "
                "whatever changed in the code.")


def summary_lines(comparison: Comparison, threshold: float = DEFAULT_THRESHOLD) -> list[str]:
    return [s.line(threshold) for s in summaries(comparison)]


def _trees_differ(comparison: Comparison) -> bool:
    return provenance_warning([(r.name, r.document["meta"]) for r in comparison.result_sets]) is not None


def render_markdown_summary(comparison: Comparison, threshold: float = DEFAULT_THRESHOLD) -> str:
    lines = summary_lines(comparison, threshold)
    if not lines:
        return ""
    caveat = ["", TREES_CAVEAT] if _trees_differ(comparison) else []
    return "\n".join(["", "## Summary: ratio to the first file, per method", ""] + [f"- {line}" for line in lines]
                     + caveat) + "\n"


# ---- HTML ------------------------------------------------------------------------------------

_TABLE = re.compile(r"<table[^>]*>.*?</table>", re.DOTALL)
_ROW = re.compile(r"<tr>(.*?)</tr>", re.DOTALL)
_CELL = re.compile(r"<(t[dh])([^>]*)>(.*?)</\1>", re.DOTALL)
_RATIO_HEADER = re.compile(r"^.+ / .+$")


def _mark_row(row_html: str, ratio_columns: set[int], threshold: float, higher_is_better: bool) -> str:
    cells = list(_CELL.finditer(row_html))
    out, position = [], 0
    for index, cell in enumerate(cells):
        out.append(row_html[position:cell.start()])
        position = cell.end()
        text = html.unescape(cell.group(3))
        try:
            value = float(text)
        except ValueError:
            value = None
        if index not in ratio_columns or value is None or not is_outside(value, threshold):
            out.append(cell.group(0))
            continue
        good = (value > 1) == higher_is_better
        classes = re.search(r'class="([^"]*)"', cell.group(2))
        names = ((classes.group(1) + " ") if classes else "") + ("outside-high" if good else "outside-low")
        title = f"{(value - 1) * 100:+.1f}%: outside ±{threshold * 100:g}% ({'better' if good else 'worse'})"
        out.append(f'<td class="{names}" title="{html.escape(title)}">{cell.group(3)}</td>')
    out.append(row_html[position:])
    return "".join(out)


def highlight_ratio_cells(page: str, threshold: float) -> str:
    """Marks the cells of ratio columns (headers 'A / B') whose value lies outside 1 ± threshold:
    class outside-low (worse: red) or outside-high (better: green), with the deviation as title.
    A table is read as latency (lower is better) when the heading before it says 'Latency'."""
    def mark(match: re.Match) -> str:
        table = match.group(0)
        header = re.search(r"<thead>(.*?)</thead>", table, re.DOTALL)
        if not header:
            return table
        names = [html.unescape(c.group(3)) for c in _CELL.finditer(header.group(1))]
        columns = {i for i, name in enumerate(names) if _RATIO_HEADER.match(name)}
        if not columns:
            return table
        heading = page.rfind("<h2>", 0, match.start())
        latency = heading >= 0 and page[heading:heading + 12].startswith("<h2>Latency")
        body_start = table.index("<tbody>") if "<tbody>" in table else 0
        body = _ROW.sub(lambda row: _mark_row(row.group(0), columns, threshold, not latency), table[body_start:])
        return table[:body_start] + body

    return _TABLE.sub(mark, page)


def _summary_html(comparison: Comparison, threshold: float) -> str:
    parts = ["<h2>Summary: ratio to the first file, per method</h2>"]
    lines = summary_lines(comparison, threshold)
    parts += [f'<p class="summary">{html.escape(line)}</p>' for line in lines] or [
        "<p>No case was measured in the first file and another.</p>"]
    if lines and _trees_differ(comparison):
        parts.append(f"<p><strong>{html.escape(TREES_CAVEAT)}</strong></p>")
    parts.append(f"<p>Ratio cells outside ±{threshold * 100:g}% are highlighted in the tables below: "
                 "red where the later file is worse, green where it is better.</p>")
    figures = ratio_figures(comparison, threshold)
    try:
        parts += [_figure_html(f.name, f.figure) for f in figures]
    finally:
        close_figures(figures)
    return "\n".join(parts)


def render_html(comparison: Comparison, threshold: float = DEFAULT_THRESHOLD) -> str:
    """compare.py's page with the summary and ratio figure first and the ratio cells highlighted."""
    page = highlight_ratio_cells(render_tables_html(comparison), threshold)
    page = page.replace("</style>", HIGHLIGHT_STYLE + "</style>", 1)
    summary = _summary_html(comparison, threshold)
    anchor = page.find("<h2>Metadata</h2>")
    if anchor < 0:
        anchor = page.find("</ul>") + len("</ul>") if "</ul>" in page else page.find("<body>") + len("<body>")
    return page[:anchor] + summary + "\n" + page[anchor:]
