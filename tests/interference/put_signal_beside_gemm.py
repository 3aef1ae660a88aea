#!/usr/bin/env python3
"""A put with signal, NCCL's send/receive and collectives (the copy engine's all-gather and
all-to-all, NCCL's all-gather) as the transfer beside the GEMM, between two ranks on two GPUs: the
sender on GPU 0 beside the workload, the receiver on GPU 1 (both ways at once: each rank runs a
sender and the other flow's receiver; NCCL both in one group; a collective both ways, the GEMM
on both GPUs). Every case must be ok
and verified (the destination poisoned before each transfer phase, every byte checked after it),
carry both figures; put_signal_ce's rows must say the sender took no SMs where the stream writes
the signals, NCCL's rows the blocks its kernel was launched with (read from a capture), the copy
engine's collectives no SM.
Exits 77 (CTest: skipped) with the reason where two GPUs are not visible. Prints 'N passed, N failed'.
Usage: put_signal_beside_gemm.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "gpu_driver"))
from driver_checks import Checks, gpus_or_exit_code, interference_figures  # noqa: E402

CONFIG = HERE / "put-signal-beside-gemm.json"


def expected_cases(binary):
    """The case names the dry run plans for the config: the run must report each of them."""
    plan = subprocess.run([binary, "--config", str(CONFIG), "--dry-run"], capture_output=True, text=True,
                          timeout=120, check=True).stdout
    return [line.split()[1] for line in plan.splitlines() if line.strip()[:1].isdigit() and "interference/" in line]


def check_rows(c, rows, planned):
    """Every planned case reported, ok and verified, with its figures; the copy engine's sender
    without SMs where the stream writes its signals, NCCL's with the blocks of its kernel."""
    c.check(len(rows) == len(planned) and len(planned) > 0, f"{len(planned)} cases planned, {len(rows)} reported",
            str([row.get("case") for row in rows]))
    for row in rows:
        name = f"{row.get('engine')} {row.get('mode')} K={row.get('sm_partition')} {row.get('chunk_bytes')}"
        ok = row["status"] == "ok" and row["verified"]
        c.check(ok, f"{name}: ok and verified", str((row["status"], row.get("error"))))
        if not ok:
            continue
        figures, complete = interference_figures(row)
        c.check(complete, f"{name}: the workload's and the transfer's figures, alone and together", str(figures))
        if row.get("engine") in ("nccl", "nccl_all_gather"):
            blocks = row.get("sms_used")
            c.check(isinstance(blocks, int) and 0 < blocks <= 1024, f"{name}: NCCL's blocks read from its kernel",
                    str(blocks))
        if row.get("engine") in ("all_gather_ce", "all_to_all_ce"):
            c.check(row.get("sms_used") == 0 and row.get("workload_gpus") == 2,
                    f"{name}: no SM, the GEMM on both GPUs", str((row.get("sms_used"), row.get("workload_gpus"))))
        if row.get("engine") == "put_signal_ce":
            # Signals written by the stream take no SM; 4-byte copies (signal_copy 1) wait for one,
            # so no SM count is claimed for them.
            expected = 0 if row.get("signal_copy") == 0 else None
            c.check(row.get("sms_used") == expected,
                    f"{name} signal_copy {row.get('signal_copy')}: sms_used {expected}", str(row.get("sms_used")))


def main():
    gpus, code = gpus_or_exit_code(__doc__)
    if code is not None:
        return code
    if gpus < 2:
        print(f"SKIPPED: a put with signal beside the GEMM runs between two GPUs; {gpus} visible")
        return 77
    c = Checks(sys.argv[1], sys.argv[2:])
    planned = expected_cases(c.binary)
    out = c.tmp / "put-signal.json"
    r = c.mpirun("--config", str(CONFIG), "--output", str(out), timeout=600)
    c.check(r.returncode == 0 and out.exists(), "exit 0, file written", r.stdout + r.stderr)
    if out.exists():
        check_rows(c, json.loads(out.read_text())["results"], planned)
    print(f"{c.passed} passed, {c.failed} failed")
    return 0 if c.failed == 0 and c.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
