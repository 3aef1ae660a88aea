#!/usr/bin/env bash
# On a node of two GPUs: the all-gathers with claimed pieces. Their tests (the kernels' own, the
# driver's collectives at two ranks, and at three and four ranks under an MPS daemon), then the
# shape plane with fixed and claimed pieces (config-claims-map.json).
# Usage: session.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
session_tests gpu-tests 240 \
  'test_collective_kernels|gpu_driver_collectives_2_ranks|gpu_driver_interference_collectives_2_ranks' \
  P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=3
session_mps_tests mps-tests 240 'gpu_driver_collectives_[34]_ranks|gpu_driver_interference_collectives_[34]_ranks' \
  P2PBENCH_TEST_JOBS=1
session_step claims-map 300 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1 \
  --config "$here/config-claims-map.json" --output "$work/claims-map.json"
finish_steps session.sh
