"""The files a block cites and the values a marker reads from one of them.

A block cites a file or folder by a `results/...` path or by a name in code quotes that exists
under results/ (`default.json`, `hbm-stream-v3/`, `groups/summary.txt`); paths of the other
top-level folders (configs/, schema/, ...) are not results. A results file is read into the
report tool's row frame, and gives no figures unless its `incomplete` is false; any other file is
text, read with a marker's `match` pattern.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from p2pbench_report.loader import rows_frame

RESULTS_PATH = re.compile(r"(?<![\w/.-])results/[\w./-]*[\w/]")
CODE = re.compile(r"`([^`\s]+)`")
COMMENT = re.compile(r"<!--.*?-->", re.S)
OTHER_FOLDERS = ("configs/", "schema/", "scripts/", "src/", "tests/", "docs/", "expectations/", "kernels/",
                 "tools/", "cmake/", "build")


class SourceError(Exception):
    """A marker's file cannot give a value (missing, unreadable, incomplete, no such row)."""


class Repository:
    """The repository's results tree: what names resolve to and the loaded files."""

    def __init__(self, root: Path):
        self.root = root
        self._paths = sorted(str(p.relative_to(root)) + ("/" if p.is_dir() else "")
                             for p in (root / "results").rglob("*"))

    def resolve(self, cited: str) -> list[str]:
        """The results paths (files, or folders ending in /) a cited name stands for."""
        cited = cited.rstrip(".,;:)")
        if cited.startswith(OTHER_FOLDERS) or not cited.strip("/"):
            return []
        # A file is also found compressed: `one-gpu.json` names one-gpu.json.gz.
        forms = (cited, cited + ".gz") if not cited.endswith("/") else (cited,)
        if cited.startswith("results/"):
            return [p for p in self._paths if p in forms or p == cited.rstrip("/") + "/"]
        return [p for p in self._paths if p.endswith(tuple("/" + f for f in forms))]

    def citations(self, text: str) -> list[str]:
        """Every results path a block's text names."""
        text = COMMENT.sub("", text)  # a marker's file= is no citation
        names = RESULTS_PATH.findall(text) + [m for m in CODE.findall(text) if not m.startswith("results/")]
        return sorted({path for name in names for path in self.resolve(name)})

    def results(self, path: str) -> "ResultsFile":
        return _load(self.root / path)

    def text(self, path: str) -> str:
        return _read_text(self.root / path)


@dataclass(frozen=True)
class ResultsFile:
    document: dict
    rows: pd.DataFrame  # the report tool's row frame (p2pbench_report.loader.rows_frame)


@lru_cache(maxsize=None)
def _load(path: Path) -> ResultsFile:
    """The document and its rows. Not validated against the schema here (the report's and the
    schema's tests validate every committed file; validation would make this check minutes long)."""
    try:
        document = json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise SourceError(f"not JSON: {error.msg} at line {error.lineno}") from None
    if not (isinstance(document, dict) and isinstance(document.get("schema_version"), int)
            and isinstance(document.get("results"), list)):
        raise SourceError("not a p2pbench results file (no schema_version and results): use match= for text")
    if document.get("incomplete") is not False:
        progress = document.get("progress") or {}
        raise SourceError(f"{path.name} is incomplete ({progress.get('cases_done', '?')} of "
                          f"{progress.get('cases_total', '?')} cases): cite a complete file")
    return ResultsFile(document, rows_frame(document["results"]))


@lru_cache(maxsize=None)
def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SourceError(f"{path}: cannot read ({error.strerror})") from None
    try:
        return (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        raise SourceError(f"{path}: not a text file") from None
