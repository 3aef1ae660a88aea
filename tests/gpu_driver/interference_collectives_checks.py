#!/usr/bin/env python3
"""Collectives beside a GEMM over every rank of the run (label `gpu`), with 2, 3 and 4 ranks: the
copy engine's all-gather and all-to-all, NCCL's, and the all-gather of puts (unpartitioned and in
an 8-SM group), each rank's GPU running the GEMM while the collective runs between all of them.
Every case must run verified (each rank's output checked against every sender's pattern after
each transfer phase), its flows every ordered pair of the ranks, the GEMM on every GPU, the copy
engine's collectives on no SM, NCCL's on the blocks read from its kernels, the puts on their 8
blocks, in the group no more SMs than it holds. NCCL refuses ranks that share a GPU, and green
contexts keep no partition under MPS: those rows are then skipped with that reason. Ranks sharing
a GPU need MPS (skipped with the reason otherwise).
P2PBENCH_INTERFERENCE_COLLECTIVES_RANKS picks the rank counts (default 2,3,4). Prints
'N passed, N failed'.
Usage: interference_collectives_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import pathlib
import sys

from driver_checks import interference_figures
from put_signal_checks import run_rank_counts

CONFIG = str(pathlib.Path(__file__).resolve().parent / "interference-collectives-small.json")
COPY_ENGINE = ("all_gather_ce", "all_to_all_ce")
NCCL = ("nccl_all_gather", "nccl_all_to_all")
PUTS = "all_gather_put"  # 8 blocks; unpartitioned, then in an 8-SM group
BLOCKS = GROUP = 8


def status_of(row):
    return json.dumps({k: row.get(k) for k in ("status", "verified", "sms_used", "transfer_group_sms", "workload_gpus",
                                               "error")})


def puts_rows(check, ranks, by_case, shared_gpu):
    whole = by_case.get((PUTS, 0), {})
    check(whole.get("status") == "ok" and whole.get("verified") and whole.get("sms_used") == BLOCKS and
          whole.get("transfer_group_sms") is None and whole.get("workload_gpus") == ranks,
          f"{ranks} ranks: {PUTS} verified on its {BLOCKS} blocks, unpartitioned, the GEMM on every GPU", status_of(whole))
    grouped = by_case.get((PUTS, GROUP), {})
    group_sms = grouped.get("transfer_group_sms") or 0
    ran_here = grouped.get("status") == "ok" and grouped.get("verified") and group_sms >= GROUP and \
        0 < (grouped.get("sms_used") or 0) <= group_sms and grouped.get("workload_gpus") == ranks
    refused = shared_gpu and grouped.get("status") == "skipped" and "MPS" in grouped.get("error", "")
    check(ran_here or refused, f"{ranks} ranks: {PUTS} verified in a group of {GROUP}+ SMs, on no more SMs than it holds"
          + (" (or skipped: green contexts keep no partition under MPS)" if shared_gpu else ""), status_of(grouped))


def interference_rows(check, ranks, rows, ran):
    by_case = {(row["engine"], row["sm_partition"]): row for row in rows}
    expected = [(e, 0) for e in COPY_ENGINE + NCCL] + [(PUTS, 0), (PUTS, GROUP)]
    check(sorted(by_case) == sorted(expected) and len(rows) == len(expected),
          f"{ranks} ranks: one case per engine, the puts' also in an SM group", json.dumps(sorted(by_case)))
    pairs = {(s, d) for s in range(ranks) for d in range(ranks) if s != d}
    check(all({(f["src_rank"], f["dst_rank"]) for f in row["flows"]} == pairs for row in rows),
          f"{ranks} ranks: every case's flows are every ordered pair of the {ranks} ranks",
          json.dumps([(row["engine"], [(f["src_rank"], f["dst_rank"]) for f in row["flows"]]) for row in rows][:2]))
    for engine in COPY_ENGINE:
        row = by_case.get((engine, 0), {})
        check(row.get("status") == "ok" and row.get("verified") and row.get("sms_used") == 0 and
              row.get("workload_gpus") == ranks,
              f"{ranks} ranks: {engine} verified, no SM, the GEMM on all {ranks} GPUs", status_of(row))
    shared_gpu = any(f["same_device"] for row in rows for f in row["flows"])
    for engine in NCCL:
        row = by_case.get((engine, 0), {})
        ran_here = row.get("status") == "ok" and row.get("verified") and 0 < (row.get("sms_used") or 0) <= 1024 and \
            row.get("workload_gpus") == ranks
        refused = shared_gpu and row.get("status") == "skipped" and "NCCL" in row.get("error", "").upper()
        check(ran_here or refused, f"{ranks} ranks: {engine} verified on the blocks of its kernels, the GEMM on every GPU"
              + (" (or skipped with NCCL's reason: ranks share a GPU)" if shared_gpu else ""), status_of(row))
    puts_rows(check, ranks, by_case, shared_gpu)
    for row in rows:
        if row["status"] != "ok":
            continue
        figures, complete = interference_figures(row)
        check(complete, f"{ranks} ranks: {row['engine']}: the workload's and the transfer's figures, alone and together",
              json.dumps(figures))


def main():
    return run_rank_counts(__doc__, CONFIG, ("interference",), "P2PBENCH_INTERFERENCE_COLLECTIVES_RANKS",
                           lambda ranks: "all_to_all", interference_rows)


if __name__ == "__main__":
    sys.exit(main())
