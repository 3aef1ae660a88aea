#!/usr/bin/env bash
# On a node of two GPUs: the interference configurations beside the GEMM once more after the
# GEMM's check was mended (samples back to back): the zero-SM and SM engines
# (configs/interference-zero-sm.json), and the collectives by the copy engine and NCCL
# (configs/interference-collectives.json) and in SM groups (configs/interference-collectives-sm.json).
# Each sweep's time checks the dry run's estimate (plan/estimate.hpp).
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
for config in interference-zero-sm interference-collectives interference-collectives-sm; do
  build-gpu/src/p2pbench --dry-run --config "configs/$config.json" --ranks 2 --devices 0,1 | grep estimated \
    >"$work/$config-estimate.txt"
  session_step "$config" 240 "${two[@]}" --config "configs/$config.json" --output "$work/$config.json"
done
finish_steps session.sh
