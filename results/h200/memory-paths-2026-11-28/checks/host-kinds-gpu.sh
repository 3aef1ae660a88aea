#!/usr/bin/env bash
# Host memory kinds of the host-link methods on one GPU (docs/host-memory.md).
# Run time: about 90 s on one H200 (the GPU test ~10 s; 40 cases: four kinds x h2d/d2h x 5 sizes,
# 10 samples each, pageable ones staged for verification; a 4-case remote-placement run).
# It runs configs/host-link.json's h2d/d2h part (that config also sweeps the other host-link
# methods, several minutes) from its own config, OUT/host-kinds.json.
# Usage: x/host-kinds-gpu.sh BUILD_DIR OUT_DIR   (exit non-zero on a failed check)
set -uo pipefail
BUILD=${1:?usage: x/host-kinds-gpu.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: x/host-kinds-gpu.sh BUILD_DIR OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
fail=0

echo "== host facts"
{
  echo "nodes online: $(cat /sys/devices/system/node/online 2>/dev/null || echo '?')"
  echo "hugetlb 2MiB: nr $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null || echo '?')," \
       "free $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo '?')"
  echo "THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
  echo "THP defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv,noheader 2>&1
} | tee "$OUT/host-facts.txt"

echo "== GPU test: every kind copied both ways, every byte checked"
"$BUILD/tests/host_memory/test_host_memory_gpu" 2>&1 | tee "$OUT/test_host_memory_gpu.log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "FAIL: test_host_memory_gpu exit $rc"; fail=1; }

echo "== p2pbench: h2d, d2h from every kind (one rank, no mpirun)"
cat > "$OUT/host-kinds.json" <<'JSON'
{"label": "host-kinds", "methods": ["h2d", "d2h"], "sizes": ["1MiB", "16MiB", "256MiB", "512MiB", "1GiB"],
 "host": {"memory": ["pinned", "registered", "huge_pages", "pageable"], "numa": ["local"]}, "samples": 10}
JSON
"$BUILD/src/p2pbench" --config "$OUT/host-kinds.json" --output "$OUT/host-link.json" >"$OUT/host-link.log" 2>&1
rc=$?
tail -n 80 "$OUT/host-link.log"
[ "$rc" -eq 0 ] || { echo "FAIL: p2pbench exit $rc"; fail=1; }

python3 - "$OUT/host-link.json" <<'PY' | tee "$OUT/table.txt"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["results"]
bad = 0
print(f"{'method':6} {'kind':11} {'pages':13} {'node':>4} {'bytes':>11} {'median GB/s':>12} {'verified':>8}  status")
for r in rows:
    bw = r.get("bandwidth_gbps") or {}
    med = f"{bw['median']:.2f}" if bw else "-"
    print(f"{r['method']:6} {str(r.get('host_memory')):11} {str(r.get('host_pages')):13} {str(r.get('numa_node')):>4} "
          f"{r['bytes']:>11} {med:>12} {str(r['verified']):>8}  {r['status']} {r.get('error', '')}")
    if r["status"] == "failed" or (r["status"] == "ok" and not r["verified"]):
        bad += 1
    if r.get("host_memory") is None:
        print("  ^ row has no host_memory"); bad += 1
kinds = {(r["method"], r.get("host_memory")) for r in rows if r["status"] == "ok"}
for m in ("h2d", "d2h"):
    for k in ("pinned", "registered", "huge_pages", "pageable"):
        if (m, k) not in kinds:
            print(f"missing: no ok row of {m} with {k} memory"); bad += 1
print("reference on one H200: nvbandwidth v0.8 pinned h2d 54.85-55.46, d2h 55.29-55.33 GB/s; "
      "p2pbench pinned h2d 55.48, d2h 55.28 GB/s at 512 MiB-1 GiB")
sys.exit(1 if bad else 0)
PY
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: rows failed, unverified or missing (table above)"; fail=1; }

echo "== remote placement: skipped with the reason on a one-node host"
cat > "$OUT/host-remote.json" <<'JSON'
{"label": "host-remote", "methods": ["h2d"], "sizes": ["64MiB"], "samples": 3,
 "host": {"memory": ["pinned", "pageable"], "numa": ["local", "remote"]}}
JSON
"$BUILD/src/p2pbench" --config "$OUT/host-remote.json" --output "$OUT/host-remote-results.json" >"$OUT/host-remote.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: remote run exit $rc"; tail -20 "$OUT/host-remote.log"; fail=1; }
python3 - "$OUT/host-remote-results.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
bad = 0
for r in rows:
    print(r["method"], r.get("host_memory"), r.get("host_numa"), r.get("numa_node"), r["status"], r.get("error", ""))
    if r["status"] == "failed": bad += 1
    if r.get("host_numa") == "local" and r["status"] != "ok": bad += 1
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || { echo "FAIL: remote placement rows"; fail=1; }

echo "== done: $([ $fail -eq 0 ] && echo PASS || echo FAIL) (logs and JSON in $OUT)"
exit $fail
