#!/usr/bin/env bash
# On a node of two GPUs: NCCL's send/receive as the transfer beside the GEMM, with the engines it is
# compared with, in one run (configs/interference-ce-batch.json); NCCL's rows of the case loop with
# the blocks of its kernel; then the GPU tests of the paths this touched (P2PBENCH_REQUIRE_GPUS=2:
# a skip is a failure). Every step has a deadline; OUT_DIR holds summary.txt and session.tar.gz
# (every log and result) after each step, so a call cut short still returns what ran.
# Usage: session.sh OUT_DIR
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.." || exit 2
source scripts/lib/node-session.sh
session_start "$out"
session_build session.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)

session_step nccl-rows 90 "${two[@]}" --config configs/default.json --methods nccl --sizes 1MiB,64MiB \
  --output "$work/nccl-rows.json"
session_step interference-ce-batch 220 "${two[@]}" --config configs/interference-ce-batch.json \
  --output "$work/interference-ce-batch.json"
session_step gpu-tests 200 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -R \
  'gpu_interference_put_signal|test_baselines_gpu|gpu_driver_collectives_2_ranks|gpu_quick_methods|gpu_driver_end_to_end$|gpu_host_link_methods|gbench_gpu_run|test_interference_gpu'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/gpu-tests.log" | tail -20 >>"$summary"
finish_steps session.sh
