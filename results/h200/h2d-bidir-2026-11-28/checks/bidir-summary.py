import json, re, statistics as st, sys, pathlib
w = pathlib.Path(sys.argv[1])
def med(v): return st.median(v) if v else float("nan")
allnv, alllong, allshort = [], [], []
for r in range(1, 50):
    f = w / f"nvbw-{r}.txt"
    if not f.exists(): break
    txt = f.read_text()
    h2d = [float(x) for x in re.findall(r"Host.*?-> Device.*?: ([\d.]+) GB/s", txt)]
    d2h = [float(x) for x in re.findall(r"Device.*?-> Host.*?: ([\d.]+) GB/s", txt)]
    summ = re.findall(r"SUM host_to_device_bidirectional_memcpy_ce ([\d.]+)", txt)
    allnv += h2d
    line = f"round {r}: nvbandwidth {summ} h2d samples {h2d} (d2h beside {d2h})"
    for kind, acc in (("long", alllong), ("short", allshort)):
        p = w / f"{kind}-{r}.json"
        if not p.exists(): line += f"\n   {kind}: missing"; continue
        d = json.loads(p.read_text())
        for row in d["results"]:
            fl = row["flows"][0]
            s = row.get("samples_gbps") or fl.get("samples_gbps", [])
            if row["method"] == "h2d_bidir": acc += s
            line += (f"\n   p2pbench {kind} {row['method']}: median {row['bandwidth_gbps']['median']:.2f} it/sample {row.get('iterations')} "
                     f"samples {[round(x,1) for x in s]} iter_us {row.get('iteration_time_us')}")
    print(line)
print(f"\npooled h2d under reverse copy, GB/s: nvbandwidth median {med(allnv):.2f} over {len(allnv)} samples "
      f"[{min(allnv or [0]):.1f}-{max(allnv or [0]):.1f}]; p2pbench 150 ms samples median {med(alllong):.2f} over {len(alllong)} "
      f"[{min(alllong or [0]):.1f}-{max(alllong or [0]):.1f}]; 1-copy samples median {med(allshort):.2f} over {len(allshort)}")
if allnv and alllong: print(f"ratio p2pbench/nvbandwidth (150 ms samples) {med(alllong)/med(allnv):.4f}")
