"""CSV export for spreadsheets: one row per case, one column per field.

Columns are the loader's (see loader.py): independent variables first, statistics flattened
(bandwidth_gbps_median, latency_us_p95, issue_interval_us_median, atomic_ops_per_s_median, ...),
bidir per-direction figures as directions_<i>_<field>, and raw samples as one column of
';'-joined numbers (samples_gbps, samples_us, samples_issue_interval_us,
directions_0_samples_gbps, ...), written with full precision so that `read_csv` gets back the
same numbers. Integer fields are written as digits and floats by repr (always with '.', 'e',
'inf' or 'nan'), so `read_csv` also gets back which columns are integers.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pandas as pd

from p2pbench_report.cases import INDEPENDENT_VARIABLES
from p2pbench_report.loader import INTEGER_FIELDS, ResultSet, is_sample_column

SAMPLE_SEPARATOR = ";"
LOADER_ONLY_COLUMNS = ("metric", "row_index")
INTEGER_TEXT = re.compile(r"-?[0-9]+")


def _is_sample_column(frame: pd.DataFrame, column: str) -> bool:
    return is_sample_column(column) or bool(frame[column].map(lambda v: isinstance(v, list)).any())


def csv_frame(result_set: ResultSet) -> pd.DataFrame:
    """The loader's rows, made flat: lists joined with ';', loader-only columns dropped."""
    frame = result_set.rows.drop(columns=[c for c in LOADER_ONLY_COLUMNS if c in result_set.rows.columns])
    first = [c for c in INDEPENDENT_VARIABLES if c in frame.columns]
    frame = frame[first + [c for c in frame.columns if c not in first]].copy()
    for column in frame.columns:
        if _is_sample_column(frame, column):
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
    """Reads an exported CSV back: samples as lists of floats, integer fields as Int64."""
    frame = pd.read_csv(path, keep_default_na=True, float_precision="round_trip")
    text = pd.read_csv(path, dtype=str, keep_default_na=True)  # the cells as written
    for column in frame.columns:
        if is_sample_column(column):
            frame[column] = text[column].map(_split_samples)
        elif column in INTEGER_FIELDS or _written_as_integers(text[column]):
            frame[column] = text[column].map(lambda v: int(v) if isinstance(v, str) else pd.NA).astype("Int64")
    return frame
