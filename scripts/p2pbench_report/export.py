"""CSV export for spreadsheets: one row per case, one column per field.

Columns are the loader's (see loader.py): independent variables first, statistics flattened
(bandwidth_gbps_median, latency_us_p95, issue_interval_us_median, atomic_ops_per_s_median, ...),
bidir per-direction figures as directions_<i>_<field>, and raw samples as one column of
';'-joined numbers (samples_gbps, samples_us, samples_issue_interval_us,
directions_0_samples_gbps, ...), written with full precision so that `read_csv` gets back the
same numbers. Integer fields are written as digits and floats by repr (always with '.', 'e',
'inf' or 'nan'), so `read_csv` also gets back which columns are integers.

After the independent variables come the columns that say where a row was measured, so that
files of several clusters stack into one table (IDENTITY_COLUMNS): label (meta.label), host (the
source rank's host; both hosts joined with ';' where a bidir row's ranks differ), the source and
destination GPU's name, UUID and PCI bus id (a bidir row: rank 0 -> rank 1, the pair; a host-link
row: the GPU on both sides), the GPU driver version, gpu_uuids (every GPU the row's flows touch,
sources and destinations in flow order, once each, ';'-joined) and same_gpu ("true" when every
flow stays within one GPU, two ranks sharing it: its figure is that GPU's memory bandwidth, not
P2P; "false" when none does; "mixed"; row_gpus.py decides).

Version 2 rows (docs/groups.md) add pattern, schedule and round after those, and their per-flow
and per-GPU lists (flows_src_rank, flows_src_gpu, flows_bandwidth_gbps_median, gpus_uuid, ...:
group_rows.py) as ';'-joined cells (a null item is written `null`), read back as lists; a row of
several flows names the pair of its first flow in the src_/dst_ identity columns, and every GPU
of its flows in gpu_uuids.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pandas as pd

from p2pbench_report.cases import INDEPENDENT_VARIABLES
from p2pbench_report.group_rows import is_list_column
from p2pbench_report.loader import INTEGER_FIELDS, ResultSet, is_sample_column
from p2pbench_report.row_gpus import row_gpus

SAMPLE_SEPARATOR = ";"
LOADER_ONLY_COLUMNS = ("metric", "row_index")
IDENTITY_COLUMNS = ("label", "host", "src_gpu_name", "src_gpu_uuid", "src_gpu_pci_bus_id", "dst_gpu_name",
                    "dst_gpu_uuid", "dst_gpu_pci_bus_id", "driver_version", "gpu_uuids", "same_gpu")
INTEGER_TEXT = re.compile(r"-?[0-9]+")
GROUP_COLUMNS = ("pattern", "schedule", "round")  # version 2: after the identity columns


def _is_sample_column(frame: pd.DataFrame, column: str) -> bool:
    return not is_list_column(column) and (
        is_sample_column(column) or bool(frame[column].map(lambda v: isinstance(v, list)).any()))


def _list_cell(values) -> str:
    """A per-flow list as text: numbers by repr, booleans as true/false, None as null."""
    if not isinstance(values, list):
        return ""

    def item(value) -> str:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        return repr(float(value)) if isinstance(value, float) else str(value)

    return SAMPLE_SEPARATOR.join(item(v) for v in values)


def _list_items(text) -> list:
    """_list_cell read back: integers, floats, booleans, text, null (None)."""
    if not isinstance(text, str) or not text:
        return []

    def value(item: str):
        if item == "null":
            return None
        if item in ("true", "false"):
            return item == "true"
        if INTEGER_TEXT.fullmatch(item):
            return int(item)
        try:
            return float(item)
        except ValueError:
            return item

    return [value(item) for item in text.split(SAMPLE_SEPARATOR)]


def _by_rank(entries) -> dict:
    return {e.get("rank"): e for e in entries or [] if isinstance(e, dict)}


def _rank_pair(row: dict) -> tuple:
    """(source rank, destination rank) of a row; a bidir row's pair from its first direction, else 0 -> 1."""
    if row.get("src_rank") is not None or row.get("dst_rank") is not None:
        return row.get("src_rank"), row.get("dst_rank")
    directions = row.get("directions") or row.get("flows") or []
    first = directions[0] if directions and isinstance(directions[0], dict) else {}
    return first.get("src_rank", 0), first.get("dst_rank", 1)


