#!/usr/bin/env bash
# On a node of two GPUs: the three thread-ranks' staged ring (StagedGroup.RingOfThreeRanksOnOneNode,
# every rank on GPU 0, one shared context) run ROUNDS times by this tree's test binary and as many
# times by the one built from OLD_SRC (the sources of an earlier commit, exported beside the tree),
# alternating; every run's verdict and time in ring-runs.txt, a failure's output kept. Then the
# one-GPU tests that ran beside it in the suite, together, twice (scripts/run-ctest.sh, 6 at once).
# Usage: session.sh OUT_DIR OLD_SRC [ROUNDS]
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
old_src=$(realpath "${2:?usage: session.sh OUT_DIR OLD_SRC [ROUNDS]}")
rounds=${3:-30}
session_open session.sh "${1:-}"
session_build session.sh
session_step build-old 200 bash -c "cmake -S '$old_src' -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-old -j32 --target test_baselines_gpu"
session_step ring 420 "$(dirname "$0")/ring-runs.sh" "$work" "$rounds"
tail -2 "$work/ring-runs.txt" >>"$summary"
beside='^(test_baselines_gpu|gpu_driver_end_to_end_one_gpu|test_ce_collectives|test_collective_kernels|test_gemm_rs_kernels|test_example_method_gpu|test_pattern_kernels)$'
for pass in 1 2; do
  session_step "beside-$pass" 150 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -L gpu -R "$beside"
  grep -E "tests passed|tests failed" "$work/beside-$pass.log" >>"$summary"
done
finish_steps session.sh
