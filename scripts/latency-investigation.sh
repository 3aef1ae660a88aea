#!/usr/bin/env bash
# Why does latency_read read ~3% above nvbandwidth's device_to_device_latency_sm? Runs every
# latency_read variant (configs/latency-investigation.json; docs/latency-read-vs-nvbandwidth.md
# lists the differences), logs both GPUs' clocks meanwhile, runs the in-process GPU test
# (nvbandwidth's one-process set-up), optionally nvbandwidth itself before and after, and prints
# one table: variant -> median ns, spread, delta vs the reference and vs p2pbench's default.
#
# Usage: scripts/latency-investigation.sh OUT_DIR BUILD_DIR
# Env:   NVBANDWIDTH=/path/to/nvbandwidth  also run nvbandwidth -t device_to_device_latency_sm
#                                          (its figures become the reference instead of 826.7 ns)
#        REFERENCE_NS=826.7                the reference when nvbandwidth is not run
# Every step after the build runs whatever the others did; the script ends naming each step that
# failed and exits 1 when one did (scripts/lib/steps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
out=${1:?usage: scripts/latency-investigation.sh OUT_DIR BUILD_DIR}
build=${2:?usage: scripts/latency-investigation.sh OUT_DIR BUILD_DIR}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 ||
    { echo "configure failed: $out/build.log"; tail -20 "$out/build.log"; exit 1; }
fi
cmake --build "$build" -j "$(nproc)" --target p2pbench test_chase_variants >>"$out/build.log" 2>&1 ||
  { echo "build failed: $out/build.log"; tail -30 "$out/build.log"; exit 1; }

nvbandwidth_run() {  # $1: before | after
  [ -n "${NVBANDWIDTH:-}" ] || return 0
  "$NVBANDWIDTH" -t device_to_device_latency_sm -j >"$out/nvbandwidth-$1.json" 2>"$out/nvbandwidth-$1.err"
  record_step "nvbandwidth ($1)" $? "$out/nvbandwidth-$1.err"
}

{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,clocks.mem,pstate,power.draw \
    --format=csv; } >"$out/system.txt" 2>&1
nvbandwidth_run before

# Both GPUs' clocks every 100 ms while the sweep runs: an idle owner that drops its clocks shows here.
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,pstate,utilization.gpu --format=csv,noheader \
  -lms 100 >"$out/clocks.csv" 2>/dev/null &
clock_logger=$!
start=$(date +%s)
mpirun -np 2 --bind-to none --mca btl_vader_single_copy_mechanism none "$build/src/p2pbench" \
  --config configs/latency-investigation.json --output "$out/latency-investigation.json" >"$out/console.txt" 2>&1
status=$?
kill "$clock_logger" 2>/dev/null
wait "$clock_logger" 2>/dev/null
record_step p2pbench "$status" "$(($(date +%s) - start)) s, console: $out/console.txt"

"$build/tests/latency/test_chase_variants" >"$out/in-process.txt" 2>&1
record_step test_chase_variants $? "$out/in-process.txt"
nvbandwidth_run after

python3 - "$out" "${REFERENCE_NS:-826.7}" <<'PY'
import csv, json, os, statistics, sys

out, fixed_ref = sys.argv[1], float(sys.argv[2])

def nvbandwidth_matrix():
    """{(reader, owner): [ns, ...]} from the nvbandwidth runs of this call, if any."""
    found = {}
    for tag in ("before", "after"):
        path = os.path.join(out, f"nvbandwidth-{tag}.json")
        try:
            doc = json.load(open(path))
        except (OSError, ValueError):
            continue
        for t in doc.get("nvbandwidth", {}).get("testcases", []):
            if t.get("name") != "device_to_device_latency_sm":
                continue
            for r, row in enumerate(t.get("bandwidth_matrix", [])):
                for o, v in enumerate(row):
                    try:
                        value = float(v)
                    except (TypeError, ValueError):
                        continue  # "N/A" on the diagonal
                    found.setdefault((r, o), []).append(value)
    return found

nvb = nvbandwidth_matrix()
def reference(reader, owner):
    v = nvb.get((reader, owner))
    return (statistics.mean(v), "nvbandwidth, this call") if v else (fixed_ref, "fixed")

try:
    rows = [r for r in json.load(open(os.path.join(out, "latency-investigation.json")))["results"]
            if r["method"] == "latency_read"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"no results to tabulate: {e}")

def ns(stats):
    return stats["median"] * 1e3

default = {(r["src_rank"], r["dst_rank"]): r for r in rows
           if r["protocol"] == "plain" and r["status"] == "ok" and "read_chase" in r}
