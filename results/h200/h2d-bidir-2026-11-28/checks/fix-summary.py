import json, re, statistics as st, sys, pathlib
w = pathlib.Path(sys.argv[1])
pool = {}
def add(k, v): pool.setdefault(k, []).extend(v)
for r in range(1, 10):
    f = w / f"nvbw-{r}.txt"
    if not f.exists(): break
    txt = f.read_text()
    parts = txt.split("Running device_to_host_bidirectional_memcpy_ce")
    h2d = [float(x) for x in re.findall(r"Host -> Device 0: ([\d.]+) GB/s", parts[0])]
    d2h = [float(x) for x in re.findall(r"Device 0 -> Host: ([\d.]+) GB/s", parts[1] if len(parts) > 1 else "")]
    sums = dict(re.findall(r"SUM (\w+) ([\d.]+)", txt))
    add("nvbandwidth h2d_bidir", h2d); add("nvbandwidth d2h_bidir", d2h)
    print(f"round {r} nvbandwidth {sums}")
    for k in ("long", "short"):
        p = w / f"{k}-{r}.json"
        if not p.exists(): print(f"  {k}: missing"); continue
        for row in json.loads(p.read_text())["results"]:
            s = row.get("samples_gbps") or []
            if row["bytes"] == 512 << 20: add(f"p2pbench {row['method']} {k}", s)
            med = row["bandwidth_gbps"]["median"] if row.get("bandwidth_gbps") else float("nan")
            print(f"  {k:5s} {row['method']:9s} {row['bytes'] >> 20:5d} MiB {row['status']:6s} median {med:6.2f} it {row.get('iterations')} "
                  f"[{min(s or [0]):.1f}-{max(s or [0]):.1f}] {row.get('error') or ''}")
print()
for k, v in pool.items():
    if v: print(f"pooled {k:28s} median {st.median(v):6.2f} GB/s over {len(v):3d} samples [{min(v):.2f}-{max(v):.2f}]")
for m in ("h2d_bidir", "d2h_bidir"):
    nv = pool.get(f"nvbandwidth {m}")
    for k in ("long", "short"):
        p = pool.get(f"p2pbench {m} {k}")
        if nv and p: print(f"{m} p2pbench ({k} samples) / nvbandwidth: {st.median(p) / st.median(nv):.4f}")
