#!/usr/bin/env python3
"""The one-GPU methods gemm and gds_* on a GPU node (label `gpu`), one rank, no mpirun.

gemm: a bf16 GEMM of full-entropy operands (4 MiB of f32 D: m = n = 1024; 16 MiB: 2048; K 512),
verified, its row naming the GEMM and TFLOP/s = 2 m n k / time per GEMM; 12 MiB (no square) is
skipped saying why. gds: in a fresh directory under /var/tmp (and /dev/shm when present), the
bounce methods must run verified (engine_mode posix_odirect or posix_page_cache); cuFile's must run
verified (engine_mode cufile_gds or cufile_compat) or be skipped with cuFile's error and what would
enable it; without gds.directory every gds row is skipped saying the config needs it, and a
directory that does not exist stops the run with exit 2 naming gds.directory.
Exits 77 (CTest: skipped) where no GPU is visible. Prints 'N passed, N failed'.
Usage: gds_gemm_checks.py P2PBENCH_BIN [MPIEXEC ...]   (mpiexec is not used)
"""
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

from driver_checks import gpus_or_exit_code

GDS = ("gds_read", "gds_write", "gds_read_bounce", "gds_write_bounce")


class Checks:
    def __init__(self, binary):
        self.binary = binary
        self.passed = self.failed = 0
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-gds-gemm-test-"))

    def check(self, ok, what, detail=""):
        print(("PASS " if ok else "FAIL ") + what + ("" if ok or not detail else f": {detail}"))
        self.passed += bool(ok)
        self.failed += not ok

    def run(self, name, config, env=None):
        path, out = self.tmp / f"{name}.json", self.tmp / f"{name}-results.json"
        path.write_text(json.dumps(config))
        proc = subprocess.run([self.binary, "--config", str(path), "-o", str(out)], capture_output=True, text=True,
                              timeout=600, env={**os.environ, **(env or {})})
        rows = json.loads(out.read_text())["results"] if out.exists() else []
        return proc, rows

    def gemm(self):
        proc, rows = self.run("gemm", {"methods": ["gemm"], "sizes": ["4MiB", "12MiB", "16MiB"], "samples": 3,
                                       "gemm": {"gemm_k": [512]}})
        self.check(proc.returncode == 0, "gemm: the run succeeds", proc.stderr[-2000:])
        ok = [r for r in rows if r["status"] == "ok"]
        self.check(sorted(r["gemm"]["m"] for r in ok) == [1024, 2048] and all(r["verified"] for r in ok),
                   "gemm: 1024^2 and 2048^2 D ran verified", json.dumps([(r["bytes"], r["status"], r.get("error")) for r in rows]))
        self.check(all(math.isclose(r["tflops"]["median"] * 1e12 * r["time_us"]["median"] * 1e-6,
                                    2 * r["gemm"]["m"] ** 2 * 512, rel_tol=1e-6) for r in ok) and ok,
                   "gemm: TFLOP/s = 2 m n k / time per GEMM")
        self.check(all("full-entropy" in r["gemm"]["operands"] for r in ok) and ok, "gemm: the row names its operands")
        skipped = [r for r in rows if r["bytes"] == 12 << 20]
        self.check(skipped and skipped[0]["status"] == "skipped" and "square" in skipped[0].get("error", ""),
                   "gemm: 12 MiB (no square D) is skipped saying why")
        for r in ok:
            print(f"  gemm m={r['gemm']['m']} k=512: {r['tflops']['median']:.1f} TFLOP/s, {r['time_us']['median']:.1f} us")

    def gds_in(self, base):
        directory = tempfile.mkdtemp(prefix="p2pbench-gds-", dir=base)
        proc, rows = self.run("gds-" + base.strip("/").replace("/", "-"),
                              {"methods": list(GDS), "sizes": ["1MiB", "16MiB"], "samples": 3, "min_sample_time_ms": 5,
                               "gds": {"directory": directory}})
        self.check(proc.returncode == 0, f"gds in {base}: the run succeeds", proc.stderr[-2000:])
        bounce = [r for r in rows if r["method"].endswith("_bounce")]
        self.check(len(bounce) == 4 and all(r["status"] == "ok" and r["verified"] and
                                            r.get("engine_mode", "").startswith("posix_") for r in bounce),
                   f"gds in {base}: the bounce methods ran verified",
                   json.dumps([(r["method"], r["status"], r.get("error"), r.get("engine_mode")) for r in bounce]))
        direct = [r for r in rows if not r["method"].endswith("_bounce")]
        self.check(len(direct) == 4 and all(
            (r["status"] == "ok" and r["verified"] and r.get("engine_mode", "").startswith("cufile_")) or
            (r["status"] == "skipped" and "cuFile" in r.get("error", "")) for r in direct),
                   f"gds in {base}: cuFile's rows ran verified or were skipped with cuFile's error",
                   json.dumps([(r["method"], r["status"], r.get("error"), r.get("engine_mode")) for r in direct]))
        self.check(not os.listdir(directory), f"gds in {base}: no file left behind", str(os.listdir(directory)))
        for r in rows:
            figure = f"{r['bandwidth_gbps']['median']:.2f} GB/s" if r["status"] == "ok" else r.get("error", "")[:160]
            print(f"  {r['method']} {r['bytes']} B: {r['status']} {r.get('engine_mode', '')}: {figure}")

    def gds_config_errors(self):
        _, rows = self.run("gds-no-directory", {"methods": list(GDS), "sizes": ["1MiB"], "samples": 1})
        self.check(len(rows) == 4 and all(r["status"] == "skipped" and "gds" in r.get("error", "") and
                                          "directory" in r["error"] for r in rows),
                   "gds without gds.directory: every row skipped saying the config needs it")
        proc, _ = self.run("gds-bad-directory", {"methods": ["gds_read"], "sizes": ["1MiB"],
                                                 "gds": {"directory": str(self.tmp / "missing")}})
        self.check(proc.returncode == 2 and "gds.directory" in proc.stderr, "a missing gds.directory: exit 2 naming it",
                   proc.stderr[-500:])


def main():
    _, code = gpus_or_exit_code(__doc__) if len(sys.argv) >= 2 else (0, 2)
    if code is not None:
        if code == 2:
            print(__doc__)
        return code
    checks = Checks(sys.argv[1])
    checks.gemm()
    for base in ("/var/tmp", "/dev/shm"):
        if os.path.isdir(base):
            checks.gds_in(base)
    checks.gds_config_errors()
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
