#!/usr/bin/env bash
# On a GPU node: the copy-engine put-with-signal probe (tools/probes/ce_signal_probe.cpp) with
# every variant, the multi-stream and split-signal ones among them, a process per variant (one
# that never finishes ends only itself). Destination GPU 1 where a second GPU is visible (a P2P
# figure), else GPU 0 (the commands' cost within one GPU, no P2P figure).
# Usage: session.sh OUT_DIR [probe options, e.g. --chunk-bytes 1048576]
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR [probe options]}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$out/system.txt" 2>&1
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build build-gpu -j16 --target p2pbench p2pbench-probe-ce-signal; } >"$out/build.log" 2>&1 \
  || { echo "build failed (build.log)" | tee "$out/summary.txt"; exit 1; }
build-gpu/src/p2pbench --version >"$out/version.txt" 2>&1
probe=build-gpu/tools/p2pbench-probe-ce-signal
start=$(date +%s) failed=0
for v in $($probe --list); do
  timeout -s KILL 60 $probe --variant "$v" "${@:2}" >>"$out/ce-signal-probe.jsonl" 2>>"$out/ce-signal-probe.log"
  status=$?
  echo "ce-signal probe $v: exit $status" >>"$out/summary.txt"
  [ "$status" -eq 0 ] || failed=$((failed + 1))
done
echo "ce-signal probe: $(( $(date +%s) - start )) s, $failed variant(s) failed" | tee -a "$out/summary.txt"
python3 - "$out/ce-signal-probe.jsonl" <<'PY' | tee "$out/table.txt"
import json, sys
rows = [r for r in (json.loads(line) for line in open(sys.argv[1]) if line.strip()) if "variant" in r]  # errors: summary.txt
sizes = sorted({r["chunk_bytes"] for r in rows if "chunk_bytes" in r})
print("variant".ljust(28) + "".join(f"{s // 1024:>9} KiB d/g" for s in sizes) + "   (GB/s, direct / graph)")
for name in dict.fromkeys(r["variant"] for r in rows):
    cells = []
    for s in sizes:
        got = {r["graph"]: r.get("GBps") for r in rows if r["variant"] == name and r.get("chunk_bytes") == s}
        cells.append(f"{got.get(False) or '-':>7}/{got.get(True) or '-':<7}")
    print(name.ljust(28) + " ".join(cells))
PY
[ "$failed" -eq 0 ]