def identity_of(meta: dict, row: dict) -> dict[str, object]:
    """The IDENTITY_COLUMNS of one results row (None where the file does not say)."""
    gpus, ranks = _by_rank(meta.get("gpus")), _by_rank(meta.get("ranks"))
    src, dst = _rank_pair(row)
    src_gpu, dst_gpu = gpus.get(src, {}), gpus.get(dst, {})
    hosts = list(dict.fromkeys(ranks[r]["host"] for r in (src, dst) if r in ranks and ranks[r].get("host")))
    if not hosts and len(meta.get("hosts") or []) == 1:
        hosts = list(meta["hosts"])
    if row.get("mode") == "uni" and hosts:
        hosts = hosts[:1]  # a one-way row: the source's host
    gpus = row_gpus(meta, row)
    return {
        "label": meta.get("label"), "host": ";".join(hosts) or None,
        "src_gpu_name": src_gpu.get("name"), "src_gpu_uuid": src_gpu.get("uuid"),
        "src_gpu_pci_bus_id": src_gpu.get("pci_bus_id"), "dst_gpu_name": dst_gpu.get("name"),
        "dst_gpu_uuid": dst_gpu.get("uuid"), "dst_gpu_pci_bus_id": dst_gpu.get("pci_bus_id"),
        "driver_version": src_gpu.get("driver_version") or dst_gpu.get("driver_version"),
        "gpu_uuids": SAMPLE_SEPARATOR.join(gpus.uuids) or None, "same_gpu": gpus.same_gpu,
    }


def csv_frame(result_set: ResultSet) -> pd.DataFrame:
    """The loader's rows, made flat: identity columns added, lists joined with ';', loader-only
    columns dropped."""
    frame = result_set.rows.drop(columns=[c for c in LOADER_ONLY_COLUMNS if c in result_set.rows.columns])
    meta, rows = result_set.document["meta"], result_set.document["results"]
    identities = pd.DataFrame([identity_of(meta, rows[i]) for i in result_set.rows["row_index"]],
                              index=frame.index, columns=list(IDENTITY_COLUMNS), dtype=object)
    frame = pd.concat([frame.drop(columns=[c for c in IDENTITY_COLUMNS if c in frame.columns]), identities], axis=1)
    first = [c for c in INDEPENDENT_VARIABLES if c in frame.columns] + list(IDENTITY_COLUMNS)
    first += [c for c in GROUP_COLUMNS if c in frame.columns]
    frame = frame[first + [c for c in frame.columns if c not in first]].copy()
    for column in frame.columns:
        if is_list_column(column):
            frame[column] = frame[column].map(_list_cell)
        elif _is_sample_column(frame, column):
            frame[column] = frame[column].map(
                lambda v: SAMPLE_SEPARATOR.join(repr(float(x)) for x in v) if isinstance(v, list) else "")
        elif frame[column].dtype == "float64":  # repr: the shortest text that reads back exactly
            frame[column] = frame[column].map(lambda v: "" if pd.isna(v) else repr(float(v))).astype(object)
    return frame


def write_csv(result_set: ResultSet, destination: str | Path) -> None:
    """Writes the CSV to a file, or to standard output for '-'."""
    frame = csv_frame(result_set)
    if str(destination) == "-":
        buffer = io.StringIO()
        frame.to_csv(buffer, index=False)
        sys.stdout.write(buffer.getvalue())
    else:
        frame.to_csv(destination, index=False)


def _split_samples(text) -> list[float]:
    return [float(x) for x in text.split(SAMPLE_SEPARATOR)] if isinstance(text, str) and text else []


def _written_as_integers(text: pd.Series) -> bool:
    """True for a column of digits (an integer field such as hot_addresses or
    directions_0_src_rank; empty cells are nulls)."""
    values = text.dropna()
    return not values.empty and bool(values.map(lambda v: bool(INTEGER_TEXT.fullmatch(v))).all())


def read_csv(path: str | Path) -> pd.DataFrame:
    """Reads an exported CSV back: samples as lists of floats, integer fields as Int64, the
    identity columns as text."""
    frame = pd.read_csv(path, keep_default_na=True, float_precision="round_trip")
    text = pd.read_csv(path, dtype=str, keep_default_na=True)  # the cells as written
    verbatim = pd.read_csv(path, dtype=str, keep_default_na=False)  # 'null' stays text (a list's null item)
    for column in frame.columns:
        if column in IDENTITY_COLUMNS:  # names and versions stay text ("999.1" is not a number)
            frame[column] = text[column].astype(object).where(text[column].notna(), None)
        elif is_sample_column(column):
            frame[column] = text[column].map(_split_samples)
        elif is_list_column(column):
            frame[column] = verbatim[column].map(_list_items)
        elif column in INTEGER_FIELDS or _written_as_integers(text[column]):
            frame[column] = text[column].map(lambda v: int(v) if isinstance(v, str) else pd.NA).astype("Int64")
    return frame
