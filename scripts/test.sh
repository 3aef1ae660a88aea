#!/usr/bin/env bash
# Builds p2pbench once (one CUDA architecture by default, to keep it fast) and runs every test
# through CTest: unit, CLI and schema (Python), MPI, Slurm and GPU tests.
#
# Usage: scripts/test.sh [--quick] [CTEST_ARGS...]
#   --quick  only the quick GPU check (label quick: every method family once across two GPUs,
#            verified; a few minutes on a GPU node)
# GPU tests: each says how many GPUs it needs; CTest gives it that many of the visible GPUs
# (tests side by side on a node with several) and skips it, saying why, where fewer are visible
# (a machine without a GPU skips them all): scripts/run-ctest.sh. The skips and their reasons are
# listed at the end.
# Compiles through ccache where it is installed (cmake/CompilerCache.cmake): the test
# adding_a_method's scratch copy of the tree then takes this build's objects.
# Env: P2PBENCH_REQUIRE_GPUS=N (a GPU test that needs N or fewer GPUs and skips fails instead),
#      P2PBENCH_TEST_JOBS (tests at once; default: the GPUs, the cores and 2 more),
#      P2PBENCH_BUILD_DIR, P2PBENCH_CUDA_ARCHITECTURES, P2PBENCH_JOBS (build jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${P2PBENCH_BUILD_DIR:-build}
archs=${P2PBENCH_CUDA_ARCHITECTURES:-90}
export PATH="$PATH:/usr/local/cuda/bin"
python=$(command -v python3)
[ -x .venv/bin/python3 ] && python=$PWD/.venv/bin/python3
selection=()
if [ "${1:-}" = --quick ]; then
  shift
  selection=(-L quick)
fi

# C++ at -O1: the tests check behaviour, not speed, and -O1 compiles in half the time of -O3 on a
# small machine (figures come from the release build of scripts/run-default.sh). CUDA code keeps
# its optimisation (nvcc's device code is compiled at -O3 whatever the host flags).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
      -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DPython3_EXECUTABLE="$python" \
  || { status=$?; echo "test.sh: configuring $build failed (exit $status)" >&2; exit $status; }
cmake --build "$build" -j "${P2PBENCH_JOBS:-$(nproc)}" || { status=$?; echo "test.sh: the build failed (exit $status)" >&2; exit $status; }

"$(dirname "$0")/run-ctest.sh" "$build" "${selection[@]}" "$@"
