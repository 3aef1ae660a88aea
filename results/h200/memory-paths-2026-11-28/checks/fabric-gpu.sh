#!/usr/bin/env bash
# NVLink domains from the GPU's fabric registration, and the vmm allocator's descriptor passing
# over a Unix socket (SCM_RIGHTS) where pidfd_getfd is refused.
# Run time: about 60 s on one H200 (topology ~2 s, the CPU test of the socket ~1 s, four two-rank
# runs of one ce case on one GPU ~10 s each).
# What one H200 can prove: the fabric fields are N/A there (no multi-node NVLink), so the domain
# must be decided by host, with NVML's reason recorded; a cross-host domain cannot be shown here.
# Usage: x/fabric-gpu.sh BUILD_DIR OUT_DIR   (exit non-zero on a failed check)
set -uo pipefail
BUILD=${1:?usage: x/fabric-gpu.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: x/fabric-gpu.sh BUILD_DIR OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
fail=0
root_flags=()
[ "$(id -u)" -eq 0 ] && root_flags=(--allow-run-as-root)
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

echo "== host facts"
{
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv,noheader 2>&1
  nvidia-smi -q 2>/dev/null | grep -A8 -i "^ *Fabric" | head -20
  echo "kernel.yama.ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 'no Yama')"
  echo "capsh/setpriv: $(command -v setpriv || echo 'no setpriv')"
} | tee "$OUT/host-facts.txt"

echo "== p2pbench --topology: the NVLink fabric section"
"$BUILD/src/p2pbench" --topology >"$OUT/topology.txt" 2>&1
rc=$?
sed -n '/^NVLink fabric/,/^$/p' "$OUT/topology.txt"
check "--topology exit 0 (was $rc)" '[ "$rc" -eq 0 ]'
check "--topology has the NVLink fabric section" 'grep -q "^NVLink fabric" "$OUT/topology.txt"'
check "--topology gives a domain basis for GPU0" 'grep -A2 "^NVLink fabric" "$OUT/topology.txt" | grep -Eq "domain: clique|the domain is the host"'

echo "== CPU test of the descriptor socket (two processes, a memfd, the deadlines)"
"$BUILD/tests/peer_memory/test_descriptor_passing" >"$OUT/test_descriptor_passing.log" 2>&1
rc=$?
tail -n 3 "$OUT/test_descriptor_passing.log"
check "test_descriptor_passing exit 0 (was $rc)" '[ "$rc" -eq 0 ]'

cat >"$OUT/ce-small.json" <<'JSON'
{"label": "fabric-check", "methods": ["ce"], "sizes": ["64MiB"], "samples": 5}
JSON
# Two ranks on GPU 0 with an allocator; words after it (a privilege wrapper) go before p2pbench.
run_two() {  # name allocator [wrapper words...]
  local name=$1 alloc=$2; shift 2
  timeout 120 mpirun -np 2 --bind-to none --oversubscribe --mca btl_vader_single_copy_mechanism none "${root_flags[@]}" \
    "$@" "$BUILD/src/p2pbench" --config "$OUT/ce-small.json" --allow-same-device --devices 0,0 \
    --allocator "$alloc" --output "$OUT/$name.json" >"$OUT/$name.log" 2>&1
}

# Prints the domain decision and the peer mapping from a results file; exit 1 when the meta
# lacks the domains, a rank was not decided by host on this node, or a ce row is not ok+verified.
summarise() {
  python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); want_mapped = sys.argv[2] == "mapped"
meta = doc["meta"]; d = (meta.get("group") or {}).get("nvlink_domains")
bad = 0
if not d:
    print("meta.group.nvlink_domains missing"); sys.exit(1)
print("domain_of_rank:", d["domain_of_rank"], "domains:", [(x["name"], x["ranks"]) for x in d["domains"]])
for r in d["by_rank"]:
    print(f"  rank domain {r['domain']} decided_by {r['decided_by']}: {r['why']}")
    print(f"    fabric: {json.dumps(r['fabric'])}")
    if r["decided_by"] not in ("host", "fabric"): bad += 1
    if r["decided_by"] == "host" and "N/A" not in r["why"] and "not complete" not in r["why"] and "zeros" not in r["why"] and "failed" not in r["why"]:
        print("    ^ host decision without a reason"); bad += 1
pm = meta.get("peer_mapping", {})
print("peer_mapping:", json.dumps({k: pm.get(k) for k in ("allocator", "mapped", "map_ms", "reason")}))
rows = [r for r in doc["results"] if r["method"] == "ce"]
for r in rows:
    print(f"  ce {r.get('direction')} {r['bytes']} B: {r['status']} verified {r.get('verified')} {r.get('skip_reason') or r.get('error') or ''}")
if want_mapped:
    if not pm.get("mapped"): print("expected a peer mapping"); bad += 1
    if not rows or any(r["status"] != "ok" or not r.get("verified") for r in rows): print("expected every ce row ok and verified"); bad += 1
sys.exit(1 if bad else 0)
PY
}

echo "== two ranks on one GPU, --allocator legacy: the domain decision in meta and the header"
run_two legacy legacy; rc=$?
grep -m1 "^NVLink domains" "$OUT/legacy.log"
check "legacy run exit 0 (was $rc)" '[ "$rc" -eq 0 ]'
check "the run header has the NVLink domains line" 'grep -q "^NVLink domains: " "$OUT/legacy.log"'
summarise "$OUT/legacy.json" mapped; s=$?; check "legacy meta: domains recorded, ce rows ok" '[ "$s" -eq 0 ]'

echo "== --allocator vmm as it is (pidfd_getfd where permitted)"
run_two vmm vmm; rc=$?
check "vmm run exit 0 (was $rc)" '[ "$rc" -eq 0 ]'
summarise "$OUT/vmm.json" mapped; s=$?; check "vmm meta: mapped, ce rows ok" '[ "$s" -eq 0 ]'

echo "== --allocator vmm without CAP_SYS_PTRACE: pidfd_getfd refused where ptrace_scope >= 1, the socket hands the descriptor over"
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)
if command -v setpriv >/dev/null; then
  run_two vmm-noptrace vmm setpriv --bounding-set -sys_ptrace --inh-caps -sys_ptrace; rc=$?
  grep -m3 -i "pidfd\|descriptor socket" "$OUT/vmm-noptrace.log"
  check "vmm without CAP_SYS_PTRACE exit 0 (was $rc)" '[ "$rc" -eq 0 ]'
  summarise "$OUT/vmm-noptrace.json" mapped; s=$?
  check "vmm without CAP_SYS_PTRACE: mapped, ce rows ok (ptrace_scope $scope: with 1 or 2 only the socket can have passed the descriptor)" '[ "$s" -eq 0 ]'
else
  echo "waived: no setpriv to drop CAP_SYS_PTRACE (the CPU test above covers the socket path)"
fi

echo "== --allocator fabric: mapped, or waived with the driver's reason (no IMEX channel)"
run_two fabric fabric; rc=$?
check "fabric run exit 0 (was $rc)" '[ "$rc" -eq 0 ]'
summarise "$OUT/fabric.json" any; s=$?; check "fabric meta: domains recorded" '[ "$s" -eq 0 ]'

echo "== result: $([ $fail -eq 0 ] && echo PASS || echo FAIL)"
exit $fail
