#!/usr/bin/env bash
# GPU check of the gds_* and gemm methods on a one-GPU node. Run time: about 60-90 s (the gds
# runs write and read files of up to 256 MiB; gemm runs 1 MiB - 1 GiB of D at K 8192).
# Usage: x/gds-gemm-gpu.sh BUILD OUT
#   BUILD: a build directory holding src/p2pbench (and the tests); OUT: where logs and JSON go.
# Runs, one rank, no mpirun:
#   1. the record: lsmod | grep nvidia_fs, /etc/cufile.json (first 50 lines), nvidia-smi -L
#   2. the gds config (configs/gds.json, sizes 1 MiB-256 MiB) in a fresh directory under /var/tmp
#      and one under /dev/shm: as is, then with CUFILE_FORCE_COMPAT_MODE=true and a cufile.json
#      (CUFILE_ENV_PATH_JSON) that allows compatibility mode
#   3. configs/one-gpu.json with gemm only (--methods gemm)
#   4. the ctest of both (gpu_driver_gds_gemm)
# and prints one line per row: method, engine mode, bytes, GB/s or TFLOP/s, status or skip reason.
# Exits non-zero when a run fails, a bounce row did not run verified, a cuFile row is neither
# verified nor skipped with cuFile's error, a gemm row of a square size did not run verified, or
# the ctest fails.
set -u
BUILD=${1:?usage: x/gds-gemm-gpu.sh BUILD OUT}
OUT=${2:?usage: x/gds-gemm-gpu.sh BUILD OUT}
mkdir -p "$OUT"
BIN="$BUILD/src/p2pbench"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
status=0

{
  echo "== lsmod | grep nvidia_fs"; lsmod | grep nvidia_fs || echo "(no nvidia_fs module)"
  echo "== /etc/cufile.json (head -50)"; head -50 /etc/cufile.json 2>&1
  echo "== nvidia-smi -L"; nvidia-smi -L
  echo "== filesystems"; df -T /var/tmp /dev/shm
} > "$OUT/record.txt" 2>&1
cat "$OUT/record.txt"

# A cufile.json allowing compatibility mode: the node's own, with allow_compat_mode set true.
python3 - "$OUT/cufile-compat.json" <<'PY'
import json, re, sys
try:
    text = open("/etc/cufile.json").read()
    text = re.sub(r"//[^\n]*", "", text)  # cufile.json carries // comments
    doc = json.loads(text)
except Exception:
    doc = {}
doc.setdefault("properties", {})["allow_compat_mode"] = True
json.dump(doc, open(sys.argv[1], "w"), indent=2)
PY

rows() {  # rows RESULTS.json: one line per row
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["results"]:
    if r["status"] == "ok":
        fig = f"{r['tflops']['median']:.1f} TFLOP/s" if r.get("tflops") else f"{r['bandwidth_gbps']['median']:.2f} GB/s"
        fig += f", {r['time_us']['median']:.1f} us, verified={r['verified']}"
    else:
        fig = f"{r['status']}: {r.get('error', '')}"
    print(f"  {r['method']:<17} {r.get('engine_mode', '-'):<40} {r['bytes']:>11} B  {fig}")
PY
}

judge_gds() {  # judge_gds RESULTS.json
  python3 - "$1" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
bad = [r for r in rows if r["method"].endswith("_bounce") and not (r["status"] == "ok" and r["verified"])]
bad += [r for r in rows if not r["method"].endswith("_bounce") and not (
    (r["status"] == "ok" and r["verified"]) or (r["status"] == "skipped" and "cuFile" in r.get("error", "")))]
for r in bad: print("  BAD:", r["method"], r["bytes"], r["status"], r.get("error"))
sys.exit(1 if bad or not rows else 0)
PY
}

run_gds() {  # run_gds NAME BASE [ENV...]
  local name=$1 base=$2; shift 2
  local dir; dir=$(mktemp -d "$base/p2pbench-gds-XXXXXX")
  python3 - "$ROOT/configs/gds.json" "$dir" "$OUT/$name.config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["gds"]["directory"] = sys.argv[2]
c["sizes"] = ["1MiB", "16MiB", "256MiB"]; c["samples"] = 3
json.dump(c, open(sys.argv[3], "w"), indent=2)
PY
  echo "== gds $name (directory $dir${*:+, $*})"
  if ! env "$@" timeout 120 "$BIN" --config "$OUT/$name.config.json" -o "$OUT/$name.json" > "$OUT/$name.log" 2>&1; then
    echo "  FAIL: the run exited non-zero ($OUT/$name.log)"; tail -5 "$OUT/$name.log"; status=1
  fi
  [ -f "$OUT/$name.json" ] && { rows "$OUT/$name.json"; judge_gds "$OUT/$name.json" || status=1; }
  ls -A "$dir" | grep -q . && { echo "  FAIL: files left in $dir"; status=1; }
  rm -rf "$dir"
}

run_gds disk /var/tmp
run_gds shm /dev/shm
run_gds disk-compat /var/tmp CUFILE_FORCE_COMPAT_MODE=true CUFILE_ENV_PATH_JSON="$OUT/cufile-compat.json"
run_gds shm-compat /dev/shm CUFILE_FORCE_COMPAT_MODE=true CUFILE_ENV_PATH_JSON="$OUT/cufile-compat.json"

echo "== one-gpu.json, gemm"
if ! timeout 120 "$BIN" --config "$ROOT/configs/one-gpu.json" --methods gemm -o "$OUT/one-gpu-gemm.json" \
     > "$OUT/one-gpu-gemm.log" 2>&1; then
  echo "  FAIL: the run exited non-zero ($OUT/one-gpu-gemm.log)"; tail -5 "$OUT/one-gpu-gemm.log"; status=1
fi
if [ -f "$OUT/one-gpu-gemm.json" ]; then
  rows "$OUT/one-gpu-gemm.json"
  python3 - "$OUT/one-gpu-gemm.json" <<'PY' || status=1
import json, math, sys
rows = json.load(open(sys.argv[1]))["results"]
square = [r for r in rows if math.isqrt(r["bytes"] // 4) ** 2 * 4 == r["bytes"]]
bad = [r for r in square if not (r["status"] == "ok" and r["verified"])]
for r in bad: print("  BAD:", r["bytes"], r["status"], r.get("error"))
sys.exit(1 if bad or not square else 0)
PY
fi

echo "== ctest gpu_driver_gds_gemm"
ctest --test-dir "$BUILD" -R gpu_driver_gds_gemm --output-on-failure > "$OUT/ctest.log" 2>&1 || status=1
tail -40 "$OUT/ctest.log"
echo "== overall: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
