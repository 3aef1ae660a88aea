#!/usr/bin/env python3
"""The rows of the runs session.sh made, compared.

Usage: compare-rows.py DIR            every TAG-beforeN.json against TAG-afterN.json in DIR: rows
                                      matched by case; fields only one side writes (per method);
                                      fields both write that differ; the figure after / before
                                      (median of each row, 1 GB = 1e9 B)
       compare-rows.py --summary FILE  one run's rows: status and verification counts, and each
                                      put_signal_ce case's median GB/s beside ce's
Exit 1 where a file cannot be read."""
import collections
import json
import pathlib
import re
import statistics
import sys

CASE = ("method", "direction", "mode", "src_rank", "dst_rank", "bytes", "pattern", "schedule", "round", "blocks",
        "threads", "unroll", "smem_bytes", "stages", "chunk_bytes", "chunks_in_flight", "routing_skew", "tiles",
        "gemm_k", "signal_group", "signal_copy", "protocol", "engine", "workload", "sm_partition", "both_gpus_busy",
        "atomic_type", "atomic_pattern", "hot_addresses", "ops_per_thread", "host_memory", "host_numa", "collective")
FIGURES = ("latency_us", "transfer_together_gbps", "bandwidth_gbps")
MEASURED = re.compile(r"gbps|_us$|samples|time|tflops|window|tails|iterations|pct|overlap|aggregate|sms_used|"
                      r"slowdown|speedup|ratio|spread|clock|health|error|note|fraction")


def rows(path):
    return json.loads(pathlib.Path(path).read_text())["results"]


def key(row):
    return tuple(json.dumps(row.get(k), sort_keys=True) for k in CASE)


def figure(row):
    for name in FIGURES:
        value = row.get(name)
        if isinstance(value, dict) and value.get("median") is not None:
            return name, value["median"]
    return None, None


def compare(before_path, after_path):
    before, after = rows(before_path), rows(after_path)
    b_by, a_by = collections.defaultdict(list), collections.defaultdict(list)
    for r in before:
        b_by[key(r)].append(r)
    for r in after:
        a_by[key(r)].append(r)
    pairs = [(b, a) for k in b_by for b, a in zip(b_by[k], a_by.get(k, []))]
    only_b, only_a, differ, ratios = collections.Counter(), collections.Counter(), collections.Counter(), []
    for b, a in pairs:
        for f in set(b) - set(a):
            only_b[f"{b['method']}.{f}"] += 1
        for f in set(a) - set(b):
            only_a[f"{a['method']}.{f}"] += 1
        for f in set(a) & set(b):
            if not MEASURED.search(f) and a[f] != b[f]:
                differ[f"{a['method']}.{f}"] += 1
        name, fb = figure(b)
        _, fa = figure(a)
        if fb and fa and b.get("status") == "ok" and a.get("status") == "ok":
            ratios.append((fa / fb if name != "latency_us" else fb / fa, b["method"], name))
    status = lambda rs: dict(collections.Counter(r.get("status") for r in rs))
    print(f"{before_path.name} -> {after_path.name}: rows {len(before)} -> {len(after)}, matched {len(pairs)}; "
          f"status {status(before)} -> {status(after)}")
    if only_b:
        print("  fields only before:", dict(only_b))
    if only_a:
        print("  fields only after:", dict(only_a))
    if differ:
        print("  fields written by both that differ:", dict(differ))
    if ratios:
        values = sorted(r[0] for r in ratios)
        print(f"  figure after/before (higher is better for after): median {statistics.median(values):.4f}, "
              f"range {values[0]:.4f} - {values[-1]:.4f}, {len(values)} rows")
    return ratios


def summary(path):
    rs = rows(path)
    print(f"{path}: {len(rs)} rows; status {dict(collections.Counter(r.get('status') for r in rs))}; verified "
          f"{sum(r.get('verified') is True for r in rs)}")
    reasons = collections.Counter((r.get("skip_reason") or r.get("error") or "")[:120] for r in rs if r.get("status") != "ok")
    for reason, n in reasons.items():
        print(f"  not ok x{n}: {reason}")
    ce = {(r["bytes"], r["src_rank"]): r["bandwidth_gbps"]["median"] for r in rs
          if r["method"] == "ce" and r.get("status") == "ok"}
    print("  put_signal_ce median GB/s (copies within one GPU under MPS: the commands' cost, not P2P), "
          "bytes chunk in_flight group copy: GB/s (of ce's)")
    for r in rs:
        if r["method"] == "put_signal_ce" and r.get("status") == "ok" and r["src_rank"] == 0:
            g = r["bandwidth_gbps"]["median"]
            base = ce.get((r["bytes"], 0))
            print(f"    {r['bytes'] >> 20:3d} MiB {r['chunk_bytes'] >> 10:5d} KiB w{r['chunks_in_flight']} "
                  f"g{r.get('signal_group')} c{r.get('signal_copy')}: {g:8.1f}" + (f" ({g / base:.2f})" if base else ""))


def main(argv):
    if len(argv) == 3 and argv[1] == "--summary":
        return summary(argv[2])
    folder = pathlib.Path(argv[1])
    by_tag = collections.defaultdict(list)
    for before in sorted(folder.glob("*-before*.json")):
        after = before.with_name(before.name.replace("-before", "-after"))
        if after.exists():
            by_tag[before.name.split("-before")[0]].extend(compare(before, after))
    for tag, ratios in by_tag.items():
        if ratios:
            values = sorted(r[0] for r in ratios)
            print(f"{tag}: every round, after/before median {statistics.median(values):.4f}, "
                  f"range {values[0]:.4f} - {values[-1]:.4f} ({len(values)} rows)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError, KeyError) as e:
        print(f"compare-rows.py: {e}", file=sys.stderr)
        sys.exit(1)
