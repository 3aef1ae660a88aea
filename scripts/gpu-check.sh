#!/usr/bin/env bash
# On a GPU node: build, run the GPU and MPI tests (failing if any GPU test is skipped but for a
# missing service), check
# the TMA kernel's SASS, run compute-sanitizer over the kernels, and run sweeps. Everything
# (logs, result JSON) goes under OUT_DIR; a short summary is printed last.
#
# Usage: scripts/gpu-check.sh OUT_DIR [CONFIG.json ...]      (default: configs/default.json)
# Env:   P2PBENCH_LABEL (result label, default "gpu-node"), P2PBENCH_SKIP_TESTS=1,
#        P2PBENCH_GBENCH_CONFIG=configs/X.json (also run p2pbench-gbench on it),
#        P2PBENCH_CUDA_ARCHITECTURES=90 (default: the project's), P2PBENCH_SKIP_SANITIZER=1,
#        P2PBENCH_SAME_DEVICE_RUN=1 (also a two-ranks-on-one-GPU run of the default config up to 256 MiB),
#        P2PBENCH_TEST_LABELS (ctest labels, default "gpu|mpi"), P2PBENCH_TEST_EXCLUDE (ctest -E regex), P2PBENCH_EXPECT=FILE (--expect for the sweeps),
#        P2PBENCH_SANITIZER_TIMEOUT (seconds per sanitizer run, default 900), P2PBENCH_FAULT_CHECKS=1 (SIGSTOP/SIGKILL/SIGTERM/SIGINT and injected faults against default.json,
#        logs under OUT_DIR/faults), P2PBENCH_DRIVER_SANITIZER="memcheck racecheck synccheck" (the driver in
#        sanitizer mode under each tool over P2PBENCH_SANITIZER_CONFIGS, default "default latency atomics
#        baselines", sizes <= 1 MiB; the tools run at once, logs under OUT_DIR/sanitizer)
# Every step runs whatever the others did; the summary names each step with its exit status and
# the script exits 1 when any failed (scripts/lib/steps.sh), 0 when all passed.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
out=${1:?usage: scripts/gpu-check.sh OUT_DIR [CONFIG.json ...]}
shift
configs=("$@")
((${#configs[@]})) || configs=(configs/default.json)
label=${P2PBENCH_LABEL:-gpu-node}
mkdir -p "$out/logs" "$out/results"
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary="$out/summary.txt"
: >"$summary"

{
  date -u
  nvidia-smi -L
  nvidia-smi topo -m
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  mpirun --version | head -1
} >"$out/logs/system.txt" 2>&1

build=build-gpu
archs=()
[ -n "${P2PBENCH_CUDA_ARCHITECTURES:-}" ] && archs=(-DCMAKE_CUDA_ARCHITECTURES="$P2PBENCH_CUDA_ARCHITECTURES")
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${archs[@]}" && cmake --build "$build" -j "$(nproc)"; } \
    >"$out/logs/build.log" 2>&1; then
  record_step build 1 "see logs/build.log; nothing else can run"
  tail -40 "$out/logs/build.log"
  finish_steps gpu-check
fi
record_step build 0 "$(grep -m1 CMAKE_CUDA_ARCHITECTURES: "$build/CMakeCache.txt" | cut -d= -f2)"

if [ "${P2PBENCH_SKIP_TESTS:-0}" != 1 ]; then
  scripts/run-ctest.sh "$build" -L "${P2PBENCH_TEST_LABELS:-gpu|mpi}" -E "${P2PBENCH_TEST_EXCLUDE:-^$}" -V \
    >"$out/logs/ctest-gpu.log" 2>&1
  rc=$?
  # A GPU test skipped on a GPU node is a failure here, unless it names a missing service (IMEX).
  skipped=$(grep -vc "missing service" "$build/skipped-tests.txt" || true)
  ((rc == 0 && skipped != 0)) && rc=77
  record_step "gpu+mpi tests" "$rc" "skipped=$skipped, $(grep -E '^[0-9]+% tests passed' "$out/logs/ctest-gpu.log")"
  grep -E "^(PASS|FAIL) |passed, .* failed" "$out/logs/ctest-gpu.log" >>"$summary"
fi

scripts/check-sass.sh "$build" >"$out/logs/sass.txt" 2>&1
record_step "sass (bulk-copy instructions)" $? "logs/sass.txt"

# sanitize NAME LOG BINARY [ARGS...]: one kernel test under each compute-sanitizer tool.
sanitize() {
  local name=$1 log=$2 tool
  shift 2
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" >"$out/logs/$log-$tool.log" 2>&1
    record_step "compute-sanitizer $tool ($name)" $? "$(grep -m1 -E '(ERROR|RACECHECK) SUMMARY' "$out/logs/$log-$tool.log")"
  done
}
if [ "${P2PBENCH_SKIP_SANITIZER:-0}" != 1 ]; then
  if command -v compute-sanitizer >/dev/null; then
    sanitize "copy kernels" sanitizer "$build/tests/kernels/test_copy_kernels" \
      --gtest_filter='*_n17_*:*_n4097_src*:*_n1048579_src0_dst0:*_n1048579_src3_dst8:CopyKernelSms.*'
    # put_signal's sender and receiver, at once and one after the other (CUDA 13.0's sanitizer
    # runs two streams' kernels at once), but for the two cases that skip under it: the ordering
    # counts and the SM holder, whose timing means nothing at the sanitizer's pace.
    sanitize "put_signal kernels" sanitizer-put-signal "$build/tests/put_signal/test_put_signal_kernels" \
      --gtest_filter='-*OrderingCounts*:*NeedsNoSm*'
    # The tokens kernels (gathered dispatch, the combine's sum and checks); the SM collectives and
    # the GEMM -> reduce-scatter's tile reduction, every rank in one grid of one GPU.
    sanitize "tokens kernels" sanitizer-tokens "$build/tests/tokens/test_token_kernels"
    sanitize "collective kernels" sanitizer-collectives "$build/tests/collectives/test_collective_kernels"
    sanitize "gemm_rs kernels" sanitizer-gemm-rs "$build/tests/gemm_rs/test_gemm_rs_kernels"
  else
    record_step compute-sanitizer 127 "not found: install it or set P2PBENCH_SKIP_SANITIZER=1"
  fi
fi

"$build/src/p2pbench" --topology >"$out/logs/topology.txt" 2>&1
record_step topology $? "$(grep -m1 -iE 'NV[0-9]+|PIX|PXB|PHB|SYS' "$out/logs/topology.txt" | head -c 120)"

mpirun_cmd=(mpirun -np 2 --bind-to none --mca btl_vader_single_copy_mechanism none)
for config in "${configs[@]}"; do
  name=$(basename "$config" .json)
  expect=()
  [ -n "${P2PBENCH_EXPECT:-}" ] && expect=(--expect "$P2PBENCH_EXPECT")
  "${mpirun_cmd[@]}" "$build/src/p2pbench" --config "$config" --label "$label" --progress "${expect[@]}" \
    --output "$out/results/$name.json" >"$out/logs/$name.log" 2>"$out/logs/$name.err"
  record_step "sweep $name" $? || tail -20 "$out/logs/$name.err"
done
if [ "${P2PBENCH_SAME_DEVICE_RUN:-0}" = 1 ]; then
  "${mpirun_cmd[@]}" "$build/src/p2pbench" --config configs/default.json --allow-same-device --devices 0,0 -e 256M \
    --label "$label-same-device" --output "$out/results/default-same-device.json" \
    >"$out/logs/default-same-device.log" 2>&1
  record_step "sweep default-same-device" $? "logs/default-same-device.log"
fi

# The Google Benchmark front-end on the cross-check cases, compared with the driver's run of
# the same config (when it was among the configs above).
gbench="$build/src/gbench/p2pbench-gbench"
if [ -n "${P2PBENCH_GBENCH_CONFIG:-}" ] && [ ! -x "$gbench" ]; then
  record_step gbench 1 "no $gbench: Google Benchmark missing from the build?"
elif [ -n "${P2PBENCH_GBENCH_CONFIG:-}" ]; then
  name=$(basename "$P2PBENCH_GBENCH_CONFIG" .json)
  mkdir -p "$out/results/gbench"
  "$gbench" --config "$P2PBENCH_GBENCH_CONFIG" --benchmark_repetitions=5 --benchmark_format=json \
    --benchmark_out="$out/results/gbench/$name.json" >"$out/logs/gbench.log" 2>&1
  record_step "gbench $name" $? "logs/gbench.log"
  if [ -f "$out/results/$name.json" ]; then
    python3 scripts/gbench-crosscheck.py "$out/results/$name.json" "$out/results/gbench/$name.json" \
      >"$out/logs/gbench-crosscheck.txt" 2>&1
    record_step "gbench vs driver" $? "$(tail -1 "$out/logs/gbench-crosscheck.txt")"
  fi
fi

if [ "${P2PBENCH_FAULT_CHECKS:-0}" = 1 ]; then
  one_gpu=()
  (( $(nvidia-smi -L | grep -c '^GPU ') < 2 )) && one_gpu=(--one-gpu)
  python3 tests/gpu_driver/fault_checks.py "$build/src/p2pbench" "${mpirun_cmd[@]}" --config configs/default.json \
    --keep "$out/faults" "${one_gpu[@]}" >"$out/logs/faults.log" 2>&1
  record_step "faults (default.json)" $? "$(tail -1 "$out/logs/faults.log")"
fi

# The whole driver under compute-sanitizer, in sanitizer mode (no gate, no spinning kernels).
if [ -n "${P2PBENCH_DRIVER_SANITIZER:-}" ] && ! command -v compute-sanitizer >/dev/null; then
  record_step "driver under compute-sanitizer" 127 "compute-sanitizer not found"
elif [ -n "${P2PBENCH_DRIVER_SANITIZER:-}" ]; then
  mkdir -p "$out/sanitizer"
  compute-sanitizer --tool memcheck env 2>/dev/null | grep -E '^(CUDA_INJECTION|LD_PRELOAD|NV_SANITIZER)' \
    >"$out/sanitizer/environment.txt" 2>&1
  sanitize_configs=(${P2PBENCH_SANITIZER_CONFIGS:-default latency atomics baselines})
  for tool in $P2PBENCH_DRIVER_SANITIZER; do
    (
      for name in "${sanitize_configs[@]}"; do
        log="$out/sanitizer/$tool-$name.log"
        timeout "${P2PBENCH_SANITIZER_TIMEOUT:-900}" "${mpirun_cmd[@]}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
          "$build/src/p2pbench" --config "configs/$name.json" -e 1M --sanitize \
          --output "$out/sanitizer/$tool-$name.json" >"$log" 2>&1
        echo "$tool $name: rc=$? $(grep -h -E '(ERROR|RACECHECK|SYNCCHECK) SUMMARY' "$log" | sort | uniq -c | tr -s ' ' | paste -sd';')"
      done
    ) >"$out/sanitizer/$tool.summary" &
  done
  wait
  cat "$out"/sanitizer/*.summary | tee -a "$summary"
  ! grep -q "rc=[1-9]" "$out"/sanitizer/*.summary
  record_step "driver under compute-sanitizer" $? "a line per tool and config above"
fi

tar -C "$out" -czf "$out/gpu-check.tar.gz" logs results $(cd "$out" && ls -d faults sanitizer 2>/dev/null)
record_step "pack gpu-check.tar.gz" $?
echo "==== summary ($summary) ===="
cat "$summary"
finish_steps gpu-check
