#!/usr/bin/env bash
# On a node of two GPUs: the shape probe's static schedule (block b takes pieces b, b + G, ...)
# against blocks claiming grains of pieces from a counter, over the shape plane, both directions
# and one; every block's SM and time in each row.
# Usage: session-schedules.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-schedules.sh "${1:-}"
session_build session-schedules.sh
probe=build-gpu/tools/p2pbench-probe-all-gather-shape
blocks=8,16,24,32,40,48,64,96,128
session_step schedules-both 180 "$probe" --blocks "$blocks" --threads 256,512,1024 --reps 20 \
  --targets local+peer --directions both --schedules static,dynamic --grain-pieces 4,16,64
session_step schedules-one 120 "$probe" --blocks "$blocks" --threads 512,1024 --reps 20 \
  --targets local+peer,peer --directions one --schedules static,dynamic --grain-pieces 16
session_step schedules-placed 120 "$probe" --blocks 16,24,32,48 --threads 512,1024 --reps 20 \
  --targets local+peer --directions both --placements first,gpc-rr --schedules static,dynamic --grain-pieces 16
finish_steps session-schedules.sh
