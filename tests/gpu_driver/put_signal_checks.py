#!/usr/bin/env python3
"""put_signal on a GPU node (label `gpu`): 2, 3 and 4 ranks, every chunk flagged, checked by the
receiver as it arrives and every byte checked after each sample; beside it the put + flag
ping-pong of each engine (latency_signal's payload_then_flag, tma_then_flag, ce_then_flag).

The two ends of a flow run at once, so ranks sharing a GPU need MPS: with every GPU shared and
no MPS daemon reachable the check is skipped (exit 77) and says so. P2PBENCH_PUT_SIGNAL_RANKS
picks the rank counts (default 2,3,4). Where the MPS server still refuses a client's context
(p2pbench asks for its share of the server's hardware queues, common/device_connections.hpp),
that rank count is skipped and says so. Prints
'N passed, N failed'.
Usage: put_signal_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from driver_checks import gpus_or_exit_code

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = str(HERE / "put-signal-small.json")
METHODS = ("put_signal_ldst", "put_signal_tma", "put_signal_ce", "latency_signal")
# The put + flag ping-pong of each engine (latency_signal's protocols), beside the put_signal methods.
PING_PONG_PROTOCOLS = {"payload_then_flag", "tma_then_flag", "ce_then_flag"}
# What a rank prints when its GPU context cannot be made: an H200 node's MPS server gave it to a
# fourth client when each asked for 32 hardware queues.
MPS_CLIENT_REFUSED = ("selecting the GPU: selecting GPU", "cudaErrorMemoryAllocation")


def mps_reachable():
    pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY") or "/tmp/nvidia-mps"
    return os.path.exists(os.path.join(pipe, "control"))


def run(binary, mpiexec, config, ranks, gpus, out, pattern):
    devices = ",".join(str(r % gpus) for r in range(ranks))
    cmd = [*mpiexec, "-np", str(ranks), binary, "--config", config, "--output", str(out), "--devices", devices,
           "--patterns", pattern]
    if gpus < ranks:
        cmd.append("--allow-same-device")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def run_rank_counts(doc, config, methods, env_counts, pattern_for, check_rows, optional_methods=()):
    """Runs `config` at each rank count (env_counts: the variable naming them, default 2,3,4) and
    hands the rows of `methods` and `optional_methods` to check_rows(check, ranks, rows, ran).
    Every one of `methods` must run; `optional_methods` may be skipped (check_rows says when).
    Returns the exit code."""
    gpus, code = gpus_or_exit_code(doc)
    if code is not None:
        return code
    counts = [int(n) for n in os.environ.get(env_counts, "2,3,4").split(",")]
    if gpus < max(counts) and not mps_reachable():
        print(f"SKIPPED: {gpus} GPU(s) for up to {max(counts)} ranks and no MPS daemon: a flow's two ends must run "
              "at once (start one with `nvidia-cuda-mps-control -d`)")
        return 77
    binary, mpiexec = sys.argv[1], sys.argv[2:]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-two-ended-"))
    passed = failed = skipped = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\n    " + detail[-3000:]))
        passed, failed = passed + bool(ok), failed + (not ok)  # `ok` may be an empty list

    for ranks in counts:
        out = tmp / f"run-{ranks}.json"
        r = run(binary, mpiexec, config, ranks, gpus, out, pattern_for(ranks))
        output = r.stdout + r.stderr
        if r.returncode != 0 and gpus < ranks and all(s in output for s in MPS_CLIENT_REFUSED):
            # The node's MPS server refused one more client: not this program's failure.
            print(f"SKIPPED ({ranks} ranks): the MPS server refused a client's context: " +
                  next(line for line in output.splitlines() if MPS_CLIENT_REFUSED[0] in line))
            skipped += 1
            continue
        check(r.returncode == 0, f"{ranks} ranks: exit 0", output)
        if not out.exists():
            check(False, f"{ranks} ranks: result file written")
            continue
        rows = [row for row in json.loads(out.read_text())["results"] if row["method"] in (*methods, *optional_methods)]
        ran = {m: [row for row in rows if row["method"] == m and row["status"] == "ok"] for m in methods}
        check(all(ran.values()), f"{ranks} ranks: every method ran", json.dumps({m: len(v) for m, v in ran.items()}))
        bad = [row for row in rows if row["status"] == "failed" or (row["status"] == "ok" and not row["verified"])]
        check(not bad, f"{ranks} ranks: every case ran verified", json.dumps(bad[:2], indent=1))
        check_rows(check, ranks, rows, ran)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if failed:
        return 1
    if skipped:  # a part not run is a skip CTest shows, never a pass
        return 77
    return 0 if passed else 1  # a check that ran nothing fails


def put_signal_rows(check, ranks, rows, ran):
    skipped = [row for row in rows if row["status"] == "skipped"]
    # Only the copy engine's bound on chunks per transfer may skip a case of this config.
    check(all("signals" in row.get("error", "") or "more than" in row.get("error", "") for row in skipped),
          f"{ranks} ranks: nothing skipped but what the copy engine's chunk bound refuses",
          json.dumps([(row["method"], row.get("error")) for row in skipped][:4]))
    patterns = {row["pattern"] for row in rows if row["status"] == "ok" and row["method"] != "latency_signal"}
    check(ranks == 2 or patterns == {"ring"}, f"{ranks} ranks: the ring pattern ran (latency_signal: every pair)",
          str(patterns))
    pongs = ran["latency_signal"]
    check({row["protocol"] for row in pongs} == PING_PONG_PROTOCOLS and
          all(row["latency_us"] and row["latency_us"]["median"] > 0 for row in pongs),
          f"{ranks} ranks: the put + flag ping-pong ran for LD/ST, TMA and the copy engine, each with a latency",
          json.dumps([(row["protocol"], row["payload_bytes"] if "payload_bytes" in row else row.get("bytes"),
                       row["latency_us"]) for row in pongs][:6]))
    ce = [row for row in ran["put_signal_ce"] if row["src_rank"] is not None]
    check(all(row["sms_used"] == 0 for row in ce), f"{ranks} ranks: the copy engine's sender uses no SM",
          json.dumps([row["sms_used"] for row in ce][:4]))
    # Batched copies are queued one by one behind the gate (no graph holds them), one way and both.
    batched_modes = {row["mode"] for row in ran["put_signal_ce"] if row.get("copy_batch") == 1}
    check(batched_modes == {"uni", "bidir"}, f"{ranks} ranks: the copy engine's batched puts ran one way and both ways",
          str(batched_modes))


def main():
    return run_rank_counts(__doc__, CONFIG, METHODS, "P2PBENCH_PUT_SIGNAL_RANKS",
                           lambda ranks: "ring" if ranks > 2 else "matrix", put_signal_rows)


if __name__ == "__main__":
    sys.exit(main())
