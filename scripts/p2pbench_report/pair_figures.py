"""Per-pair figures of a version 2 file: one PairFigure per flow of every row that measures pairs
of ranks (pattern `matrix` with any schedule, and `sampled`), in bandwidth.

Remote atomics and interference rows are left out (their GB/s is not the link's own figure), as
are latency rows. A uni matrix row is one flow; a bidir row two (each direction's own figure while both ran); a
rounds row one per pair of its round. Rows of other patterns (one_to_all, ring, ...) measure the
group under load, not a pair: their aggregate is drawn by plots/patterns.py instead. Flows whose
two ends are one rank (h2d, d2h) are no pair and are left out.

The matrix heatmaps (plots/matrix.py) and the size figures read these. The suspect pairs and the
rounds / alone agreement are the run's own (findings.py), not computed from these.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import pandas as pd

from p2pbench_report.cases import KERNEL_VARIABLES, PAYLOAD_VARIABLES, describe_config, plain_value
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import LATENCY_METHODS, names_of_kinds
from p2pbench_report.units import format_size

PAIR_PATTERNS = ("matrix", "sampled")
SHAPE_VARIABLES = KERNEL_VARIABLES + ("buffer_pool_bytes",) + PAYLOAD_VARIABLES
NOT_LINK_BANDWIDTH = names_of_kinds("atomic", "interference", "collective")  # GB/s that is not what the link carries alone


@dataclass(frozen=True)
class CaseGroup:
    """What makes pairs' figures comparable: method, direction, mode, size and kernel shape."""

    method: str
    direction: str
    mode: str
    bytes: int
    shape: tuple  # ((variable, value), ...) over SHAPE_VARIABLES

    def describe(self) -> str:
        """'ce push uni 1G', 'ldst push uni 1G b132 t1024 u4'."""
        config = describe_config(pd.Series(dict(self.shape)))
        return " ".join(p for p in (self.method, self.direction, self.mode, format_size(self.bytes), config) if p)

    def slug(self) -> str:
        """'ce_push_uni_1G', 'ldst_push_uni_1G_b132-t1024-u4' (for file names)."""
        config = describe_config(pd.Series(dict(self.shape))).replace(" ", "-")
        return "_".join(p for p in (self.method, self.direction, self.mode, format_size(self.bytes), config) if p)


@dataclass(frozen=True)
class PairFigure:
    """One flow of a pair-measuring row."""

    group: CaseGroup
    pattern: str
    schedule: str | None
    round: int | None
    row_index: int
    src_rank: int
    dst_rank: int
    src_gpu: str | None
    dst_gpu: str | None
    same_device: bool
    status: str                 # the row's: ok, failed, skipped
    error: str | None
    median: float | None        # the flow's median GB/s (of its raw samples)
    samples: tuple[float, ...]
    peak: float | None

    @property
    def measured(self) -> bool:
        return self.status == "ok" and self.median is not None

    @property
    def measured_as(self) -> str:
        """'matrix sequential', 'matrix rounds', 'matrix alone_check', 'sampled'."""
        return " ".join(p for p in (self.pattern, self.schedule) if p)

    @property
    def pair(self) -> tuple[int, int]:
        return self.src_rank, self.dst_rank


def case_group(row: dict) -> CaseGroup:
    shape = [(name, plain_value(row.get(name))) for name in SHAPE_VARIABLES]
    shape = [(name, value or 0) if name == "buffer_pool_bytes" else (name, value) for name, value in shape]
    return CaseGroup(row["method"], row["direction"], row["mode"], int(row["bytes"]), tuple(shape))


def _flow_median(flow: dict) -> float | None:
    samples = flow.get("samples_gbps") or []
    if samples:
        return float(statistics.median(samples))
    stats = flow.get("bandwidth_gbps")
    return float(stats["median"]) if isinstance(stats, dict) and "median" in stats else None


def _measures_pairs(row: dict) -> bool:
    return (isinstance(row.get("flows"), list) and row.get("pattern") in PAIR_PATTERNS
            and row.get("method") not in LATENCY_METHODS + NOT_LINK_BANDWIDTH)


def pair_figures(result_set: ResultSet) -> list[PairFigure]:
    """Every flow between two ranks of the file's pair-measuring rows (none in a version 1 file)."""
    figures = []
    for index, row in enumerate(result_set.document.get("results") or []):
        if not _measures_pairs(row):
            continue
        group = case_group(row)
        for flow in row["flows"]:
            if flow.get("src_rank") == flow.get("dst_rank"):
                continue
            ok = row.get("status") == "ok"
            figures.append(PairFigure(
                group, row["pattern"], row.get("schedule"), row.get("round"), index, flow["src_rank"],
                flow["dst_rank"], flow.get("src_gpu"), flow.get("dst_gpu"), bool(flow.get("same_device")),
                str(row.get("status")), row.get("error"), _flow_median(flow) if ok else None,
                tuple(flow.get("samples_gbps") or ()) if ok else (), flow.get("peak_gbps")))
    return figures


def by_pair(figures: list[PairFigure]) -> dict[tuple[int, int], list[PairFigure]]:
    table: dict[tuple[int, int], list[PairFigure]] = {}
    for figure in figures:
        table.setdefault(figure.pair, []).append(figure)
    return table


def pair_median(figures: list[PairFigure]) -> float | None:
    """A pair's figure where it was measured more than once in one group: the median of its medians."""
    medians = [f.median for f in figures if f.measured]
    return float(statistics.median(medians)) if medians else None
