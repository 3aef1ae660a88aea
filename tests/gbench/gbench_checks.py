#!/usr/bin/env python3
"""Checks of p2pbench-gbench, one group per CTest test.

Usage: gbench_checks.py GROUP P2PBENCH_GBENCH_BIN
  list_names  --benchmark_list_tests prints the expected names (no GPU needed)     label unit
  no_gpu      a run with no GPU visible exits 1 with one clear message              label unit
  bad_input   bad config, flags or --src/--dst: exit 2 naming the key or flag       label unit
  gpu_run     a real run of small.json on two GPUs; checks the JSON output          label gpu
Prints PASS/FAIL per check; exits 0 when all passed, 1 otherwise, 77 (CTest: skipped) when
gpu_run finds fewer than two GPUs with peer access.
"""
import itertools
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
SMALL = str(HERE / "small.json")
LDST_THREADS = str(REPO / "configs" / "ldst-threads.json")
NO_GPU = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}


class Checks:
    def __init__(self, binary):
        self.binary = binary
        self.passed = self.failed = 0
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-gbench-test-"))

    def run(self, *args, env=None, timeout=120):
        return subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=timeout, env=env)

    def check(self, ok, what, detail=""):
        print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\n    " + str(detail)[-4000:]))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok

    def listed(self, *args):
        r = self.run(*args, "--benchmark_list_tests=true", env=NO_GPU)
        return r, [line for line in r.stdout.splitlines() if line.strip()]

    def write(self, name, doc):
        path = self.tmp / name
        path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
        return str(path)


def expected_names(methods, directions, modes, sizes, ldst=None, tma=None):
    """The sweep order of expand_cases, uni cases once, with Google Benchmark's suffix."""
    names = []
    for method, direction, mode in itertools.product(methods, directions, modes):
        if method == "ce":
            shapes = [""]
        elif method == "ldst":
            shapes = [f"/blocks:{b}/threads:{t}/unroll:{u}" for b, t, u in itertools.product(*ldst)]
        else:
            shapes = [f"/blocks:{b}/smem:{s}/stages:{k}" for b, s, k in itertools.product(*tma)]
        for shape in shapes:
            for size in sizes:
                mid = "/bidir" if mode == "bidir" else ""
                names.append(f"{method}/{direction}{mid}/bytes:{size}{shape}/manual_time")
    return names


SMALL_NAMES = expected_names(["ce", "ldst", "tma"], ["push", "pull"], ["uni", "bidir"], [4097, 1048576],
                             ldst=([3], [256], [8]), tma=([5], [49152], [3]))


def list_names(c):
    r, names = c.listed("--config", LDST_THREADS)
    want = expected_names(["ldst"], ["push", "pull"], ["uni"], [1073741824],
                          ldst=([4, 8, 16, 32, 64, 132], [128, 256, 512, 1024], [4]))
    c.check(r.returncode == 0 and r.stderr == "", "ldst-threads.json: listed without a GPU, exit 0, nothing on stderr",
            r.stderr)
    c.check(names == want, f"ldst-threads.json: the {len(want)} expected names in sweep order",
            "\n".join(n for n in names if n not in want)[:2000] or names[:5])

    r, names = c.listed("--config", SMALL)
    c.check(r.returncode == 0 and len(names) == 24, f"small.json: 24 cases (3 methods x push/pull x uni/bidir x 2 sizes): {len(names)}",
            r.stdout + r.stderr)
    c.check(names == SMALL_NAMES, "small.json: the exact names", "\n".join(names))
    c.check("tma/push/bytes:1048576/blocks:5/smem:49152/stages:3/manual_time" in names
            and "ce/pull/bidir/bytes:4097/manual_time" in names, "small.json: name format of uni and bidir cases")

    r, names = c.listed("--config", SMALL, "--benchmark_filter=tma/pull/bidir")
    c.check(r.returncode == 0 and names == [n for n in SMALL_NAMES if n.startswith("tma/pull/bidir/")] and len(names) == 2,
            "--benchmark_filter=tma/pull/bidir reads naturally: 2 names", names)

    r, names = c.listed("--methods", "ce", "--directions", "push", "--modes", "bidir", "--sizes", "4K,1M")
    c.check(r.returncode == 0 and names == ["ce/push/bidir/bytes:4096/manual_time", "ce/push/bidir/bytes:1048576/manual_time"],
            "flags alone define a sweep (no --config)", r.stdout + r.stderr)

    r, names = c.listed("--config", SMALL, "--methods", "ldst", "--modes", "uni", "--blocks", "1..4", "--threads", "128")
    want = expected_names(["ldst"], ["push", "pull"], ["uni"], [4097, 1048576], ldst=([1, 2, 4], [128], [8]))
    c.check(r.returncode == 0 and names == want, "flags override the config (the driver's apply_overrides)", names)

    bad_tma = c.write("bad-tma.json", {"methods": ["tma"], "directions": ["push"], "modes": ["uni"], "sizes": [4096],
                                       "tma": {"blocks": [2], "smem_bytes": [100, 96], "stages": [3]}})
    r, names = c.listed("--config", bad_tma)
    c.check(r.returncode == 0 and names == ["tma/push/bytes:4096/blocks:2/smem:96/stages:3/manual_time"]
            and "not registered: tma/push/bytes:4096/blocks:2/smem:100/stages:3" in r.stderr,
            "a case that can never run is left out, with its reason on stderr", r.stdout + r.stderr)


