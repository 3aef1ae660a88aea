#!/usr/bin/env bash
# Builds p2pbench once (one CUDA architecture by default, to keep it fast) and runs every test
# through CTest: unit, CLI and schema (Python), two-rank MPI, and GPU tests, which are skipped
# with a message where no GPU is visible. Extra arguments go to ctest (e.g. -L gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${P2PBENCH_BUILD_DIR:-build}
archs=${P2PBENCH_CUDA_ARCHITECTURES:-90}
export PATH="$PATH:/usr/local/cuda/bin"
python=$(command -v python3)
[ -x .venv/bin/python3 ] && python=$PWD/.venv/bin/python3

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
      -DPython3_EXECUTABLE="$python" || { status=$?; echo "test.sh: configuring $build failed (exit $status)" >&2; exit $status; }
cmake --build "$build" -j "${P2PBENCH_JOBS:-$(nproc)}" || { status=$?; echo "test.sh: the build failed (exit $status)" >&2; exit $status; }
status=0
ctest --test-dir "$build" --output-on-failure "$@" || { status=$?; echo "test.sh: ctest failed (exit $status)" >&2; }
# Say why GPU tests were skipped, in the log where CI readers look.
if ctest --test-dir "$build" -L gpu -N >/dev/null 2>&1; then
  skipped=$(ctest --test-dir "$build" -L gpu -V 2>/dev/null | grep -m1 -o "SKIPPED: .*" || true)
  [ -n "$skipped" ] && echo "GPU tests (label gpu): $skipped"
fi
exit $status
