"""The tails of each row (docs/burn-in.md), as the `tails` command prints them: where the median
hides a slow transfer, p99 / p99.9 show it.

Bandwidth rows: the time per transfer of the row's tail sample (`iteration_time_us`, µs: a CUDA
event after every transfer; several flows: the per-index maximum over the flows), and the
slowest flow's bytes over its longest transfer (`flows[].gbps_min_iteration`, GB/s). Latency rows:
the quantiles of latency_us over the row's samples (`tails_of` "sample": a sample is already a
mean over its round trips). The columns name their unit; `tails_of` says which of the two a row has.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pbench_report.cases import describe_config, describe_ranks, identity
from p2pbench_report.tables import Table
from p2pbench_report.units import format_size, format_value

QUANTILES = ("p50", "p90", "p99", "p99_9")
HEADERS = ["method", "direction", "mode", "bytes", "ranks", "config", "tails of", "count",
           "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "min per transfer GB/s", "window"]


@dataclass(frozen=True)
class RowTails:
    """One row's tails (µs), over transfers or over samples."""

    row_index: int
    tails_of: str
    count: int | None
    quantiles: tuple[float | None, ...]   # p50, p90, p99, p99_9
    max_us: float | None
    min_transfer_gbps: float | None       # the lowest gbps_min_iteration of the row's flows


def _lowest_flow_gbps(row: dict) -> float | None:
    values = [f.get("gbps_min_iteration") for f in row.get("flows") or [] if isinstance(f, dict)]
    values = [v for v in values if isinstance(v, (int, float))]
    return min(values) if values else None


def row_tails(index: int, row: dict) -> RowTails | None:
    """The row's tails; None for a row without (not ok, or written before the tails)."""
    if row.get("status") != "ok":
        return None
    transfers, latency = row.get("iteration_time_us"), row.get("latency_us")
    if isinstance(transfers, dict):
        return RowTails(index, row.get("tails_of") or "transfer", transfers.get("count"), tuple(transfers.get(q) for q in QUANTILES),
                        transfers.get("max"), _lowest_flow_gbps(row))
    if isinstance(latency, dict) and any(q in latency for q in QUANTILES):
        return RowTails(index, "sample", len(row.get("samples_us") or []) or None,
                        tuple(latency.get(q) for q in QUANTILES), latency.get("max"), None)
    return None


def tails_table(document: dict) -> Table:
    table = Table(list(HEADERS), numeric={3, 7, 8, 9, 10, 11, 12, 13, 14})
    for index, row in enumerate(document.get("results") or []):
        tails = row_tails(index, row)
        if tails is None:
            continue
        key = identity(row)
        table.add(row.get("method"), row.get("direction"), row.get("mode"), format_size(row.get("bytes")),
                  describe_ranks(key), describe_config(key) or "-", tails.tails_of, tails.count,
                  *(format_value(v, 2) for v in tails.quantiles), format_value(tails.max_us, 2),
                  format_value(tails.min_transfer_gbps), "-" if row.get("window") is None else row["window"])
    return table


def render_tails(document: dict) -> str:
    table = tails_table(document)
    if not table.rows:
        return "no row with tails (files written before p2pbench recorded them have none)\n"
    return table.to_markdown() + "\n"
