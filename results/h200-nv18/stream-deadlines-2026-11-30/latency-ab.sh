#!/usr/bin/env bash
# On a node of two GPUs: latency_ce (configs/latency.json, its copy-engine rows only) by this
# tree's p2pbench and by the one built from OLD_SRC (the sources of an earlier commit, exported
# beside the tree), alternating ROUNDS times, each run's file kept (latency-ce-TREE-N.json).
# latency_ce's figure is a host round trip; this tree spins on the stream's query under a deadline
# where the earlier one called cudaStreamSynchronize.
# Usage: latency-ab.sh OUT_DIR OLD_SRC [ROUNDS]
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
old_src=$(realpath "${2:?usage: latency-ab.sh OUT_DIR OLD_SRC [ROUNDS]}")
rounds=${3:-3}
session_open latency-ab.sh "${1:-}"
session_build latency-ab.sh
session_step build-old 200 bash -c "cmake -S '$old_src' -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-old -j32 --target p2pbench"
build-old/src/p2pbench --version >"$work/version-old.txt" 2>&1
for ((i = 1; i <= rounds; i++)); do
  for tree in build-gpu build-old; do
    session_step "latency-ce-$tree-$i" 60 mpirun -np 2 --bind-to none --allow-run-as-root "$tree/src/p2pbench" \
      --devices 0,1 --config configs/latency.json --methods latency_ce --output "$work/latency-ce-$tree-$i.json"
  done
done
finish_steps latency-ab.sh
