"""The one loader: read a results file, validate it against the schema, flatten its rows.

`load_results(path)` returns a ResultSet whose `rows` DataFrame has one row per result row and
one column per field: the independent variables (method ... buffer_pool_bytes, nullable
integers, then the payload variables protocol ... hot_addresses), statistics flattened as
`<field>_<stat>` (bandwidth_gbps_median, time_us_stdev, latency_us_p95, and where rows have them
issue_interval_us_median, cycles_median, latency_at_peak_clock_us_median,
atomic_ops_per_s_median, ...), the tails where rows have them (`iteration_time_us_count`,
`_p50`, `_p90`, `_p99`, `_p99_9`, `_max`: per-transfer times of a bandwidth row, µs; `latency_us_p50`
... `_p99_9`: over a latency row's samples; `tails_of` says which), raw samples as Python lists (samples_gbps, samples_us,
samples_issue_interval_us; [] in a row without them), bidir per-direction figures as
`directions_<i>_<field>` (directions_0_bandwidth_gbps_median, ...), and any other field the
driver adds under its own name. Added columns: `metric` ('bandwidth', 'latency' or None) and
`row_index` (position in `results`, for messages).

Version 2 rows (docs/groups.md) add `pattern`, `schedule`, `round`, `overlap`, and their flows,
aggregate and per-GPU traffic as the columns group_rows.py lists (flow_count, flows_<field> lists,
src_gpu, dst_gpu, same_device, ...); a bidir row's directions_<i>_... columns come from its flows.
Version 1 files give the same frame as before (none of these columns).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from p2pbench_report.cases import INTEGER_VARIABLES, PAYLOAD_VARIABLES, metric_name_of
from p2pbench_report.consistency import check_statistics
from p2pbench_report.errors import InputError
from p2pbench_report.group_rows import group_columns, is_group_row, without_group_fields
from p2pbench_report.methods import STATS_ROW_FIELDS
from p2pbench_report.schema import schema_path, validate
from p2pbench_report.system import SystemInfo, describe_system

STATS_FIELDS = {
    "bandwidth_gbps": ("min", "median", "mean", "max", "stdev"),
    "time_us": ("min", "median", "mean", "max", "stdev"),
    "latency_us": ("min", "median", "p95", "max", "mean", "stdev"),
}
# Statistics objects only some rows carry (latency_ce, latency_read, atomic): flattened where present.
OPTIONAL_STATS_FIELDS = ("issue_interval_us", "cycles", "latency_at_peak_clock_us", "atomic_ops_per_s"
                         ) + STATS_ROW_FIELDS  # and the methods' own (gemm: tflops, 1e12 FLOP/s)
# Tails (docs/burn-in.md): per-transfer times of a bandwidth row, and the latency quantiles a row
# written since then adds. Flattened after the statistics where some row has them (older files:
# no such columns, so their frame and CSV stay as they were).
TAIL_STATS = {"latency_us": ("p50", "p90", "p99", "p99_9"),
              "iteration_time_us": ("count", "p50", "p90", "p99", "p99_9", "max")}
SAMPLE_FIELDS = ("samples_gbps", "samples_us")
SAMPLE_COLUMN = re.compile(r"(?:directions_\d+_)?samples_\w+")  # raw samples are named samples_<what>
STAT_ORDER = ("min", "median", "p50", "p90", "p95", "p99", "p99_9", "max", "mean", "stdev")  # as latency_us
INTEGER_FIELDS = INTEGER_VARIABLES + ("sms_used", "iterations", "samples", "hot_addresses", "ops_per_thread")
_VALIDATED_TEXTS: set[str] = set()  # schema path + digest of contents already found valid

ALWAYS_PRESENT = ("method", "direction", "mode") + INTEGER_VARIABLES + PAYLOAD_VARIABLES + (
    "sms_used", "iterations", "samples", "gbps_per_sm", "pct_of_peak", "overlap", "verified", "status", "error")


@dataclass
class ResultSet:
    """One loaded results file."""

    path: Path
    document: dict
    system: SystemInfo
    rows: pd.DataFrame
    name: str  # the series name in figures and tables: meta.label, made unique across files

    @property
    def incomplete(self) -> bool:
        return bool(self.document.get("incomplete"))


def flatten_row(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{'bandwidth_gbps': {'median': 1}} -> {'bandwidth_gbps_median': 1}; lists of numbers stay
    lists; lists of objects become <field>_<index>_<subfield>."""
    flat: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten_row(value, prefix=f"{name}_"))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for index, item in enumerate(value):
                flat.update(flatten_row(item, prefix=f"{name}_{index}_"))
        elif isinstance(value, list):
            flat[name] = list(value)
        elif value is None and (key in STATS_FIELDS or key in OPTIONAL_STATS_FIELDS or key in TAIL_STATS):
            continue  # its <field>_<stat> columns stay empty
        else:
            flat[name] = value
    return flat


def is_sample_column(column: str) -> bool:
    """samples_gbps, samples_us, samples_issue_interval_us, directions_0_samples_gbps, ..."""
    return bool(SAMPLE_COLUMN.fullmatch(column))


