#!/usr/bin/env python3
"""Each case's median figure, before against after, over one or more alternated rounds.

Usage: scripts/before-after.py LABEL BEFORE1.json AFTER1.json [BEFORE2.json AFTER2.json ...]

A case is a row's method, direction, mode, ranks, bytes and kernel shape. The figure is the row's
median latency (us), transfer-beside-workload bandwidth or bandwidth (GB/s, 1 GB = 1e9 B). Prints
each case's medians per run and after/before of the medians across runs, then the range.
"""
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from p2pbench_report.methods import IDENTITY_FIELDS, SHAPE_AXES  # noqa: E402  (the registry's, as the report finds them)

FIGURES = (("latency_us", "us"), ("transfer_together_gbps", "GB/s"), ("bandwidth_gbps", "GB/s"))
SHAPE = tuple(a["name"] for a in SHAPE_AXES) + ("protocol", "atomic_type", "atomic_pattern", "hot_addresses",
                                                "ops_per_thread", "pattern", "schedule") + IDENTITY_FIELDS


def figure(row):
    for key, unit in FIGURES:
        value = row.get(key)
        if isinstance(value, dict) and value.get("median") is not None:
            return value["median"], f"{unit} ({key})"
    return None, None


# Rows written before the pattern fields existed carry neither: read them as a two-rank run's.
DEFAULTS = {"pattern": "matrix", "schedule": "sequential"}


def case_key(row):
    fields = {k: row.get(k, DEFAULTS.get(k)) for k in SHAPE}
    shape = json.dumps({k: v for k, v in fields.items() if v is not None}, sort_keys=True, default=str)
    return (row["method"], row.get("direction") or "", row.get("mode") or "", row.get("src_rank"),
            row.get("dst_rank"), row["bytes"], shape)


def collect(rounds):
    cases = {}
    for before, after in rounds:
        for tag, doc in (("before", before), ("after", after)):
            for row in doc["results"]:
                value, unit = figure(row)
                if value is not None:
                    cases.setdefault(case_key(row), {"before": [], "after": [], "unit": unit})[tag].append(value)
    return cases


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        sys.exit(__doc__)
    label, files = argv[0], argv[1:]
    docs = [json.load(open(f)) for f in files]
    cases = collect(list(zip(docs[0::2], docs[1::2])))
    print(label)
    ratios = []
    for key, case in cases.items():
        if not case["before"] or not case["after"]:
            print("  only in one build:", key)
            continue
        ratio = statistics.median(case["after"]) / statistics.median(case["before"])
        ratios.append(ratio)
        runs = " ".join(f"{x:9.3f}" for x in case["before"]), " ".join(f"{x:9.3f}" for x in case["after"])
        print(f"  {key[0]:15s} {key[1]:5s} {key[2]:5s} {key[3]}->{key[4]} {key[5]:>11d} B {key[6]:50s} "
              f"before {runs[0]}  after {runs[1]} {case['unit']}  after/before {ratio:.4f}")
    if ratios:
        print(f"  {len(ratios)} cases: after/before from {min(ratios):.4f} to {max(ratios):.4f}, "
              f"median {statistics.median(ratios):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
