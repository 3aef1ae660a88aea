#!/usr/bin/env bash
# Runs CTest in a build folder with the visible GPUs as CTest resources: each GPU test gets as
# many GPUs as it needs (tests side by side on a node with several) or is skipped, saying why,
# where fewer are visible (tests/run_on_gpus.py). Lists every skipped test and why at the end (the
# GPU tests say why themselves; the others' reasons come from their output: scripts/lib/skip_reasons.py).
#
# Usage: scripts/run-ctest.sh BUILD_DIR [CTEST_ARGS...]
# Env: P2PBENCH_TEST_JOBS (tests at once; default: the GPUs, the cores and 2 more), P2PBENCH_REQUIRE_GPUS=N
#      (a GPU test that needs N or fewer GPUs and skips fails instead).
# Exit: ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: scripts/run-ctest.sh BUILD_DIR [CTEST_ARGS...]}" && pwd)
shift
python=$(command -v python3)
[ -x .venv/bin/python3 ] && python=$PWD/.venv/bin/python3

# tests/gpu_resources reads P2PBENCH_GPUS when ctest runs.
spec="$build/gpu-resources.json"
P2PBENCH_GPUS=$("$python" tests/run_on_gpus.py --write-spec "$spec")
export P2PBENCH_GPUS
export P2PBENCH_SKIP_LOG="$build/skipped-tests.txt"
: >"$P2PBENCH_SKIP_LOG"
# One test a GPU, one a core, and two more: the Slurm and MPI-deadline tests mostly wait (on
# Slurm's clock, on deadlines), so beside them every core still has a test (on a 2-core machine the
# CPU tests took 439 s at 4 at once, 481 s at 3).
cores=$(nproc 2>/dev/null || echo 2)
jobs=${P2PBENCH_TEST_JOBS:-$((P2PBENCH_GPUS + cores + 2))}
echo "run-ctest: $P2PBENCH_GPUS GPU(s) visible; $jobs tests at a time"

status=0
ctest --test-dir "$build" --output-on-failure --resource-spec-file "$spec" -j "$jobs" "$@" \
  || { status=$?; echo "run-ctest: ctest failed (exit $status)" >&2; }
# The other skips' reasons (a Python package or Slurm missing), from each test's own output.
"$python" scripts/lib/skip_reasons.py "$build/Testing/Temporary/LastTest.log" "$P2PBENCH_SKIP_LOG" \
  || echo "run-ctest: could not read the skipped tests' reasons from LastTest.log" >&2
if [ -s "$P2PBENCH_SKIP_LOG" ]; then
  echo "Skipped tests and why ($P2PBENCH_GPUS GPU(s) visible):"
  sort "$P2PBENCH_SKIP_LOG" | sed 's/^/  /'
fi
exit $status
