"""What identifies a case (its independent variables), what was measured about it (the metric),
and how cases of several results files are matched.

A case is identified by method, direction, mode, bytes, src_rank, dst_rank, blocks, threads,
unroll, smem_bytes, stages, buffer_pool_bytes (missing means 0: no pool) and the payload
variables of latency and atomic rows: protocol, atomic_type, atomic_pattern, hot_addresses (null,
or absent, elsewhere), and the identity fields methods declare (schema/methods.json's row_fields:
host-link rows' host_memory and host_numa; their defaults, pinned and local, key as absent:
files from before the host axis measured exactly those). An atomic row's ops_per_thread is not among them: with blocks, threads and
atomic_type it fixes `bytes`. Two rows with the same identity in one file are told apart by their order (the 2nd
such row of A matches the 2nd of B).

Imported rows lack what another tool does not record (UNRECORDED): nvbandwidth's SM copy kernel has
no shape p2pbench knows (an `ldst` row with blocks, threads and unroll null) and its pointer chase
no load protocol (a `latency_read` row with protocol null); p2pbench's own rows always carry them.
Such a row matches, in each file without a row of its own there, every case that differs only in
those variables: the SM copy every `ldst` and `tma` shape, the chase every protocol. The case's key
(a CaseKey) then says so in its `note`, which describe_config shows.

Version 2 files (N ranks, docs/groups.md) add three variables to a case's key (GROUP_VARIABLES):
`pattern` and `schedule` (a version 1 row is the matrix, sequential: one pair at a time, as
version 2 numbers its two-rank cases) and `flows`, the case's flows as text. How flows are named
depends on the files compared:
  * by rank (any version 1 file among them): `src_rank`/`dst_rank` as ever, and for a row of
    several flows its flows as "0→2,2→0" (a version 1 bidir row: "0→1,1→0", the only pair it has);
    a single-flow row needs none (its ranks say it);
  * by GPU (every file version 2): the ranks are left out and every row's flows are named by GPU
    UUID ("GPU-a→GPU-b"), so that the same physical pair is matched even where the rank numbering
    differs between the runs. Ranks sharing a GPU give the same name; the occurrence number
    tells such rows apart in order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import pandas as pd

from p2pbench_report.methods import (IDENTITY_DEFAULTS, IDENTITY_FIELDS, IDENTITY_LABELS, LATENCY_METHODS, METHOD_ORDER,
                                     SHAPE_AXES)
from p2pbench_report.units import format_size

PAYLOAD_VARIABLES = ("protocol", "atomic_type", "atomic_pattern", "hot_addresses"
                     ) + IDENTITY_FIELDS  # the methods' own (host link: host_memory, ...; interference: engine, ...)
PAYLOAD_FORMATS = {"hot_addresses": "{} hot addresses",  # a bare number would not say what it counts
                   **IDENTITY_LABELS}
# A method's identity field at its default is the case every file before the field measured (no
# such field): it keys as absent, so old and new files' rows match (host-link: pinned, local).
PAYLOAD_DEFAULTS = dict(IDENTITY_DEFAULTS)
# Likewise a kernel axis at the value every row before the axis ran at (the copy engine's put
# with signal: a signal per chunk, written, a copy call per put).
AXIS_DEFAULTS = {a["name"]: a["value_before_axis"] for a in SHAPE_AXES if a["value_before_axis"] is not None}
# The kernel-shape axes of a row (the registry's ShapeAxis, in its order) and their short labels.
KERNEL_AXES = tuple((a["name"], a["label"]) for a in SHAPE_AXES)
KERNEL_VARIABLES = tuple(name for name, _ in KERNEL_AXES)
BYTE_AXES = tuple(a["name"] for a in SHAPE_AXES if a["counts_bytes"])
INDEPENDENT_VARIABLES = (("method", "direction", "mode", "bytes", "src_rank", "dst_rank") + KERNEL_VARIABLES
                         + ("buffer_pool_bytes",) + PAYLOAD_VARIABLES)
INTEGER_VARIABLES = ("bytes", "src_rank", "dst_rank") + KERNEL_VARIABLES + ("buffer_pool_bytes",)
DIRECTION_ORDER = {"push": 0, "pull": 1}
MODE_ORDER = {"uni": 0, "bidir": 1}
GROUP_VARIABLES = ("pattern", "schedule", "flows")  # version 2 (see the module docstring)
KEY_VARIABLES = INDEPENDENT_VARIABLES + GROUP_VARIABLES
DEFAULT_PATTERN, DEFAULT_SCHEDULE = "matrix", "sequential"
ARROW = "→"


@dataclass(frozen=True)
class Metric:
    """What a row measured: its median column, raw samples column, unit and good direction."""

    name: str
    median_column: str
    samples_column: str
    unit: str
    higher_is_better: bool


BANDWIDTH = Metric("bandwidth", "bandwidth_gbps_median", "samples_gbps", "GB/s", True)
LATENCY = Metric("latency", "latency_us_median", "samples_us", "µs", False)
METRICS = {m.name: m for m in (BANDWIDTH, LATENCY)}


def metric_name_of(row: dict) -> str | None:
    """'bandwidth' when the row has bandwidth statistics, 'latency' when it has latency ones."""
    if isinstance(row.get("bandwidth_gbps"), dict):
        return BANDWIDTH.name
    if isinstance(row.get("latency_us"), dict):
        return LATENCY.name
    if row.get("method") in LATENCY_METHODS:  # a failed latency row has no statistics to tell
        return LATENCY.name
    return BANDWIDTH.name if row.get("status") == "ok" or row.get("samples_gbps") else None


def plain_value(value: Any) -> Any:
    """A hashable, comparable value: pandas NA/NaN -> None, 4096.0 -> 4096."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _list(row: pd.Series | dict, column: str) -> list | None:
    value = row.get(column)
    return list(value) if isinstance(value, (list, tuple)) else None


