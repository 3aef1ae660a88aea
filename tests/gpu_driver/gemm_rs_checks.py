#!/usr/bin/env python3
"""The GEMM -> reduce-scatter pipeline on a GPU node (label `gpu`): its five methods (fused,
sequential, beside, the GEMM alone, the reduce-scatter alone) with 2, 3 and 4 ranks (all_to_all),
every rank's tiles of the summed D (the GEMM alone: its own D) sampled against a float64
reference after each sample.

The fused pipeline with green-context SM groups (gemm_rs_fused_green) runs where each rank has a
GPU of its own and no MPS daemon is up; elsewhere its rows must be skipped with that reason.
Besides the run it checks the rows: the GEMM's shape and flops (m = n = 1024 from 4 MiB of f32, K
512), TFLOP/s = flops / time, and that every pipeline shape has all five variants, from which the
overlap efficiency is computed. Ranks sharing a GPU need MPS (skipped with the reason otherwise).
P2PBENCH_GEMM_RS_RANKS picks the rank counts (default 2,3,4). Prints 'N passed, N failed'.
Usage: gemm_rs_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import math
import pathlib
import sys

from put_signal_checks import run_rank_counts

CONFIG = str(pathlib.Path(__file__).resolve().parent / "gemm-rs-small.json")
METHODS = ("gemm_rs_fused", "gemm_rs_sequential", "gemm_rs_beside", "gemm_rs_gemm_only", "gemm_rs_rs_only")
GREEN = "gemm_rs_fused_green"  # needs a GPU per rank without MPS; skipped, saying so, otherwise


def green_rows(check, ranks, rows):
    green = [row for row in rows if row["method"] == GREEN]
    check(bool(green) and all(row["status"] == "ok" or (row["status"] == "skipped" and "MPS" in row.get("error", ""))
                        for row in green),
          f"{ranks} ranks: {GREEN} ran, or was skipped because green contexts keep no partition under MPS",
          json.dumps([(row["status"], row.get("error")) for row in green][:2]))


def pipeline_rows(check, ranks, rows, ran):
    green_rows(check, ranks, rows)
    ok = [row for row in rows if row["status"] == "ok"]
    check(all(row["gemm_rs"]["m"] == 1024 and row["gemm_rs"]["k"] == 512 and
              math.isclose(row["gemm_rs"]["gemm_flops"], 2 * 1024 * 1024 * 512) for row in ok),
          f"{ranks} ranks: every row names its GEMM (1024 x 1024 x 512) and its flops")
    check(all(math.isclose(row["gemm_rs"]["gemm_tflops"]["median"] * row["time_us"]["median"] * 1e6,
                           row["gemm_rs"]["gemm_flops"], rel_tol=1e-6) for row in ok),
          f"{ranks} ranks: TFLOP/s = the GEMM's flops / the time per operation")
    shapes = {}
    for row in ok:
        shapes.setdefault((row["tiles"], row["blocks"]), set()).add(row["method"])
    check(bool(shapes) and all(v - {GREEN} == set(METHODS) for v in shapes.values()),
          f"{ranks} ranks: every pipeline shape has its five variants (the overlap efficiency's terms)",
          json.dumps({str(k): sorted(v) for k, v in shapes.items()}))


def main():
    return run_rank_counts(__doc__, CONFIG, METHODS, "P2PBENCH_GEMM_RS_RANKS", lambda ranks: "all_to_all", pipeline_rows,
                           optional_methods=(GREEN,))


if __name__ == "__main__":
    sys.exit(main())
