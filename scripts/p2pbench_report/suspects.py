"""Suspect pairs: the pairs of ranks that measured more than a margin below comparable pairs.

The first thing an operator reads after a matrix run: which link to look at. p2pbench judges
the pairs when it writes the file (suspect_pairs, src/results/pair_matrix.hpp: the one
definition); this module reads that judgement and never recomputes it. Pairs are compared only
with pairs that should measure alike: the same matrix (method, direction, mode, size, kernel
shape and schedule: `matrix sequential`, `matrix rounds` or `sampled`; alone checks are a sample
and not judged) and the same link class (meta.pairs' link_type and topo_label, "nvlink NV18").
A pair's reference is the median of the OTHER comparable pairs' figures (so that a bad pair does
not pull its own reference down); a class needs two pairs or more. A pair is suspect when its
figure is more than `margin` (default: the file's, 10%) below its reference; suspects are
ranked by that shortfall, largest first. Pairs of two ranks on one GPU are never judged.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from p2pbench_report.findings import case_of, measured_as, suspect_findings
from p2pbench_report.group import Group, describe_group, short_uuid
from p2pbench_report.loader import ResultSet
from p2pbench_report.pair_figures import CaseGroup
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
    pairs_judged: int     # pair figures the run judged
    version_1: bool       # nothing judged: a version 1 file (one pair) or no judgement written
    judged_at: float | None = None  # the run's own margin where the file lists only its suspects


def _suspect(entry: dict, group: Group) -> Suspect:
    src, dst = int(entry["src_rank"]), int(entry["dst_rank"])
    link = group.link(src, dst)
    return Suspect(case_of(entry), measured_as(entry["schedule"]), entry["link_class"], src, dst,
                   group.gpu_of_rank.get(src), group.gpu_of_rank.get(dst), float(entry["bandwidth_gbps"]),
                   float(entry.get("reference_gbps", entry["class_median_gbps"])),  # files before reference_gbps
                   int(entry["comparable_cells"]) - 1, link.peak_gbps if link else None)


def find_suspects(result_set: ResultSet, margin: float | None = None) -> SuspectReport:
    """The file's suspects at `margin` (None: the run's own). Files that list every judged pair
    give any margin; older ones only their suspects, at the run's margin or a looser one."""
    group = describe_group(result_set.document["meta"])
    found = suspect_findings(result_set.document)
    if group is None or found is None:
        return SuspectReport(result_set, DEFAULT_MARGIN if margin is None else margin, [], 0, True)
    run_margin = float(found["margin_pct"]) / 100
    margin = run_margin if margin is None else margin
    judged = found.get("judged")
    entries = judged if isinstance(judged, list) else found.get("pairs") or []
    suspects = [_suspect(e, group) for e in entries if float(e["shortfall_pct"]) > 100 * margin]
    suspects.sort(key=lambda s: (-s.shortfall, s.group.method, s.src_rank, s.dst_rank))
    judged_count = len(judged) if isinstance(judged, list) else 0
    return SuspectReport(result_set, margin, suspects, judged_count, False,
                         None if isinstance(judged, list) else run_margin)


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
    if report.judged_at is not None and report.margin < report.judged_at:
        return (f"Suspect pairs of {name}: {len(report.suspects)} listed by the run at its margin of "
                f"{100 * report.judged_at:g}% (an older file lists no other judged pair, so a margin of {margin} "
                f"can name no more).")
    if report.judged_at is not None and not report.suspects:
        return (f"Suspect pairs of {name}: none beyond the run's margin of {100 * report.judged_at:g}% (an older file: "
                f"it does not list the pairs it judged).")
    if not report.suspects:
        return (f"Suspect pairs of {name}: none ({report.pairs_judged} pair figures judged; margin {margin} below "
                f"the median of comparable pairs, same link class).")
    pairs = list(dict.fromkeys(f"{s.src_rank}→{s.dst_rank}" for s in report.suspects))
    return (f"Suspect pairs of {name}: {len(pairs)} pair{'s' if len(pairs) != 1 else ''} ({', '.join(pairs)}) in "
            f"{len(report.suspects)} case{'s' if len(report.suspects) != 1 else ''}, more than {margin} below the "
            f"median of comparable pairs (same case, same link class); "
            + ("an older file: the pairs it judged are not listed." if report.judged_at is not None
               else f"{report.pairs_judged} pair figures judged."))


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
