#!/usr/bin/env bash
# Builds p2pbench (A100 + Hopper + PTX) and runs the default sweep on a node with two or more GPUs.
# Usage: scripts/run-default.sh [RESULTS.json] [extra p2pbench flags...]
# P2PBENCH_CONFIG picks another config (default configs/default.json).
# Before building, it asks the driver how many GPUs there are: with none or one it says what can
# be done instead and exits 1 (P2P figures need two GPUs).
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
if ((gpus == 1)); then
  echo "run-default: one GPU found; P2P figures need two (one per rank)."
  printf '  %s\n' "$gpu_list"
  cat <<'EOF'
On one GPU you can measure each rank's host link (real figures) with two ranks sharing the GPU:
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DP2PBENCH_BUILD_TESTS=OFF
  cmake --build build-release
  mpirun -np 2 --bind-to none build-release/src/p2pbench --config configs/host-link.json \
         --allow-same-device --output host-link.json
--allow-same-device runs any config for functional testing; its P2P rows are copies within the one
GPU, marked same-device in the results, never P2P figures.
EOF
  exit 1
fi

cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DP2PBENCH_BUILD_TESTS=OFF
cmake --build build-release -j "$(nproc)"
root_flags=()
[ "$(id -u)" -eq 0 ] && root_flags=(--allow-run-as-root)
# --bind-to none: p2pbench binds each rank to the CPUs near its GPU itself.
mpirun -np 2 --bind-to none "${root_flags[@]}" build-release/src/p2pbench --config "$config" \
       --output "$output" "$@"
