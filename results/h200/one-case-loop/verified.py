"""Per method: rows verified, skipped (with reason), failed: python3 verified.py FILE..."""
import collections, json, sys
for path in sys.argv[1:]:
    rows = json.load(open(path))["results"]
    counts = collections.defaultdict(collections.Counter)
    for r in rows:
        counts[r["method"]]["verified" if r.get("verified") else r.get("status", "?")] += 1
    print(path.split("/")[-1], "; ".join(f"{m}: {dict(c)}" for m, c in counts.items()))
