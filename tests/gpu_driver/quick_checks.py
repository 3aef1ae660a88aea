#!/usr/bin/env python3
"""The quick GPU check (label `quick`; scripts/test.sh --quick): every method family once across
two GPUs, each case verified, in a few minutes.

One run of `mpirun -np 2 p2pbench` per family's small test config, cut to one or two sizes. It
fails where a case of those runs is not ok and verified, and where a method family that
`p2pbench --list-methods --json` lists ran no case (the gds methods excepted: they need a
directory on a GPUDirect-capable file system, and tests/gpu_driver/gds_gemm_checks.py runs them).
Exits 77 (CTest: skipped) with the reason when two GPUs are not visible. Prints 'N passed, N failed'.
With --plans (no GPU, no MPI): each run's plan for two ranks (p2pbench --dry-run) is accepted and
holds cases, so that a run p2pbench refuses (a method with no case) fails without a GPU.
Usage: quick_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...] | quick_checks.py --plans P2PBENCH_BIN
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

from driver_checks import gpu_count

HERE = pathlib.Path(__file__).resolve().parent
# (name, config, extra flags): together they hold a case of every method family.
RUNS = [
    ("copies", "tiny.json", ["--sizes", "1MiB"]),
    ("baselines", "baselines.json", ["--sizes", "4097"]),
    # 256 KiB: put_signal_ce's 4 KiB chunks then queue 256 commands, the most a gated transfer may.
    ("put-signal", "put-signal-small.json", ["--sizes", "256KiB"]),
    ("tokens", "tokens-small.json", ["--modes", "uni"]),
    ("collectives", "collectives-small.json", ["--sizes", "4194304"]),
    ("gemm-rs", "gemm-rs-small.json", []),
    ("interference", "interference.json", []),
    ("local", "baselines.json", ["--methods", "d2d,d2d_ldst,gemm", "--sizes", "1MiB", "--modes", "uni"]),
]
NEEDS_A_DIRECTORY = ("gds_",)


def check_plans(binary):
    """Each run's dry-run plan for two ranks holds at least one case."""
    failed = 0
    for name, config, flags in RUNS:
        r = subprocess.run([binary, "--config", str(HERE / config), *flags, "--dry-run"], capture_output=True,
                           text=True, timeout=120)
        cases = re.search(r"^(\d+) cases \(", r.stdout, re.M)
        ok = r.returncode == 0 and cases is not None and int(cases.group(1)) > 0
        print(("PASS " if ok else "FAIL ") + f"{name}: the plan holds {cases.group(1) if cases else 'no'} cases"
              + ("" if ok else "\n    " + (r.stdout + r.stderr)[-2000:]))
        failed += not ok
    print(f"{len(RUNS) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--plans":
        return check_plans(sys.argv[2])
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    gpus = gpu_count()
    if gpus < 2:
        print(f"SKIPPED: the quick check runs across two GPUs; {gpus} visible")
        return 77
    binary, mpiexec = sys.argv[1], sys.argv[2:]
    listed = json.loads(subprocess.run([binary, "--list-methods", "--json"], capture_output=True, text=True,
                                       timeout=60, check=True).stdout)["methods"]
    kind_of = {m["name"]: m["kind"] for m in listed}
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-quick-"))
    passed = failed = 0
    ran = set()

    def check(ok, what, detail=""):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\n    " + detail[-3000:]), flush=True)
        passed, failed = passed + bool(ok), failed + (not ok)

    for name, config, flags in RUNS:
        out = tmp / f"{name}.json"
        t0 = time.monotonic()
        r = subprocess.run([*mpiexec, "-np", "2", binary, "--config", str(HERE / config), "--output", str(out), *flags],
                           capture_output=True, text=True, timeout=600)
        took = time.monotonic() - t0
        check(r.returncode == 0 and out.exists(), f"{name}: exit 0, file written ({took:.1f} s)", r.stdout + r.stderr)
        if not out.exists():
            continue
        rows = json.loads(out.read_text())["results"]
        bad = [row for row in rows if row["status"] != "ok" or not row["verified"]]
        check(rows and not bad, f"{name}: all {len(rows)} cases ok and verified",
              json.dumps([(row["method"], row["status"], row.get("error")) for row in bad[:4]], indent=1))
        ran |= {row["method"] for row in rows if row["status"] == "ok"}

    families = {kind_of[m] for m in ran if m in kind_of}
    wanted = {m["kind"] for m in listed if not m["name"].startswith(NEEDS_A_DIRECTORY)}
    check(wanted <= families, f"every method family ran a case ({', '.join(sorted(families))})",
          f"none of: {sorted(wanted - families)}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
