#!/usr/bin/env python3
"""End-to-end checks of `mpirun -np 2 p2pbench` on a GPU node (label `gpu`).

Two parts, each a CTest test of its own: `one_gpu` (both ranks on GPU 0: the same-device sweep,
its refusals, the vmm and fabric allocators, the atomics) and `two_gpus` (the sweep, allocators,
baselines, latency and atomics across two GPUs). Exits 77 (CTest: skipped) with the reason when
the part's GPUs are not visible. Prints 'N passed, N failed'.
Usage: driver_checks.py --part one_gpu|two_gpus P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
TINY = str(HERE / "tiny.json")
BASELINES = str(HERE / "baselines.json")  # host link, staged, nccl, latency and atomics, small


def gpu_count():
    """The GPUs this test was given (tests/run_on_gpus.py), else those a CUDA program would see."""
    if os.environ.get("P2PBENCH_TEST_GPUS", "").isdigit():
        return int(os.environ["P2PBENCH_TEST_GPUS"])
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return len([d for d in listed.split(",") if d.strip()])
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
    except (OSError, subprocess.TimeoutExpired):
        return 0


class Checks:
    def __init__(self, binary, mpiexec):
        self.binary, self.mpiexec = binary, mpiexec
        self.passed = self.failed = 0
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-gpu-test-"))

    def mpirun(self, *args, timeout=300):
        cmd = [*self.mpiexec, "-np", "2", self.binary, *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def check(self, ok, what, detail=""):
        print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\n    " + detail[-3000:]))
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def run_sweep(self, name, *flags):
        out = self.tmp / f"{name}.json"
        r = self.mpirun("--config", TINY, "--output", str(out), *flags)
        self.check(r.returncode == 0, f"{name}: exit 0", r.stdout + r.stderr)
        if not out.exists():
            self.check(False, f"{name}: result file written")
            return None
        doc = json.loads(out.read_text())
        rows = doc["results"]
        self.check(len(rows) == 4 * 2 * 5 * 3, f"{name}: every case has a row ({len(rows)})")
        bad = [r for r in rows if r["status"] != "ok" or not r["verified"]]
        self.check(not bad, f"{name}: every case ok and verified", json.dumps(bad[:3], indent=1))
        self.check(doc["incomplete"] is False and doc["schema_version"] == 2, f"{name}: complete, schema_version 2")
        self.check(all(isinstance(r["bandwidth_gbps"]["median"], (int, float)) for r in rows if r["status"] == "ok"),
                   f"{name}: figures are numbers")
        bidir = [r for r in rows if r["mode"] == "bidir" and r["status"] == "ok"]
        self.check(bidir and all(0 <= r["overlap"] <= 1 and len(r["flows"]) == 2 for r in bidir),
                   f"{name}: bidir rows carry overlap and both directions")
        sm_rows = [r for r in rows if r["method"] in ("ldst", "tma") and r["status"] == "ok"]
        self.check(all(r["sms_used"] == r["blocks"] for r in sm_rows),
                   f"{name}: one block per SM (sms_used == blocks)",
                   json.dumps([(r["method"], r["blocks"], r["sms_used"]) for r in sm_rows][:6]))
        provenance, tool = doc["meta"].get("provenance", {}), doc["meta"]["tool"]
        self.check(len(provenance.get("source_sha256", "")) == 64 and provenance.get("origin") in
                   ("git", "PROVENANCE.json", "unknown") and tool["git_sha"] == provenance.get("commit", "?")[:12],
                   f"{name}: meta.provenance names the sources (their hash, the commit as tool.git_sha)",
                   json.dumps([provenance, tool]))
        mapping = doc["meta"].get("peer_mapping", {})
        self.check(all(r.get("allocator") == "legacy" for r in rows) and mapping.get("allocator") == "legacy"
                   and (mapping.get("map_ms") or 0) > 0 and mapping.get("unmap_ms") is not None,
                   f"{name}: rows and meta.peer_mapping record the default allocator, legacy, and its times",
                   json.dumps(mapping))
        return doc

    def vmm_sweep(self, name, *flags):
        """The tiny sweep with --allocator vmm: every row verified and recording `allocator: vmm`,
        meta.peer_mapping with its times and granularity. Where this node refuses pidfd_getfd
        between two ranks (Yama ptrace_scope, seccomp), the run must instead skip every P2P row
        with that reason (docs/allocators.md), and the check says so."""
        out = self.tmp / f"{name}.json"
        r = self.mpirun("--config", TINY, "--allocator", "vmm", "--output", str(out), *flags)
        self.check(r.returncode == 0 and out.exists(), f"{name}: exit 0, file written", r.stdout + r.stderr)
        if not out.exists():
            return
        doc = json.loads(out.read_text())
        rows, mapping = doc["results"], doc["meta"].get("peer_mapping", {})
        self.check(len(rows) == 4 * 2 * 5 * 3 and all(row.get("allocator") == "vmm" for row in rows),
                   f"{name}: every case has a row recording allocator vmm", json.dumps(rows[:1]))
        if mapping.get("mapped") is False and "pidfd" in mapping.get("reason", ""):
            print(f"SKIPPED ({name}; missing service: pidfd_getfd between processes): {mapping['reason']}")
            self.check(all(row["status"] == "skipped" and "pidfd" in row.get("error", "") for row in rows),
                       f"{name}: every P2P row skipped with the pidfd reason", json.dumps(rows[:1]))
            return
        bad = [row for row in rows if row["status"] != "ok" or not row["verified"]]
        self.check(not bad, f"{name}: every case ok and verified", json.dumps(bad[:3], indent=1) + json.dumps(mapping))
        self.check(mapping.get("allocator") == "vmm" and mapping.get("mapped") is True
                   and (mapping.get("map_ms") or 0) > 0 and isinstance(mapping.get("unmap_ms"), (int, float))
                   and mapping.get("granularity_bytes", 0) >= 4096 and mapping.get("own_buffers") == "cuMemCreate"
                   and len(mapping.get("map_ms_by_rank", [])) == 2,
                   f"{name}: meta.peer_mapping has map_ms, unmap_ms and the granularity", json.dumps(mapping))

    def fabric_run(self, *flags):
        """--allocator fabric with a P2P method and the host link: either mapped and verified, or,
        on a node without an IMEX channel, the P2P rows skipped with the driver's reason while the
        host link still runs, and the run completes."""
        out = self.tmp / "fabric.json"
        r = self.mpirun("--config", BASELINES, "--allocator", "fabric", "--methods", "ce,h2d", "--sizes", "4097,1MiB",
                        "--output", str(out), *flags)
        self.check(r.returncode == 0 and out.exists(), "fabric: exit 0, file written", r.stdout + r.stderr)
        if not out.exists():
            return
        doc = json.loads(out.read_text())
        rows, mapping = doc["results"], doc["meta"].get("peer_mapping", {})
        ce = [row for row in rows if row["method"] == "ce"]
        host = [row for row in rows if row["method"] == "h2d"]
        self.check(rows and all(row.get("allocator") == "fabric" for row in rows), "fabric: every row records it")
        self.check(host and all(row["status"] == "ok" and row["verified"] for row in host),
                   "fabric: the host link runs either way", json.dumps(host[:1]))
        if mapping.get("mapped"):
            self.check(ce and all(row["status"] == "ok" and row["verified"] for row in ce), "fabric: mapped, ce verified",
                       json.dumps(ce[:1]))
            return
        reason = mapping.get("reason", "")
        print(f"fabric: no peer mapping on this node: {reason}")
        skipped = all(row["status"] == "skipped" and reason in row["error"] for row in ce)
        self.check("fabric handles: " in reason and ce and skipped,
                   "fabric: without mapping, every ce row skipped with the driver's reason", json.dumps(ce[:1]))

    def baselines_and_latency(self):
        out = self.tmp / "baselines.json"
        r = self.mpirun("--config", BASELINES, "--output", str(out))
        self.check(r.returncode == 0, "baselines: exit 0", r.stdout + r.stderr)
        if not out.exists():
            self.check(False, "baselines: result file written")
            return
        doc = json.loads(out.read_text())
        rows = doc["results"]
        bad = [r for r in rows if r["status"] != "ok" or not r["verified"]]
        self.check(len(rows) == 60 and not bad, f"baselines: all {len(rows)} cases ok and verified",
                   json.dumps(bad[:3], indent=1))
        methods = {r["method"] for r in rows if r["status"] == "ok"}
        self.check(methods == {"h2d", "d2h", "staged", "nccl", "latency_signal", "latency_read", "latency_ce", "atomic"},
                   "baselines: every method ran", str(sorted(methods)))
        lat = [r for r in rows if r["method"].startswith("latency") and r["status"] == "ok"]
        self.check(lat and all(0 < r["latency_us"]["min"] <= r["latency_us"]["median"] <= r["latency_us"]["max"]
                               for r in lat), "baselines: latency rows carry ordered latency_us figures")
        self.check(isinstance(doc["meta"].get("nccl_version"), str) and doc["meta"]["peer_access"]["available"],
                   "baselines: meta records the NCCL version and peer access", json.dumps(doc["meta"].get("peer_access")))

        # Without peer access: P2P rows skipped with the reason, the baselines still run.
        out = self.tmp / "no-p2p.json"
        r = self.mpirun("--config", BASELINES, "--no-p2p", "--methods", "ce,staged,h2d,latency_read",
                        "--sizes", "4097,20971523", "--output", str(out))
        self.check(r.returncode == 0 and out.exists(), "no-p2p: exit 0", r.stdout + r.stderr)
        if out.exists():
            rows = json.loads(out.read_text())["results"]
            skipped = [r for r in rows if r["method"] in ("ce", "latency_read")]
            ran = [r for r in rows if r["method"] in ("staged", "h2d")]
            self.check(skipped and all(r["status"] == "skipped" and "--no-p2p" in r["error"] for r in skipped),
                       "no-p2p: P2P and latency rows skipped with the reason", json.dumps(skipped[:2]))
            self.check(ran and all(r["status"] == "ok" and r["verified"] for r in ran),
                       "no-p2p: staged and host-link rows ok and verified", json.dumps(ran[:2]))
        r = self.mpirun("--config", TINY, "--no-p2p", "--output", str(self.tmp / "nothing.json"))
        self.check(r.returncode == 2 and "methods" in r.stderr and not (self.tmp / "nothing.json").exists(),
                   "no-p2p with only P2P methods: exit 2 naming methods, no file", r.stderr)

    def atomics(self, name, *flags):
        """Every atomic case verified: each sample's total and the per-transfer sample's, a second
        capture of the case whose launches must carry the same signs as the first's."""
        out = self.tmp / f"{name}.json"
        r = self.mpirun("--config", BASELINES, "--methods", "atomic", "--modes", "uni", "--output", str(out), *flags)
        self.check(r.returncode == 0 and out.exists(), f"{name}: exit 0, file written", r.stdout + r.stderr)
        if out.exists():
            rows = json.loads(out.read_text())["results"]
            bad = [row for row in rows if row["status"] != "ok" or not row["verified"]]
            shapes = {(row["atomic_type"], row["atomic_pattern"]) for row in rows}
            self.check(len(shapes) == 6 and not bad, f"{name}: all {len(rows)} atomic cases (u32, f32, bf16x2 x "
                       "distinct, hot spot) ok and verified",
                       json.dumps([(row["atomic_type"], row["atomic_pattern"], row["status"], row.get("error"))
                                   for row in bad[:3]], indent=1))

    def one_gpu(self):
        same = ("--allow-same-device", "--devices", "0,0")
        doc = self.run_sweep("same-device", *same)
        if doc:
            self.check(doc["meta"]["same_device"] is True, "same-device: labelled same_device in meta")

        r = self.mpirun("--config", TINY, "--devices", "0,0", "--output", str(self.tmp / "refused.json"))
        self.check(r.returncode == 2 and "same GPU" in r.stderr and not (self.tmp / "refused.json").exists(),
                   "both ranks on one GPU without --allow-same-device: exit 2, clear message, no file", r.stderr)

        r = self.mpirun("--config", TINY, *same, "-b", "400G", "-e", "400G", "--output", str(self.tmp / "too-big.json"))
        self.check(r.returncode == 2 and "sizes" in r.stderr and "free" in r.stderr
                   and not (self.tmp / "too-big.json").exists(),
                   "size beyond free device memory: exit 2 naming sizes, no file", r.stderr)

        # The allocators (docs/allocators.md) between two processes on one GPU.
        self.vmm_sweep("vmm-same-device", *same)
        self.fabric_run(*same)
        self.atomics("atomics-same-device", *same)

    def two_gpus(self):
        doc = self.run_sweep("two-gpus")
        if doc:
            self.check(doc["meta"]["same_device"] is False and doc["meta"]["p2p"]["known"] in (True, False),
                       "two-gpus: distinct GPUs recorded")
        self.vmm_sweep("vmm-two-gpus")
        self.fabric_run()
        self.atomics("atomics-two-gpus")
        self.baselines_and_latency()


