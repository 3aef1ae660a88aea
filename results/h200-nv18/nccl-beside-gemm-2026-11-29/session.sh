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
cd "$here/../../.."
work=$(mktemp -d)
summary=$work/summary.txt
source scripts/lib/steps.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
pack() { tar -C "$work" -czf "$out/session.tar.gz" . ; cp "$summary" "$out/" 2>/dev/null; }
trap pack EXIT
step() {  # step NAME LIMIT_S COMMAND...: its output in NAME.log
  local name=$1 limit=$2 start=$SECONDS status=0
  shift 2
  timeout -s KILL "$limit" "$@" >"$work/$name.log" 2>&1 || status=$?
  record_step "$name" "$status" "$((SECONDS - start)) s"
  pack
  return "$status"
}
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m; } \
  >"$work/system.txt" 2>&1

step build 150 bash -c "cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-gpu -j32" || finish_steps session.sh
build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1
note "built: $(head -1 "$work/version.txt")"
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)

step nccl-rows 90 "${two[@]}" --config configs/default.json --methods nccl --sizes 1MiB,64MiB \
  --output "$work/nccl-rows.json"
step interference-ce-batch 220 "${two[@]}" --config configs/interference-ce-batch.json \
  --output "$work/interference-ce-batch.json"
step gpu-tests 200 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -R \
  'gpu_interference_put_signal|test_baselines_gpu|gpu_driver_collectives_2_ranks|gpu_quick_methods|gpu_driver_end_to_end$|gpu_host_link_methods|gbench_gpu_run|test_interference_gpu'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/gpu-tests.log" | tail -20 >>"$summary"
finish_steps session.sh