print("\nlatency_read variants (ns per dependent load; medians over samples; spread = (max-min)/median;")
print("'kernel' = %globaltimer inside the kernel, 'events' = CUDA events around whole launches, summed)")
head = (f"{'variant (protocol)':52} {'own->rd':7} {'kernel':>7} {'events':>7} {'spread':>7} "
        f"{'k/ref':>7} {'e/ref':>7} {'k/dflt':>7} {'MHz':>5}  SMs")
print(head)
print("-" * len(head))
for r in rows:
    route = f"{r['src_rank']}->{r['dst_rank']}"
    if r["status"] != "ok" or "read_chase" not in r:
        print(f"{r['protocol']:52} {route:7} {r['status']}: {r.get('error', '')}")
        continue
    c = r["read_chase"]
    k, e = ns(c["kernel_timer_us"]), ns(c["events_us"])
    l = r["latency_us"]
    spread = (l["max"] - l["min"]) / l["median"] * 100
    ref, _ = reference(r["dst_rank"], r["src_rank"])
    d = default.get((r["src_rank"], r["dst_rank"]))
    vs_default = f"{(k / ns(d['read_chase']['kernel_timer_us']) - 1) * 100:+6.2f}%" if d else "    -  "
    if "per_sm" in c:
        per = sorted(c["per_sm"]["ns_per_load"])
        sms = f"{len(per)} SMs: {per[0]:.1f} .. {statistics.median(per):.1f} .. {per[-1]:.1f}"
    else:
        sms = "sm " + ",".join(str(s) for s in c["sm_ids"])
    print(f"{r['protocol']:52} {route:7} {k:7.1f} {e:7.1f} {spread:6.3f}% {(k / ref - 1) * 100:+6.2f}% "
          f"{(e / ref - 1) * 100:+6.2f}% {vs_default} {c.get('reader_sm_clock_mhz', 0):5.0f}  {sms}")
print("kernel/events: medians of the two timings of the same launches; k/ref, e/ref: against the reference for "
      "this reader and owner; k/dflt: kernel timer against `plain` (p2pbench's default row) on the same route")

print("\nreference:", ", ".join(f"reader {rd} <- owner {ow}: {statistics.mean(v):.1f} ns ({len(v)} runs)"
                                for (rd, ow), v in sorted(nvb.items())) or f"{fixed_ref} ns (fixed; NVBANDWIDTH unset)")
print("nvbandwidth divides by 1,000,000 loads while 132 x 7575 = 999,900 ran: its figure is 0.01% low.")

# Where the single-block chase's SM sits among all SMs (from the every_sm rows, same route and load).
print("\nthe single-block SM within the per-SM spread (every_sm rows, same route, load and loads):")
for r in rows:
    c = r.get("read_chase")
    if not c or c["launch"] != "single" or c["owner"] != "idle":
        continue
    for s in rows:
        sc = s.get("read_chase")
        if (sc and sc["launch"] == "every_sm" and sc["owner"] == "idle" and sc["load"] == c["load"]
                and sc["loads_per_launch"] == c["loads_per_launch"]
                and (s["src_rank"], s["dst_rank"]) == (r["src_rank"], r["dst_rank"])):
            per = dict(zip(sc["per_sm"]["smid"], sc["per_sm"]["ns_per_load"]))
            sm = c["sm_ids"][0]
            values = sorted(per.values())
            if sm in per:
                rank = sum(v < per[sm] for v in values)
                print(f"  {r['protocol']:40} {r['src_rank']}->{r['dst_rank']}: sm {sm} = {per[sm]:.1f} ns, "
                      f"{rank} of {len(values)} SMs faster; mean over SMs {statistics.mean(values):.1f} ns")

try:
    lines = [l.strip() for l in open(os.path.join(out, "in-process.txt")) if l.startswith("IN_PROCESS")]
except OSError:
    lines = []
print("\nin one process with peer access (GPU 0 reads GPU 1; test_chase_variants):")
print("\n".join("  " + l for l in lines) or "  (none: see in-process.txt)")

clocks = {}
try:
    for row in csv.reader(open(os.path.join(out, "clocks.csv"))):
        if len(row) >= 4:
            clocks.setdefault(row[1].strip(), []).append(float(row[2].split()[0]))
except (OSError, ValueError, IndexError):
    pass
print("\nSM clock during the sweep (nvidia-smi every 100 ms), MHz:")
for gpu, v in sorted(clocks.items()):
    print(f"  GPU {gpu}: min {min(v):.0f}, median {statistics.median(v):.0f}, max {max(v):.0f} ({len(v)} readings)")
PY
record_step "the table" $?
finish_steps latency-investigation
