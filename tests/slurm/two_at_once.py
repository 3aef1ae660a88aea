#!/usr/bin/env python3
"""Runs tests/slurm/test_slurm.py twice at the same time, as two pytest processes, each starting
its own one-node cluster on this machine; passes when both pass. Both clusters number their jobs
from 1, so job N of one runs beside job N of the other: what either keys by the job number (the
PMIx client directory, Open MPI's session directory and shared memory) must be its own, as must
the munge key and socket, the ports and the spool and state folders. After both passed, the
records the two runs wrote (P2PBENCH_SLURM_RECORD) are compared: different folders, ports and
munge sockets and keys, the same job numbers, and running at the same time.

Usage: two_at_once.py [PYTEST_ARGS...]   (PROBE_BIN and P2PBENCH_REQUIRE_SLURM as for the test)
Exit status: 0 both passed (or both skipped: the last line says "two_at_once: skipped", with the
reasons above it), 1 either failed or the records show something shared.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEST = Path(__file__).resolve().parent / "test_slurm.py"
INSTANCES = ("A", "B")


def run_both(extra: list[str], folder: Path) -> dict[str, tuple[int, str]]:
    """(exit status, output) of each instance; the outputs go to files (a pipe left unread while
    waiting for the other instance could fill and stop its writer)."""
    started = {}
    for name in INSTANCES:
        env = dict(os.environ, P2PBENCH_SLURM_RECORD=str(folder / f"{name}.json"))
        with open(folder / f"{name}.out", "w") as out:
            started[name] = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(TEST), *extra],
                env=env, stdout=out, stderr=subprocess.STDOUT)
    return {name: (proc.wait(), (folder / f"{name}.out").read_text(errors="replace"))
            for name, proc in started.items()}


def shared(a: dict, b: dict) -> list[str]:
    """What the two clusters had in common that each must have had its own."""
    problems = [f"both used {key} {a[key]}" for key in ("root", "tmp", "munge_socket", "munge_key") if a[key] == b[key]]
    if set(a["ports"]) & set(b["ports"]):
        problems.append(f"both used port(s) {sorted(set(a['ports']) & set(b['ports']))}")
    if not set(a["jobs"]) & set(b["jobs"]):
        problems.append(f"no job number in common ({a['jobs']} and {b['jobs']}): the pair did not test isolation")
    if a["started"] >= b["ended"] or b["started"] >= a["ended"]:
        problems.append("the two clusters did not run at the same time")
    return problems


def main() -> int:
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="p2pbench-slurm-pair-") as name:
        folder = Path(name)
        results = run_both(sys.argv[1:], folder)
        for instance, (status, output) in results.items():
            print(f"==== instance {instance}: pytest exit {status} ====\n{output}")
        failed = [instance for instance, (status, _) in results.items() if status != 0]
        if failed:
            print(f"two_at_once: instance(s) {', '.join(failed)} failed (output above)")
            return 1
        # The fixture writes its record once its cluster ran its tests: none where both skipped
        # (each said why above), one where the other instance's cluster could not start beside it.
        ran = [instance for instance in INSTANCES if (folder / f"{instance}.json").exists()]
        if not ran:  # CTest takes this line for a skip; pytest's "4 skipped, 2 deselected in" is no match for it
            print("two_at_once: skipped: neither cluster ran (the reasons are above)")
            return 0
        if len(ran) < len(INSTANCES):
            print(f"two_at_once: only instance {ran[0]}'s cluster ran; the other skipped (reason above)")
            return 1
        a, b = (json.loads((folder / f"{instance}.json").read_text()) for instance in INSTANCES)
        problems = shared(a, b)
        for problem in problems:
            print(f"two_at_once: {problem}")
        if problems:
            return 1
    print(f"two_at_once: both passed at the same time in {time.monotonic() - t0:.0f} s; jobs {a['jobs']} in each, "
          f"ports {a['ports']} and {b['ports']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
