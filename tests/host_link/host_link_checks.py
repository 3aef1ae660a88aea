#!/usr/bin/env python3
"""The host link's methods of one GPU (label `gpu`), one rank, no mpirun:
  h2d_sm, d2h_sm      the LD/ST kernel through pinned host memory's device mapping: verified,
                      on min(132, SMs) SMs; pageable memory skipped saying why;
  h2d_bidir, d2h_bidir one direction timed while the other runs beside it: verified (both
                      directions' bytes) at 4 MiB, 64 MiB and at 512 MiB in samples of several
                      copies (the beside copies must cover every sample, or it fails), the timed
                      direction no faster than alone by more than noise; unverified they run too;
  latency_host        the pointer chase through pinned host memory: ok, 0.2 to 20 us per load.
Exits 77 (CTest: skipped) where no GPU is visible. Prints 'N passed, N failed'.
Usage: host_link_checks.py P2PBENCH_BIN
"""
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "gpu_driver"))
from driver_checks import gpu_count  # noqa: E402

NEW = ("h2d_sm", "d2h_sm", "h2d_bidir", "d2h_bidir")


class Checks:
    def __init__(self, binary):
        self.binary = binary
        self.passed = self.failed = 0
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-host-link-test-"))

    def check(self, ok, what, detail=""):
        print(("PASS " if ok else "FAIL ") + what + ("" if ok or not detail else f": {detail}"))
        self.passed += bool(ok)
        self.failed += not ok

    def run(self, name, config):
        path, out = self.tmp / f"{name}.json", self.tmp / f"{name}-results.json"
        path.write_text(json.dumps(config))
        proc = subprocess.run([self.binary, "--config", str(path), "-o", str(out)], capture_output=True, text=True,
                              timeout=500)
        rows = json.loads(out.read_text())["results"] if out.exists() else []
        return proc, rows

    def methods(self):
        proc, rows = self.run("host", {
            "methods": ["h2d", "d2h", *NEW, "latency_host"], "sizes": ["4MiB", "64MiB"], "samples": 3,
            "host": {"memory": ["pinned", "pageable"]},
            "latency": {"read_loads": [2000], "read_protocols": ["generic"], "read_timing": ["events"]}})
        self.check(proc.returncode == 0, "the host-link run succeeds", proc.stderr[-2000:])
        pinned = [r for r in rows if r.get("host_memory") in (None, "pinned")]
        for method in NEW:
            mine = [r for r in pinned if r["method"] == method]
            self.check(len(mine) == 2 and all(r["status"] == "ok" and r["verified"] for r in mine),
                       f"{method}: 4 MiB and 64 MiB of pinned memory ran verified",
                       json.dumps([(r["bytes"], r["status"], r.get("error")) for r in mine]))
            pageable = [r for r in rows if r["method"] == method and r.get("host_memory") == "pageable"]
            self.check(pageable and all(r["status"] == "skipped" and "pageable" in r.get("error", "") for r in pageable),
                       f"{method}: pageable memory is skipped saying why", json.dumps(pageable[:1])[:400])
        sm = [r for r in pinned if r["method"] in ("h2d_sm", "d2h_sm") and r["status"] == "ok"]
        self.check(sm and all(r["blocks"] == 132 and r["threads"] == 512 and 1 <= (r["sms_used"] or 0) <= 132 for r in sm),
                   "h2d_sm/d2h_sm: nvbandwidth's launch (132 x 512), its SMs counted")
        by = {(r["method"], r["bytes"]): r["bandwidth_gbps"]["median"] for r in pinned if r["status"] == "ok"
              and r.get("bandwidth_gbps")}
        for bidir, alone in (("h2d_bidir", "h2d"), ("d2h_bidir", "d2h")):
            key = (bidir, 64 << 20)
            ok = key in by and (alone, 64 << 20) in by and by[key] <= 1.1 * by[(alone, 64 << 20)]
            self.check(ok, f"{bidir}: the timed direction beside the other is not faster than {alone} alone",
                       f"{by.get(key)} vs {by.get((alone, 64 << 20))} GB/s")
        chase = [r for r in rows if r["method"] == "latency_host"]
        self.check(chase and all(r["status"] == "ok" and 0.2 <= r["latency_us"]["median"] <= 20 for r in chase),
                   "latency_host: ok, 0.2 to 20 us per dependent load",
                   json.dumps([(r["status"], r.get("latency_us"), r.get("error")) for r in chase]))

    def bidir_large_and_unverified(self):
        # 512 MiB, >= 100 ms samples: the size at which beside copies queued before the gate
        # were still being submitted when the sample ran, and ended before it.
        proc, rows = self.run("bidir-large", {"methods": ["h2d_bidir", "d2h_bidir"], "sizes": ["512MiB"], "samples": 3,
                                              "min_sample_time_ms": 100})
        self.check(len(rows) == 2 and all(r["status"] == "ok" and r["verified"] and r["iterations"] > 1 for r in rows),
                   "h2d_bidir, d2h_bidir at 512 MiB, several copies a sample: the beside copies cover every sample",
                   json.dumps([(r["method"], r["status"], r.get("iterations"), r.get("error")) for r in rows])[:600])
        proc, rows = self.run("unverified", {"methods": ["h2d_bidir"], "sizes": ["4MiB"], "samples": 2,
                                             "verify": False})
        self.check(rows and all(r["status"] == "ok" and not r["verified"] for r in rows),
                   "h2d_bidir without verification: runs, its rows say unverified",
                   json.dumps([(r["status"], r.get("verified"), r.get("error")) for r in rows])[:600])


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if gpu_count() == 0:
        print("SKIPPED: no CUDA GPU visible. GPU tests run on a GPU node: scripts/gpu-check.sh")
        return 77
    checks = Checks(sys.argv[1])
    checks.methods()
    checks.bidir_large_and_unverified()
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
