#!/usr/bin/env bash
# On a node with two GPUs joined by NVLink: this tree ("after") against an older tree ("before")
# in the same call, runs alternated so that drift of the node lands on both, with nvbandwidth and
# nccl-tests beside them. Everything (logs, results, a summary) goes under OUT_DIR, packed into
# OUT_DIR/remeasure.tgz after every step.
#
# Usage: scripts/two-gpu-remeasure.sh OUT_DIR BEFORE_SRC [NVBANDWIDTH_BIN] [NCCL_TESTS_SRC]
#   BEFORE_SRC       an extracted source tree of the older commit (git archive REV | tar -x -C DIR)
#   NVBANDWIDTH_BIN  an nvbandwidth binary (v0.8 builds with Boost program_options; optional)
#   NCCL_TESTS_SRC   nccl-tests' source tree; sendrecv_perf and all_reduce_perf are built from it
# Env: P2PBENCH_REMEASURE_STEPS (default "build default tools latency atomics baselines matrix patterns
#      interference host-link equivalents put-signal tokens collectives gemm-rs allocators"; a step other
#      than build, default, tools, equivalents, put-signal, tokens, collectives, gemm-rs and allocators
#      names configs/STEP.json), P2PBENCH_INTERFERENCE_CONFIG (another config for that step),
#      P2PBENCH_EXPECT (default expectations/h200-nv18.json), P2PBENCH_CUDA_ARCHITECTURES (default 90)
# Every step runs whatever the others did; the summary names each with its exit status and the
# script exits 1 when any failed (scripts/lib/steps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
out=${1:?usage: scripts/two-gpu-remeasure.sh OUT_DIR BEFORE_SRC [NVBANDWIDTH_BIN] [NCCL_TESTS_SRC]}
before_src=$(cd "${2:?BEFORE_SRC: an extracted source tree of the older commit}" && pwd)
nvbandwidth=${3:-}
nccl_tests_src=${4:-}
steps=${P2PBENCH_REMEASURE_STEPS:-build default tools latency atomics baselines matrix patterns interference host-link equivalents put-signal tokens collectives gemm-rs allocators}
expect=${P2PBENCH_EXPECT:-expectations/h200-nv18.json}
arch=${P2PBENCH_CUDA_ARCHITECTURES:-90}
export PATH="$PATH:/usr/local/cuda/bin" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
mkdir -p "$out/runs" "$out/tools" "$out/logs"
summary="$out/summary.txt"
: >"$summary"
declare -A bin=([after]="$PWD/build-gpu/src/p2pbench" [before]="$before_src/build-gpu/src/p2pbench")

{
  date -u
  timeout 20 nvidia-smi -L
  timeout 20 nvidia-smi topo -m
  timeout 20 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
  mpirun --version | head -n1
} >"$out/logs/system.txt" 2>&1

build_tree() {  # SRC TAG
  { cmake -S "$1" -B "$1/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" -DP2PBENCH_BUILD_TESTS=OFF &&
    cmake --build "$1/build-gpu" -j 16 --target p2pbench; } >"$out/logs/build-$2.log" 2>&1
}

build_nccl_tests() {
  make -C "$nccl_tests_src/src" -j 16 NCCL_HOME=/usr CUDA_HOME=/usr/local/cuda BUILDDIR=/tmp/nccl-tests \
    NVCC_GENCODE="-gencode=arch=compute_$arch,code=sm_$arch" /tmp/nccl-tests/sendrecv_perf /tmp/nccl-tests/all_reduce_perf \
    >"$out/logs/build-nccl-tests.log" 2>&1
}

# The three builds at once, each recorded when it ends (a background job's own records would be
# lost with its subshell).
build_all() {
  local after before nccl=""
  build_tree . after & after=$!
  build_tree "$before_src" before & before=$!
  [ -n "$nccl_tests_src" ] && { build_nccl_tests & nccl=$!; }
  wait "$after"; record_step "build after" $? "logs/build-after.log"
  wait "$before"; record_step "build before" $? "logs/build-before.log"
  [ -z "$nccl" ] || { wait "$nccl"; record_step "build nccl-tests" $? "logs/build-nccl-tests.log"; }
}

# run TREE NAME NP CONFIG [FLAGS...]: one p2pbench run, its console and results under runs/.
run() {
  local tree=$1 name=$2 np=$3 config=$4
  shift 4
  [ -x "${bin[$tree]}" ] || { record_step "$name $tree" 127 "not run: no binary, see logs/build-$tree.log"; return; }
  local same=()
  [ "$np" -gt 2 ] && same=(--allow-same-device --devices 0,1)
  local start=$SECONDS
  timeout 240 mpirun -np "$np" --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none \
    "${bin[$tree]}" --config "$config" "${same[@]}" --label "two-gpu-$tree" --output "$out/runs/$name-$tree.json" "$@" \
    >"$out/runs/$name-$tree.txt" 2>&1
  record_step "$name $tree" $? "$((SECONDS - start)) s, $(grep -m1 -E '^results:' "$out/runs/$name-$tree.txt")"
}

# compare NAME: each case's median, before against after (both runs of each, where there are two).
compare() {
  local files=()
  for f in "$out/runs/$1-before.json" "$out/runs/$1-after.json" "$out/runs/$1-2-before.json" "$out/runs/$1-2-after.json"; do
    [ -f "$f" ] && files+=("$f")
  done
  python3 scripts/before-after.py "$1" "${files[@]}" >>"$out/before-after.txt" 2>&1
  record_step "$1 before/after" $? "before-after.txt"
}