def flow_ends(row: pd.Series | dict, by_gpu: bool) -> list[tuple] | None:
    """[(source, destination), ...] of a version 2 row's flows, by rank or GPU UUID; None for a
    version 1 row. Reads the loader's flows_<field> lists, or a raw row's `flows`."""
    side = "gpu" if by_gpu else "rank"
    sources, destinations = _list(row, f"flows_src_{side}"), _list(row, f"flows_dst_{side}")
    if sources is None and isinstance(row.get("flows"), list):
        flows = [f for f in row["flows"] if isinstance(f, dict)]
        sources, destinations = [f.get(f"src_{side}") for f in flows], [f.get(f"dst_{side}") for f in flows]
    if sources is None or destinations is None:
        return None
    return [(plain_value(s), plain_value(d)) for s, d in zip(sources, destinations)]


def flows_text(ends: list[tuple]) -> str:
    """'0→2,2→0': the flows in a canonical order."""
    return ",".join(f"{src}{ARROW}{dst}" for src, dst in sorted(ends, key=lambda e: (str(e[0]), str(e[1]))))


def _group_values(row: pd.Series | dict, by_gpu: bool) -> tuple:
    """(pattern, schedule, flows) of the key; see the module docstring."""
    pattern = plain_value(row.get("pattern")) or DEFAULT_PATTERN
    schedule = plain_value(row.get("schedule"))
    if schedule is None and plain_value(row.get("pattern")) is None:
        schedule = DEFAULT_SCHEDULE
    ends = flow_ends(row, by_gpu)
    if by_gpu:
        return pattern, schedule, flows_text(ends) if ends else None
    if ends is None:  # version 1: a bidir row joins ranks 0 and 1 both ways, a uni row is named by its ranks
        return pattern, schedule, flows_text([(0, 1), (1, 0)]) if row.get("mode") == "bidir" else None
    return pattern, schedule, flows_text(ends) if len(ends) > 1 else None


