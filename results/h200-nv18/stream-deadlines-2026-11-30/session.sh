#!/usr/bin/env bash
# On a node of two GPUs: the waits on a stream given deadlines of their own (fills, poisons,
# checks, set-up launches). configs/latency.json runs first, whose latency_ce rows can be set
# against the committed results/h200-nv18/latency.json; then the GPU suite's tests matching REGEX (default:
# all of label gpu), a skip of a one- or two-GPU test being a failure (P2PBENCH_REQUIRE_GPUS=2).
# Usage: session.sh OUT_DIR [REGEX] [LIMIT_S]
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
session_step latency 120 "${two[@]}" --config configs/latency.json --output "$work/latency.json"
select=(-L gpu)
[ -n "${2:-}" ] && select=(-L gpu -R "$2")
session_step gpu-tests "${3:-480}" env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu "${select[@]}"
grep -E "tests passed|tests failed|\*\*\*|Total Test" "$work/gpu-tests.log" | tail -25 >>"$summary"
gzip -c build-gpu/Testing/Temporary/LastTest.log >"$work/LastTest.log.gz" 2>/dev/null
finish_steps session.sh
