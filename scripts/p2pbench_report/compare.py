"""Side-by-side comparison of several results files: metadata diff and median per matched case.

The first file is the reference: ratio columns are <file>/<first file>. By default only cases
measured (`ok`) in at least two files are listed; --all-cases lists every case. Files all of
version 2 are matched pair by pair by GPU identity (pair_rows.py), others by rank.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass

from p2pbench_report.conditions import conditions_warning, peer_mapping_times, run_conditions
from p2pbench_report.verdicts import run_verdicts
from p2pbench_report.cases import BANDWIDTH, LATENCY, MatchedCase, Metric, describe_case, match_cases
from p2pbench_report.loader import ResultSet
from p2pbench_report.pair_rows import comparison_rows, matches_by_gpu
from p2pbench_report.provenance import provenance_fields, provenance_warning
from p2pbench_report.tables import Table
from p2pbench_report.units import format_value


MATCHED_BY_GPU = ("Cases matched by GPU identity (every file is schema version 2): the ranks column names the GPUs "
                  "(short UUID), rounds are compared flow by flow.")
MATCHED_BY_RANK = "Cases matched by rank."
NOTHING_IN_COMMON = "No case was measured in two of the files (compare matches cases on all independent variables)."


@dataclass
class Comparison:
    result_sets: list[ResultSet]
    cases: list[MatchedCase]
    all_cases: bool = False
    by_gpu: bool = False  # matched by GPU identity (every file version 2), else by rank

    def listed(self, metric: Metric) -> list[MatchedCase]:
        chosen = []
        for case in self.cases:
            if case.metric() is not metric:
                continue
            measured = sum(1 for index in range(len(case.rows)) if case.figure(index, metric) is not None)
            if self.all_cases or measured >= 2:
                chosen.append(case)
        return chosen

    @property
    def unlisted_count(self) -> int:
        return len(self.cases) - len(self.listed(BANDWIDTH)) - len(self.listed(LATENCY))


def compare(result_sets: list[ResultSet], all_cases: bool = False) -> Comparison:
    by_gpu = matches_by_gpu(result_sets)
    return Comparison(result_sets, match_cases([comparison_rows(r) for r in result_sets], by_gpu), all_cases, by_gpu)


def metadata_table(result_sets: list[ResultSet]) -> Table:
    """One row per metadata field (the system, the source tree it was built from: provenance.py,
    then how the run was made: conditions.py, then how long mapping the peers' buffers took), one
    column per file, and whether the files differ."""
    fields = [{**r.system.diff_fields(), **provenance_fields(r.document["meta"]), **run_conditions(r.document["meta"]),
               "peer mapping (max over ranks)": peer_mapping_times(r.document["meta"])} for r in result_sets]
    table = Table(["field"] + [r.name for r in result_sets] + ["differs"])
    for name in fields[0]:
        values = [f[name] for f in fields]
        table.add(name, *values, "≠" if len(set(values)) > 1 else "")
    return table


def warnings(comparison: Comparison) -> list[str]:
    """The sentences printed in bold under the metadata: other source trees, other conditions."""
    metas = [r.document["meta"] for r in comparison.result_sets]
    found = [provenance_warning([(r.name, r.document["meta"]) for r in comparison.result_sets]),
             conditions_warning(metas)]
    return [w for w in found if w]


def _cell(case: MatchedCase, index: int, metric: Metric) -> str:
    row = case.rows[index]
    if row is None:
        return "-"
    if row.get("status") != "ok":
        return str(row.get("status"))
    return format_value(case.figure(index, metric))


# nvbandwidth adds its two directions' own figures; p2pbench's bidir figure is all bytes over the
# union of both windows (stricter). Against such a file p2pbench's directions are added too.
SUM_NOTE = "(bidir: sum of both directions' own figures)"


def values_table(comparison: Comparison, metric: Metric) -> Table:
    sets = comparison.result_sets
    ratio_headers = [f"{r.name} / {sets[0].name}" for r in sets[1:]]
    headers = ["method", "direction", "mode", "size", "ranks", "config"] + [r.name for r in sets] + ratio_headers
    table = Table(headers, numeric=set(range(6, len(headers))))
    for case in comparison.listed(metric):
        reference = case.figure(0, metric)
        ratios = []
        for index in range(1, len(case.rows)):
            value = case.figure(index, metric)
            ratios.append(f"{value / reference:.3f}" if value is not None and reference else "-")
        described = describe_case(case.key)
        if case.sums_directions():
            described["config"] = (described["config"] + " " if described["config"] else "") + SUM_NOTE
        table.add(*described.values(), *(_cell(case, i, metric) for i in range(len(case.rows))), *ratios)
    return table


def _sections(comparison: Comparison) -> list[tuple[str, Table]]:
    sections = []
    for metric, title in ((BANDWIDTH, "Bandwidth: median GB/s (1 GB = 1e9 B; bidir = both directions)"),
                          (LATENCY, "Latency: median µs (lower is better)")):
        if comparison.listed(metric):
            sections.append((title, values_table(comparison, metric)))
    return sections


def _unlisted_note(comparison: Comparison) -> str | None:
    if comparison.all_cases or not comparison.unlisted_count:
        return None
    count = comparison.unlisted_count
    return (f"{count} case{'s' if count != 1 else ''} measured in fewer than two files "
            f"{'are' if count != 1 else 'is'} not listed (--all-cases lists them).")


def render_markdown(comparison: Comparison) -> str:
    parts = ["# p2pbench comparison", "", "Files:"]
    parts += [f"- {r.name}: `{r.path}`{' (INCOMPLETE run)' if r.incomplete else ''}" for r in comparison.result_sets]
    parts += ["", MATCHED_BY_GPU if comparison.by_gpu else MATCHED_BY_RANK]
    parts += ["", "## Metadata", "", metadata_table(comparison.result_sets).to_markdown()]
    for warning in warnings(comparison):
        parts += ["", f"**{warning}**"]
    evidence = [f"- {r.name}: {message}" for r in comparison.result_sets
                for message in run_verdicts(r.document["meta"]).messages]
    if evidence:
        parts += ["", "Health verdicts (evidence):", *evidence]
    sections = _sections(comparison)
    for title, table in sections:
        parts += ["", f"## {title}", "", table.to_markdown()]
    if not sections:
        parts += ["", NOTHING_IN_COMMON]
    note = _unlisted_note(comparison)
    if note:
        parts += ["", note]
    return "\n".join(parts) + "\n"


_HTML_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
"""


def _figure_html(name: str, figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{encoded}">'
            f"<figcaption>{html.escape(name)}</figcaption></figure>")


def render_html(comparison: Comparison) -> str:
    """A self-contained page: metadata, figures (inline base64 PNG), tables."""
    from p2pbench_report.plots.figures import build_figures, close_figures  # matplotlib only when asked for

    names = ", ".join(r.name for r in comparison.result_sets)
    body = [f"<h1>p2pbench comparison: {html.escape(names)}</h1>", "<ul>"]
    body += [f"<li>{html.escape(r.name)}: <code>{html.escape(str(r.path))}</code>"
             f"{' (INCOMPLETE run)' if r.incomplete else ''}</li>" for r in comparison.result_sets]
    body += ["</ul>", "<h2>Metadata</h2>", metadata_table(comparison.result_sets).to_html()]
    body += [f"<p><strong>{html.escape(warning)}</strong></p>" for warning in warnings(comparison)]
    figures = build_figures(comparison.result_sets)
    try:
        if figures:
            body.append("<h2>Figures</h2>")
            body += [_figure_html(f.name, f.figure) for f in figures]
    finally:
        close_figures(figures)
    sections = _sections(comparison)
    for title, table in sections:
        body += [f"<h2>{html.escape(title)}</h2>", table.to_html()]
    if not sections:
        body.append(f"<p>{NOTHING_IN_COMMON}</p>")
    note = _unlisted_note(comparison)
    if note:
        body.append(f"<p>{html.escape(note)}</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>p2pbench comparison</title><style>{_HTML_STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
