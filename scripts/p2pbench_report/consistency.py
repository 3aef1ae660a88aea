"""A results file's statistics must be those of its raw samples.

The driver computes min / median / max of bandwidth_gbps from samples_gbps and of latency_us
from samples_us (the median linearly interpolated, as statistics.median), also per direction of
a bidir row, and per flow and for the aggregate of a version 2 row. A file whose stored figures disagree with its samples has been edited or written
by a broken tool: `regress` and `check` would otherwise judge numbers nobody measured. Rows
without raw samples (failed rows, imports without them) are not checked.

The tails (docs/burn-in.md) are checked too: a latency row's p50 / p90 / p99 / p99_9 against its
samples (linear interpolation between order statistics, numpy's default); per-transfer tails
(iteration_time_us, whose transfers the file does not list) for their order, p50 <= p90 <= p99 <=
p99_9 <= max; and a flow's gbps_min_iteration against its bytes over its longest transfer.
"""

from __future__ import annotations

import math
import statistics
from typing import Iterator

from p2pbench_report.errors import InputError

CHECKED_PAIRS = (("bandwidth_gbps", "samples_gbps"), ("latency_us", "samples_us"))
CHECKED_STATS = {"min": min, "median": statistics.median, "max": max}
RELATIVE_TOLERANCE = 1e-9  # the driver writes doubles in full; this only absorbs rounding
LATENCY_QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p99_9": 0.999}
TAIL_ORDER = ("p50", "p90", "p99", "p99_9", "max")


def linear_quantile(values: list[float], q: float) -> float:
    """The q-quantile with linear interpolation between order statistics (numpy's "linear")."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _close(stored: float, computed: float) -> bool:
    return math.isclose(stored, computed, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12)


def _describe_row(row: dict) -> str:
    ranks = "both" if row.get("src_rank") is None else f"{row.get('src_rank')}->{row.get('dst_rank')}"
    return f"{row.get('method')} {row.get('direction')} {row.get('mode')} {row.get('bytes')} B {ranks}"


def _mismatches(figures: dict, prefix: str) -> Iterator[tuple[str, str]]:
    for stats_field, samples_field in CHECKED_PAIRS:
        stats, samples = figures.get(stats_field), figures.get(samples_field)
        if not isinstance(stats, dict) or not isinstance(samples, list) or not samples:
            continue
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in samples):
            continue  # the schema reports non-numbers
        for stat, function in CHECKED_STATS.items():
            stored, computed = stats.get(stat), function(samples)
            if isinstance(stored, (int, float)) and not math.isclose(stored, computed, rel_tol=RELATIVE_TOLERANCE,
                                                                     abs_tol=1e-12):
                yield (f"{prefix}.{stats_field}.{stat}",
                       f"is {stored!r} but the {stat} of its {len(samples)} {samples_field} is {computed!r}")
        if stats_field == "latency_us":
            yield from _latency_tail_mismatches(stats, samples, prefix)
    yield from _transfer_tail_mismatches(figures, prefix)


def _latency_tail_mismatches(stats: dict, samples: list, prefix: str) -> Iterator[tuple[str, str]]:
    for stat, q in LATENCY_QUANTILES.items():
        stored = stats.get(stat)
        if isinstance(stored, (int, float)) and not _close(stored, computed := linear_quantile(samples, q)):
            yield (f"{prefix}.latency_us.{stat}",
                   f"is {stored!r} but the {q} quantile of its {len(samples)} samples_us is {computed!r}")


def _transfer_tail_mismatches(figures: dict, prefix: str) -> Iterator[tuple[str, str]]:
    """iteration_time_us in order; gbps_min_iteration = bytes / the longest transfer."""
    tails = figures.get("iteration_time_us")
    if not isinstance(tails, dict):
        return
    values = [tails.get(stat) for stat in TAIL_ORDER]
    if all(isinstance(v, (int, float)) for v in values) and any(a > b * (1 + RELATIVE_TOLERANCE)
                                                                  for a, b in zip(values, values[1:])):
        yield (f"{prefix}.iteration_time_us.p50",
               f"are not in order (p50 <= p90 <= p99 <= p99_9 <= max): {dict(zip(TAIL_ORDER, values))}")
    slowest, size, stored = tails.get("max"), figures.get("bytes"), figures.get("gbps_min_iteration")
    if all(isinstance(v, (int, float)) for v in (slowest, size, stored)) and slowest > 0 \
            and not _close(stored, computed := size / (slowest * 1e3)):
        yield (f"{prefix}.gbps_min_iteration",
               f"is {stored!r} but its {size} bytes over its longest transfer ({slowest!r} us) is {computed!r} GB/s")


def check_statistics(document: dict, source: str) -> None:
    """Raises InputError naming the first row (and field) whose statistics disagree with its samples."""
    for index, row in enumerate(document.get("results") or []):
        if not isinstance(row, dict):
            continue
        parts = [(row, f"$.results[{index}]")]
        for field in ("directions", "flows"):
            parts += [(d, f"$.results[{index}].{field}[{i}]") for i, d in enumerate(row.get(field) or [])
                      if isinstance(d, dict)]
        if isinstance(row.get("aggregate"), dict):
            parts.append((row["aggregate"], f"$.results[{index}].aggregate"))
        for figures, prefix in parts:
            for field, problem in _mismatches(figures, prefix):
                raise InputError(source, f"row {index} ({_describe_row(row)}): {field.rsplit('.', 2)[-2]}."
                                         f"{field.rsplit('.', 1)[-1]} {problem}: statistics that do not match "
                                         f"the raw samples (an edited file?)", field=field)
