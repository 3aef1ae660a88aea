"""For a number without a marker: the rows of the files its block cites whose statistics round to
it, so that writing the marker is a matter of choosing one (an author's aid, never a check)."""

from __future__ import annotations

import pandas as pd

from docs_figures.check import check_page
from docs_figures.sources import Repository, SourceError
from docs_figures.tokens import rounds_to
from p2pbench_report.cases import INDEPENDENT_VARIABLES, GROUP_VARIABLES

STAT_SUFFIXES = ("_median", "_min", "_max", "_mean", "_p95", "pct_of_peak", "_pct")
SCALES = (1.0, 1000.0)  # µs as µs, µs as ns
MOST = 6  # candidates shown per number and file


def suggestions(repo: Repository, name: str, text: str) -> list[str]:
    lines = []
    for token, cited in check_page(repo, name, text).unmarked:
        line = text.count("\n", 0, token.start) + 1
        for path in _files(repo, cited):
            found = sorted(_candidates(repo, path, token.low), key=lambda f: "_median=" not in f)
            lines += [f"{name}:{line}: {token.text} ~ {path} {f}" for f in found[:MOST]]
    return lines


def _files(repo: Repository, cited: list[str]) -> list[str]:
    """The cited files, and the files under the cited folders."""
    found = []
    for path in cited:
        if path.endswith("/"):
            found += sorted(str(p.relative_to(repo.root)) for p in (repo.root / path).rglob("*.json*"))
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def _candidates(repo: Repository, path: str, written: str) -> list[str]:
    if not path.endswith((".json", ".json.gz")):
        return []
    try:
        rows = repo.results(path).rows
    except SourceError:
        return []
    columns = [c for c in rows.columns if c.endswith(STAT_SUFFIXES) and pd.api.types.is_float_dtype(rows[c])]
    found = []
    for _, row in rows.iterrows():
        for column in columns:
            for scale in SCALES:
                value = row[column]
                if pd.notna(value) and rounds_to(value * scale, written):
                    found.append(f"{_identity(row)} {column}={value:.6g}" + (f" scale={scale:g}" if scale != 1 else ""))
    return found


def _identity(row: pd.Series) -> str:
    names = [n for n in INDEPENDENT_VARIABLES + GROUP_VARIABLES if n in row.index]
    return " ".join(f"{n}={row[n]}" for n in names if not (row[n] is None or row[n] is pd.NA or
                                                          (isinstance(row[n], float) and pd.isna(row[n]))))
