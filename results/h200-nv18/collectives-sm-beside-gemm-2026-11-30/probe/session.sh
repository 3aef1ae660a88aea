#!/usr/bin/env bash
# On a node of two GPUs: why the all-gather of puts moved more alone in a 16-SM group than with
# 32 blocks unpartitioned (../interference-collectives-sm.json): its shapes alone in the case loop,
# and 32 / 64 blocks unpartitioned and in groups of 16 and 32 SMs beside the GEMM.
# Usage: session.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
for probe in all-gather-put-shapes all-gather-put-groups; do
  session_step "$probe" 200 "${two[@]}" --config "$here/$probe.json" --output "$work/$probe.json"
done
finish_steps session.sh
