"""The results files committed under results/ (at any depth, .json and gzip-compressed .json.gz),
shared by validate.py and trace.py.

A JSON document under results/ is a p2pbench results file when it has any of `schema_version`,
`meta` and `results` (a broken results file keeps some of them, and is then checked and fails);
the rest are configs, other tools' output (nvbandwidth, Google Benchmark) and cuFile settings.
A file that is not JSON (or not gzip, for .json.gz) is a problem of its own.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS_KEYS = ("schema_version", "meta", "results")


@dataclass
class Committed:
    path: str              # from the repository root
    document: Any = None   # the parsed JSON; None when it could not be read
    error: str | None = None

    @property
    def is_results(self) -> bool:
        return isinstance(self.document, dict) and any(key in self.document for key in RESULTS_KEYS)

    @property
    def compressed(self) -> bool:
        return self.path.endswith(".gz")


def read(path: Path) -> Any:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.name.endswith(".gz") else raw)


def json_files(root: Path) -> list[Path]:
    folder = root / "results"
    return sorted({*folder.rglob("*.json"), *folder.rglob("*.json.gz")})


def load(root: Path, path: Path) -> Committed:
    name = path.relative_to(root).as_posix()
    try:
        return Committed(name, read(path))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as error:  # gzip.BadGzipFile is an OSError
        return Committed(name, error=f"cannot be read as {'gzip-compressed ' if name.endswith('.gz') else ''}"
                                     f"JSON: {type(error).__name__}: {error}")


def committed(root: Path) -> list[Committed]:
    """Every .json and .json.gz under ROOT/results, read."""
    return [load(root, path) for path in json_files(root)]
