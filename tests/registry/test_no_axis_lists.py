"""No list of kernel-shape axis names outside the axis table: src/vocab/shape_axes.cpp holds every
axis once (name, flag, label, case-name key, ...), and `p2pbench --list-methods --json` gives it to
Python (schema/methods.json's shape_axes). Code in src/, kernels/, tools/ and scripts/ that names
most of the axes close together is taken for such a list: a new axis would have to be added to it
by hand. A few axes named for their own reason (what nvbandwidth's rows do not record, the fields
of a version 1 row, one plot's axis) are not a list of every axis and are fine.
"""
from __future__ import annotations

import json
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
AXES = [a["name"] for a in json.loads((REPO / "schema" / "methods.json").read_text())["shape_axes"]]
TABLE = {"src/vocab/shape_axes.cpp", "src/vocab/shape_axes.hpp"}
CODE = ("*.cpp", "*.hpp", "*.cu", "*.cuh", "*.py", "*.sh")
# More than half of the axes' names, quoted, within this many characters: a list of them.
DISTINCT, WINDOW = len(AXES) // 2 + 1, 600


def axis_lists(text: str) -> list[int]:
    """Offsets where DISTINCT different quoted axis names fall within WINDOW characters."""
    hits = [(m.start(), m.group(1)) for m in re.finditer(r"[\"'](\w+)[\"']", text) if m.group(1) in AXES]
    found = []
    for i, (start, _) in enumerate(hits):
        near = {name for offset, name in hits[i:] if offset - start <= WINDOW}
        if len(near) >= DISTINCT and (not found or start - found[-1] > WINDOW):
            found.append(start)
    return found


def test_the_method_list_has_the_axes():
    assert len(AXES) >= DISTINCT and "blocks" in AXES


def test_no_hand_list_of_axes():
    stray = []
    for folder in ("src", "kernels", "tools", "scripts"):
        for pattern in CODE:
            for path in sorted((REPO / folder).rglob(pattern)):
                relative = path.relative_to(REPO).as_posix()
                if relative in TABLE:
                    continue
                text = path.read_text(errors="replace")
                stray += [f"{relative}:{text.count(chr(10), 0, at) + 1}" for at in axis_lists(text)]
    assert stray == [], "axis names listed by hand (derive them from the axis table): " + ", ".join(stray)
