#!/usr/bin/env bash
# On a GPU node: the tree built as scripts/test.sh builds it (unity files), the GPU tests a node of
# this kind can run (scripts/run-ctest.sh -L gpu: tests needing more GPUs than it has skip and say
# so), then the interference method with two ranks: the one-sided engines (old-engines-small.json)
# and the put with signal beside the GEMM (tests/interference/put-signal-beside-gemm.json). With
# P2PBENCH_DEVICES=0,0 (default) both ranks share GPU 0 under MPS: a functional check, never a
# P2P figure (green contexts keep no SM group under MPS). On a two-GPU node: P2PBENCH_DEVICES=0,1.
# What ran so far is in OUT_DIR after every step (summary.txt, session.tar.gz).
# Usage: session.sh OUT_DIR
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR}
devices=${P2PBENCH_DEVICES:-0,0}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
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
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$work/system.txt" 2>&1
cat "$work/system.txt" >>"$work/summary.txt"

step build 400 bash -c "cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-gpu -j16" || exit 1
build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1
say "built: $(head -1 "$work/version.txt"); unity files: $(find build-gpu -path '*unity/unity_*.cpp' | wc -l)"

step gpu-tests 300 env P2PBENCH_TEST_JOBS=4 scripts/run-ctest.sh build-gpu -L gpu
grep -E "tests passed|tests failed|\*\*\*Failed|Skipped tests|^  " "$work/gpu-tests.log" | tail -60 >>"$work/summary.txt"

two=(mpirun -np 2 --bind-to none --allow-run-as-root)
same=()
if [ "$devices" = 0,0 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/p2pbench-mps CUDA_MPS_LOG_DIRECTORY=/tmp/p2pbench-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || say "MPS did not start"
  trap 'echo quit | nvidia-cuda-mps-control; finish' EXIT
  same=(--allow-same-device)
fi
for config in "$here/old-engines-small.json" tests/interference/put-signal-beside-gemm.json; do
  tag=$(basename "$config" .json)
  step "$tag" 200 "${two[@]}" build-gpu/src/p2pbench --config "$config" "${same[@]}" --devices "$devices" \
    --output "$work/$tag.json"
  python3 - "$work/$tag.json" >>"$work/summary.txt" 2>&1 <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    med = lambda k: (r.get(k) or {}).get("median")
    print(f'{r.get("engine"):16} {r.get("mode"):5} K={r.get("sm_partition")} {r["status"]:8} verified={r.get("verified")} '
          f'sms_used={r.get("sms_used")} transfer alone/together {med("transfer_alone_gbps")}/{med("transfer_together_gbps")} GB/s '
          f'workload alone/together {med("workload_alone")}/{med("workload_together")} slowdown {r.get("workload_slowdown_pct")} % {(r.get("error") or r.get("skip_reason") or "")[:110]}')
PY
done
finish
