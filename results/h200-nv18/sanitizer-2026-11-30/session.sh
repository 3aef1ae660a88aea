#!/usr/bin/env bash
# On a node of two GPUs: the driver in sanitizer mode (--sanitize: no start gate, one small
# sample per case, every byte still verified) under compute-sanitizer's memcheck, racecheck and
# synccheck, over the methods the last sanitizer runs (default, latency, atomics, baselines) did
# not cover: put with signal, tokens, the SM collectives and the fused GEMM -> reduce-scatter.
# The three tools run at once, each over the configs one after the other, each run under a
# deadline; a run's log ends with the tool's summary line.
# Usage: session.sh OUT_DIR [LIMIT_S_PER_RUN]
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
per_run=${2:-110}
two=(mpirun -np 2 --bind-to none --allow-run-as-root)
# NAME CONFIG [ARGS...]: each a few cases of the smallest sizes its methods take.
runs=(
  "put-signal configs/put-signal.json -b 4M -e 4M --methods put_signal_ldst,put_signal_tma,put_signal_ce"
  "tokens configs/tokens.json -b 1792K -e 1792K --blocks 16"
  "collectives configs/collectives.json -b 1M -e 1M"
  "gemm-rs configs/gemm-rs.json -b 256M -e 256M --methods gemm_rs_fused,gemm_rs_fused_green"
)
tool_runs() {  # TOOL: every run under it, a line each in TOOL.summary
  local tool=$1 line name config
  for line in "${runs[@]}"; do
    read -r name config args <<<"$line"
    # shellcheck disable=SC2086
    timeout -s KILL "$per_run" "${two[@]}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      build-gpu/src/p2pbench --devices 0,1 --config "$config" $args --sanitize \
      --output "$work/$tool-$name.json" >"$work/$tool-$name.log" 2>&1
    echo "$tool $name: rc=$? $(grep -h -E '(ERROR|RACECHECK|SYNCCHECK) SUMMARY' "$work/$tool-$name.log" | sort | uniq -c | tr -s ' ' | paste -sd';')"
  done >"$work/$tool.summary"
}
start=$SECONDS
tool_runs memcheck & tool_runs racecheck & tool_runs synccheck &
wait
cat "$work"/*.summary >>"$summary"
! grep -v -q "rc=0 " "$work"/*.summary
record_step sanitizers $? "$((SECONDS - start)) s, a line per tool and run above"
finish_steps session.sh
