#!/usr/bin/env bash
# On a node of two GPUs: the zero-SM transfers between them. Builds the tree, then with two ranks
# (GPU 0 and GPU 1, no MPS): the copy-engine collectives beside NCCL's (configs/ce-collectives.json),
# the copy engine's put with signal beside its bulk copy (configs/put-signal-ce.json), the GEMM
# beside each zero-SM and SM engine (configs/interference-zero-sm.json), then the two-GPU tests of
# these (P2PBENCH_REQUIRE_GPUS=2: a skip is a failure) in the time left. Each step has a deadline;
# what ran so far is in OUT_DIR after every step (summary.txt, session.tar.gz).
# Usage: session.sh OUT_DIR [TOTAL_S]   (TOTAL_S: the session's limit, default 580)
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR [TOTAL_S]}
total=${2:-580}
begin=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
work=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
finish() { tar -C "$work" -czf "$out/session.tar.gz" . ; cp "$work/summary.txt" "$out/" 2>/dev/null; }
trap finish EXIT
say() { echo "$*" | tee -a "$work/summary.txt"; finish; }
left() { echo $(( total - ($(date +%s) - begin) )); }
step() {  # step TAG LIMIT_S COMMAND...: runs it with a deadline, logs to TAG.log, says its exit and time
  local tag=$1 limit=$2; shift 2
  local start=$(date +%s)
  timeout -s KILL "$limit" "$@" >"$work/$tag.log" 2>&1
  local status=$?
  say "$tag: exit $status after $(( $(date +%s) - start )) s"
  return $status
}
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m; } \
  >"$work/system.txt" 2>&1
cat "$work/system.txt" >>"$work/summary.txt"

step build 150 bash -c "cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-gpu -j16" || exit 1
build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1
say "built: $(head -1 "$work/version.txt")"

two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
rows() {  # rows FILE: one line a row
  python3 - "$1" >>"$work/summary.txt" 2>&1 <<'PY'
import json, sys
med = lambda v: v.get("median") if isinstance(v, dict) else v
for r in json.load(open(sys.argv[1]))["results"]:
    c = r.get("collective") or {}
    shape = {k: r.get(k) for k in ("chunk_bytes", "chunks_in_flight", "signal_group", "signal_copy", "sm_partition")
             if r.get(k) is not None}
    figures = [f"{k}={med(r.get(k)):.4g}" for k in ("bandwidth_gbps", "transfer_alone_gbps", "transfer_together_gbps",
                                                    "workload_alone", "workload_together", "workload_slowdown_pct")
               if isinstance(med(r.get(k)), (int, float))]
    if isinstance(med(c.get("busbw_gbps")), (int, float)):
        figures.append(f"busbw_gbps={med(c['busbw_gbps']):.4g} time_us={med(r.get('time_us')) or 0:.4g}")
    print(f'{r.get("engine") or r["method"]:16} {r["bytes"]:>11} B {r.get("mode", "")} {shape} {r["status"]} '
          f'verified={r.get("verified")} sms_used={r.get("sms_used")} {" ".join(figures)} {(r.get("error") or "")[:100]}')
PY
}
step ce-collectives 120 "${two[@]}" --config configs/ce-collectives.json --output "$work/ce-collectives.json"
rows "$work/ce-collectives.json"
step put-signal-ce 150 "${two[@]}" --config configs/put-signal-ce.json --output "$work/put-signal-ce.json"
rows "$work/put-signal-ce.json"
step interference-zero-sm 300 "${two[@]}" --config configs/interference-zero-sm.json --output "$work/interference-zero-sm.json"
rows "$work/interference-zero-sm.json"
limit=$(left)
if [ "$limit" -gt 30 ]; then
  step two-gpu-tests "$limit" env P2PBENCH_REQUIRE_GPUS=2 scripts/run-ctest.sh build-gpu \
    -R 'test_ce_collectives_two_gpus|gpu_interference_put_signal|test_put_signal_kernels_two_gpus|gpu_driver_collectives_2_ranks'
  grep -E "tests passed|tests failed|\*\*\*|Skipped tests|^  " "$work/two-gpu-tests.log" | tail -20 >>"$work/summary.txt"
else
  say "two-gpu-tests: not run ($limit s left)"
fi
finish