def identity(row: pd.Series | dict, by_gpu: bool = False) -> tuple:
    """The case's variables (KEY_VARIABLES) as a tuple, without the occurrence counter; by_gpu:
    ranks left out, flows named by GPU (every compared file is version 2)."""
    values = [plain_value(row.get(name)) for name in INDEPENDENT_VARIABLES]
    for name, default in {**PAYLOAD_DEFAULTS, **AXIS_DEFAULTS}.items():
        if values[INDEPENDENT_VARIABLES.index(name)] == default:
            values[INDEPENDENT_VARIABLES.index(name)] = None
    pool = INDEPENDENT_VARIABLES.index("buffer_pool_bytes")
    values[pool] = values[pool] or 0
    if by_gpu:
        for name in ("src_rank", "dst_rank"):
            values[INDEPENDENT_VARIABLES.index(name)] = None
    return tuple(values) + _group_values(row, by_gpu)


def add_case_keys(frame: pd.DataFrame, by_gpu: bool = False) -> pd.DataFrame:
    """Adds `case_key` (identity + occurrence number) to a copy of one file's rows."""
    seen: dict[tuple, int] = {}
    keys = []
    for _, row in frame.iterrows():
        base = identity(row, by_gpu)
        seen[base] = seen.get(base, 0) + 1
        keys.append(base + (seen[base],))
    out = frame.copy()
    out["case_key"] = pd.Series(keys, index=frame.index, dtype=object)
    return out


def sort_key(key: tuple) -> tuple:
    """Orders case keys: methods in a fixed order, then push/pull, uni/bidir, then numbers."""
    method, direction, mode = key[:3]
    rank = METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER)
    rest = tuple((v is not None, v if v is not None else 0) if not isinstance(v, str) else (True, 0, v)
                 for v in key[3:])
    return (rank, str(method), DIRECTION_ORDER.get(direction, 9), MODE_ORDER.get(mode, 9)) + rest


MAX_FLOWS_SHOWN = 3


def _short_end(end: str) -> str:
    """A GPU UUID shortened to its first 8 hex digits (group.short_uuid); a rank unchanged."""
    return end[4:12] if end.upper().startswith("GPU-") else end


def _describe_flows(text: str) -> str:
    """'0→2,2→0' as is; GPU UUIDs shortened; more than MAX_FLOWS_SHOWN flows: '12 flows: a→b, ...'."""
    ends = [pair.split(ARROW) for pair in text.split(",")]
    shown = [ARROW.join(_short_end(end) for end in pair) for pair in ends]
    if len(shown) > MAX_FLOWS_SHOWN:
        return f"{len(shown)} flows: {', '.join(shown[:MAX_FLOWS_SHOWN])}, ..."
    return ",".join(shown)


def describe_ranks(key_or_row: tuple | pd.Series) -> str:
    """'0→1', 'host→0', 'both' (a version 1 bidir row), '0→2,2→0' or '3 flows: ...' (version 2
    rows of several flows), GPU UUIDs shortened in keys matched by GPU."""
    src, dst = _variable(key_or_row, "src_rank"), _variable(key_or_row, "dst_rank")
    if src is None and dst is None:
        if isinstance(key_or_row, tuple):
            flows = _variable(key_or_row, "flows")
        else:
            ends = flow_ends(key_or_row, by_gpu=False)
            flows = flows_text(ends) if ends else None
        v1_bidir = flows_text([(0, 1), (1, 0)])
        return _describe_flows(flows) if flows and flows != v1_bidir else "both"
    return f"{'host' if src is None else src}→{'host' if dst is None else dst}"


def describe_config(key_or_row: tuple | pd.Series) -> str:
    """'b132 t1024 u4', 'b8 smem 128K s8', 'pool 4G', 'b32 t256 u32 hot_spot 32 hot addresses',
    'flag_in_data', '' for a copy-engine case."""
    parts = []
    for name, prefix in KERNEL_AXES:
        value = _variable(key_or_row, name)
        if value is not None and value != AXIS_DEFAULTS.get(name):
            parts.append(prefix + (format_size(value) if name in BYTE_AXES else str(value)))
    pool = _variable(key_or_row, "buffer_pool_bytes")
    if pool:
        parts.append(f"pool {format_size(pool)}")
    parts += [PAYLOAD_FORMATS.get(name, "{}").format(value) for name in PAYLOAD_VARIABLES
              if (value := _variable(key_or_row, name)) and value != PAYLOAD_DEFAULTS.get(name)]
    parts += _group_words(key_or_row)
    if isinstance(key_or_row, tuple) and len(key_or_row) > len(KEY_VARIABLES) and key_or_row[-1] > 1:
        parts.append(f"#{key_or_row[-1]}")  # the n-th repetition of a case within one file
    if getattr(key_or_row, "note", ""):
        parts.append(f"({key_or_row.note})")
    return " ".join(parts)


