"""Median per case, before against after: python3 compare.py LABEL before1.json after1.json [before2 after2 ...]"""
import json, statistics, sys

def figure(row):
    for key, unit in (("latency_us", "us"), ("transfer_together_gbps", "GB/s"), ("bandwidth_gbps", "GB/s")):
        v = row.get(key)
        if isinstance(v, dict) and v.get("median") is not None:
            return v["median"], unit, key
    return None, None, None

def key(row):
    shape = tuple((k, row.get(k)) for k in ("blocks", "threads", "unroll", "smem_bytes", "stages", "protocol", "engine",
                                              "workload", "sm_partition", "atomic_type", "atomic_pattern"))
    return (row["method"], row.get("direction"), row.get("mode"), row.get("src_rank"), row.get("dst_rank"), row["bytes"],
            json.dumps(shape, sort_keys=True, default=str))

label, files = sys.argv[1], sys.argv[2:]
rounds = [(json.load(open(files[i])), json.load(open(files[i + 1]))) for i in range(0, len(files), 2)]
cases = {}
for b, a in rounds:
    for tag, doc in (("before", b), ("after", a)):
        for r in doc["results"]:
            v, unit, k = figure(r)
            if v is not None:
                cases.setdefault(key(r), {"before": [], "after": [], "unit": unit, "k": k})[tag].append(v)
print(label)
ratios = []
for k, c in cases.items():
    if not c["before"] or not c["after"]:
        print("  missing", k); continue
    ratio = statistics.median(c["after"]) / statistics.median(c["before"])
    ratios.append(ratio)
    shape = {a: b for a, b in json.loads(k[6]) if b is not None}
    print(f"  {k[0]:15s} {k[1] or '':5s} {k[2] or '':5s} {k[3]}->{k[4]} {k[5]:>11d} B {json.dumps(shape):60s} "
          f"before {' '.join(f'{x:9.3f}' for x in c['before'])}  after {' '.join(f'{x:9.3f}' for x in c['after'])} "
          f"{c['unit']} ({c['k']})  after/before {ratio:.4f}")
if ratios:
    print(f"  {len(ratios)} cases: after/before from {min(ratios):.4f} to {max(ratios):.4f}, median {statistics.median(ratios):.4f}")
