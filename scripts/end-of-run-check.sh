#!/usr/bin/env bash
# On a GPU node (one GPU is enough: the ranks then share it): the checks that a run always ends
# and never clobbers its output. Everything goes under OUT_DIR; a summary is printed last.
#
# Usage: scripts/end-of-run-check.sh OUT_DIR BUILD_DIR [STEP ...]
# Steps (default: build end faults staged ctest):
#   build    configure and build BUILD_DIR (Release, tests on)
#   end      tests/gpu_driver/end_checks.py: a rank stopped once the file is complete, a malformed
#            expectations file, two jobs on one path, a rerun on a complete file, PID namespaces
#   faults   tests/gpu_driver/fault_checks.py (injected and outside faults; files kept;
#            P2PBENCH_FAULT_GROUP=copies|methods runs one group)
#   staged   the three-rank staged ring on one node, P2PBENCH_RING_RUNS times (default 50)
#   ctest    ctest -L 'gpu|mpi', P2PBENCH_CTEST_RUNS times in a row (default 3)
#   mps      under MPS (nvidia-cuda-mps-control -d; needs root or the GPU's owner): two ranks of
#            tests/gpu_driver/{tiny,baselines,interference}.json on the one GPU (not the fault
#            checks: a client killed by a GPU fault leaves the server refusing new clients)
# Every step runs whatever the others did; the summary names each with its exit status and the
# script exits 1 when any failed (scripts/lib/steps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
out=${1:?usage: scripts/end-of-run-check.sh OUT_DIR BUILD_DIR [STEP ...]}
build=${2:?usage: scripts/end-of-run-check.sh OUT_DIR BUILD_DIR [STEP ...]}
shift 2
steps=("$@")
((${#steps[@]})) || steps=(build end faults staged ctest)
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec=(mpirun --oversubscribe --mca btl_vader_single_copy_mechanism none)
summary="$out/summary.txt"  # appended to: several calls may share OUT_DIR
{ date -u; nvidia-smi -L; mpirun --version | head -n1; } >"$out/system.txt" 2>&1

step_build() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1
  record_step build $? "build.log"
}

step_end() {
  timeout 900 python3 tests/gpu_driver/end_checks.py "$build/src/p2pbench" "${mpiexec[@]}" --keep "$out/end" \
    >"$out/end-checks.txt" 2>&1
  record_step "end checks" $? "$(tail -n1 "$out/end-checks.txt")"
}

step_faults() {
  timeout 900 python3 tests/gpu_driver/fault_checks.py "$build/src/p2pbench" "${mpiexec[@]}" --keep "$out/faults" \
    ${P2PBENCH_FAULT_GROUP:+--only "$P2PBENCH_FAULT_GROUP"} \
    >"$out/fault-checks.txt" 2>&1
  record_step "fault checks" $? "$(tail -n1 "$out/fault-checks.txt")"
}

step_staged() {
  local runs=${P2PBENCH_RING_RUNS:-50} passed=0 i
  for ((i = 1; i <= runs; i++)); do
    if timeout 120 "$build/tests/baselines/test_baselines_gpu" --gtest_filter='StagedGroup.RingOfThreeRanksOnOneNode' \
        >"$out/staged-ring-last.txt" 2>&1; then
      passed=$((passed + 1))
    else
      cp "$out/staged-ring-last.txt" "$out/staged-ring-failed-$i.txt"
    fi
  done
  record_step "staged ring of three ranks on one GPU" $((passed == runs ? 0 : 1)) "$passed of $runs runs passed"
}

step_ctest() {
  local runs=${P2PBENCH_CTEST_RUNS:-3} i
  for ((i = 1; i <= runs; i++)); do
    ctest --test-dir "$build" -L 'gpu|mpi' --output-on-failure -V >"$out/ctest-$i.log" 2>&1
    record_step "ctest -L 'gpu|mpi' run $i" $? "$(grep -E '^[0-9]+% tests passed' "$out/ctest-$i.log")"
    grep -E "SKIPPED|Skipped" "$out/ctest-$i.log" | sort | uniq -c >>"$out/ctest-$i-skips.txt"
  done
}

# MPS lets the ranks' kernels run on the one GPU at once instead of in time slices.
step_mps() {
  local pipe=$out/mps-pipe log=$out/mps-log
  mkdir -p "$pipe" "$log"
  export CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$log
  if ! nvidia-cuda-mps-control -d >"$out/mps-start.txt" 2>&1; then
    record_step "mps: the MPS daemon" 1 "did not start: $(head -c 200 "$out/mps-start.txt")"
    return
  fi
  local cfg
  for cfg in tiny baselines interference; do
    timeout 600 "${mpiexec[@]}" -np 2 "$build/src/p2pbench" --config "tests/gpu_driver/$cfg.json" --allow-same-device \
      --devices 0,0 --output "$out/mps-$cfg.json" >"$out/mps-$cfg.txt" 2>&1
    record_step "mps: two ranks of $cfg.json on one GPU" $? "$(grep -m1 -E '^results:' "$out/mps-$cfg.txt")"
  done
  echo quit | nvidia-cuda-mps-control
  record_step "mps: stopping the MPS daemon" $?
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}

for s in "${steps[@]}"; do  # every name checked before any step runs
  case "$s" in
    build | end | faults | staged | ctest | mps) ;;
    *) echo "end-of-run-check: unknown step '$s' (build end faults staged ctest mps)" >&2; exit 2 ;;
  esac
done
for s in "${steps[@]}"; do "step_$s"; done
finish_steps end-of-run-check
