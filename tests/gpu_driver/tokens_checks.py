#!/usr/bin/env python3
"""The tokens methods on a GPU node (label `gpu`): dispatch and combine with 2, 3 and 4 ranks
(matrix for 2, all_to_all beyond), every token checked by the receiver as it arrives and every
byte (the combine's bf16 sums included) after each sample.

Besides the run itself it checks what the router decides: each flow carries whole tokens, no
more than a rank holds; a combine flow returns what the dispatch flow the other way brought;
the skewed router sends other counts than the uniform one; and each flow's figure is its own
bytes over its time. Ranks sharing a GPU need MPS (skipped with the reason otherwise).
P2PBENCH_TOKENS_RANKS picks the rank counts (default 2,3,4). Prints 'N passed, N failed'.
Usage: tokens_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import math
import pathlib
import sys

from put_signal_checks import run_rank_counts

CONFIG = str(pathlib.Path(__file__).resolve().parent / "tokens-small.json")
METHODS = ("tokens_dispatch_ldst", "tokens_dispatch_tma", "tokens_combine_ldst", "tokens_combine_tma")


def flow_counts(rows, phase):
    """{(shape, src, dst): tokens} of the ok rows of one phase (dispatch or combine)."""
    counts = {}
    for row in rows:
        if row["status"] != "ok" or f"_{phase}_" not in row["method"]:
            continue
        shape = (row["method"].rsplit("_", 1)[1], row["chunk_bytes"], row["routing_skew"])
        for f in row["flows"]:
            counts[shape + (f["src_rank"], f["dst_rank"])] = f["bytes"] / row["chunk_bytes"]
    return counts


def token_rows(check, ranks, rows, ran):
    ok = [row for row in rows if row["status"] == "ok"]
    flows = [(row, f) for row in ok for f in row["flows"]]
    check(all(f["bytes"] % row["chunk_bytes"] == 0 and 0 < f["bytes"] <= row["bytes"] for row, f in flows),
          f"{ranks} ranks: every flow carries whole tokens, no more than a rank holds",
          json.dumps([(row["method"], f["bytes"], row["chunk_bytes"], row["bytes"]) for row, f in flows][:6]))
    check(any(f["bytes"] < row["bytes"] for row, f in flows),
          f"{ranks} ranks: the router keeps some tokens home (a flow carries less than a rank holds)")
    dispatch, combine = flow_counts(rows, "dispatch"), flow_counts(rows, "combine")
    mirrored = {k[:3] + (k[4], k[3]): v for k, v in dispatch.items()}
    common = set(mirrored) & set(combine)
    check(common and all(mirrored[k] == combine[k] for k in common),
          f"{ranks} ranks: each combine flow returns what the dispatch flow the other way brought",
          json.dumps(sorted((str(k), mirrored[k], combine[k]) for k in common)[:6]))
    by_skew = {}
    for (engine, chunk, skew, src, dst), n in dispatch.items():
        by_skew.setdefault((engine, chunk, src, dst), {})[skew] = n
    check(any(len(set(v.values())) > 1 for v in by_skew.values()),
          f"{ranks} ranks: the skewed router sends other counts than the uniform one", json.dumps(list(by_skew.items())[:4], default=str))
    single = [(row, row["flows"][0]) for row in ok if len(row["flows"]) == 1]
    check(all(math.isclose(f["bandwidth_gbps"]["median"] * f["time_us"]["median"] * 1e3, f["bytes"], rel_tol=1e-6)
              for row, f in single),
          f"{ranks} ranks: a flow's GB/s is its own bytes over its time",
          json.dumps([(f["bandwidth_gbps"]["median"], f["time_us"]["median"], f["bytes"]) for _, f in single][:4]))


def main():
    return run_rank_counts(__doc__, CONFIG, METHODS, "P2PBENCH_TOKENS_RANKS",
                           lambda ranks: "all_to_all" if ranks > 2 else "matrix", token_rows)


if __name__ == "__main__":
    sys.exit(main())
