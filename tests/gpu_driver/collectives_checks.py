#!/usr/bin/env python3
"""The collectives on a GPU node (label `gpu`): reduce-scatter, all-gather and all-reduce built
from puts (the atomic-add reduce-scatter also of bf16), all-gather and all-to-all by the copy
engine, and NCCL's (its all-to-all too), with 2, 3 and 4 ranks
(all_to_all), every rank's output checked against the reference of the operands after each sample.

Besides the run it checks the figures: each row's ranks and nccl-tests' bus factor, algorithm
bandwidth = bytes / time and bus bandwidth = algorithm bandwidth x factor, and the sizes used
(reduce-scatter, all-gather and all-to-all round down to whole chunks; all-reduce keeps its size), and the
element each row names (bf16 for the bf16 method, f32 for every other). NCCL refuses ranks that
share a GPU: its rows are then skipped, with NCCL's reason; where each rank has a GPU of its own
they must run verified. Ranks sharing a GPU need MPS (skipped with the reason otherwise).
P2PBENCH_COLLECTIVES_RANKS picks the rank counts (default 2,3,4). Prints 'N passed, N failed'.
Usage: collectives_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import math
import pathlib
import sys

from put_signal_checks import run_rank_counts

CONFIG = str(pathlib.Path(__file__).resolve().parent / "collectives-small.json")
METHODS = ("reduce_scatter_add", "reduce_scatter_add_bf16", "reduce_scatter_two_shot", "all_gather_put",
           "all_reduce_two_shot", "all_reduce_one_shot", "reduce_scatter_two_shot_tma", "all_gather_tma",
           "all_reduce_two_shot_tma", "all_gather_ce", "all_to_all_ce")
NCCL = ("nccl_reduce_scatter", "nccl_all_gather", "nccl_all_reduce", "nccl_all_to_all")
BF16 = ("reduce_scatter_add_bf16",)


def expected_factor(operation, ranks):
    share = (ranks - 1) / ranks
    return 2 * share if operation == "all_reduce" else share


def collective_rows(check, ranks, rows, ran):
    ok = [row for row in rows if row["status"] == "ok"]
    check(all(row["collective"]["ranks"] == ranks and row["pattern"] == "all_to_all" for row in rows),
          f"{ranks} ranks: every row is an all_to_all collective of {ranks} ranks",
          json.dumps([(row["method"], row["collective"]["ranks"], row["pattern"]) for row in rows][:4]))
    check(all(math.isclose(row["collective"]["bus_factor"], expected_factor(row["collective"]["operation"], ranks))
              for row in rows), f"{ranks} ranks: bus factors are nccl-tests' ((n-1)/n, all-reduce 2(n-1)/n)")
    check(all(row["collective"]["element"] == ("bf16" if row["method"] in BF16 else "f32") for row in rows),
          f"{ranks} ranks: rows name their element (bf16: {', '.join(BF16)}; f32: every other)",
          json.dumps(sorted({(row["method"], row["collective"]["element"]) for row in rows})))
    figures = [(row, row["collective"]) for row in ok]
    check(figures and all(c["busbw_gbps"] and c["busbw_gbps"]["median"] > 0 for _, c in figures),
          f"{ranks} ranks: every collective that ran has a bus bandwidth")
    check(all(math.isclose(c["algbw_gbps"]["median"] * row["time_us"]["median"] * 1e3, c["bytes"], rel_tol=1e-6) and
              math.isclose(c["busbw_gbps"]["median"], c["algbw_gbps"]["median"] * c["bus_factor"], rel_tol=1e-9)
              for row, c in figures),
          f"{ranks} ranks: algbw = bytes / time per operation, busbw = algbw x bus factor",
          json.dumps([(c["algbw_gbps"]["median"], row["time_us"]["median"], c["bytes"]) for row, c in figures][:4]))
    rounded = [(row, c) for row, c in figures if row["bytes"] == 1000004]
    check(rounded and all((c["bytes"] == 1000004) == (c["operation"] == "all_reduce") and c["bytes"] % (16 * ranks if
                          c["operation"] != "all_reduce" else 4) == 0 for row, c in rounded),
          f"{ranks} ranks: reduce-scatter, all-gather and all-to-all round 1000004 bytes down to whole chunks; "
          "all-reduce keeps them",
          json.dumps([(row["method"], c["bytes"]) for row, c in rounded]))
    nccl = [row for row in rows if row["method"] in NCCL]
    shared_gpu = any(f["same_device"] for row in rows for f in row["flows"])
    check(bool(nccl) and all((row["status"] == "ok" and row["verified"]) or
                       (shared_gpu and row["status"] == "skipped" and "NCCL" in row.get("error", "").upper())
                       for row in nccl),
          f"{ranks} ranks: NCCL's collectives ran verified" + (" or were skipped with NCCL's reason (ranks share a GPU)"
                                                                if shared_gpu else ""),
          json.dumps([(row["method"], row["status"], row.get("error")) for row in nccl][:3]))


def main():
    return run_rank_counts(__doc__, CONFIG, METHODS, "P2PBENCH_COLLECTIVES_RANKS", lambda ranks: "all_to_all",
                           collective_rows, NCCL)


if __name__ == "__main__":
    sys.exit(main())