def _group_words(key_or_row: tuple | pd.Series) -> list[str]:
    """'rounds', 'one_to_all', 'matrix alone_check': the pattern and schedule where they are not
    the matrix measured one pair at a time (which every version 1 row is)."""
    pattern = _variable(key_or_row, "pattern") or DEFAULT_PATTERN
    schedule = _variable(key_or_row, "schedule")
    if pattern == DEFAULT_PATTERN:
        return [schedule] if schedule not in (None, DEFAULT_SCHEDULE) else []
    return [pattern] + ([schedule] if schedule else [])


def _variable(key_or_row: tuple | pd.Series, name: str) -> Any:
    if isinstance(key_or_row, tuple):
        return key_or_row[KEY_VARIABLES.index(name)] if len(key_or_row) >= len(KEY_VARIABLES) \
            or name in INDEPENDENT_VARIABLES else None
    return plain_value(key_or_row.get(name))


def describe_case(key: tuple) -> dict[str, str]:
    """Columns that name a case in a table."""
    return {
        "method": key[0], "direction": key[1], "mode": key[2], "size": format_size(key[3]),
        "ranks": describe_ranks(key), "config": describe_config(key),
    }


@dataclass(frozen=True)
class Unrecorded:
    """Variables that every p2pbench row of `method` records but an imported row may lack."""

    method: str
    variables: tuple[str, ...]     # null in the imported row: it did not record them
    ignored: tuple[str, ...]       # variables not compared when matching such a row
    methods: tuple[str, ...]       # methods of the rows it matches
    what: str                      # for the note: "matched ignoring <what>"


UNRECORDED = (Unrecorded("ldst", ("blocks", "threads", "unroll"), KERNEL_VARIABLES, ("ldst", "tma"), "shape"),
              Unrecorded("latency_read", ("protocol",), ("protocol",), ("latency_read",), "load protocol"),
              # nvbandwidth's SM host copies and host pointer chase (importers.py)
              Unrecorded("h2d_sm", ("blocks", "threads", "unroll"), KERNEL_VARIABLES, ("h2d_sm",), "shape"),
              Unrecorded("d2h_sm", ("blocks", "threads", "unroll"), KERNEL_VARIABLES, ("d2h_sm",), "shape"),
              Unrecorded("latency_host", ("protocol",), ("protocol",), ("latency_host",), "load protocol"))


class CaseKey(tuple):
    """A case key (identity + occurrence number) with a note on how rows were matched to it;
    equal to, and hashed as, the plain tuple."""

    note: str = ""


def unrecorded_of(row: pd.Series | dict) -> Unrecorded | None:
    """The Unrecorded entry whose variables the row lacks (an imported row), else None."""
    method = row.get("method")
    for entry in UNRECORDED:
        if method == entry.method and all(plain_value(row.get(name)) is None for name in entry.variables):
            return entry
    return None


def _loose_identity(key: tuple, entry: Unrecorded) -> tuple:
    """The key without the method (where the entry spans several) and the ignored variables."""
    values = list(key[:len(KEY_VARIABLES)])
    values[0] = entry.methods if values[0] in entry.methods else values[0]
    for name in entry.ignored:
        values[INDEPENDENT_VARIABLES.index(name)] = None
    return tuple(values)


