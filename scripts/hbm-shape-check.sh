#!/usr/bin/env bash
# On a GPU node: times every shape of the HBM stream workload (layout, cache hints, 16-byte loads
# in flight, chunk, blocks per SM; HbmStreamShape in kernels/workload_kernels.hpp) against a
# plain device-to-device copy in one test process (HbmWorkload.StreamShapes: each shape's copy
# checked byte for byte, the 8 fastest re-timed), writes the table OUT_DIR/shapes.tsv and
# OUT_DIR/summary.txt, then builds with the best shape that has a chunk counter as the default
# (P2PBENCH_HBM_* CMake cache variables), runs the HBM tests with it and, unless --sweep-only,
# the HBM half of configs/interference.json (two GPUs). The summary is printed once the shape is chosen.
#
# Usage: scripts/hbm-shape-check.sh [--sweep-only] OUT_DIR [BUILD_DIR]   (default build dir: build-gpu)
#   --sweep-only   build, sweep, table and summary only: no rebuild, no tests, no interference run
# Exits 1 naming the step that failed: the build, the sweep and the table stop the script; after
# the rebuild, the tests and the run are each recorded and the script ends FAILED if one failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/lib/steps.sh
sweep_only=0
if [[ ${1:-} == --sweep-only ]]; then sweep_only=1; shift; fi
out=${1:?usage: scripts/hbm-shape-check.sh [--sweep-only] OUT_DIR [BUILD_DIR]}
build=${2:-build-gpu}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
configure() { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "$@" >>"$out/build.log" 2>&1; }
build_targets() { cmake --build "$build" -j "$(nproc)" --target "$@" >>"$out/build.log" 2>&1; }
targets=(test_interference_gpu)
((sweep_only)) || targets+=(p2pbench)
if ! { configure && build_targets "${targets[@]}"; }; then
  echo "build failed: $out/build.log"; tail -20 "$out/build.log"; exit 1
fi

"$build/tests/interference/test_interference_gpu" --gtest_filter=HbmWorkload.StreamShapes >"$out/shapes.txt" 2>&1 ||
  { echo "the shapes test failed: $out/shapes.txt"; grep -E "Failure|error|Expected|Which is|first bad" "$out/shapes.txt" | head -20; exit 1; }

# shapes.txt -> shapes.tsv (every shape, sweep order) and summary.txt (what to choose from).
python3 - "$out/shapes.txt" "$out/shapes.tsv" "$out/summary.txt" <<'PY' || { echo "could not read the sweep: $out/shapes.txt"; exit 1; }
import re, sys
text = open(sys.argv[1]).read()
row = re.compile(r"HBM stream shape: layout (\w+) hints (\w+) unroll (\d+) chunk (\d+) KiB blocks/SM (\d+): "
                 r"regs (\d+) spill (\d+): ([\d.]+) GB/s")
rows = [m.groups() for m in row.finditer(text)]
copy = float(re.search(r"D2D reference: median ([\d.]+) GB/s", text).group(1))
cols = ["layout", "hints", "unroll", "chunk_kib", "blocks_per_sm", "registers", "spill_bytes", "gbps", "pct_of_d2d"]
with open(sys.argv[2], "w") as tsv:
    tsv.write("\t".join(cols) + "\n")
    for r in rows:
        tsv.write("\t".join(r) + f"\t{100 * float(r[7]) / copy:.1f}\n")
def line(r):
    return (f"  {r[0]:<13} {r[1]:<12} unroll {r[2]} chunk {r[3]:>5} KiB blocks/SM {r[4]} regs {r[5]:>2}: "
            f"{float(r[7]):7.1f} GB/s = {100 * float(r[7]) / copy:5.1f}% of D2D")
ranked = sorted(rows, key=lambda r: -float(r[7]))
out = [f"{len(rows)} shapes timed ({text.count(': skipped: ')} skipped); rates against the copy's median in the sweep:",
       *[l for l in text.splitlines() if "D2D reference" in l], "", "fastest 12 in the sweep:", *map(line, ranked[:12])]
for i, what in ((1, "cache hints"), (0, "layout"), (2, "unroll"), (4, "blocks per SM")):
    out += ["", f"best per {what}:"]
    seen = set()
    for r in ranked:
        if r[i] not in seen:
            seen.add(r[i])
            out.append(line(r))
out += ["", "confirmation (3 interleaved runs each, medians):",
        *[l for l in text.splitlines() if "shape confirm" in l or "shape best" in l]]
open(sys.argv[3], "w").write("\n".join(out) + "\n")
PY

best=$(grep -m1 "HBM stream shape best: " "$out/shapes.txt") ||
  { echo "the sweep named no best shape (no 'HBM stream shape best:' line in $out/shapes.txt)"; exit 1; }
read -r layout hints unroll chunk per_sm < <(sed -E \
  's/.*best: layout ([a-z_]+) hints ([a-z_]+) unroll ([0-9]+) chunk ([0-9]+) KiB blocks\/SM ([0-9]+):.*/\1 \2 \3 \4 \5/' <<<"$best")
flags=(-DP2PBENCH_HBM_LAYOUT="$layout" -DP2PBENCH_HBM_HINTS="$hints" -DP2PBENCH_HBM_UNROLL="$unroll"
  -DP2PBENCH_HBM_CHUNK_KIB="$chunk" -DP2PBENCH_HBM_BLOCKS_PER_SM="$per_sm")
cat "$out/summary.txt"
echo "chosen: ${flags[*]}"
((sweep_only)) && { echo "sweep only: not rebuilt"; exit 0; }
if ! { configure "${flags[@]}" && build_targets p2pbench test_interference_gpu; }; then
  echo "rebuild failed: $out/build.log"; exit 1
fi
"$build/tests/interference/test_interference_gpu" --gtest_filter='HbmWorkload.*:HbmStreamShape.*:-HbmWorkload.StreamShapes' \
  >"$out/hbm-tests.txt" 2>&1
record_step "hbm tests with the chosen shape" $? "$out/hbm-tests.txt"
grep -E "HBM stream [0-9]|kernels fit" "$out/hbm-tests.txt"
python3 - "$out/interference-hbm.json" <<'PY'
import json, sys
config = json.load(open("configs/interference.json"))
config.update(label="interference-hbm", description="configs/interference.json, the HBM stream workload only")
config["interference"]["workloads"] = ["hbm"]
json.dump(config, open(sys.argv[1], "w"), indent=2)
PY
record_step "the HBM half of configs/interference.json" $? "$out/interference-hbm.json"
mpirun -np 2 --bind-to none --mca btl_vader_single_copy_mechanism none "$build/src/p2pbench" --config "$out/interference-hbm.json" \
  --label h200-nv18 --output "$out/interference-hbm-results.json" >"$out/interference-hbm.log" 2>&1
record_step "interference (hbm) with the chosen shape" $? "$out/interference-hbm.log"
finish_steps hbm-shape-check