run_tools() {
  if [ -n "$nvbandwidth" ]; then
    timeout 300 "$nvbandwidth" -b 512 -i 3 -j -t device_to_device_memcpy_write_ce device_to_device_memcpy_read_ce \
      device_to_device_bidirectional_memcpy_write_ce device_to_device_memcpy_write_sm device_to_device_memcpy_read_sm \
      device_to_device_bidirectional_memcpy_write_sm device_to_device_bidirectional_memcpy_read_sm \
      device_to_device_latency_sm host_to_device_memcpy_ce device_to_host_memcpy_ce \
      >"$out/tools/nvbandwidth.json" 2>"$out/tools/nvbandwidth.stderr"
    record_step nvbandwidth $? "tools/nvbandwidth.stderr"
  fi
  if [ -x /tmp/nccl-tests/sendrecv_perf ]; then
    # The sizes of configs/nccl-tests-equivalent.json (8 B to 512 MiB, x4), and 1 GiB.
    timeout 120 /tmp/nccl-tests/sendrecv_perf -g 2 -b 8 -e 512M -f 4 -w 5 -n 20 >"$out/tools/sendrecv_perf.txt" 2>&1
    record_step "nccl-tests sendrecv_perf" $? "tools/sendrecv_perf.txt"
    timeout 60 /tmp/nccl-tests/sendrecv_perf -g 2 -b 1G -e 1G -w 5 -n 20 >"$out/tools/sendrecv_perf_1G.txt" 2>&1
    record_step "nccl-tests sendrecv_perf 1 GiB" $? "tools/sendrecv_perf_1G.txt"
    timeout 120 /tmp/nccl-tests/all_reduce_perf -g 2 -b 8 -e 1G -f 8 -w 5 -n 20 >"$out/tools/all_reduce_perf.txt" 2>&1
    record_step "nccl-tests all_reduce_perf" $? "tools/all_reduce_perf.txt"
  elif [ -n "$nccl_tests_src" ]; then
    record_step "nccl-tests" 127 "no /tmp/nccl-tests/sendrecv_perf: see logs/build-nccl-tests.log"
  fi
}

# Any other step names a config: configs/STEP.json, run by both trees (four ranks on the two GPUs
# for the group configs), compared case by case.
config_step() {
  local config=configs/$1.json np=2
  [ "$1" = interference ] && config=${P2PBENCH_INTERFERENCE_CONFIG:-$config}
  case $1 in matrix | patterns) np=4 ;; esac
  [ -f "$config" ] || { record_step "step $1" 2 "unknown step: no $config"; return; }
  run before "$1" "$np" "$config"
  run after "$1" "$np" "$config"
  compare "$1"
}

for step in $steps; do
  case $step in
    build) build_all ;;
    default)
      # Two alternated rounds; the expectations are checked on every run.
      run before default 2 configs/default.json --expect "$expect"
      run after default 2 configs/default.json --expect "$expect"
      run before default-2 2 configs/default.json --expect "$expect"
      run after default-2 2 configs/default.json --expect "$expect"
      compare default
      ;;
    equivalents)
      run after nvbandwidth-equivalent 2 configs/nvbandwidth-equivalent.json
      run after nccl-tests-equivalent 2 configs/nccl-tests-equivalent.json
      ;;
    tools) run_tools ;;
    put-signal)
      # This tree only (an older one may not have the methods): the config on the two GPUs, and the
      # kernels' own test across them (every chunk verified; the ordering counts over the link).
      run after put-signal 2 configs/put-signal.json
      { cmake -S . -B build-gpu-tests -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" &&
        cmake --build build-gpu-tests -j 16 --target test_put_signal_kernels; } >"$out/logs/build-put-signal-test.log" 2>&1
      record_step "build test_put_signal_kernels" $? "logs/build-put-signal-test.log"
      P2PBENCH_ORDERING_DEVICES=0,1 P2PBENCH_ORDERING_TRIES=${P2PBENCH_ORDERING_TRIES:-200} timeout 300 \
        build-gpu-tests/tests/put_signal/test_put_signal_kernels >"$out/runs/put-signal-kernels-0-1.txt" 2>&1
      record_step "put_signal kernels across the GPUs" $? \
        "$(grep -c '^ORDERING' "$out/runs/put-signal-kernels-0-1.txt") ordering counts"
      ;;
    tokens) run after tokens 2 configs/tokens.json ;;  # this tree only, as put-signal
    collectives | gemm-rs) run after "$step" 2 "configs/$step.json" ;;  # this tree only, as put-signal
    allocators)
      # This tree only: the same copies with each allocator, alternated (figures must agree within 1%).
      for round in 1 2; do
        for a in legacy vmm; do run after "alloc-$a-$round" 2 configs/ce-large.json --allocator "$a"; done
      done
      run after alloc-fabric 2 configs/ce-large.json --allocator fabric  # mapped, or waived with the driver's reason
      ;;
    *) config_step "$step" ;;
  esac
  # Packed after every step, so that a call cut short still brings back what it measured.
  rm -f "$out"/runs/*.tmp*
  tar -czf "$out/remeasure.tgz" -C "$out" runs tools logs summary.txt $(cd "$out" && ls before-after.txt 2>/dev/null) ||
    record_step "pack remeasure.tgz after $step" 1
done
finish_steps two-gpu-remeasure
