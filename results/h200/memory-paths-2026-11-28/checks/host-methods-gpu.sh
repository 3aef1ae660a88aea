#!/usr/bin/env bash
# GPU check of the host-link methods (h2d_sm, d2h_sm, h2d_bidir, d2h_bidir, latency_host) on one
# GPU, one rank, no mpirun. Run time: about 60-120 s on one H200 (p2pbench's host-link config,
# 169 cases, then nvbandwidth's 7 host tests).
#   x/host-methods-gpu.sh BUILD OUT
# 1. the new methods' GPU test (tests/host_link/host_link_checks.py: each runs verified, ~20 s);
# 2. BUILD/src/p2pbench --config configs/host-link.json -> OUT/host-methods.json;
# 3. if x/nvbandwidth exists: its host tests -> OUT/nvbandwidth-host.json, and both side by side
#    (p2pbench at 512 MiB, pinned memory, GPU 0 against nvbandwidth's column 0; within 2% passes).
# Exits non-zero on a failed case, a failed test or a figure more than 2% off nvbandwidth's.
set -euo pipefail
BUILD=$(realpath "${1:?usage: $0 BUILD OUT}")
OUT=${2:?usage: $0 BUILD OUT}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
cd "$(dirname "$0")/.."
status=0

python3 tests/host_link/host_link_checks.py "$BUILD/src/p2pbench" > "$OUT/host_link_checks.log" 2>&1 \
  || { echo "FAIL: tests/host_link/host_link_checks.py (see $OUT/host_link_checks.log)"; status=1; }
grep -E "^(FAIL|[0-9]+ passed)" "$OUT/host_link_checks.log" || true

"$BUILD/src/p2pbench" --config configs/host-link.json -o "$OUT/host-methods.json" --force \
  > "$OUT/host-methods.log" 2>&1 || { echo "FAIL: p2pbench host-link run exited $? (see $OUT/host-methods.log)"; status=1; }

if [ -x x/nvbandwidth ]; then
  # -t: testcases by name; -j: JSON on stdout (nvbandwidth.cpp's options)
  x/nvbandwidth -t host_to_device_memcpy_sm device_to_host_memcpy_sm host_to_device_bidirectional_memcpy_ce \
    device_to_host_bidirectional_memcpy_ce host_device_latency_sm host_to_device_memcpy_ce device_to_host_memcpy_ce \
    -j > "$OUT/nvbandwidth-host.json" 2> "$OUT/nvbandwidth-host.err" || { echo "FAIL: nvbandwidth exited $?"; status=1; }
else
  echo "note: no x/nvbandwidth: p2pbench's figures only"
fi

python3 - "$OUT" <<'EOF' || status=1
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
doc = json.loads((out / "host-methods.json").read_text())
rows = doc["results"]
bad = [r for r in rows if r["status"] == "failed"]
for r in bad:
    print(f"FAILED row: {r['method']} {r.get('host_memory')} {r['bytes']}: {r.get('error')}")
skipped = sorted({(r["method"], r.get("host_memory"), r.get("error", "")[:90]) for r in rows if r["status"] == "skipped"})
for s in skipped:
    print("skipped:", *s)
new = ("h2d_sm", "d2h_sm", "h2d_bidir", "d2h_bidir")
unverified = [r for r in rows if r["status"] == "ok" and r["method"] in new and not r["verified"]]
for r in unverified:
    print(f"NOT VERIFIED: {r['method']} {r['bytes']}")

def rank0(r):
    ranks = (r.get("src_rank"), r.get("dst_rank"))
    if ranks == (None, None) and r.get("flows"):
        ranks = (r["flows"][0]["src_rank"], r["flows"][0]["dst_rank"])
    return ranks == (0, 0)

def ours(method):
    for r in rows:
        pinned = r.get("host_memory") in (None, "pinned")
        if r["method"] == method and r["status"] == "ok" and pinned and rank0(r):
            if method == "latency_host":
                return r["latency_us"]["median"] * 1000.0  # ns per load
            if r["bytes"] == 512 * 2**20:
                return r["bandwidth_gbps"]["median"]
    return None

pairs = [("host_to_device_memcpy_ce", "h2d"), ("device_to_host_memcpy_ce", "d2h"),
         ("host_to_device_memcpy_sm", "h2d_sm"), ("device_to_host_memcpy_sm", "d2h_sm"),
         ("host_to_device_bidirectional_memcpy_ce", "h2d_bidir"),
         ("device_to_host_bidirectional_memcpy_ce", "d2h_bidir"), ("host_device_latency_sm", "latency_host")]
nvb = {}
path = out / "nvbandwidth-host.json"
if path.exists() and path.stat().st_size:
    for t in json.loads(path.read_text())["nvbandwidth"]["testcases"]:
        m = t.get("bandwidth_matrix")
        nvb[t["name"]] = float(m[0][0]) if t.get("status") == "Passed" and m else None
print(f"\n{'nvbandwidth testcase':42s} {'nvbandwidth':>12s} {'p2pbench':>10s} {'method':>13s} {'ratio':>7s}  (GPU 0, 512 MiB, pinned; latency in ns)")
off = 0
for test, method in pairs:
    theirs, mine = nvb.get(test), ours(method)
    ratio = mine / theirs if theirs and mine else None
    flag = "" if ratio is None or abs(ratio - 1) <= 0.02 else "  OUTSIDE 2%"
    off += bool(flag)
    fmt = lambda v: f"{v:12.2f}" if v is not None else f"{'-':>12s}"
    print(f"{test:42s} {fmt(theirs)} {fmt(mine)[2:]} {method:>13s} {ratio if ratio is None else f'{ratio:7.3f}'}{flag}")
sys.exit(1 if bad or unverified or off else 0)
EOF
echo "host-methods-gpu: exit $status (files in $OUT)"
exit $status
