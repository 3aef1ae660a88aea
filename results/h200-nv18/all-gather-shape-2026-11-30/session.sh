#!/usr/bin/env bash
# On a node of two GPUs: why the SM all-gather's rate falls as blocks are added at some shapes.
# The shape probe (tools/probes/all_gather_shape_probe.cu) along each of its axes, then the case
# loop's all-gather of puts and plain LD/ST push at the same shapes (config-case-loop.json).
# Usage: session.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
probe=build-gpu/tools/p2pbench-probe-all-gather-shape
blocks=8,16,24,32,40,48,64,96,128
session_step shape-targets 120 "$probe" --blocks "$blocks" --threads 256,512,1024 --reps 20 \
  --targets local+peer,peer,peer+local,two-passes --directions both
session_step shape-one-direction 120 "$probe" --blocks "$blocks" --threads 512,1024 --reps 20 \
  --targets local+peer,peer --directions one
session_step shape-placements 120 "$probe" --blocks 16,24,32,48,64 --threads 512,1024 --reps 20 \
  --targets local+peer --directions both --placements default,spread,first,gpc-rr,gpc-packed
session_step case-loop 240 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1 \
  --config "$here/config-case-loop.json" --output "$work/case-loop.json"
finish_steps session.sh
