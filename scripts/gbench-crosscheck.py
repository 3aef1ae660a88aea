#!/usr/bin/env python3
"""Cross-checks p2pbench-gbench against the MPI driver on the same cases.

Usage: gbench-crosscheck.py DRIVER.json GBENCH.json [--tolerance 2]

DRIVER.json: a p2pbench results file; GBENCH.json: p2pbench-gbench's --benchmark_out JSON
(any --benchmark_repetitions). For every one-way benchmark of GBENCH.json (its GPU 0 -> GPU 1),
finds the driver's row of the same case (src_rank 0, dst_rank 1), compares the median of the
benchmark's "GB/s" counter over its repetitions with the row's median bandwidth, and prints a
markdown table. Exits 1 when a case differs by more than the tolerance (percent) or has no
driver row, 2 on unusable input, 0 otherwise.
"""
import argparse
import json
import statistics
import sys


def driver_name(row):
    """The benchmark name p2pbench-gbench gives the case of a one-way driver row."""
    name = f"{row['method']}/{row['direction']}/bytes:{row['bytes']}"
    for key, label in (("blocks", "blocks"), ("threads", "threads"), ("unroll", "unroll"),
                       ("smem_bytes", "smem"), ("stages", "stages")):
        if row.get(key) is not None:
            name += f"/{label}:{row[key]}"
    return name


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"gbench-crosscheck: cannot read {what} {path}: {e}", file=sys.stderr)
        sys.exit(2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("driver", help="p2pbench results JSON")
    parser.add_argument("gbench", help="p2pbench-gbench --benchmark_out JSON")
    parser.add_argument("--tolerance", type=float, default=2.0, help="largest difference, percent (default 2)")
    args = parser.parse_args()

    driver = load(args.driver, "the driver's results")
    gbench = load(args.gbench, "the Google Benchmark output")
    if "results" not in driver or "benchmarks" not in gbench:
        print("gbench-crosscheck: expected a p2pbench results file and a Google Benchmark JSON file", file=sys.stderr)
        return 2

    rows = {driver_name(r): r for r in driver["results"]
            if r.get("mode") == "uni" and r.get("status") == "ok" and r.get("src_rank") == 0 and r.get("dst_rank") == 1}
    runs = {}
    for b in gbench["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or "GB/s" not in b:
            continue
        # UseManualTime() makes Google Benchmark append "/manual_time" to the name.
        name = b.get("run_name", b["name"]).removesuffix("/manual_time")
        runs.setdefault(name, []).append(float(b["GB/s"]))
    if not runs:
        print("gbench-crosscheck: the Google Benchmark file has no runs with a GB/s counter", file=sys.stderr)
        return 2

    bad = 0
    print(f"| case (GPU 0 -> 1) | p2pbench-gbench GB/s (median of {max(map(len, runs.values()))}) "
          f"| p2pbench GB/s (median) | difference | within {args.tolerance:g}% |")
    print("| --- | --- | --- | --- | --- |")
    for name, values in runs.items():
        g = statistics.median(values)
        row = rows.get(name)
        if row is None:
            print(f"| {name} | {g:.1f} | no row | | no |")
            bad += 1
            continue
        d = row["bandwidth_gbps"]["median"]
        diff = 100.0 * (g - d) / d
        ok = abs(diff) <= args.tolerance
        bad += not ok
        print(f"| {name} | {g:.1f} | {d:.1f} | {diff:+.2f}% | {'yes' if ok else 'NO'} |")
    print(f"\n{len(runs) - bad} of {len(runs)} cases agree within {args.tolerance:g}% (GB = 1e9 B)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
