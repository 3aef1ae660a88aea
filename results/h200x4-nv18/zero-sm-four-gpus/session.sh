#!/usr/bin/env bash
# On a node of four GPUs: the zero-SM transfers over four ranks (one GPU each, no MPS). The
# copy-engine collectives beside NCCL's (configs/ce-collectives.json), the collectives beside a
# GEMM on every GPU (configs/interference-collectives.json: over all four ranks; ce and nccl
# between GPUs 0 and 1), the GEMM beside each zero-SM and SM engine (configs/interference-zero-sm.json,
# GPUs 0 and 1 of the four), then the four-rank tests of these (P2PBENCH_REQUIRE_GPUS=4: a skip
# is a failure). Prepared on a two-GPU node's results (../../h200-nv18/zero-sm-2026-11-29/,
# ../../h200-nv18/interference-every-rank-2026-11-29/); COMMANDS.md is written when it has run.
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
four=(mpirun -np 4 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1,2,3)

session_step ce-collectives 120 "${four[@]}" --config configs/ce-collectives.json --output "$work/ce-collectives.json"
session_step interference-collectives 240 "${four[@]}" --config configs/interference-collectives.json \
  --output "$work/interference-collectives.json"
session_step interference-zero-sm 260 "${four[@]}" --config configs/interference-zero-sm.json \
  --output "$work/interference-zero-sm.json"
session_step four-gpu-tests 150 env P2PBENCH_REQUIRE_GPUS=4 scripts/run-ctest.sh build-gpu -R \
  'gpu_driver_interference_collectives_4_ranks|gpu_driver_collectives_4_ranks|test_ce_collectives_two_gpus'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/four-gpu-tests.log" | tail -20 >>"$summary"
finish_steps session.sh
