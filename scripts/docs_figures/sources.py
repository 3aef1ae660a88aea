"""The files a block cites and the values a marker reads from one of them.

A block cites a file or folder by a `results/...` path or by a name in code quotes that exists
under results/ (`default.json`, `hbm-stream-v3/`, `groups/summary.txt`); paths of the other
top-level folders (configs/, schema/, ...) are not results. A results file is read into the
report tool's row frame, and gives no figures unless its `incomplete` is false and its commit can
be traced (not `meta.provenance` "unknown": tests/committed_results); any other file is text, read
with a marker's `match` pattern.
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
        _refuse_untraceable(self.root / path)
        return _read_text(self.root / path)

    def untraceable(self, path: str) -> str | None:
        """Why the results file at `path` cannot be traced to a commit, or None (a traceable one,
        a folder, or not a results file)."""
        return untraceable_reason(_document(self.root / path)) if _results_name(path) else None

    def untraceable_citations(self, text: str) -> list[tuple[str, str]]:
        """(path, why) of every results file a block's text names that cannot be traced: a
        `results/...` path, or a name that stands for that one file only."""
        text = COMMENT.sub("", text)
        names = RESULTS_PATH.findall(text) + [m for m in CODE.findall(text) if not m.startswith("results/")]
        found = {}
        for name in names:
            paths = self.resolve(name)
            if len(paths) == 1 and self.untraceable(paths[0]):
                found[paths[0]] = self.untraceable(paths[0])
        return sorted(found.items())


@dataclass(frozen=True)
class ResultsFile:
    document: dict
    rows: pd.DataFrame  # the report tool's row frame (p2pbench_report.loader.rows_frame)


def untraceable_reason(document) -> str | None:
    """Why a results document's figures cannot be traced to the code that made them, or None:
    marked meta.provenance "unknown" (its recorded commit was not the code that ran, or it had
    none), or built without git (meta.provenance.commit "unknown"), or an older file without a
    commit. Files imported from other tools are traced to their source file instead."""
    meta = document.get("meta") if isinstance(document, dict) else None
    if not isinstance(meta, dict):
        return None
    record = meta.get("provenance")
    if record == "unknown":
        return 'marked meta.provenance "unknown": its commit cannot be traced'
    if isinstance(record, dict):
        return 'built without git (meta.provenance.commit "unknown")' if record.get("commit") == "unknown" else None
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    tool = meta.get("tool") if isinstance(meta.get("tool"), dict) else {}
    if not isinstance(config.get("imported_from"), str) and tool.get("git_sha") in (None, "", "unknown"):
        return "no commit recorded (meta.tool.git_sha \"unknown\")"
    return None


def _results_name(path: str) -> bool:
    return path.endswith((".json", ".json.gz"))


@lru_cache(maxsize=None)
def _document(path: Path):
    """The JSON document of a .json or .json.gz file, or None where it is not JSON."""
    try:
        return json.loads(_read_text(path))
    except (SourceError, json.JSONDecodeError):
        return None


def _refuse_untraceable(path: Path) -> None:
    if _results_name(path.name):
        reason = untraceable_reason(_document(path))
        if reason:
            raise SourceError(f"{path.name} cannot be traced to the code that made it ({reason}): cite a "
                              "traceable file")


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
    _refuse_untraceable(path)
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
