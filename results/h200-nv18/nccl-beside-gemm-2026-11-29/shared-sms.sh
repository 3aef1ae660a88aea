#!/usr/bin/env bash
# On a node of two GPUs: transfers that share every SM with the GEMM (configs/interference-shared-sms.json),
# at the default stream priority and with the transfer's streams at the highest
# (the same config with interference.transfer_high_priority true, written beside the results);
# then the interference GPU tests (P2PBENCH_REQUIRE_GPUS=2: a skip is a failure). Every step has a
# deadline; OUT_DIR holds summary.txt and session.tar.gz (every log and result) after each step.
# Usage: shared-sms.sh OUT_DIR
set -uo pipefail
out=${1:?usage: shared-sms.sh OUT_DIR}
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
  -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-gpu -j32" || finish_steps shared-sms.sh
build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1
note "built: $(head -1 "$work/version.txt")"
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["label"]+="-high-priority"; c["interference"]["transfer_high_priority"]=True; json.dump(c,open(sys.argv[2],"w"),indent=2)' \
  configs/interference-shared-sms.json "$work/interference-shared-sms-high-priority.json"

step shared-sms 150 "${two[@]}" --config configs/interference-shared-sms.json --output "$work/shared-sms.json"
step shared-sms-high-priority 150 "${two[@]}" --config "$work/interference-shared-sms-high-priority.json" \
  --output "$work/shared-sms-high-priority.json"
step gpu-tests 150 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -R \
  'gpu_interference_put_signal|test_interference_gpu'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/gpu-tests.log" | tail -20 >>"$summary"
finish_steps shared-sms.sh
