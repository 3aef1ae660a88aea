#!/usr/bin/env bash
# On a node of two GPUs: the collective kernels' tests (one and two GPUs) and the driver's
# collectives and collectives-beside-a-GEMM runs at two ranks, a skip being a failure
# (P2PBENCH_REQUIRE_GPUS=2). LastTest.log keeps every test's output.
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
session_tests collectives 300 "^test_collective_kernels$|^test_ce_collectives|collectives_2_ranks$" P2PBENCH_REQUIRE_GPUS=2
gzip -c build-gpu/Testing/Temporary/LastTest.log >"$work/LastTest.log.gz" 2>/dev/null
finish_steps session.sh
