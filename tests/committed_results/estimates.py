#!/usr/bin/env python3
"""The dry run's time estimate against the real sweep of every complete, traceable results file of
the machine the estimate is calibrated on (results/h200-nv18): within 25% of
meta.timer_calibration.sweep_seconds, for the config (meta.config), ranks and GPUs (meta.ranks)
and nodes (meta.group) the file ran with. Judged: runs of one rank per GPU (the shape the model
is calibrated on; ranks sharing a GPU take turns on it, which the model does not try to follow)
that lasted at least MIN_SWEEP_S (shorter sweeps are dominated by start-up costs the estimate
leaves out). Files whose provenance is "unknown" are left out (their code cannot be traced), runs
in sanitizer mode (one ungated sample a case under compute-sanitizer: no measure of a sweep), and
so are the runs in ABNORMAL, each for the reason its COMMANDS.md records, and the runs beside the
GEMM workload made before its check was mended (before_gemm_check_mend). The runs outside the
judged shape are listed with their ratios, not judged. Fails with a table of the files outside.

Usage: estimates.py P2PBENCH_BIN [--root ROOT] [--all]  (--all: print every file's ratio)
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from committed import committed

SYSTEM = "results/h200-nv18/"
TOLERANCE = 0.25
MIN_SWEEP_S = 3.0
# Runs made under conditions that are no measure of the sweep's length, each as its COMMANDS.md
# records it.
ABNORMAL = {
    "results/h200-nv18/contention/contended.json":
        "run on purpose beside a second p2pbench sweep on both GPUs (COMMANDS-2026-11-23.md; contention/regress.txt)",
    "results/h200-nv18/remeasure-2026-11-27/runs/latency-0ad2a69.json":
        "the ping-pong regression (a host read per round trip) remeasure-2026-11-27/COMMANDS.md records",
}

# The commit whose GEMM workload checks its result with a block reduction: before it, every check
# added one partial sum a thread into host memory over PCIe, a second or more a case that the
# model no longer holds. A run's binary has the mend when the commit its provenance names
# descends from this one; where git cannot say (a clone without that history), the run's time
# against the first run with the mend decides.
GEMM_CHECK_MEND = "9414e22"
GEMM_CHECK_MENDED_UTC = "2026-11-30T08:43:00Z"


def has_gemm_check_mend(meta: dict, root: Path) -> bool:
    provenance = meta.get("provenance")
    commit = provenance.get("commit") if isinstance(provenance, dict) else None
    if commit:
        asked = subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", GEMM_CHECK_MEND, commit],
                               capture_output=True, timeout=60)
        if asked.returncode in (0, 1):  # 0: an ancestor, 1: not; anything else: git does not know
            return asked.returncode == 0
    return meta.get("timestamp_utc", "") >= GEMM_CHECK_MENDED_UTC


def before_gemm_check_mend(document: dict, root: Path) -> bool:
    beside_gemm = any(r.get("method") == "interference" and r.get("workload") == "gemm"
                      for r in document.get("results") or [])
    return beside_gemm and not has_gemm_check_mend(document.get("meta") or {}, root)


def dry_run_command(binary: str, meta: dict, config_path: str) -> list[str]:
    ranks = meta["ranks"]
    command = [binary, "--dry-run", "--config", config_path, "--ranks", str(len(ranks)),
               "--devices", ",".join(str(r["device_index"]) for r in ranks)]
    per_node = ((meta.get("group") or {}).get("node_override") or {}).get("ranks_per_node")
    if per_node:
        command += ["--ranks-per-node", str(per_node)]
    return command


def estimate_seconds(binary: str, meta: dict) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as config:
        json.dump(meta["config"], config)
        config.flush()
        out = subprocess.run(dry_run_command(binary, meta, config.name), capture_output=True, text=True, timeout=120)
    found = re.search(r"estimated: about ([0-9.]+) s", out.stdout)
    if out.returncode != 0 or not found:
        raise RuntimeError(f"the dry run gave no estimate (exit {out.returncode}): {out.stderr.strip()[-300:]}")
    return float(found.group(1))


def runs(root: Path):
    """(path, meta) of every complete, traceable results file of SYSTEM with a sweep time."""
    for c in committed(root):
        doc = c.document
        if not c.path.startswith(SYSTEM) or not c.is_results or doc.get("incomplete"):
            continue
        meta = doc.get("meta") or {}
        if meta.get("sanitizer_mode") is True:  # one ungated sample a case, at the sanitizer's pace
            continue
        sweep = (meta.get("timer_calibration") or {}).get("sweep_seconds")
        if sweep and meta.get("config") and meta.get("ranks") and meta.get("provenance") != "unknown":
            yield c.path, meta, before_gemm_check_mend(doc, root)


def judged(meta: dict) -> bool:
    """One rank per GPU, and a sweep long enough to be more than its start-up."""
    gpus = {(r.get("host"), r.get("device_index")) for r in meta["ranks"]}
    return len(gpus) == len(meta["ranks"]) and meta["timer_calibration"]["sweep_seconds"] >= MIN_SWEEP_S


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    found = list(runs(Path(args.root)))
    superseded = [path for path, _, old in found if old]
    checked = [(path, meta) for path, meta, old in found if path not in ABNORMAL and not old]
    if len(checked) < 20:
        print(f"only {len(checked)} runs found under {SYSTEM}: the walk is broken")
        return 1
    with ThreadPoolExecutor(max_workers=4) as pool:
        estimates = list(pool.map(lambda run: estimate_seconds(args.binary, run[1]), checked))
    rows = [(est / meta["timer_calibration"]["sweep_seconds"], est, meta["timer_calibration"]["sweep_seconds"], path)
            for (path, meta), est in zip(checked, estimates)]
    shape = {path: judged(meta) for path, meta in checked}
    outside = [r for r in rows if shape[r[3]] and abs(r[0] - 1) > TOLERANCE]
    for ratio, est, sweep, path in (rows if args.all else outside):
        print(f"{ratio:6.2f}  estimate {est:7.2f} s  sweep {sweep:7.2f} s  {path}")
    for ratio, est, sweep, path in rows:
        if not shape[path]:
            print(f"not judged ({ratio:.2f}, ranks sharing a GPU or a sweep under {MIN_SWEEP_S:g} s): {path}")
    rows = [r for r in rows if shape[r[3]]]
    for path, why in ABNORMAL.items():
        print(f"left out: {path}: {why}")
    for path in superseded:
        print(f"left out: {path}: beside the GEMM by a binary without its check's mend ({GEMM_CHECK_MEND})")
    print(f"{len(rows) - len(outside)} of {len(rows)} runs' estimates within {TOLERANCE:.0%} of their sweep"
          + (f"; {len(outside)} outside (above)" if outside else ""))
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
