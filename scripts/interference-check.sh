#!/usr/bin/env bash
# On a two-GPU node, after a build: the interference GPU tests and the interference
# sweep (configs/interference.json), each row checked (complete, verified, overlap >= 0.95).
# Logs, results JSON and figures go under OUT_DIR; a short summary table is printed last.
#
# Usage: scripts/interference-check.sh OUT_DIR BUILD_DIR
#   e.g. cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
#        cmake --build build-gpu -j && scripts/interference-check.sh out/interference build-gpu
# Env: P2PBENCH_INTERFERENCE_CONFIG (default configs/interference.json), P2PBENCH_LABEL (default
#      h200-nv18), P2PBENCH_ALLOW_NO_GREEN_CONTEXTS=1 (where green contexts are known missing).
# Every step runs whatever the others did; the script ends naming each step that failed and exits
# 1 when one did (scripts/lib/steps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
out=${1:?usage: scripts/interference-check.sh OUT_DIR BUILD_DIR}
build=${2:?usage: scripts/interference-check.sh OUT_DIR BUILD_DIR}
config=${P2PBENCH_INTERFERENCE_CONFIG:-configs/interference.json}
label=${P2PBENCH_LABEL:-h200-nv18}
mkdir -p "$out/logs" "$out/results"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

{
  date -u
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
} >"$out/logs/system.txt" 2>&1

# 1. GPU tests: workloads correct alone and under load, partitions honoured. Exit 77 = skipped = a failure here.
test_bin="$build/tests/interference/test_interference_gpu"
"$test_bin" --gtest_output="json:$out/logs/gpu-tests.json" >"$out/logs/gpu-tests.log" 2>&1
tests_rc=$?
record_step "GPU tests (test_interference_gpu)" "$tests_rc" "logs/gpu-tests.log"

# 2. The sweep, on both GPUs; then the both-GPUs-busy path (bidir, the workload on both GPUs).
start=$(date +%s)
mpirun -np 2 --bind-to none --mca btl_vader_single_copy_mechanism none "$build/src/p2pbench" --config "$config" \
  --label "$label" --progress --output "$out/results/interference.json" >"$out/logs/interference.log" 2>"$out/logs/interference.err"
run_rc=$?
seconds=$(($(date +%s) - start))
record_step "sweep ($config)" "$run_rc" "logs/interference.err"
start=$(date +%s)
mpirun -np 2 --bind-to none --mca btl_vader_single_copy_mechanism none "$build/src/p2pbench" \
  --config configs/interference-both-busy.json --label "$label-both-busy" --progress \
  --output "$out/results/interference-both-busy.json" >"$out/logs/interference-both-busy.log" 2>"$out/logs/interference-both-busy.err"
busy_rc=$?
busy_seconds=$(($(date +%s) - start))
record_step "sweep (configs/interference-both-busy.json)" "$busy_rc" "logs/interference-both-busy.err"

# 3. Figures (matplotlib: scripts/requirements.txt).
PYTHONPATH=scripts python3 -m p2pbench_report plot "$out/results/interference.json" -o "$out/figures" --format png \
  >"$out/logs/plot.log" 2>&1
record_step figures $? "logs/plot.log"

# 4. Every row checked; the summary table last.
python3 - "$out" "$tests_rc" "$run_rc" "$seconds" "$busy_rc" "$busy_seconds" <<'PY'
import json, pathlib, re, sys
out, tests_rc, run_rc, seconds = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
busy_rc, busy_seconds = int(sys.argv[5]), int(sys.argv[6])
problems = []
lines = [("GPU tests (test_interference_gpu)", {0: "passed", 77: "SKIPPED (no GPU?)"}.get(tests_rc, f"FAILED rc={tests_rc}"))]
try:
    gt = json.loads((out / "logs/gpu-tests.json").read_text())
    for suite in gt.get("testsuites", []):
        for case in suite.get("testsuite", []):
            verdict = "FAILED" if case.get("failures") else "ok"
            lines.append((f"  {suite['name']}.{case['name']}", verdict))
