#!/usr/bin/env bash
# On a node of two GPUs: the collective kernels with their pieces handed out by one loop (fixed or
# claimed, put_span over for_each_piece): their machine code and tests, the claims map of
# ../all-gather-claims-2026-11-30/ again (figures to compare), and the all-gather over block
# sizes of 768 to 1024 threads (config-threads.json).
# Usage: session.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
session_step collective-sass 60 bash -c "cuobjdump -res-usage build-gpu/src/p2pbench 2>&1 | grep -A1 -E 'collective|gemm_rs'; \
  cuobjdump -sass build-gpu/src/p2pbench | awk '/Function : .*collective/{on=1} /Function : /{if (!/collective/) on=0} on' \
  | grep -cE 'STL|LDL' | sed 's/^/local-memory instructions in the collective kernels: /'"
session_tests gpu-tests 150 \
  'test_collective_kernels|test_gemm_rs_kernels|gpu_driver_collectives_2_ranks|gpu_driver_gemm_rs_2_ranks|gpu_driver_interference_collectives_2_ranks' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=3
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
session_step claims-map 150 "${two[@]}" --config "$here/../all-gather-claims-2026-11-30/config-claims-map.json" \
  --output "$work/claims-map.json"
session_step threads 150 "${two[@]}" --config "$here/config-threads.json" --output "$work/threads.json"
finish_steps session.sh
