#!/usr/bin/env bash
# On a node of two GPUs: the whole GPU suite (label gpu), a skip of a one- or two-GPU test being
# a failure (P2PBENCH_REQUIRE_GPUS=2); LastTest.log keeps every test's output.
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
session_step gpu-tests 530 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -L gpu
grep -E "tests passed|tests failed|\*\*\*|Total Test" "$work/gpu-tests.log" | tail -25 >>"$summary"
gzip -c build-gpu/Testing/Temporary/LastTest.log >"$work/LastTest.log.gz" 2>/dev/null
finish_steps session.sh
