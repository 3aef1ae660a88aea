#!/usr/bin/env bash
# On a GPU node: the copy-engine collectives (all_gather_ce, all_to_all_ce) and what else a node
# of this kind can check. Builds the tree, then: the one-GPU GPU tests (scripts/run-ctest.sh -L gpu:
# with one GPU the two-GPU tests skip and say so), the SM holder's list of what waits for an SM
# (the batch copy preferring overlap among them), the CE collectives' own test, and
# configs/ce-collectives.json with two ranks: on one GPU under MPS (functional: copies within one
# GPU, never P2P figures; NCCL's rows with each rank its own node), on two or more GPUs as is.
# What ran so far is in OUT_DIR after every step (summary.txt, session.tar.gz).
# Env: P2PBENCH_DEVICES (default 0,0: both ranks on GPU 0 under MPS; 0,1 on a two-GPU node).
# PART: all (default), or tests (the build and the GPU tests only).
# Usage: session.sh OUT_DIR [PART]
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR}
part=${2:-all}
devices=${P2PBENCH_DEVICES:-0,0}
cd "$(dirname "$0")/../../.."
work=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
finish() { tar -C "$work" -czf "$out/session.tar.gz" . ; cp "$work/summary.txt" "$out/" 2>/dev/null; }
trap finish EXIT
say() { echo "$*" | tee -a "$work/summary.txt"; finish; }
step() {  # step TAG LIMIT_S COMMAND...: runs it with a deadline, logs to TAG.log, says its exit and time
  local tag=$1 limit=$2; shift 2
  local start=$(date +%s)
  timeout -s KILL "$limit" "$@" >"$work/$tag.log" 2>&1
  local status=$?
  say "$tag: exit $status after $(( $(date +%s) - start )) s"
  return $status
}
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -m pip show nvidia-nccl-cu13 2>&1 | head -3; } >"$work/system.txt" 2>&1
cat "$work/system.txt" >>"$work/summary.txt"

step build 400 bash -c "cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-gpu -j16" || exit 1
build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1
say "built: $(head -1 "$work/version.txt")"

if [ "$part" = all ]; then
step sm-holder 60 build-gpu/tests/kernels/test_sm_holder
grep "^BESIDE" "$work/sm-holder.log" >>"$work/summary.txt"
step ce-collectives-test 120 build-gpu/tests/ce_collectives/test_ce_collectives
grep -E "^\[  (PASSED|FAILED|  OK|  SKIPPED) " "$work/ce-collectives-test.log" >>"$work/summary.txt"

export CUDA_MPS_PIPE_DIRECTORY=/tmp/p2pbench-mps CUDA_MPS_LOG_DIRECTORY=/tmp/p2pbench-mps-log
two=(mpirun -np 2 --bind-to none --allow-run-as-root)
same=()
if [ "$devices" = 0,0 ]; then
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || say "MPS did not start"
  trap 'echo quit | nvidia-cuda-mps-control; finish' EXIT
  same=(--allow-same-device)
fi
step ce-collectives-run 150 "${two[@]}" build-gpu/src/p2pbench --config configs/ce-collectives.json "${same[@]}" \
  --devices "$devices" --methods all_gather_ce,all_to_all_ce,all_gather_put --output "$work/ce-collectives.json"
step nccl-run 150 "${two[@]}" build-gpu/src/p2pbench --config configs/ce-collectives.json "${same[@]}" \
  --devices "$devices" --methods nccl_all_gather,nccl_all_to_all --ranks-per-node 1 --output "$work/nccl-collectives.json"
for f in ce-collectives nccl-collectives; do
  python3 - "$work/$f.json" >>"$work/summary.txt" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["results"]:
    c, t = r.get("collective") or {}, r.get("time_us") or {}
    busbw = (c.get("busbw_gbps") or {}).get("median") if isinstance(c.get("busbw_gbps"), dict) else c.get("busbw_gbps")
    print(f'{r["method"]:16} {r["bytes"]:>11} B {r["status"]:8} verified={r.get("verified")} busbw={busbw} GB/s '
          f'time_median={t.get("median")} us sms_used={r.get("sms_used")} {(r.get("error") or "")[:100]}')
PY
done
if [ "$devices" = 0,0 ]; then
  # Gone before the tests (a quit daemon leaves its control socket behind).
  echo quit | nvidia-cuda-mps-control
  for _ in $(seq 50); do pgrep -f "nvidia-cuda-mps-control -d" >/dev/null || break; sleep 0.2; done
  rm -rf "$CUDA_MPS_PIPE_DIRECTORY"
  trap finish EXIT
fi
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

{ echo "before the tests:"; ls -la /tmp/p2pbench-mps; pgrep -a nvidia-cuda-mps; } >>"$work/summary.txt" 2>&1
step gpu-tests 470 env P2PBENCH_TEST_JOBS=4 scripts/run-ctest.sh build-gpu -L gpu
grep -E "tests passed|tests failed|\*\*\*Failed|Skipped tests|^  " "$work/gpu-tests.log" | tail -60 >>"$work/summary.txt"
finish