except (OSError, ValueError):
    lines.append(("  gtest JSON", "missing"))
log = (out / "logs/gpu-tests.log").read_text(errors="replace") if (out / "logs/gpu-tests.log").exists() else ""
for pattern in (r"HBM stream .*", r"GEMM alone: .*", r"gemm bf16 .*", r"K = \d+: transfer group .*", r"unpartitioned probe: .*"):
    for m in re.findall(pattern, log):
        lines.append(("  printed", m.strip()))
required = ["engine", "workload", "sm_partition", "workload_alone", "workload_together", "transfer_alone_gbps",
            "transfer_together_gbps", "workload_slowdown_pct", "transfer_slowdown_pct", "overlap_min",
            "samples_workload_together", "samples_transfer_together_gbps"]
def check_run(title, rc, secs, path, gpus):
  lines.append((f"{title} (mpirun p2pbench, {secs} s)", "exit 0" if rc == 0 else f"FAILED rc={rc}"))
  try:
    doc = json.loads(path.read_text())
    rows = [r for r in doc["results"] if r["method"] == "interference"]
    for r in rows:
        name = f"{path.stem}: {r['workload']} + {r['engine']} {r['mode']} K={r['sm_partition']}"
        if r["status"] == "ok" and r.get("workload_gpus") != gpus:
            problems.append(f"{name}: the workload ran on {r.get('workload_gpus')} GPUs, not {gpus}")
        if r["status"] != "ok":
            problems.append(f"{name}: {r['status']}: {r.get('error', '')}")
            continue
        missing = [k for k in required if r.get(k) is None]
        if missing: problems.append(f"{name}: missing {missing}")
        if not r.get("verified"): problems.append(f"{name}: not verified")
        if (r.get("overlap_min") or 0) < 0.95: problems.append(f"{name}: overlap {r.get('overlap_min')}")
        k, got = r["sm_partition"], r.get("transfer_group_sms")
        if k and (got is None or got < k): problems.append(f"{name}: group of {got} SMs for K={k}")
    lines.append(("  rows ok / all", f"{sum(r['status'] == 'ok' for r in rows)} / {len(rows)}"))
    overlaps = [r["overlap_min"] for r in rows if r.get("overlap_min") is not None]
    lines.append(("  least overlap", f"{min(overlaps):.3f}" if overlaps else "-"))
    try:
        import jsonschema
        schema = json.loads(pathlib.Path("schema/results.schema.json").read_text())
        errs = list(jsonschema.Draft7Validator(schema).iter_errors(doc))
        lines.append(("  schema", "valid" if not errs else f"{len(errs)} errors: {errs[0].message[:80]}"))
        if errs: problems.append("schema errors")
    except ImportError:
        lines.append(("  schema", "not checked (no jsonschema)"))
  except (OSError, ValueError, KeyError) as e:
    problems.append(f"{path.name} unreadable: {e}")

check_run("sweep", run_rc, seconds, out / "results/interference.json", 1)
check_run("both GPUs busy", busy_rc, busy_seconds, out / "results/interference-both-busy.json", 2)
width = max(len(a) for a, _ in lines)
print("\n==== interference check: summary ====")
for a, b in lines:
    print(f"{a:<{width}}  {b}")
for p in problems:
    print(f"PROBLEM: {p}")
text = (out / "logs/interference.log").read_text(errors="replace") if (out / "logs/interference.log").exists() else ""
at = text.find("Trade table")
print("\n" + (text[at:].split("\nresults:")[0] if at >= 0 else "(no trade table in logs/interference.log)"))
sys.exit(1 if problems else 0)
PY
record_step "every row checked" $? "PROBLEM lines above"
echo "logs: $out/logs, results: $out/results/interference.json, figures: $out/figures"
finish_steps interference-check