def interference_figures(row):
    """The four figures of an interference row (the workload's and the transfer's, alone and
    together; None where missing) and whether each has a positive median."""
    figures = [row.get(k) for k in ("workload_alone", "workload_together", "transfer_alone_gbps", "transfer_together_gbps")]
    return figures, all(isinstance(f, dict) and f.get("median", 0) > 0 for f in figures)


def gpus_or_exit_code(doc):
    """(visible GPUs, None) to go on, or (0, exit code): 2 after the usage `doc` when the
    arguments are missing, 77 (CTest: skipped) with the reason when no GPU is visible."""
    if len(sys.argv) < 3:
        print(doc)
        return 0, 2
    gpus = gpu_count()
    if gpus == 0:
        print("SKIPPED: no CUDA GPU visible. GPU tests run on a GPU node: scripts/gpu-check.sh")
        return 0, 77
    return gpus, None


def main():
    if len(sys.argv) < 5 or sys.argv[1] != "--part" or sys.argv[2] not in ("one_gpu", "two_gpus"):
        print(__doc__)
        return 2
    part = sys.argv[2]
    del sys.argv[1:3]
    gpus, code = gpus_or_exit_code(__doc__)
    if code is not None:
        return code
    if part == "two_gpus" and gpus < 2:
        print(f"SKIPPED: the two-GPU part needs two GPUs, {gpus} visible")
        return 77
    checks = Checks(sys.argv[1], sys.argv[2:])
    checks.one_gpu() if part == "one_gpu" else checks.two_gpus()
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 and checks.passed > 0 else 1  # a check that ran nothing fails


if __name__ == "__main__":
    sys.exit(main())
