#!/usr/bin/env bash
# On a node of one GPU: the gemm method's console (its rows, progress and summary say TFLOP/s
# beside the GB/s) and its results file, over configs/one-gpu.json's sizes.
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
session_step gemm 400 build-gpu/src/p2pbench --config configs/one-gpu.json --methods gemm --output "$work/gemm.json"
finish_steps session.sh
