"""The values a fig marker's keys select from its file (markers.py says what each key means)."""

from __future__ import annotations

import math
import re

import pandas as pd

from docs_figures.markers import AGGREGATES, RESERVED
from docs_figures.sources import Repository, SourceError
from docs_figures.tokens import value_of
from p2pbench_report.units import parse_size

METRIC_FIELDS = {"bandwidth": "bandwidth_gbps", "latency": "latency_us"}


def values_of(repo: Repository, keys: dict[str, str]) -> list[float]:
    """The selected values, scaled; with `agg` one value, or one per group of `per`. SourceError
    says what is wrong."""
    if "file" not in keys:
        raise SourceError("no file= (on the marker or a figs default)")
    groups = [group for path in keys["file"].split("+") for group in _groups(repo, path, keys)]
    scale = float(keys.get("scale", 1))
    groups = [[v * scale for v in group] for group in groups]
    how = keys.get("agg")
    if how is None:
        if "per" in keys:
            raise SourceError("per= needs agg= (what to make of each group)")
        return [v for group in groups for v in group]
    if how not in AGGREGATES:
        raise SourceError(f"agg={how}: one of {', '.join(AGGREGATES)}")
    if "per" not in keys:
        groups = [[v for group in groups for v in group]]
    return [_aggregate(how, group) for group in groups]


def _aggregate(how: str, values: list[float]) -> float:
    return {"mean": sum(values) / len(values), "min": min(values), "max": max(values), "sum": sum(values)}[how]


def _groups(repo: Repository, path: str, keys: dict[str, str]) -> list[list[float]]:
    """One file's values: one list, or one per group of the `per` columns."""
    if "match" in keys:
        return [_matched(_between(repo.text(path), keys), keys["match"])]
    if "json" in keys:
        return [_document_values(repo.results(path).document, keys["json"])]
    rows, column = _selected_rows(repo, path, keys)
    if "per" not in keys:
        return [rows[column].astype(float).tolist()]
    by = keys["per"].split("+")
    unknown = [c for c in by if c not in rows.columns]
    if unknown:
        raise SourceError(f"per={keys['per']}: no column {', '.join(unknown)}")
    return [group[column].astype(float).tolist() for _, group in rows.groupby(by, dropna=False, sort=True)]


def _between(text: str, keys: dict[str, str]) -> str:
    """The part of a text file after the first line matching `after` and before the next
    matching `before` (sections of a log: after="^## Call 5")."""
    for key, keep_after in (("after", True), ("before", False)):
        if key in keys:
            found = re.search(keys[key], text, re.M)
            if not found:
                raise SourceError(f"{key}={keys[key]!r} finds nothing in the file")
            text = text[found.end():] if keep_after else text[:found.start()]
    return text


def _matched(text: str, pattern: str) -> list[float]:
    try:
        found = [next((g for g in m.groups() if g is not None), None) for m in re.finditer(pattern, text, re.M)]
    except re.error as error:
        raise SourceError(f"match={pattern!r}: {error}") from None
    if not found or None in found:
        raise SourceError(f"match={pattern!r} finds nothing in the file (or no group of it takes part)")
    return [value_of(v) for v in found]


def _document_values(document: dict, path: str) -> list[float]:
    """The numbers at a dotted path of the document; `*` takes every item of a list."""
    values = [document]
    for part in path.split("."):
        found = []
        for value in values:
            if part == "*" and isinstance(value, list):
                found += value
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                found.append(value[int(part)])
            elif isinstance(value, dict) and part in value:
                found.append(value[part])
            else:
                raise SourceError(f"json={path}: the document has no {part!r} there")
        values = found
    bad = [v for v in values if not isinstance(v, (int, float)) or isinstance(v, bool)]
    if bad or not values:
        raise SourceError(f"json={path} is {bad[0] if bad else 'empty'!r}, not a number")
    return [float(v) for v in values]


def _selected_rows(repo: Repository, path: str, keys: dict[str, str]) -> tuple[pd.DataFrame, str]:
    """The rows the column keys select, and the column holding the figure (every row has it)."""
    rows = repo.results(path).rows
    for key, wanted in keys.items():
        if key in RESERVED:
            continue
        if key not in rows.columns:
            raise SourceError(f"{key}= is no column of the file's rows")
        rows = rows.loc[rows[key].map(_matcher(key, wanted, rows[key])).astype(bool)]
    described = " ".join(f"{k}={v}" for k, v in keys.items() if k not in RESERVED)
    if rows.empty:
        raise SourceError(f"no row with {described}")
    column = _column(rows, keys)
    missing = [int(i) for i, v in zip(rows["row_index"], rows[column]) if v is None or pd.isna(v)]
    if missing:
        raise SourceError(f"row(s) {missing} ({described}) have no {column} (status "
                          f"{', '.join(sorted(set(rows['status'].astype(str))))})")
    return rows, column


def _matcher(key: str, wanted: str, column: pd.Series):
    """Whether a cell holds one of the comma-separated wanted values, read as the column's type."""
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    choices = []
    for text in wanted.split("+"):
        if text == "null":
            choices.append(None)
        elif numeric:
            try:
                choices.append(float(parse_size(text) if key.endswith("bytes") else float(text)))
            except ValueError:
                raise SourceError(f"{key}={text}: not a number") from None
        else:
            choices.append(text)

    def matches(cell) -> bool:
        if cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell)):
            return None in choices
        return (float(cell) if numeric else str(cell).lower() if isinstance(cell, bool) else str(cell)) in choices
    return matches


def _column(rows: pd.DataFrame, keys: dict[str, str]) -> str:
    stat = keys.get("stat", "median")
    field = keys.get("field")
    if field is None:
        metrics = set(rows["metric"].dropna())
        if len(metrics) != 1 or next(iter(metrics)) not in METRIC_FIELDS:
            raise SourceError(f"the rows' metric is {sorted(metrics) or 'none'}: say field=")
        field = METRIC_FIELDS[next(iter(metrics))]
    for column in (f"{field}_{stat}", field):
        if column in rows.columns:
            return column
    raise SourceError(f"field={field} stat={stat}: no column {field}_{stat} or {field}")
