#!/usr/bin/env python3
"""table.md from this folder's put_signal_ce runs: per transfer size, each put size and design in
GB/s (1 GB = 1e9 B), % of the bulk copy (`ce`) of the same bytes in the same run, and signals/s.
Usage: make-table.py > table.md   (run from this folder)"""
import gzip
import json

DESIGNS = [  # (label, signal_group, copy_batch, chunks_in_flight)
    ("a signal per put", 1, 0, 4),
    ("per 16 puts, separate copies", 16, 0, 4),
    ("per 16 puts, one batch", 16, 1, 4),
    ("per 64 puts, separate copies", 64, 0, 4),
    ("per 64 puts, one batch", 64, 1, 4),
    ("per 64 puts, one batch, 1 in flight", 64, 1, 1),
]


def rows(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["results"]


def median(v):
    return v.get("median") if isinstance(v, dict) else v


def table(path, size_mib, title):
    results = rows(path)
    bulk = next(median(r["bandwidth_gbps"]) for r in results if r["method"] == "ce" and r["bytes"] == size_mib << 20)
    cells = {}
    for r in results:
        if r["method"] != "put_signal_ce" or r["status"] != "ok" or r["bytes"] != size_mib << 20:
            continue
        key = (r["chunk_bytes"], r["signal_group"], r["copy_batch"], r["chunks_in_flight"])
        cells[key] = median(r["bandwidth_gbps"])
    print(f"### {title}: {size_mib} MiB transfers, bulk copy {bulk:.1f} GB/s (`{path}`)\n")
    print("| put | " + " | ".join(label for label, *_ in DESIGNS) + " |")
    print("|---" * (len(DESIGNS) + 1) + "|")
    for chunk in sorted({k[0] for k in cells}):
        line = []
        for _, group, batch, in_flight in DESIGNS:
            g = cells.get((chunk, group, batch, in_flight))
            per_signal = min(chunk * group, size_mib << 20)  # a transfer signals at least once
            line.append("" if g is None else f"{g:.0f}, {100 * g / bulk:.0f}%, {g * 1e9 / per_signal / 1e3:.1f} k/s")
        print(f"| {chunk >> 10} KiB | " + " | ".join(line) + " |")
    print()


print("Each cell: GB/s, % of the bulk copy, signals/s (k = 1000). Empty: over the 256 commands a transfer may")
print("queue (skipped with that reason) or not in the config. GPU 0 -> GPU 1, two H200 (NV18).\n")
table("put-signal-ce-batch.json.gz", 64, "Call 2 (99bb898)")
table("put-signal-ce-batch.json.gz", 32, "Call 2 (99bb898)")
table("put-signal-ce-batch.json.gz", 8, "Call 2 (99bb898)")
table("batch-128MiB.json.gz", 128, "Call 3 (3c229c4)")
table("put-signal-ce-batch-call1.json.gz", 64, "Call 1 (371650f: the credit taken before the copies)")
