#!/usr/bin/env bash
# On a node of two GPUs: the all-gather of puts alone over its shape plane
# (config-all-gather-put-map.json: 8 to 128 blocks of 256 to 1024 threads, 64 MiB and 1 GiB; or,
# with MAP=all-gather-tma-map, its TMA variant's). The results take the map's name.
# Usage: [MAP=NAME] session-map.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../../scripts/lib/node-session.sh"
session_open session-map.sh "${1:-}"
session_build session-map.sh
map=${MAP:-all-gather-put-map}
session_step "$map" 240 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1 \
  --config "$here/config-$map.json" --output "$work/$map.json"
finish_steps session-map.sh
