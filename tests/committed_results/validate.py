#!/usr/bin/env python3
"""Every results file committed under results/, .json and .json.gz alike, validates against the
schema of its schema_version (schema/results-v1.schema.json, schema/results.schema.json).

Usage: validate.py [--root REPO] [--at-least-json N] [--at-least-gz N]

The validator is the report tool's built-in one (scripts/p2pbench_report/draft7_subset.py), as
fast as this needs; results_schema_jsonschema shows that it and jsonschema give the same verdict
on every committed file. A file under results/ that cannot be read (not JSON, a broken gzip
stream) fails too. So that a glob that finds nothing (or a walk that stops at the top folder)
cannot pass, at least N .json and N .json.gz results files must be found.
Exit: 0 every file valid; 1 an invalid or unreadable file, or too few files found.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from committed import load  # noqa: E402
from committed import json_files  # noqa: E402
from p2pbench_report.schema import BUILT_IN, first_error  # noqa: E402

# Committed when this test was written: 63 .json and 49 .json.gz results files.
AT_LEAST_JSON = 50
AT_LEAST_GZ = 40


def check(args: tuple[Path, Path]) -> tuple[str, str, bool, str | None]:
    """(path, kind: results, other or unreadable, compressed, problem or None) of one file, in a worker."""
    root, path = args
    file = load(root, path)
    if file.error:
        return file.path, "unreadable", file.compressed, file.error
    if not file.is_results:
        return file.path, "other", file.compressed, None
    problem = first_error(file.document, BUILT_IN)
    return file.path, "results", file.compressed, None if problem is None else f"{problem[0]}: {problem[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO)
    parser.add_argument("--at-least-json", type=int, default=AT_LEAST_JSON)
    parser.add_argument("--at-least-gz", type=int, default=AT_LEAST_GZ)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    paths = json_files(root)
    # The largest first, so that the workers end together.
    paths.sort(key=lambda p: -p.stat().st_size)
    workers = max(1, min(4, len(os.sched_getaffinity(0)), len(paths)))
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        checked = sorted(pool.map(check, [(root, p) for p in paths], chunksize=1))
    problems = [(name, problem) for name, _, _, problem in checked if problem]
    kinds = [kind for _, kind, _, _ in checked]
    json_count = sum(1 for _, kind, gz, _ in checked if kind == "results" and not gz)
    gz_count = sum(1 for _, kind, gz, _ in checked if kind == "results" and gz)
    invalid = sum(1 for _, kind, _, problem in checked if kind == "results" and problem)
    for name, problem in problems:
        print(f"INVALID {name}: {problem}")
    print(f"{json_count + gz_count} results files under {root / 'results'} ({json_count} .json, {gz_count} .json.gz): "
          f"{json_count + gz_count - invalid} valid, {invalid} invalid; {kinds.count('unreadable')} unreadable; "
          f"{kinds.count('other')} other JSON files (configs, other tools' output)")
    few = []
    if json_count < args.at_least_json:
        few.append(f"{json_count} .json results files, expected at least {args.at_least_json}")
    if gz_count < args.at_least_gz:
        few.append(f"{gz_count} .json.gz results files, expected at least {args.at_least_gz}")
    for line in few:
        print(f"TOO FEW: {line} (a walk of results/ that finds nothing must not pass)")
    return 1 if problems or few else 0


if __name__ == "__main__":
    sys.exit(main())