def no_gpu(c):
    for extra in ([], ["--benchmark_format=json"], ["--benchmark_filter=ce/push/bytes:4097/"]):
        r = c.run("--config", SMALL, *extra, env=NO_GPU)
        c.check(r.returncode == 1 and r.stderr.startswith("p2pbench-gbench: error: no CUDA GPU is visible")
                and "nothing was measured" in r.stderr and "manual_time" not in r.stdout,
                f"no GPU {' '.join(extra)}: exit 1, one clear message, no benchmark ran", (r.returncode, r.stdout, r.stderr))


def bad_input(c):
    cases = [
        ("unknown key", ["--config", c.write("unknown.json", '{"sizes": [4096], "smaples": 3}')], ["smaples", "unknown key"]),
        ("invalid JSON", ["--config", c.write("invalid.json", '{"sizes": [1,}')], ["invalid JSON"]),
        ("bad --methods", ["--config", SMALL, "--methods", "dma"], ["--methods", "dma"]),
        ("bad --threads", ["--config", SMALL, "--threads", "1000"], ["ldst.threads", "1000"]),
        ("no sizes", ["--methods", "ce"], ["sizes"]),
        ("missing config file", ["--config", str(c.tmp / "absent.json")], ["--config"]),
        ("unknown flag", ["--config", SMALL, "--frobnicate"], ["--frobnicate"]),
        ("misspelt flag", ["--config", SMALL, "--allow-same-devise"],
         ["--allow-same-devise: did you mean --allow-same-device?"]),
        ("misspelt Google Benchmark flag", ["--config", SMALL, "--benchmark_filtr=ce"],
         ["--benchmark_filtr: did you mean --benchmark_filter?"]),
        ("Google Benchmark flag without '='", ["--config", SMALL, "--benchmark_filter", "ce"],
         ["--benchmark_filter: only as --benchmark_filter=VALUE"]),
    ]
    for what, args, needles in cases:
        r = c.run(*args, env=NO_GPU)
        c.check(r.returncode == 2 and all(n in r.stderr for n in needles) and "manual_time" not in r.stdout,
                f"{what}: exit 2, the message names {needles}", (r.returncode, r.stderr))
    r = c.run("--help")
    c.check(r.returncode == 0 and all(n in r.stdout for n in ["--src", "--dst", "--config", "--benchmark_filter", "1024", "1e9"]),
            "--help: our flags, Google Benchmark's, and the units", r.stdout[-2000:])


