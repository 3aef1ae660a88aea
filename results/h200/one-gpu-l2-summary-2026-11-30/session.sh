#!/usr/bin/env bash
# On a node of one GPU: configs/one-gpu.json, whose copies within the GPU run from 1 MiB to
# 1 GiB. The summary's best copy within the GPU must come from a size whose source and
# destination do not fit in the L2 (fits_in_l2 false); before, it was the 16 MiB copy, whose
# 32 MiB sit in an H200's 60 MiB L2.
# Usage: session.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
session_step one-gpu 300 build-gpu/src/p2pbench --config configs/one-gpu.json --output "$work/one-gpu.json"
grep -A6 "^Summary" "$work/one-gpu.log" >>"$summary"
session_step summary-check 30 python3 - "$work/one-gpu.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
l2 = doc["meta"]["gpus"][0]["l2_bytes"]
local = [e for e in doc["summary"] if e["method"] in ("d2d", "d2d_ldst")]
assert len(local) == 2, f"expected d2d and d2d_ldst in the summary, got {[e['method'] for e in local]}"
for e in local:
    b = e["best"]
    print(f"{e['method']}: best {b['bandwidth_gbps']:.1f} GB/s at {b['bytes']} B, fits_in_l2 {b.get('fits_in_l2')} (L2 {l2} B)")
    assert b.get("fits_in_l2") is False and 2 * b["bytes"] > l2, "the best copy within the GPU is an L2 figure"
print("summary check: ok")
PY
cat "$work/summary-check.log" >>"$summary"
finish_steps session.sh
