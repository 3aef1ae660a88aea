#!/usr/bin/env python3
"""Runs one GPU test on the GPUs it needs, and makes every skip visible (CTest: exit 77).

Usage: run_on_gpus.py --gpus N [--or-mps] [--name TEST] -- COMMAND [ARGS...]
       run_on_gpus.py --write-spec FILE   (CTest's resource spec of the visible GPUs; prints their count)

- The GPUs: those CTest allotted (resource type `gpus`, one group per GPU: scripts/test.sh writes
  the resource spec) become CUDA_VISIBLE_DEVICES; without an allotment, every visible GPU.
- Fewer visible than N: the test is not run; it is skipped with the reason (exit 77), or fails
  when P2PBENCH_REQUIRE_GPUS is N or more (a node that should have them). `--or-mps`: with at
  least one GPU and an MPS daemon reachable, ranks may share GPUs, so the test runs anyway.
- The test itself skipped (exit 77, or Google Test's "[  SKIPPED ]"): visible to CTest as a skip
  where GPUs were missing; a failure where the N GPUs were there, unless the skip names a missing
  service (its message says "missing service"), such as an IMEX channel or nvidia_fs.
- Every skip's reason is also appended to the file P2PBENCH_SKIP_LOG names, if any (with the
  test's --name), so that the test command can list the skips and why at its end.
The test sees P2PBENCH_TEST_GPUS (the GPUs it was given) and P2PBENCH_TEST_NEEDS_GPUS (N).
"""
import json
import os
import re
import subprocess
import sys

SKIP = 77
GTEST_SKIPPED = re.compile(r"^\[ RUN      \] (\S+)\n(.*?)^\[  SKIPPED \] \1 ", re.M | re.S)


def allotted_gpus():
    """The GPU ids CTest allotted this test, or None when it ran without a resource spec."""
    groups = os.environ.get("CTEST_RESOURCE_GROUP_COUNT")
    if not groups:
        return None
    ids = []
    for g in range(int(groups)):
        for entry in os.environ.get(f"CTEST_RESOURCE_GROUP_{g}_GPUS", "").split(";"):
            fields = dict(part.split(":", 1) for part in entry.split(",") if ":" in part)
            if "id" in fields:
                ids.append(fields["id"])
    return ids


def visible_gpus():
    """How many GPUs a CUDA program started now would see."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return len([d for d in listed.split(",") if d.strip()])
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def mps_reachable():
    pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY") or "/tmp/nvidia-mps"
    return os.path.exists(os.path.join(pipe, "control"))


def record_skip(name, reason):
    print(f"SKIPPED: {reason}", flush=True)
    log = os.environ.get("P2PBENCH_SKIP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{name}: {reason}\n")


def write_spec(path):
    """CTest's resource spec: one `gpus` slot per visible GPU (ids as CUDA_VISIBLE_DEVICES takes them)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [d.strip() for d in listed.split(",") if d.strip()] if listed is not None else \
        [str(i) for i in range(visible_gpus())]
    spec = {"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": i, "slots": 1} for i in ids]}]}
    with open(path, "w") as f:
        json.dump(spec, f)
    print(len(ids))
    return 0


def required_gpus():
    value = os.environ.get("P2PBENCH_REQUIRE_GPUS", "0") or "0"
    if not value.isdigit():
        print(f"run_on_gpus: P2PBENCH_REQUIRE_GPUS must be a whole number, not {value!r}", file=sys.stderr)
        sys.exit(2)
    return int(value)


def run(command):
    """Runs the test, passing its output through as it comes; returns (exit code, output)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    return proc.wait(), "".join(lines)


def skip_reasons(output):
    """The skip lines a test printed: its own SKIPPED lines, and each test Google Test skipped
    with the message it gave (the lines between its RUN and SKIPPED lines)."""
    reasons = [line.strip() for line in output.splitlines() if line.lstrip().startswith("SKIPPED")]
    for name, body in GTEST_SKIPPED.findall(output):
        if any(name in r for r in reasons):
            continue  # named already (tests/gpu_test_main.cpp says why each case skipped)
        message = " ".join(line.strip() for line in body.splitlines() if line.strip() and not line.endswith(": Skipped"))
        reasons.append(f"{name}: {message or 'skipped'}")
    return reasons


def parse(argv):
    """(GPUs needed, --or-mps, the test's name, the command), or exits 2 with the usage."""
    split = argv.index("--") if "--" in argv else len(argv)
    options, command = argv[:split], argv[split + 1:]
    or_mps = "--or-mps" in options
    options = [o for o in options if o != "--or-mps"]
    values = dict(zip(options[::2], options[1::2]))
    if not command or not values.get("--gpus", "").isdigit() or set(values) - {"--gpus", "--name"}:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    return int(values["--gpus"]), or_mps, values.get("--name", command[0]), command


def main(argv):
    if len(argv) == 2 and argv[0] == "--write-spec":
        return write_spec(argv[1])
    needs, or_mps, name, command = parse(argv)
    ids = allotted_gpus()
    if ids:
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(ids)
    have = visible_gpus()
    shared = or_mps and have >= 1 and mps_reachable()
    if have < needs and not shared:
        reason = (f"needs {needs} GPU{'s' if needs > 1 else ''}, {have} visible"
                  + ("" if have else ": GPU tests run on a GPU node (scripts/gpu-check.sh)"))
        if required_gpus() >= needs:
            print(f"FAILED: {reason}, and P2PBENCH_REQUIRE_GPUS={required_gpus()} says they should be there")
            return 1
        record_skip(name, reason)
        return SKIP
    os.environ["P2PBENCH_TEST_GPUS"] = str(have)
    os.environ["P2PBENCH_TEST_NEEDS_GPUS"] = str(needs)
    code, output = run(command)
    reasons = skip_reasons(output)
    if code not in (0, SKIP) or not reasons and code == 0:
        return code
    if not reasons:
        reasons = ["the test exited 77 without saying why"]
    unexcused = [r for r in reasons if "missing service" not in r]
    if have >= needs and unexcused:
        print(f"FAILED: skipped with the {have} GPU(s) it needs visible: " + "; ".join(unexcused))
        return 1
    record_skip(name, "; ".join(reasons))
    return SKIP


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
