"""Which source tree a results file came from (meta.provenance, written since p2pbench took its
provenance at build time: docs/results.md, "Provenance"), and whether several files came from one.

A tree is known when the commit is and either the tree was clean or its changes were hashed
(diff_sha256). Files written before meta.provenance have meta.tool.git_sha only: whether their
tree had changes is not known. Files imported from other tools (nvbandwidth, nccl-tests) were not
built from this project and are left out of the comparison of trees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SHORT = 12  # digits of a hash shown (meta.tool.git_sha has 12)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != "unknown" else None


@dataclass(frozen=True)
class Provenance:
    commit: str | None         # full or 12-digit commit; None where not known
    dirty: bool | None         # None: not known
    diff_sha256: str | None
    source_sha256: str | None
    origin: str                # git, PROVENANCE.json, unknown, "git_sha only" (older files), imported,
                               # COMMANDS.md, "marked unknown" (older committed files: docs/results.md)
    stale_stamp: bool = False
    built: str | None = None   # "Release, CUDA 90, GNU 12.2.0 / NVIDIA 12.8.93, 2026-11-28T10:00:00Z"

    @property
    def tree(self) -> tuple[str, str | None] | None:
        """(commit, diff hash or None when clean), or None when the tree is not known."""
        if self.commit is None or self.dirty is None or (self.dirty and self.diff_sha256 is None):
            return None
        return self.commit[:SHORT], self.diff_sha256 if self.dirty else None

    def unknown_reason(self) -> str:
        if self.origin == "marked unknown":
            return 'marked meta.provenance "unknown": its commit cannot be traced'
        if self.origin == "git_sha only":
            return f"written before provenance was recorded: git {self.commit or 'unknown'} only, changes unknown"
        if self.commit is None:
            return "no commit: built without git or PROVENANCE.json"
        if self.stale_stamp:
            return f"{self.commit[:SHORT]} with changes made after PROVENANCE.json was written"
        return f"{self.commit[:SHORT]}, changes not recorded"

    def state(self) -> str:
        """'clean', 'dirty, changes 561f0b794503', 'dirty, changes not recorded', 'unknown'."""
        if self.dirty is None:
            return "unknown"
        if not self.dirty:
            return "clean"
        return f"dirty, changes {self.diff_sha256[:SHORT]}" if self.diff_sha256 else "dirty, changes not recorded"


def _built(record: dict) -> str | None:
    parts = [_text(record.get("build_type")),
             f"CUDA {record['cuda_architectures']}" if _text(record.get("cuda_architectures")) else None,
             " / ".join(c for c in (_text(record.get("cxx_compiler")), _text(record.get("cuda_compiler"))) if c) or None,
             _text(record.get("built_utc"))]
    return ", ".join(p for p in parts if p) or None


def provenance_of(meta: dict) -> Provenance:
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    if isinstance(config.get("imported_from"), str):
        return Provenance(None, None, None, None, f"imported from {config['imported_from']}")
    record = meta.get("provenance")
    if record == "unknown":  # a committed file whose tool.git_sha was not the code that ran, or is missing
        return Provenance(None, None, None, None, "marked unknown")
    if not isinstance(record, dict):
        tool = meta.get("tool") if isinstance(meta.get("tool"), dict) else {}
        return Provenance(_text(tool.get("git_sha")), None, None, None, "git_sha only")
    dirty = record.get("dirty")
    return Provenance(commit=_text(record.get("commit")), dirty=dirty if isinstance(dirty, bool) else None,
                      diff_sha256=_text(record.get("diff_sha256")), source_sha256=_text(record.get("source_sha256")),
                      origin=str(record.get("origin", "unknown")), stale_stamp=record.get("stale_stamp") is True,
                      built=_built(record))


def provenance_fields(meta: dict) -> dict[str, str]:
    """The rows of compare's metadata table: field -> this file's value as text."""
    p = provenance_of(meta)
    if p.origin.startswith("imported"):
        return dict.fromkeys(("commit", "tree", "sources (sha256)", "build"), f"{p.origin} (not a p2pbench build)")
    origin = {"git": "from git", "PROVENANCE.json": "from PROVENANCE.json"}.get(p.origin, p.origin)
    return {
        "commit": f"{p.commit[:SHORT]} ({origin})" if p.commit else f"unknown ({origin})",
        "tree": p.state() if p.origin != "git_sha only" else "unknown (written before provenance was recorded)",
        "sources (sha256)": p.source_sha256[:SHORT] if p.source_sha256 else "not recorded",
        "build": p.built or "not recorded",
    }


def provenance_warning(named_metas: list[tuple[str, dict]]) -> str | None:
    """One sentence when the files' p2pbench builds did not come from one known source tree (a
    commit, or the changes to it, differ, or a tree is not known); None when they did, or when
    their sources hash alike. Imported files are left out."""
    built = [(name, provenance_of(meta)) for name, meta in named_metas]
    built = [(name, p) for name, p in built if not p.origin.startswith("imported")]
    sources = {p.source_sha256 for _, p in built}
    if len(built) < 2 or (None not in sources and len(sources) == 1):
        return None
    problems = []
    unknown = [f"{name} ({p.unknown_reason()})" for name, p in built if p.tree is None]
    if unknown:
        problems.append("tree not known for " + ", ".join(unknown))
    known = [(name, p) for name, p in built if p.tree is not None]
    if len({p.tree[0] for _, p in known}) > 1:
        problems.append("different commits: " + ", ".join(f"{name} {p.tree[0]}" for name, p in known))
    elif len({p.tree for _, p in known}) > 1:
        problems.append(f"commit {known[0][1].tree[0]} with different changes: "
                        + ", ".join(f"{name} {p.state()}" for name, p in known))
    if not problems and None not in sources:  # one tree by every record, yet other sources
        problems.append("different sources: " + ", ".join(f"{name} {p.source_sha256[:SHORT]}" for name, p in built))
    if not problems:
        return None
    return ("WARNING: the files may not come from one source tree, so their figures may differ for that reason "
            "too: " + "; ".join(problems) + ".")
