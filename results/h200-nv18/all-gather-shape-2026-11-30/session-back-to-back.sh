#!/usr/bin/env bash
# On a node of two GPUs: the probe's loop with its repetitions queued back to back (as the case
# loop queues operations) against each waited for, at 512 and 1024 threads: is the collective's
# 1024-thread fall in how launches follow each other? The collective beside it
# (config-threads-1024.json).
# Usage: session-back-to-back.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-back-to-back.sh "${1:-}"
session_build session-back-to-back.sh
probe=(build-gpu/tools/p2pbench-probe-all-gather-shape --blocks 16,32,64,128 --threads 512,1024 --reps 20
  --targets local+peer,indexed --directions both --schedules static,dynamic --grain-pieces 16)
session_step waited 90 "${probe[@]}"
session_step back-to-back 90 "${probe[@]}" --back-to-back 1
session_step collective-1024 120 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench \
  --devices 0,1 --config "$here/config-threads-1024.json" --output "$work/threads-1024.json"
finish_steps session-back-to-back.sh
