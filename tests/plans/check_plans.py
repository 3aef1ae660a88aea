#!/usr/bin/env python3
"""The dry-run plans of the shipped configs (case list, counts, memory, estimate) for 2, 3, 4 and 8
ranks, compared with the ones committed in golden.txt.gz: a refactoring of the registry, the sweep
or the patterns must not change what runs, in what order (label `unit`; needs no GPU).

A plan that changes on purpose: regenerate with `check_plans.py --write P2PBENCH_BIN` and say why
in the commit. scripts/plan-snapshot.sh writes the same files one per plan, and diffs two builds.
Usage: check_plans.py [--write] P2PBENCH_BIN
"""
import difflib
import gzip
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
GOLDEN = HERE / "golden.txt.gz"
SCRIPT = ROOT / "scripts" / "plan-snapshot.sh"


def snapshot(binary):
    """{name: text} of every plan, as scripts/plan-snapshot.sh writes them."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(SCRIPT), binary, tmp], check=True, timeout=600)
        return {p.stem: p.read_text() for p in sorted(pathlib.Path(tmp).glob("*.txt"))}


def pack(plans):
    return "".join(f"=== {name}\n{text}" for name, text in plans.items())


def unpack(blob):
    plans, name = {}, None
    for line in blob.splitlines(keepends=True):
        if line.startswith("=== "):
            name = line[4:].strip()
            plans[name] = ""
        else:
            plans[name] += line
    return plans


def main(argv):
    write = "--write" in argv
    binary = [a for a in argv[1:] if a != "--write"][0]
    plans = snapshot(binary)
    if write:
        GOLDEN.write_bytes(gzip.compress(pack(plans).encode(), mtime=0))
        print(f"wrote {GOLDEN} ({len(plans)} plans)")
        return 0
    golden = unpack(gzip.decompress(GOLDEN.read_bytes()).decode())
    changed = [n for n in sorted(set(golden) | set(plans)) if golden.get(n) != plans.get(n)]
    for name in changed:
        diff = difflib.unified_diff(golden.get(name, "").splitlines(), plans.get(name, "").splitlines(),
                                    f"golden/{name}", f"now/{name}", lineterm="", n=1)
        print("\n".join(list(diff)[:40]))
    print(f"{len(plans) - len(changed)} of {len(golden)} plans unchanged" + (f"; changed: {', '.join(changed)}" if changed else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
