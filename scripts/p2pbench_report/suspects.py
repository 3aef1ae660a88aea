"""Suspect pairs: the pairs of ranks that measured more than a margin below comparable pairs.

The first thing an operator reads after a matrix run: which link to look at. Pairs are compared
only with pairs that should measure alike:
  * the same case: method, direction, mode, size and kernel shape (pair_figures.CaseGroup);
  * measured the same way: `matrix sequential`, `matrix rounds`, `matrix alone_check` or
    `sampled` (a round's flows share the fabric, a pair alone does not);
  * the same link class: meta.pairs' link_type and topo_label ("nvlink NV18", "pcie PHB").
A pair's figure is its flow's median GB/s (the median of its medians where it was measured
more than once in one group). Its reference is the median of the OTHER comparable pairs'
figures (so that a bad pair does not pull its own reference down); a class needs two pairs or
more. A pair is suspect when its figure is more than `margin` (default 10%) below its
reference; suspects are ranked by that shortfall, largest first. Pairs of two ranks on one GPU
(same_device) are functional tests, never P2P figures: they are neither judged nor used as a
reference.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from dataclasses import dataclass

from p2pbench_report.group import Group, describe_group, short_uuid
from p2pbench_report.loader import ResultSet
from p2pbench_report.pair_figures import CaseGroup, PairFigure, by_pair, pair_figures, pair_median
from p2pbench_report.tables import Table

DEFAULT_MARGIN = 0.10
FORMATS = ("text", "csv", "json")


@dataclass(frozen=True)
class Suspect:
    group: CaseGroup
    measured_as: str
    link_class: str
    src_rank: int
    dst_rank: int
    src_gpu: str | None
    dst_gpu: str | None
    median: float
    reference: float     # median of the other comparable pairs
    comparable: int      # how many other pairs the reference is made of
    peak: float | None

    @property
    def shortfall(self) -> float:
        """1 - median / reference (0.3: 30% below the comparable pairs)."""
        return 1.0 - self.median / self.reference

    def as_dict(self) -> dict:
        return {"shortfall_pct": round(100 * self.shortfall, 2), "src_rank": self.src_rank, "dst_rank": self.dst_rank,
                "src_gpu": self.src_gpu, "dst_gpu": self.dst_gpu, "link_class": self.link_class,
                "method": self.group.method, "direction": self.group.direction, "mode": self.group.mode,
                "bytes": self.group.bytes, "shape": {k: v for k, v in self.group.shape if v is not None},
                "measured_as": self.measured_as, "median_gbps": self.median, "reference_gbps": self.reference,
                "comparable_pairs": self.comparable, "peak_gbps": self.peak}


@dataclass
class SuspectReport:
    result_set: ResultSet
    margin: float
    suspects: list[Suspect]
    pairs_judged: int     # pair figures that had comparable pairs
    version_1: bool       # a version 1 file: one pair, nothing to compare


def _classes(figures: list[PairFigure], group: Group) -> dict[tuple, list[PairFigure]]:
    classes: dict[tuple, list[PairFigure]] = {}
    for figure in figures:
        if figure.same_device or group.same_device(*figure.pair) or not figure.measured:
            continue
        key = (figure.group, figure.measured_as, group.link_class(*figure.pair))
        classes.setdefault(key, []).append(figure)
    return classes


def _judge(key: tuple, figures: list[PairFigure], margin: float) -> tuple[list[Suspect], int]:
    """(suspects, pairs judged) among the pairs of one class."""
    medians = {pair: pair_median(items) for pair, items in by_pair(figures).items()}
    medians = {pair: value for pair, value in medians.items() if value is not None}
    if len(medians) < 2:
        return [], 0
    found = []
    for pair, value in medians.items():
        others = [v for p, v in medians.items() if p != pair]
        reference = float(statistics.median(others))
        if reference > 0 and value < reference * (1.0 - margin):
            first = next(f for f in figures if f.pair == pair)
            found.append(Suspect(key[0], key[1], key[2], pair[0], pair[1], first.src_gpu, first.dst_gpu, value,
                                 reference, len(others), first.peak))
    return found, len(medians)


def find_suspects(result_set: ResultSet, margin: float = DEFAULT_MARGIN) -> SuspectReport:
    group = describe_group(result_set.document["meta"])
    if group is None:
        return SuspectReport(result_set, margin, [], 0, True)
    suspects, judged = [], 0
    for key, figures in _classes(pair_figures(result_set), group).items():
        found, count = _judge(key, figures, margin)
        suspects += found
        judged += count
    suspects.sort(key=lambda s: (-s.shortfall, s.group.method, s.src_rank, s.dst_rank))
    return SuspectReport(result_set, margin, suspects, judged, False)


# ---- rendering ------------------------------------------------------------------------------

CSV_FIELDS = ("shortfall_pct", "src_rank", "dst_rank", "src_gpu", "dst_gpu", "link_class", "method", "direction",
              "mode", "bytes", "shape", "measured_as", "median_gbps", "reference_gbps", "comparable_pairs", "peak_gbps")
HEADERS = ["#", "shortfall", "pair", "GPUs", "link", "case", "measured as", "median GB/s", "comparable GB/s"]


def suspects_table(report: SuspectReport) -> Table:
    table = Table(HEADERS, numeric={0, 1, 7, 8})
    for number, s in enumerate(report.suspects, start=1):
        table.add(number, f"{100 * s.shortfall:.1f}%", f"{s.src_rank}→{s.dst_rank}",
                  f"{short_uuid(s.src_gpu)}→{short_uuid(s.dst_gpu)}", s.link_class, s.group.describe(), s.measured_as,
                  f"{s.median:.1f}", f"{s.reference:.1f} (median of {s.comparable})")
    return table


def headline(report: SuspectReport) -> str:
    margin = f"{100 * report.margin:g}%"
    name = report.result_set.name
    if report.version_1:
        return f"Suspect pairs of {name}: none to judge (a version 1 file measures one pair)."
    if not report.suspects:
        return (f"Suspect pairs of {name}: none ({report.pairs_judged} pair figures judged; margin {margin} below "
                f"the median of comparable pairs, same link class).")
    pairs = list(dict.fromkeys(f"{s.src_rank}→{s.dst_rank}" for s in report.suspects))
    return (f"Suspect pairs of {name}: {len(pairs)} pair{'s' if len(pairs) != 1 else ''} ({', '.join(pairs)}) in "
            f"{len(report.suspects)} case{'s' if len(report.suspects) != 1 else ''}, more than {margin} below the "
            f"median of comparable pairs (same case, same link class); {report.pairs_judged} pair figures judged.")


def render_text(reports: list[SuspectReport]) -> str:
    parts = []
    for report in reports:
        parts.append(f"## {headline(report)}")
        if report.suspects:
            parts += ["", suspects_table(report).to_markdown()]
        parts.append("")
    return "\n".join(parts)


def render_csv(reports: list[SuspectReport]) -> str:
    buffer = io.StringIO()
    fields = ["file"] + list(CSV_FIELDS)
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for report in reports:
        for suspect in report.suspects:
            row = suspect.as_dict()
            row["shape"] = " ".join(f"{k}={v}" for k, v in row["shape"].items())
            writer.writerow({"file": str(report.result_set.path), **row})
    return buffer.getvalue()


def render_json(reports: list[SuspectReport]) -> str:
    document = {"files": [{"path": str(r.result_set.path), "label": r.result_set.name, "margin_pct": 100 * r.margin,
                           "pairs_judged": r.pairs_judged, "suspects": [s.as_dict() for s in r.suspects]}
                          for r in reports]}
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def render(reports: list[SuspectReport], fmt: str) -> str:
    return {"text": render_text, "csv": render_csv, "json": render_json}[fmt](reports)
