#!/usr/bin/env python3
"""put_signal on a GPU node (label `gpu`): 2, 3 and 4 ranks, every chunk flagged, checked by the
receiver as it arrives and every byte checked after each sample.

The two ends of a flow run at once, so ranks sharing a GPU need MPS: with every GPU shared and
no MPS daemon reachable the check is skipped (exit 77) and says so. P2PBENCH_PUT_SIGNAL_RANKS
picks the rank counts (default 2,3,4). Where the MPS server refuses a client's context (an
H200 node refused a fourth, out of memory), that rank count is skipped and says so. Prints
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
METHODS = ("put_signal_ldst", "put_signal_tma", "put_signal_ce")
# What a rank prints when its GPU context cannot be made; under MPS on an H200 node a fourth
# client of one GPU met it (three worked), with the daemon fresh and /dev/shm large.
MPS_CLIENT_REFUSED = ("selecting the GPU: selecting GPU", "cudaErrorMemoryAllocation")


def mps_reachable():
    pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY") or "/tmp/nvidia-mps"
    return os.path.exists(os.path.join(pipe, "control"))


def run(binary, mpiexec, ranks, gpus, out):
    devices = ",".join(str(r % gpus) for r in range(ranks))
    cmd = [*mpiexec, "-np", str(ranks), binary, "--config", CONFIG, "--output", str(out), "--devices", devices,
           "--patterns", "ring" if ranks > 2 else "matrix"]
    if gpus < ranks:
        cmd.append("--allow-same-device")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def main():
    gpus, code = gpus_or_exit_code(__doc__)
    if code is not None:
        return code
    if gpus < 4 and not mps_reachable():
        print(f"SKIPPED: {gpus} GPU(s) for up to 4 ranks and no MPS daemon: a put_signal flow's two ends must run "
              "at once (start one with `nvidia-cuda-mps-control -d`)")
        return 77
    binary, mpiexec = sys.argv[1], sys.argv[2:]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-put-signal-"))
    passed = failed = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\n    " + detail[-3000:]))
        passed, failed = passed + ok, failed + (not ok)

    counts = os.environ.get("P2PBENCH_PUT_SIGNAL_RANKS", "2,3,4")
    for ranks in (int(n) for n in counts.split(",")):
        out = tmp / f"put-signal-{ranks}.json"
        r = run(binary, mpiexec, ranks, gpus, out)
        output = r.stdout + r.stderr
        if r.returncode != 0 and gpus < ranks and all(s in output for s in MPS_CLIENT_REFUSED):
            # The node's MPS server refused one more client: not this program's failure.
            print(f"SKIPPED ({ranks} ranks): the MPS server refused a client's context: " +
                  next(line for line in output.splitlines() if MPS_CLIENT_REFUSED[0] in line))
            continue
        check(r.returncode == 0, f"{ranks} ranks: exit 0", r.stdout + r.stderr)
        if not out.exists():
            check(False, f"{ranks} ranks: result file written")
            continue
        rows = [row for row in json.loads(out.read_text())["results"] if row["method"] in METHODS]
        ran = {m: [row for row in rows if row["method"] == m and row["status"] == "ok"] for m in METHODS}
        check(all(ran.values()), f"{ranks} ranks: every method ran", json.dumps({m: len(v) for m, v in ran.items()}))
        skipped = [row for row in rows if row["status"] == "skipped"]
        # Only the copy engine's bound on chunks per transfer may skip a case of this config.
        check(all("signals" in row.get("error", "") or "more than" in row.get("error", "") for row in skipped),
              f"{ranks} ranks: nothing skipped but what the copy engine's chunk bound refuses",
              json.dumps([(row["method"], row.get("error")) for row in skipped][:4]))
        bad = [row for row in rows if row["status"] == "failed" or (row["status"] == "ok" and not row["verified"])]
        check(not bad, f"{ranks} ranks: every case ran verified", json.dumps(bad[:2], indent=1))
        patterns = {row["pattern"] for row in rows if row["status"] == "ok"}
        check(ranks == 2 or patterns == {"ring"}, f"{ranks} ranks: the ring pattern ran", str(patterns))
        ce = [row for row in ran["put_signal_ce"] if row["src_rank"] is not None]
        check(all(row["sms_used"] == 0 for row in ce), f"{ranks} ranks: the copy engine's sender uses no SM",
              json.dumps([row["sms_used"] for row in ce][:4]))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
