"""CSV export for spreadsheets: one row per case, one column per field.

Columns are the loader's (see loader.py): independent variables first, statistics flattened
(bandwidth_gbps_median, ...), bidir per-direction figures as directions_<i>_<field>, and raw
samples as one column of ';'-joined numbers (samples_gbps, samples_us,
directions_0_samples_gbps, ...), written with full precision so that `read_csv` gets back the
same numbers.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pandas as pd

from p2pbench_report.cases import INDEPENDENT_VARIABLES
from p2pbench_report.loader import INTEGER_FIELDS, ResultSet

SAMPLE_SEPARATOR = ";"
LOADER_ONLY_COLUMNS = ("metric", "row_index")
DIRECTION_RANK = re.compile(r"directions_\d+_(src|dst)_rank")


def _is_sample_column(frame: pd.DataFrame, column: str) -> bool:
    return column.endswith("samples_gbps") or column.endswith("samples_us") or bool(
        frame[column].map(lambda v: isinstance(v, list)).any())


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


def read_csv(path: str | Path) -> pd.DataFrame:
    """Reads an exported CSV back: samples as lists of floats, integer fields as Int64."""
    frame = pd.read_csv(path, keep_default_na=True, float_precision="round_trip")
    for column in frame.columns:
        if column.endswith("samples_gbps") or column.endswith("samples_us"):
            frame[column] = frame[column].map(
                lambda v: [float(x) for x in str(v).split(SAMPLE_SEPARATOR)] if isinstance(v, str) and v else [])
        elif column in INTEGER_FIELDS or DIRECTION_RANK.fullmatch(column):
            frame[column] = frame[column].astype("Int64")
    return frame
