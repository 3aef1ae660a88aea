import json, re, statistics as st, sys, pathlib
w = pathlib.Path(sys.argv[1])
pool = {}
for r in range(1, 10):
    f = w / f"nvbw-{r}.txt"
    if not f.exists(): break
    h2d = [float(x) for x in re.findall(r"Host -> Device 0: ([\d.]+) GB/s", f.read_text())]
    pool.setdefault("nvbandwidth", []).extend(h2d)
    print(f"round {r} nvbandwidth h2d samples {h2d}")
    for v in ("base", "streambeside", "hostdriven"):
        for k in ("short", "long"):
            p = w / f"{v}-{k}-{r}.json"
            if not p.exists(): print(f"  {v} {k}: missing"); continue
            for row in json.loads(p.read_text())["results"]:
                s = row.get("samples_gbps") or []
                if row["method"] == "h2d_bidir": pool.setdefault(f"{v}-{k}", []).extend(s)
                med = row["bandwidth_gbps"]["median"] if row.get("bandwidth_gbps") else None
                print(f"  {v:12s} {k:5s} {row['method']:9s} {row['status']:6s} median {med} it {row.get('iterations')} "
                      f"samples {[round(x,1) for x in s]} {row.get('error') or ''}")
print()
for k, v in pool.items():
    if v: print(f"pooled {k:20s} median {st.median(v):6.2f} GB/s over {len(v)} [{min(v):.1f}-{max(v):.1f}]")
