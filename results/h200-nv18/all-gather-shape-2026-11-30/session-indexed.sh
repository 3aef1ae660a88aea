#!/usr/bin/env bash
# On a node of two GPUs: why the collective's 1024-thread blocks lose rate as blocks are added
# while the probe's do not. The probe with its stores addressed as the collective kernel does
# (targets indexed) beside its plain local+peer stores, then the collective itself at the same
# shapes (config-threads-1024.json).
# Usage: session-indexed.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-indexed.sh "${1:-}"
session_build session-indexed.sh
session_step indexed 90 build-gpu/tools/p2pbench-probe-all-gather-shape --blocks 16,32,64,128 --threads 512,1024 \
  --reps 20 --targets local+peer,indexed --directions both --schedules static,dynamic --grain-pieces 16
session_step collective-1024 120 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench \
  --devices 0,1 --config "$here/config-threads-1024.json" --output "$work/threads-1024.json"
finish_steps session-indexed.sh