@dataclass
class MatchedCase:
    """One case across several files; rows[i] is file i's row (a Series) or None."""

    key: tuple
    rows: list[pd.Series | None]

    def sums_directions(self) -> bool:
        """Whether a file's bidir figure is the sum of both directions' own figures (nvbandwidth's
        convention, marked by its importer) rather than all bytes over the union of the windows."""
        return any(row is not None and row.get("bidir_figure") == SUM_OF_DIRECTIONS for row in self.rows)

    def figure(self, index: int, metric: Metric) -> float | None:
        """File `index`'s median for the case, on the files' common footing: where another file's
        bidir figure is a sum of directions, a p2pbench bidir row gives its directions' sum too."""
        row = self.rows[index]
        value = median_of(row, metric)
        if value is None or metric is not BANDWIDTH or not self.sums_directions() \
                or row.get("bidir_figure") == SUM_OF_DIRECTIONS:
            return value
        total = directions_total(row)
        return total if total is not None else value

    def metric(self) -> Metric | None:
        """The metric of the first file that measured the case."""
        for row in self.rows:
            if row is not None and isinstance(row.get("metric"), str):
                return METRICS[row["metric"]]
        return None


def match_cases(frames: Iterable[pd.DataFrame], by_gpu: bool = False) -> list[MatchedCase]:
    """Matches rows of several files (frames from the loader) on their case keys; sorted. Rows
    that lack UNRECORDED variables fill every case that differs only there (see the module doc).
    by_gpu: flows named by GPU instead of ranks (every file version 2)."""
    indexed, loose = [], []
    for frame in frames:
        keyed = add_case_keys(frame, by_gpu)
        exact, lacking = {}, []
        for key, (_, row) in zip(keyed["case_key"], keyed.iterrows()):
            entry = unrecorded_of(row)
            exact[key] = row
            if entry is not None:
                lacking.append((key, row, entry))
        indexed.append(exact)
        loose.append(lacking)
    all_keys = sorted({key for table in indexed for key in table}, key=sort_key)
    cases = [MatchedCase(CaseKey(key), [table.get(key) for table in indexed]) for key in all_keys]
    return _fill_unrecorded(cases, loose)


def _fill_unrecorded(cases: list[MatchedCase], loose: list[list[tuple]]) -> list[MatchedCase]:
    """Puts each file's rows that lack UNRECORDED variables into the cases of the other files that
    differ only there; such a row stays a case of its own only where it matched none."""
    absorbed = set()
    for index, lacking in enumerate(loose):
        for own_key, row, entry in lacking:
            wanted = _loose_identity(own_key, entry)
            for case in cases:
                if (case.key == own_key or case.rows[index] is not None or unrecorded_of(_first_row(case)) is not None
                        or _loose_identity(case.key, entry) != wanted):
                    continue
                case.rows[index] = row
                case.key.note = f"matched ignoring {'kernel and ' if case.key[0] != entry.method else ''}{entry.what}"
                absorbed.add((index, own_key))
    return [case for case in cases if (_only_row(case), case.key) not in absorbed]


def _first_row(case: MatchedCase) -> pd.Series:
    return next(row for row in case.rows if row is not None)


def _only_row(case: MatchedCase) -> int | None:
    """The index of the file holding the case's only row, else None."""
    present = [index for index, row in enumerate(case.rows) if row is not None]
    return present[0] if len(present) == 1 else None


SUM_OF_DIRECTIONS = "sum_of_directions"


def directions_total(row: pd.Series) -> float | None:
    """A bidir row's two directions' own medians, added (None without both)."""
    values = [plain_value(row.get(f"directions_{i}_bandwidth_gbps_median")) for i in (0, 1)]
    return float(sum(values)) if all(isinstance(v, (int, float)) for v in values) else None


def median_of(row: pd.Series | None, metric: Metric) -> float | None:
    if row is None or row.get("status") != "ok":
        return None
    value = plain_value(row.get(metric.median_column))
    return float(value) if value is not None else None


def samples_of(row: pd.Series | None, metric: Metric) -> list[float]:
    if row is None:
        return []
    values = row.get(metric.samples_column)
    return [float(v) for v in values] if isinstance(values, (list, tuple)) else []
