#!/usr/bin/env bash
# Builds p2pbench (A100 + Hopper + PTX) and runs the default sweep on a two-GPU node.
# Usage: scripts/run-default.sh [RESULTS.json] [extra p2pbench flags...]
# P2PBENCH_CONFIG picks another config (default configs/default.json).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
output=${1:-results-default.json}
shift || true
config=${P2PBENCH_CONFIG:-configs/default.json}
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DP2PBENCH_BUILD_TESTS=OFF
cmake --build build-release -j "$(nproc)"
root_flags=()
[ "$(id -u)" -eq 0 ] && root_flags=(--allow-run-as-root)
# --bind-to none: p2pbench binds each rank to the CPUs near its GPU itself.
mpirun -np 2 --bind-to none "${root_flags[@]}" build-release/src/p2pbench --config "$config" \
       --output "$output" "$@"
