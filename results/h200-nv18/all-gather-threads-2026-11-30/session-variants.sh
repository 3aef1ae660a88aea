#!/usr/bin/env bash
# On a node of two GPUs: the all-gather of puts at 512 and 1024 threads with the kernel as
# committed, then with each diagnostic variant of its rank barriers (variant-*.patch, applied to
# the tree for one build and taken out again): whether the fall at 1024 threads is the barriers'.
# Also the tests of the collective kernels as committed.
# Usage: session-variants.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-variants.sh "${1:-}"
session_build session-variants.sh
session_tests gpu-tests 150 'test_collective_kernels|gpu_driver_collectives_2_ranks' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=2
files=(kernels/rank_barrier.cuh src/methods/collectives/collective_kernels.cu)
sha256sum "${files[@]}" >"$work/tree-before.sha256"
session_step committed 120 bash "$here/variant.sh" committed none "$work" "$here/config-variants.json"
for v in relaxed-poll no-barriers start-barrier-only; do
  session_step "$v" 150 bash "$here/variant.sh" "$v" "variant-$v.patch" "$work" "$here/config-variants.json"
done
session_step tree-restored 10 sha256sum -c "$work/tree-before.sha256"
finish_steps session-variants.sh
