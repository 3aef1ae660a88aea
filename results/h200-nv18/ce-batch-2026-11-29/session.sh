#!/usr/bin/env bash
# On a node of two GPUs: the copy engine's put with signal with a group's puts in one
# cudaMemcpyBatchAsync (copy_batch 1) against separate copies, alone and beside a GEMM. Builds the
# tree; then how many batch calls one stream takes behind a closed gate (the queue-depth probe),
# the GPU tests of the changed paths (P2PBENCH_REQUIRE_GPUS=2: a skip is a failure), and with two
# ranks (GPU 0 and GPU 1, no MPS) configs/put-signal-ce-batch.json and configs/interference-ce-batch.json.
# PART "check" instead: after the build, configs/put-signal-ce-batch.json with samples of 0.2 ms
# (every transfer of a sample then queued behind the gate: is a 1 ms sample host-bound?) and at
# 128 MiB, then the GPU tests of the case loop's other paths.
# Every step has a deadline; OUT_DIR holds summary.txt and session.tar.gz (every log and result)
# after each step, so a call cut short still returns what ran.
# Usage: session.sh OUT_DIR [PART]   (PART: all, the default, or check)
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR [PART]}
part=${2:-all}
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

if [ "$part" = check ]; then
  step batch-short-samples 120 "${two[@]}" --config configs/put-signal-ce-batch.json --min-sample-time 0.2 \
    --output "$work/batch-short-samples.json"
  step batch-128MiB 120 "${two[@]}" --config configs/put-signal-ce-batch.json --sizes 128MiB \
    --output "$work/batch-128MiB.json"
  step loop-tests 300 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -R \
    'gpu_quick_methods|gpu_driver_end_to_end|gbench_gpu_run|gpu_driver_faults_methods|test_copy_kernels|test_baselines_gpu'
  grep -E "tests passed|tests failed|\*\*\*|^  " "$work/loop-tests.log" | tail -20 >>"$summary"
  finish_steps session.sh
fi

step queue-depth 60 build-gpu/tools/p2pbench-probe-queue-depth --most 5000 --open-after 2
cat "$work/queue-depth.log" >>"$summary"

step put-signal-ce-batch 200 "${two[@]}" --config configs/put-signal-ce-batch.json --output "$work/put-signal-ce-batch.json"
step interference-ce-batch 150 "${two[@]}" --config configs/interference-ce-batch.json \
  --output "$work/interference-ce-batch.json"
step gpu-tests 200 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -R \
  'test_put_signal_kernels|test_host_memory_gpu|gpu_host_link_methods|gpu_driver_gds_gemm|gpu_interference_put_signal|gpu_driver_put_signal_2_ranks|test_interference_gpu'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/gpu-tests.log" | tail -20 >>"$summary"
finish_steps session.sh
