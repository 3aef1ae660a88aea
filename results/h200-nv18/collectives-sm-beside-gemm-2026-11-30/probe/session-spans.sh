#!/usr/bin/env bash
# On a node of two GPUs, with contiguous-spans.patch applied to the tree (an experiment, not
# merged: each block of the put collectives takes one contiguous span of a chunk instead of
# pieces b, b + G, ...): the collectives' GPU tests (every put collective still verified), then
# the two shape planes (config-all-gather-put-map.json, config-all-gather-tma-map.json).
# Usage: session-spans.sh OUT_DIR   (from a tree the patch was applied to: its binary says dirty)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../../scripts/lib/node-session.sh"
session_open session-spans.sh "${1:-}"
session_build session-spans.sh
session_tests collectives-tests 200 'test_collective_kernels|gpu_driver_collectives_2_ranks' P2PBENCH_REQUIRE_GPUS=2
for map in all-gather-put-map all-gather-tma-map; do
  session_step "$map" 200 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1 \
    --config "$here/config-$map.json" --output "$work/$map.json"
done
finish_steps session-spans.sh
