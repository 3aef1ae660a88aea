#!/usr/bin/env bash
# On a node of four GPUs: the zero-SM transfers over four ranks (one GPU each, no MPS), in two
# parts, or both in one call (all: about 8 minutes since the GEMM's check was mended; the dry
# run's estimates at four ranks sum to about 265 s of sweeps).
#   collectives: the collectives beside a GEMM on every GPU over all four ranks
#     (configs/interference-collectives.json; ce and nccl between GPUs 0 and 1), the all-gather of
#     the copy engine, of SM puts in 8- and 16-SM groups and of NCCL beside it
#     (configs/interference-collectives-sm.json), then the four-rank tests of these
#     (P2PBENCH_REQUIRE_GPUS=4: a skip is a failure). About 4 minutes with the build.
#   zero-sm: the copy-engine collectives beside NCCL's (configs/ce-collectives.json), then the GEMM
#     beside each zero-SM and SM engine (configs/interference-zero-sm.json, GPUs 0 and 1 of the
#     four) and in 1 MiB puts beside NCCL's send/receive (configs/interference-ce-batch.json), and
#     the put collectives of configs/collectives.json at four and at two ranks (the
#     kernel writers' four-H200 table, last measured before the 16-byte stores were made whole:
#     ../collectives-2026-11-27/after-calibration/). About 4.5 minutes.
# Prepared on a two-GPU node's results (../../h200-nv18/zero-sm-2026-11-29/,
# ../../h200-nv18/interference-every-rank-2026-11-29/, ../../h200-nv18/collectives-sm-beside-gemm-2026-11-30/,
# ../../h200-nv18/interference-sustained-2026-11-30/);
# COMMANDS.md is written when it has run.
# Usage: session.sh OUT_DIR collectives|zero-sm|all
set -uo pipefail
part=${2:-}
case "$part" in
  collectives|zero-sm|all) ;;
  *) echo "usage: session.sh OUT_DIR collectives|zero-sm|all" >&2; exit 2 ;;
esac
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
four=(mpirun -np 4 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1,2,3)

if [ "$part" != zero-sm ]; then
  session_step interference-collectives 120 "${four[@]}" --config configs/interference-collectives.json \
    --output "$work/interference-collectives.json"
  session_step interference-collectives-sm 150 "${four[@]}" --config configs/interference-collectives-sm.json \
    --output "$work/interference-collectives-sm.json"
  session_tests four-gpu-tests 150 \
    'gpu_driver_interference_collectives_4_ranks|gpu_driver_collectives_4_ranks|test_ce_collectives_two_gpus' \
    P2PBENCH_REQUIRE_GPUS=4
fi
if [ "$part" != collectives ]; then
  session_step ce-collectives 60 "${four[@]}" --config configs/ce-collectives.json --output "$work/ce-collectives.json"
  session_step interference-zero-sm 200 "${four[@]}" --config configs/interference-zero-sm.json \
    --output "$work/interference-zero-sm.json"
  session_step interference-ce-batch 100 "${four[@]}" --config configs/interference-ce-batch.json \
    --output "$work/interference-ce-batch.json"
  session_step collectives-4-gpus 60 "${four[@]}" --config configs/collectives.json \
    --output "$work/collectives-4-gpus.json"
  session_step collectives-2-gpus 60 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench \
    --devices 0,1 --config configs/collectives.json --output "$work/collectives-2-gpus.json"
fi
finish_steps session.sh
