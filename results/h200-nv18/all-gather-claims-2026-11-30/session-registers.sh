#!/usr/bin/env bash
# On a node of two GPUs, after the f32 vectors' tails stopped indexing at run time (the collective
# kernel's 32-byte stack and ~1000 local-memory accesses gone): the kernels' machine code, their
# tests, the shape plane (config-claims-map.json) and the table beside the GEMM
# (config-interference-claims.json) again.
# Usage: session-registers.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-registers.sh "${1:-}"
session_build session-registers.sh
session_step collective-sass 60 bash -c "cuobjdump -res-usage build-gpu/src/p2pbench 2>&1 | grep -A1 -E 'collective|gemm_rs'; \
  cuobjdump -sass build-gpu/src/p2pbench | awk '/Function : .*collective/{on=1} /Function : /{if (!/collective/) on=0} on' \
  | grep -cE 'STL|LDL' | sed 's/^/local-memory instructions in the collective kernels: /'"
session_tests gpu-tests 150 \
  'test_collective_kernels|test_gemm_rs_kernels|gpu_driver_collectives_2_ranks|gpu_driver_gemm_rs_2_ranks' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=3
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
session_step claims-map 150 "${two[@]}" --config "$here/config-claims-map.json" --output "$work/claims-map.json"
session_step interference-claims 330 "${two[@]}" --config "$here/config-interference-claims.json" \
  --output "$work/interference-claims.json"
finish_steps session-registers.sh
