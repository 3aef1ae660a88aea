#!/usr/bin/env bash
# On a node of two GPUs, at the final commit: the GPU tests of what the claims and the f32
# vectors' tails touch (collectives, GEMM -> RS, the interference collectives) at two ranks, and
# at three and four under an MPS daemon.
# Usage: session-final-tests.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-final-tests.sh "${1:-}"
session_build session-final-tests.sh
session_tests gpu-tests 200 \
  'test_collective_kernels|test_gemm_rs_kernels|test_ce_collectives|gpu_driver_collectives_2_ranks|gpu_driver_gemm_rs_2_ranks|gpu_driver_interference_collectives_2_ranks' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=3
session_mps_tests mps-tests 200 \
  'gpu_driver_collectives_[34]_ranks|gpu_driver_gemm_rs_[34]_ranks|gpu_driver_interference_collectives_[34]_ranks' \
  P2PBENCH_TEST_JOBS=1
finish_steps session-final-tests.sh
