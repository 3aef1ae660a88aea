#!/usr/bin/env python3
"""Adds to a skip log ("<test>: <reason>" lines) the reason of every test CTest skipped that the
log does not name yet, read from the test's own output in CTest's LastTest.log: pytest's
"SKIPPED [n] file:line: reason" lines (the distinct reasons, joined), else the output's last line.
The GPU tests write their reasons themselves (tests/run_on_gpus.py); this covers the rest (a
Python package or Slurm missing), so that run-ctest.sh's list names every skip and why.

Usage: skip_reasons.py LAST_TEST_LOG SKIP_LOG
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

BLOCK = re.compile(r"^\d+/\d+ Testing: (?P<name>\S+)\n(?P<body>.*?)(?=^\d+/\d+ Testing: |\Z)", re.M | re.S)
SKIPPED = ("Skip regular expression found in output", "Test Skipped", "Test not run")
PYTEST_SKIP = re.compile(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", re.M)


def skipped_tests(log_text: str) -> dict[str, str]:
    """{test: reason} of the tests the log shows skipped."""
    found = {}
    for block in BLOCK.finditer(log_text):
        body = block["body"]
        if not any(marker in body for marker in SKIPPED):
            continue
        output = body.split("Output:\n", 1)[-1].split("<end of output>", 1)[0]
        output = output.split("-" * 58 + "\n", 1)[-1]
        reasons = list(dict.fromkeys(PYTEST_SKIP.findall(output)))
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        found[block["name"]] = "; ".join(reasons) if reasons else (lines[-1] if lines else "no reason given")
    return found


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    last_test, skip_log = Path(sys.argv[1]), Path(sys.argv[2])
    if not last_test.is_file():
        return 0  # nothing ran
    named = {line.split(":", 1)[0] for line in skip_log.read_text().splitlines()} if skip_log.is_file() else set()
    added = [f"{name}: {why}" for name, why in skipped_tests(last_test.read_text(errors="replace")).items()
             if name not in named]
    with skip_log.open("a") as out:
        out.writelines(line + "\n" for line in added)
    return 0


if __name__ == "__main__":
    sys.exit(main())
