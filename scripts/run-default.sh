#!/usr/bin/env bash
# Builds p2pbench (A100 + Hopper + PTX) and runs the default sweep on a node with two or more GPUs;
# on a node with one GPU it runs what one GPU measures (configs/one-gpu.json, no mpirun).
# Usage: scripts/run-default.sh [RESULTS.json] [extra p2pbench flags...]
# P2PBENCH_CONFIG picks another config (default configs/default.json).
# Before building, it asks the driver how many GPUs there are: with none it says what can be done
# instead and exits 1; with one it says that P2P figures need two and measures the one GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
output=${1:-results-default.json}
shift || true
config=${P2PBENCH_CONFIG:-configs/default.json}

# The GPUs the driver lists; nvidia-smi can hang on a wedged driver, hence the deadline.
gpu_list=""
smi_status=0
if command -v nvidia-smi >/dev/null; then
  gpu_list=$(timeout 20 nvidia-smi -L 2>&1) || smi_status=$?
else
  smi_status=127
fi
gpus=$(grep -c '^GPU [0-9]' <<<"$gpu_list" || true)
if ((gpus == 0)); then
  echo "run-default: no GPU found, so there is nothing to measure here."
  if ((smi_status == 127)); then echo "  nvidia-smi: not found (is the NVIDIA driver installed?)"
  else printf '  nvidia-smi -L (exit %d): %s\n' "$smi_status" "${gpu_list:-no output}"; fi
  cat <<EOF
What you can do on this machine:
  scripts/test.sh                                   build and run the tests (GPU tests skip)
  build/src/p2pbench --config $config --dry-run     the cases a run would make and their time
  scripts/p2pbench-report plot results/h200-nv18/default.json --output-dir figures
                                                    read results measured on a GPU node
On a node with two or more GPUs, run this script again.
EOF
  exit 1
fi
# Each step that fails says which it was and ends the script with its exit status.
failed() {  # STEP STATUS
  echo "run-default: $1 failed (exit $2)" >&2
  exit "$2"
}
build() {
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DP2PBENCH_BUILD_TESTS=OFF ||
    failed "configuring (cmake -S . -B build-release)" $?
  cmake --build build-release -j "$(nproc)" || failed "the build (cmake --build build-release)" $?
}
if ((gpus == 1)); then
  echo "run-default: one GPU found; P2P figures need two (one per rank)."
  printf '  %s\n' "$gpu_list"
  echo "Measuring what one GPU can: its host link and copies within its memory (configs/one-gpu.json)."
  build
  # One rank needs no mpirun.
  build-release/src/p2pbench --config configs/one-gpu.json --output "$output" "$@" ||
    failed "the one-GPU run (p2pbench --config configs/one-gpu.json)" $?
  exit 0
fi

build
root_flags=()
[ "$(id -u)" -eq 0 ] && root_flags=(--allow-run-as-root)
# --bind-to none: p2pbench binds each rank to the CPUs near its GPU itself.
mpirun -np 2 --bind-to none "${root_flags[@]}" build-release/src/p2pbench --config "$config" \
       --output "$output" "$@" || failed "the run (mpirun -np 2 p2pbench --config $config)" $?
