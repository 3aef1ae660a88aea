#!/usr/bin/env bash
# On a node of two GPUs: the all-gather beside a GEMM on each GPU, by the copy engine, by SM puts
# (stores and TMA) unpartitioned and in 8- and 16-SM groups, and by NCCL
# (configs/interference-collectives-sm.json, two ranks); the GPU tests of the touched paths (a
# skip is a failure); then, under an MPS daemon of this script's own, three and four ranks sharing
# the two GPUs (a functional check, no P2P figure; partitioned cases skipped saying why).
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)

session_step interference-collectives-sm 280 "${two[@]}" --config configs/interference-collectives-sm.json \
  --output "$work/interference-collectives-sm.json"
session_tests gpu-tests 240 \
  'gpu_driver_interference_collectives_2_ranks|gpu_interference_put_signal|test_interference_gpu|test_gemm_grid_gpu|gpu_driver_gemm_rs_2_ranks|test_gemm_rs_kernels' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=4
session_mps_tests mps-tests 240 'gpu_driver_interference_collectives_[34]_ranks|gpu_driver_gemm_rs_[34]_ranks' \
  P2PBENCH_TEST_JOBS=1
finish_steps session.sh
