#!/usr/bin/env bash
# On a node of two GPUs: collectives beside a GEMM on each GPU (configs/interference-collectives.json:
# the copy engine's all-gather and all-to-all against NCCL's, with a bulk copy and NCCL's
# send/receive each way), NCCL's collective rows of the case loop with the blocks of their kernels,
# then the GPU tests of the paths this touched (P2PBENCH_REQUIRE_GPUS=2: a skip is a failure).
# Usage: session.sh OUT_DIR
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.." || exit 2
source scripts/lib/node-session.sh
session_start "$out"
session_build session.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)

session_step interference-collectives 200 "${two[@]}" --config configs/interference-collectives.json \
  --output "$work/interference-collectives.json"
session_step nccl-collective-rows 90 "${two[@]}" --config configs/collectives.json \
  --methods nccl_all_gather,nccl_all_to_all,all_gather_ce --sizes 1MiB,64MiB --output "$work/nccl-collective-rows.json"
session_step gpu-tests 240 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -R \
  'gpu_interference_put_signal|test_interference_gpu|test_ce_collectives|gpu_driver_collectives_2_ranks|test_baselines_gpu|gpu_quick_methods'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/gpu-tests.log" | tail -20 >>"$summary"
finish_steps session.sh
