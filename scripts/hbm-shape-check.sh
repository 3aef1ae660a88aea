#!/usr/bin/env bash
# On a GPU node: times every shape of the HBM stream workload against a plain device copy
# (HbmWorkload.StreamShapes), builds with the fastest as the default (P2PBENCH_HBM_* CMake
# cache variables), checks it, and runs the HBM half of configs/interference.json with it.
# Logs and JSON under OUT_DIR; the chosen shape is printed last.
#
# Usage: scripts/hbm-shape-check.sh OUT_DIR [BUILD_DIR]     (default build dir: build-gpu)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/hbm-shape-check.sh OUT_DIR [BUILD_DIR]}
build=${2:-build-gpu}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
configure() { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "$@" >>"$out/build.log" 2>&1; }
build_targets() { cmake --build "$build" -j "$(nproc)" --target p2pbench test_interference_gpu >>"$out/build.log" 2>&1; }
configure && build_targets || { echo "build failed: $out/build.log"; tail -20 "$out/build.log"; exit 1; }

"$build/tests/interference/test_interference_gpu" --gtest_filter=HbmWorkload.StreamShapes >"$out/shapes.txt" 2>&1 ||
  { echo "the shapes test failed: $out/shapes.txt"; tail -20 "$out/shapes.txt"; exit 1; }
best=$(grep -m1 "HBM stream shape best" "$out/shapes.txt")
read -r unroll chunk per_sm < <(sed -E 's/.*unroll ([0-9]+) chunk ([0-9]+) KiB blocks\/SM ([0-9]+).*/\1 \2 \3/' <<<"$best")
configure -DP2PBENCH_HBM_UNROLL="$unroll" -DP2PBENCH_HBM_CHUNK_KIB="$chunk" -DP2PBENCH_HBM_BLOCKS_PER_SM="$per_sm" &&
  build_targets || { echo "rebuild failed: $out/build.log"; exit 1; }
"$build/tests/interference/test_interference_gpu" --gtest_filter='HbmWorkload.*' >"$out/hbm-tests.txt" 2>&1
tests_rc=$?

python3 - "$out/interference-hbm.json" <<'PY'
import json, sys
config = json.load(open("configs/interference.json"))
config.update(label="interference-hbm", description="configs/interference.json, the HBM stream workload only")
config["interference"]["workloads"] = ["hbm"]
json.dump(config, open(sys.argv[1], "w"), indent=2)
PY
mpirun -np 2 --bind-to none --mca btl_vader_single_copy_mechanism none "$build/src/p2pbench" --config "$out/interference-hbm.json" \
  --label h200-nv18 --output "$out/interference-hbm-results.json" >"$out/interference-hbm.log" 2>&1
run_rc=$?
grep -E "HBM stream shape" "$out/shapes.txt" | tail -17
grep -E "HBM stream [0-9]" "$out/hbm-tests.txt"
echo "hbm tests: rc=$tests_rc; interference (hbm): rc=$run_rc; chosen: unroll $unroll, chunk $chunk KiB, $per_sm blocks/SM"
