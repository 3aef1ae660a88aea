#!/usr/bin/env bash
# On a node of two GPUs: the interference collectives over every rank. Two ranks on two GPUs
# (configs/interference-collectives.json: the figures against the run before the change), the
# GPU tests of the touched paths without MPS, then, under an MPS daemon of this script's own,
# three and four ranks sharing the two GPUs (a functional check: no P2P figure).
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
session_step gpu-tests 300 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=4 scripts/run-ctest.sh build-gpu -R \
  'gpu_driver_interference_collectives_2_ranks|gpu_interference_put_signal|test_interference_gpu|test_gemm_grid_gpu|test_baselines_gpu_two_gpus|gpu_driver_gemm_rs_2_ranks'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/gpu-tests.log" | tail -20 >>"$summary"

export CUDA_MPS_PIPE_DIRECTORY=/tmp/p2pbench-mps CUDA_MPS_LOG_DIRECTORY=/tmp/p2pbench-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if session_step mps-start 30 nvidia-cuda-mps-control -d; then
  session_step mps-tests 300 env P2PBENCH_TEST_JOBS=1 scripts/run-ctest.sh build-gpu -R \
    'gpu_driver_interference_collectives_[34]_ranks|gpu_driver_collectives_4_ranks'
  grep -E "tests passed|tests failed|\*\*\*|^  " "$work/mps-tests.log" | tail -20 >>"$summary"
  echo quit | nvidia-cuda-mps-control
fi
finish_steps session.sh