def _optional_stats_columns(columns: Iterable[str]) -> list[str]:
    """issue_interval_us_min ... atomic_ops_per_s_stdev among `columns`, field by field, each
    field's statistics in one order (the driver writes their keys alphabetically)."""
    columns = set(columns)
    return [f"{field}_{stat}" for field in OPTIONAL_STATS_FIELDS for stat in STAT_ORDER
            if f"{field}_{stat}" in columns]


def tail_columns(columns: Iterable[str]) -> list[str]:
    """The TAIL_STATS columns among `columns`, in their order (latency_us_p50 ...
    iteration_time_us_max)."""
    columns = set(columns)
    return [f"{field}_{stat}" for field, stats in TAIL_STATS.items() for stat in stats
            if f"{field}_{stat}" in columns]


def _integer_only_fields(records: list[dict]) -> set[str]:
    """Fields whose every value is an integer (e.g. directions_0_src_rank): kept integral
    (nullable Int64) rather than turned into floats by the rows that lack them."""
    integral: set[str] = set()
    other: set[str] = set()
    for record in records:
        for key, value in record.items():
            if value is None:
                continue
            (integral if isinstance(value, int) and not isinstance(value, bool) else other).add(key)
    return integral - other


def rows_frame(results: list[dict]) -> pd.DataFrame:
    """The DataFrame of a document's `results` (see the module docstring)."""
    records = []
    for index, row in enumerate(results):
        flat = flatten_row(without_group_fields(row)) if is_group_row(row) else flatten_row(row)
        if is_group_row(row):
            flat.update(group_columns(row, flatten_row))
        flat["metric"] = metric_name_of(row)
        flat["row_index"] = index
        records.append(flat)
    sample_columns = list(dict.fromkeys(list(SAMPLE_FIELDS) + [k for flat in records for k in flat
                                                               if is_sample_column(k)]))
    for flat in records:  # a row without a sample list has none: [], as in the CSV
        for column in sample_columns:
            flat.setdefault(column, [])
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
    expected = list(ALWAYS_PRESENT) + [f"{f}_{s}" for f, stats in STATS_FIELDS.items() for s in stats]
    for column in expected + list(SAMPLE_FIELDS) + ["metric", "row_index"]:
        if column not in frame.columns:
            frame[column] = pd.Series([None] * len(frame), dtype=object)
    for column in (set(INTEGER_FIELDS) | _integer_only_fields(records)) & set(frame.columns):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    for field, stats in STATS_FIELDS.items():
        for stat in stats:
            frame[f"{field}_{stat}"] = pd.to_numeric(frame[f"{field}_{stat}"], errors="coerce").astype("float64")
    group_floats = [c for c in ("aggregate_peak_gbps", "aggregate_pct_of_peak") if c in frame.columns]
    for column in ["gbps_per_sm", "pct_of_peak", "overlap"] + group_floats + _optional_stats_columns(frame.columns):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    tails = tail_columns(frame.columns)
    for column in tails:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(
            "Int64" if column.endswith("_count") else "float64")
    top_level_samples = [c for c in sample_columns if not c.startswith("directions_")]  # those stay by their direction
    ordered = list(ALWAYS_PRESENT) + expected + tails + _optional_stats_columns(frame.columns) + top_level_samples
    leading = list(dict.fromkeys(c for c in ordered if c in frame.columns))
    return frame[leading + [c for c in frame.columns if c not in leading]]


def read_document(path: str | Path) -> dict:
    """Parses and validates a results file (schema, and statistics against the raw samples:
    consistency.py); InputError (naming file and field) otherwise. A name ending in .gz is read
    through gzip (large results committed compressed)."""
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as compressed:
                text = compressed.read()
        else:
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as error:
        raise InputError(path, f"cannot read the file ({error.strerror})") from None
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError):
        raise InputError(path, "not a text file (expected p2pbench's JSON results)") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(path, f"not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}") from None
    digest = f"{schema_path()}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"
    if digest not in _VALIDATED_TEXTS:  # validation is the slow part of loading a large file
        validate(document, path)
        check_statistics(document, str(path))
        _VALIDATED_TEXTS.add(digest)
    return document


def load_results(path: str | Path) -> ResultSet:
    document = read_document(path)
    system = describe_system(document["meta"])
    return ResultSet(Path(path), document, system, rows_frame(document["results"]), name=system.label)


def load_many(paths: Iterable[str | Path]) -> list[ResultSet]:
    """Loads several files; series names are their labels, with the file name added where two
    files share a label."""
    sets = [load_results(p) for p in paths]
    labels = [s.system.label for s in sets]
    for result_set in sets:
        if labels.count(result_set.system.label) > 1:
            result_set.name = f"{result_set.system.label} [{result_set.path.name}]"
    names = [s.name for s in sets]
    for index, result_set in enumerate(sets):  # the same file given twice
        if names.count(result_set.name) > 1:
            result_set.name = f"{result_set.name} #{index + 1}"
    return sets
