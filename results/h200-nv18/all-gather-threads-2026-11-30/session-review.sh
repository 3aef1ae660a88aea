#!/usr/bin/env bash
# On a node of two GPUs, after the review's mend (the collective kernels' tails by one helper,
# for_tail; the kernel test poisons by one helper): the tests of the kernels it touches and
# configs/collectives.json at two ranks, to set beside stores-call/whole-stores-collectives.json.
# Usage: session-review.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-review.sh "${1:-}"
session_build session-review.sh
session_tests gpu-tests 120 'test_collective_kernels|test_gemm_rs_kernels|gpu_driver_collectives_2_ranks' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=3
session_step collectives 90 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1 \
  --config configs/collectives.json --output "$work/collectives.json"
finish_steps session-review.sh