def gpu_run(c):
    out = c.tmp / "small.json"
    r = c.run("--config", SMALL, "--benchmark_min_time=0.05", "--benchmark_format=json", f"--benchmark_out={out}",
              timeout=900)
    for reason in ("no CUDA GPU is visible", "only one CUDA GPU is visible", "peer access between"):
        if r.returncode == 1 and reason in r.stderr:
            print(f"SKIPPED: {reason}: p2pbench-gbench needs two GPUs with peer access\n{r.stderr}")
            sys.exit(77)
    c.check(r.returncode == 0, "small.json: exit 0", r.stdout[-3000:] + r.stderr)
    if not out.exists():
        c.check(False, "--benchmark_out file written")
        return
    doc = json.loads(out.read_text())
    ctx = doc["context"]
    c.check(all(k in ctx for k in ["src_gpu", "dst_gpu", "driver_version", "link", "p2p", "verify"]),
            "custom context: GPUs, driver version, link", json.dumps(ctx, indent=1))
    rows = doc["benchmarks"]
    c.check([b["run_name"] for b in rows] == SMALL_NAMES, "every case has a row, in order", [b["run_name"] for b in rows])
    hopper = all(float(ctx[k].split("compute capability ")[-1]) >= 9.0 for k in ("src_gpu", "dst_gpu"))
    errors = [b for b in rows if b.get("error_occurred")]
    allowed = [b for b in errors if not hopper and b["run_name"].startswith("tma/") and b["error_message"].startswith("skipped:")]
    c.check(len(errors) == len(allowed), "no errors (TMA may only be skipped below compute capability 9.0)",
            json.dumps([(b["run_name"], b["error_message"]) for b in errors if b not in allowed][:5], indent=1))
    ok = [b for b in rows if not b.get("error_occurred")]
    c.check(ok and all(b["GB/s"] > 0 and b["iterations_per_sample"] >= 1 and b["verified"] == 1 and b["bytes_per_second"] > 0
                       for b in ok), "counters GB/s, iterations_per_sample, verified, bytes_per_second",
            json.dumps(ok[:2], indent=1))
    c.check(all(abs(b["bytes_per_second"] / 1e9 - b["GB/s"]) <= 1e-6 * b["GB/s"] for b in ok),
            "GB/s is bytes_per_second / 1e9 (both from the manual time)",
            [(b["run_name"], b["bytes_per_second"], b["GB/s"]) for b in ok][:4])

    def expected_gbps(b):  # one iteration = one transfer (bidir: one each way at once)
        size = int(b["run_name"].split("bytes:")[1].split("/")[0])
        lanes = 2 if "/bidir/" in b["run_name"] else 1
        assert b["time_unit"] == "us"
        return size * lanes / (b["real_time"] * 1e-6) / 1e9

    c.check(all(abs(expected_gbps(b) - b["GB/s"]) <= 1e-3 * b["GB/s"] for b in ok),
            "real_time is the manual time of one transfer", [(b["run_name"], b["real_time"], b["GB/s"]) for b in ok][:4])
    c.check(all(b["iterations"] == b["samples"] * b["iterations_per_sample"] for b in ok),
            "iterations = samples x iterations_per_sample (one gated sample per batch)",
            [(b["run_name"], b["iterations"], b["samples"], b["iterations_per_sample"]) for b in ok][:4])
    sm = [b for b in ok if b["run_name"].split("/")[0] in ("ldst", "tma")]
    c.check(sm and all(b["SMs"] == int(b["run_name"].split("blocks:")[1].split("/")[0]) and b["GB/s_per_SM"] > 0 for b in sm),
            "SM methods: SMs == blocks, GB/s_per_SM", [(b["run_name"], b.get("SMs"), b.get("GB/s_per_SM")) for b in sm][:6])
    c.check(all("SMs" not in b for b in ok if b["run_name"].startswith("ce/")), "ce rows have no SM count")
    bidir = [b for b in ok if "/bidir/" in b["run_name"]]
    c.check(bidir and all(0 <= b["overlap"] <= 1 for b in bidir), "bidir rows carry overlap in [0, 1]",
            [(b["run_name"], b.get("overlap")) for b in bidir][:4])

    reps = c.tmp / "reps.json"
    r = c.run("--config", SMALL, "--benchmark_filter=^ce/push/bytes:1048576/", "--benchmark_repetitions=3",
              "--benchmark_min_time=0.02", f"--benchmark_out={reps}", "--benchmark_out_format=json", timeout=300)
    c.check(r.returncode == 0 and "GB/s=" in r.stdout, "repetitions: exit 0, console shows GB/s=", r.stdout[-2000:] + r.stderr)
    if reps.exists():
        rows = json.loads(reps.read_text())["benchmarks"]
        aggregates = {b.get("aggregate_name") for b in rows if b.get("run_type") == "aggregate"}
        iterations = [b for b in rows if b.get("run_type") == "iteration"]
        c.check(len(iterations) == 3 and {"mean", "median", "stddev"} <= aggregates
                and all("GB/s" in b for b in rows if b.get("aggregate_name") in ("mean", "median")),
                "repetitions: 3 runs and mean/median/stddev aggregates with GB/s (input for compare.py)",
                json.dumps(rows, indent=1)[:3000])

    swapped = c.tmp / "swapped.json"
    r = c.run("--config", SMALL, "--src", "1", "--dst", "0", "--benchmark_filter=^ldst/pull/bytes:4097/",
              "--benchmark_min_time=0.02", f"--benchmark_out={swapped}", timeout=300)
    ok = r.returncode == 0 and swapped.exists()
    ctx = json.loads(swapped.read_text())["context"] if ok else {}
    c.check(ok and ctx.get("src_gpu", "").startswith("1:") and ctx.get("dst_gpu", "").startswith("0:"),
            "--src 1 --dst 0: the context names GPU 1 as the source", r.stderr + json.dumps(ctx))

    r = c.run("--config", SMALL, "--src", "0", "--dst", "0")
    c.check(r.returncode == 2 and "--src/--dst" in r.stderr and "--allow-same-device" in r.stderr,
            "--src 0 --dst 0 without --allow-same-device: exit 2", r.stderr)
    r = c.run("--config", SMALL, "--dst", "GPU-00000000-0000-0000-0000-000000000000")
    c.check(r.returncode == 2 and "--dst" in r.stderr, "a --dst UUID that matches no GPU: exit 2 naming --dst", r.stderr)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("list_names", "no_gpu", "bad_input", "gpu_run"):
        print(__doc__)
        return 2
    c = Checks(sys.argv[2])
    globals()[sys.argv[1]](c)
    print(f"{c.passed} passed, {c.failed} failed")
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
