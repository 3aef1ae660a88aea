#!/usr/bin/env bash
# On a node of two GPUs: the shape probe as committed last (its rows written with nlohmann::json,
# its case split into timing, checking and the blocks' report) on a few shapes of each axis.
# Usage: session-check.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-check.sh "${1:-}"
session_build session-check.sh
probe=build-gpu/tools/p2pbench-probe-all-gather-shape
session_step check-both 60 "$probe" --blocks 24,32 --threads 512 --reps 10 --targets local+peer,peer \
  --directions both --placements default,first --schedules static,dynamic --grain-pieces 16
session_step check-one 60 "$probe" --blocks 32 --threads 512 --reps 10 --targets local+peer --directions one \
  --schedules static,dynamic
finish_steps session-check.sh
