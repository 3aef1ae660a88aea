#!/usr/bin/env bash
# On a node of one GPU: the gemm method's console (its rows, progress and summary say TFLOP/s
# beside the GB/s) and its results file, over configs/one-gpu.json's sizes. Each console line
# carries the time it was written (line-buffered), and while the run lasts past 40 s its host
# threads' stacks are taken every 20 s (cuda-gdb attaches), to show where a slow case spends
# its time.
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh

sample_stacks() {  # the stacks of the running p2pbench, at most six times
  local pid="" n=0
  for _ in $(seq 1 100); do pid=$(pgrep -x p2pbench | head -1); [ -n "$pid" ] && break; sleep 0.2; done
  [ -n "$pid" ] || return 0
  sleep 40
  while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 6 ]; do
    { date -u +%T; timeout 60 cuda-gdb -p "$pid" -batch -ex "info threads" -ex "thread apply all bt"; } \
      >"$work/stacks-$n.txt" 2>&1
    n=$((n + 1))
    sleep 20
  done
}

sample_stacks &
sampler=$!
session_step gemm 400 bash -c 'set -o pipefail
  stdbuf -oL -eL build-gpu/src/p2pbench --config configs/one-gpu.json --methods gemm --output "$1" 2>&1 |
    while IFS= read -r line; do printf "%(%T)T %s\n" -1 "$line"; done' _ "$work/gemm.json"
wait "$sampler"
finish_steps session.sh
