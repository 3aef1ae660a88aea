#!/usr/bin/env bash
# On a one-GPU node with an MPS daemon of its own: the tests whose ranks may share a GPU (2, 3
# and 4 ranks), the skips of the tests that need more GPUs, and a rank stopped under 2 and 4 ranks.
# Usage: mps.sh OUT_DIR
set -uo pipefail
out=${1:?usage: mps.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export CUDA_MPS_PIPE_DIRECTORY=/tmp/p2pbench-mps CUDA_MPS_LOG_DIRECTORY=/tmp/p2pbench-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || { echo "MPS did not start" | tee "$out/summary.txt"; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
start=$(date +%s)
P2PBENCH_BUILD_DIR=build-gpu scripts/test.sh -R "gpu_driver_(put_signal|tokens|collectives|gemm_rs)_|fabric|gbench_gpu_run|two_gpus|quick" \
  >"$out/mps-suite.log" 2>&1
rc=$?
echo "test.sh (MPS, two-ended tests and skips): exit $rc after $(( $(date +%s) - start )) s" | tee "$out/summary.txt"
grep -E "tests passed|Test +#|^  [a-z_]+: " "$out/mps-suite.log" | tee -a "$out/summary.txt"
python3 "$here/stop_probe.py" "$out" 2 tests/gpu_driver/tiny.json 1 --allow-same-device --devices 0,0 | tee -a "$out/summary.txt"
python3 "$here/stop_probe.py" "$out" 4 configs/collectives.json 3 --allow-same-device --devices 0,0,0,0 \
  --methods reduce_scatter_add,all_gather_put,all_reduce_two_shot -e 64M | tee -a "$out/summary.txt"
exit $rc
