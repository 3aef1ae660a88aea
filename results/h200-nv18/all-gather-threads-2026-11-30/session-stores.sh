#!/usr/bin/env bash
# On a node of two GPUs: the collective kernels with whole 16-byte stores (__stwb), against the
# same tree with the stores as the compiler had split them (variant-split-stores.patch, applied
# for one build and taken out again). Their machine code's store widths, the tests the stores
# touch, the all-gather over 512-1024 threads (config-threads.json), the claims map of
# ../all-gather-claims-2026-11-30/ and configs/collectives.json at two ranks.
# Usage: session-stores.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-stores.sh "${1:-}"
session_build session-stores.sh
session_tests gpu-tests 150 \
  'test_collective_kernels|test_gemm_rs_kernels|gpu_driver_collectives_2_ranks|gpu_driver_gemm_rs_2_ranks|gpu_driver_interference_collectives_2_ranks' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=3
files=(kernels/f32_vectors.cuh kernels/bf16_vectors.cuh)
sha256sum "${files[@]}" >"$work/tree-before.sha256"
session_step whole-stores 200 bash "$here/variant.sh" whole-stores none "$work" "$here/config-threads.json" \
  "$here/../all-gather-claims-2026-11-30/config-claims-map.json" configs/collectives.json
session_step split-stores 180 bash "$here/variant.sh" split-stores variant-split-stores.patch "$work" \
  "$here/config-threads.json" configs/collectives.json
session_step tree-restored 10 sha256sum -c "$work/tree-before.sha256"
finish_steps session-stores.sh
