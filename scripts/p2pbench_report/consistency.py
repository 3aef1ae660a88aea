"""A results file's statistics must be those of its raw samples.

The driver computes min / median / max of bandwidth_gbps from samples_gbps and of latency_us
from samples_us (the median linearly interpolated, as statistics.median), also per direction of
a bidir row, and per flow and for the aggregate of a version 2 row. A file whose stored figures disagree with its samples has been edited or written
by a broken tool: `regress` and `check` would otherwise judge numbers nobody measured. Rows
without raw samples (failed rows, imports without them) are not checked.
"""

from __future__ import annotations

import math
import statistics
from typing import Iterator

from p2pbench_report.errors import InputError

CHECKED_PAIRS = (("bandwidth_gbps", "samples_gbps"), ("latency_us", "samples_us"))
CHECKED_STATS = {"min": min, "median": statistics.median, "max": max}
RELATIVE_TOLERANCE = 1e-9  # the driver writes doubles in full; this only absorbs rounding


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
