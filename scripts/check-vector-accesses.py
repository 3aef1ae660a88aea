#!/usr/bin/env python3
"""Checks that the put-built kernels' 16-byte global accesses reach PTX whole.

A 16-byte vector written as a float4 or uint4 assignment may come out of the compiler as four
4-byte accesses: four st.global.f32 (or .u32/.b32) on one base register at +0, +4, +8 and +12 with
no label or branch between them (a tail's element-wise accesses each sit under a branch). On two
H200 such split stores cost the all-gather of puts half its rate at 1024 threads a block
(results/h200-nv18/all-gather-threads-2026-11-30/). Reads PTX files (the build's
p2pbench_vector_access_ptx objects); prints the global accesses it read and any split found.

Exit status: 0 none split; 1 some split (each named with its file and line); 2 bad usage, an
unreadable file, or no global access read at all (a check that read nothing).
"""
import re
import sys

SCALAR = re.compile(r"(st|ld)\.global\.(?:u32|f32|b32|s32)\s+(?:%\w+,\s*)?\[(%rd\d+)(?:\+(\d+))?\]")
GLOBAL = re.compile(r"\b(?:st|ld)\.global\.")
# Lines that end a run of accesses that belong together: labels and branches (and predicated
# instructions, which are branches in disguise).
BREAK = re.compile(r"^(\$L|@|bra\b|ret\b|exit\b)")


def split_accesses(lines):
    """(line number, 'st' or 'ld', base register) of each 16-byte access split in four."""
    found, run = [], []  # run: (line number, kind, base, offset) since the last break
    for number, line in lines:
        if BREAK.match(line):
            run = []
            continue
        m = SCALAR.match(line)
        if not m:
            continue
        run.append((number, m.group(1), m.group(2), int(m.group(3) or 0)))
        last = run[-4:]
        if len(last) == 4 and len({(k, b) for _, k, b, _ in last}) == 1:
            offsets = [o for *_, o in last]
            if offsets[0] % 16 == 0 and offsets == [offsets[0] + 4 * i for i in range(4)]:
                found.append(last[0][:3])
    return found


def main(paths):
    if not paths:
        print("usage: check-vector-accesses.py FILE.ptx...", file=sys.stderr)
        return 2
    accesses, problems = 0, []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                lines = [(n, l.strip()) for n, l in enumerate(f, 1) if l.strip() and not l.strip().startswith("//")]
        except OSError as e:
            print(f"check-vector-accesses: cannot read {path}: {e}", file=sys.stderr)
            return 2
        count = sum(1 for _, l in lines if GLOBAL.search(l))
        accesses += count
        split = split_accesses(lines)
        print(f"{path}: {count} global accesses, {len(split)} 16-byte accesses split in four")
        problems += [f"{path}:{n}: a 16-byte {'store' if k == 'st' else 'load'} through {b} split into four 4-byte ones"
                     for n, k, b in split]
    if accesses == 0:
        print("check-vector-accesses: no global access in the files given: nothing was checked", file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
