#!/usr/bin/env python3
"""Every committed results file that claims a commit names one of this repository's history that
holds the methods its rows use; every other one says it cannot be traced.

Usage: trace.py [--root REPO]

The commit a file claims: `meta.provenance.commit` (written at build time since p2pbench recorded
provenance, or the commit a COMMANDS.md beside an older file records: `origin` "COMMANDS.md",
whose `quote` must stand in its `recorded_in`), else `meta.tool.git_sha` (older files, 12 digits).
It must be a commit (`git rev-parse --verify SHA^{commit}`) in the history of HEAD (so that every
full clone has it), and every method of the file's rows must be registered there: its name in
quotes in that commit's src/ (`git grep -F '"NAME"' SHA -- src`: the registry's
P2PBENCH_REGISTER_METHOD lines, earlier the method tables).
Accepted without a commit: `meta.provenance` "unknown" (the file is marked as not traceable, and
scripts/docs-figures refuses figures from it), a build-time record whose commit is "unknown" (the
binary was built without git or PROVENANCE.json), and files imported from other tools
(`meta.config.imported_from`) whose `source_file` lies beside them. A file with no commit that is
not marked fails.

Exit: 0 every file traced or marked; 1 a file is not; 77 (CTest: skipped) where the commits
cannot be looked up: no git, no repository at REPO (a copy without .git), or a shallow clone.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from committed import committed  # noqa: E402

SKIP = 77
HEX = re.compile(r"^[0-9a-f]{7,40}$")


class CannotLookUp(Exception):
    """The commits cannot be looked up here: the reason."""


@dataclass
class Claim:
    path: str
    commit: str | None = None      # as written
    source: str = ""               # which field named it
    methods: list[str] = field(default_factory=list)
    accepted: str | None = None    # why a file without a commit is accepted
    problem: str | None = None
    dirty: bool = False


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise CannotLookUp(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result


def usable_history(root: Path) -> None:
    """Raises CannotLookUp unless ROOT is the top of a complete git checkout."""
    if shutil.which("git") is None:
        raise CannotLookUp("git is not installed")
    top = git(root, "rev-parse", "--show-toplevel", check=False)
    if top.returncode != 0:
        raise CannotLookUp(f"{root} is not a git checkout (a copy without .git?): {top.stderr.strip()}")
    if Path(top.stdout.strip()).resolve() != root.resolve():
        raise CannotLookUp(f"{root} is not the top of a git checkout (it lies inside {top.stdout.strip()}, "
                           "another repository)")
    if git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        raise CannotLookUp(f"{root} is a shallow clone: the commits before its depth are missing "
                           "(git fetch --unshallow)")


def normalized(text: str) -> str:
    return " ".join(text.split())


def claim_of(root: Path, path: str, document: dict) -> Claim:
    meta = document.get("meta") if isinstance(document.get("meta"), dict) else {}
    rows = document.get("results") if isinstance(document.get("results"), list) else []
    methods = sorted({row["method"] for row in rows if isinstance(row, dict) and isinstance(row.get("method"), str)})
    claim = Claim(path, methods=methods)
    record = meta.get("provenance")
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    tool = meta.get("tool") if isinstance(meta.get("tool"), dict) else {}
    if record == "unknown":
        claim.accepted = 'marked meta.provenance "unknown"'
    elif isinstance(config.get("imported_from"), str):
        source = config.get("source_file")
        beside = Path(path).parent / str(source)
        if isinstance(source, str) and source and (root / beside).is_file():
            claim.accepted = f"imported from {config['imported_from']} ({beside.as_posix()})"
        else:
            claim.problem = (f"imported from {config['imported_from']}, but its source_file {source!r} is not "
                             "beside it")
    elif isinstance(record, dict) and record.get("origin") == "COMMANDS.md":
        claim.commit, claim.source = record.get("commit"), "meta.provenance (COMMANDS.md)"
        recorded_in, quote = record.get("recorded_in"), record.get("quote")
        try:
            text = (root / str(recorded_in)).read_text(encoding="utf-8")
        except OSError as error:
            claim.problem = f"meta.provenance.recorded_in {recorded_in!r}: cannot read ({error.strerror})"
            return claim
        if not isinstance(quote, str) or not quote.strip() or normalized(quote) not in normalized(text):
            claim.problem = f"meta.provenance.quote {quote!r} is not in {recorded_in}"
    elif isinstance(record, dict):
        claim.commit, claim.source = record.get("commit"), "meta.provenance.commit"
        claim.dirty = record.get("dirty") is True
        if claim.commit == "unknown":
            claim.commit, claim.accepted = None, "built without git or PROVENANCE.json (meta.provenance.commit \"unknown\")"
    else:
        claim.commit, claim.source = tool.get("git_sha"), "meta.tool.git_sha"
    if claim.accepted or claim.problem:
        return claim
    if not isinstance(claim.commit, str) or claim.commit in ("", "unknown"):
        claim.problem = (f"no commit ({claim.source} {claim.commit!r}): mark it meta.provenance \"unknown\", or give "
                         "it the commit a COMMANDS.md beside it records")
    elif not HEX.match(claim.commit):
        claim.problem = f"{claim.source} {claim.commit!r} is not a commit hash"
    return claim


def found_methods(root: Path, commit: str, methods: set[str]) -> set[str]:
    """Those of `methods` whose name stands in quotes in src/ of `commit`."""
    if not methods:
        return set()
    patterns = [arg for name in sorted(methods) for arg in ("-e", f'"{name}"')]
    result = git(root, "grep", "-h", "-o", "-F", *patterns, commit, "--", "src", check=False)
    if result.returncode not in (0, 1):  # 1: none found
        raise CannotLookUp(f"git grep in {commit} failed: {result.stderr.strip()}")
    return {line.strip().strip('"') for line in result.stdout.splitlines()} & methods


def trace(root: Path) -> list[Claim]:
    """Every committed results file's claim, checked; raises CannotLookUp."""
    usable_history(root)
    claims = [claim_of(root, file.path, file.document) for file in committed(root) if file.is_results
              and isinstance(file.document, dict)]
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    needed: dict[str, set[str]] = defaultdict(set)
    resolved: dict[str, str | None] = {}
    for claim in claims:
        if claim.problem or claim.accepted:
            continue
        if claim.commit not in resolved:
            found = git(root, "rev-parse", "--verify", "--quiet", f"{claim.commit}^{{commit}}", check=False)
            full = found.stdout.strip() if found.returncode == 0 else None
            if full and git(root, "merge-base", "--is-ancestor", full, head, check=False).returncode != 0:
                full = ""
            resolved[claim.commit] = full
        full = resolved[claim.commit]
        if full is None:
            claim.problem = f"{claim.source} {claim.commit}: no such commit in this repository"
        elif full == "":
            claim.problem = f"{claim.source} {claim.commit}: not in the history of HEAD (a clone may lack it)"
        else:
            needed[full] |= set(claim.methods)
    found = {full: found_methods(root, full, methods) for full, methods in needed.items()}
    for claim in claims:
        if claim.problem or claim.accepted:
            continue
        full = resolved[claim.commit]
        missing = [m for m in claim.methods if m not in found[full]]
        if missing:
            claim.problem = (f"{claim.source} {claim.commit} has no method {', '.join(missing)} (no \"{missing[0]}\" "
                             f"in its src/): that commit is not the code that wrote these rows")
    return claims


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        claims = trace(root)
    except CannotLookUp as error:
        print(f"SKIPPED: the commits of the committed results files cannot be looked up: {error}", flush=True)
        log = os.environ.get("P2PBENCH_SKIP_LOG")
        if log:
            with open(log, "a") as f:
                f.write(f"committed_results_traceable: {error}\n")
        return SKIP
    traced = [c for c in claims if not c.problem and not c.accepted]
    for claim in claims:
        if claim.problem:
            print(f"FAIL {claim.path}: {claim.problem}")
    for claim in claims:
        if claim.accepted:
            print(f"not traced {claim.path}: {claim.accepted}")
    commits = sorted({c.commit for c in traced})
    print(f"{len(claims)} results files: {len(traced)} traced to {len(commits)} commits "
          f"({sum(1 for c in traced if c.dirty)} of them built from a changed tree), "
          f"{sum(1 for c in claims if c.accepted)} not traced and saying so, "
          f"{sum(1 for c in claims if c.problem)} failing")
    if not claims:
        print(f"FAIL: no results files found under {root / 'results'}")
        return 1
    return 1 if any(c.problem for c in claims) else 0


if __name__ == "__main__":
    sys.exit(main())
