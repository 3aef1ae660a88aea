#!/usr/bin/env python3
"""Regenerates the method lists that derive from p2pbench's method registry.

Usage: scripts/update-method-lists.py P2PBENCH_BINARY

Writes schema/methods.json (`p2pbench --list-methods --json`) and, in schema/results.schema.json,
the row's method enum (every method) and the enum of the rule that asks ok bidir rows of the copy
and two-sided baseline methods for their per-direction figures. The version 1 schema describes
files that can hold only the methods of version 1 and stays as it is. Exit 2 when the binary
cannot list its methods.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schema" / "results.schema.json"
METHODS = REPO / "schema" / "methods.json"
BIDIR_WITH_DIRECTIONS_KINDS = ("copy", "two_sided_baseline")


def method_list(binary: str) -> str:
    done = subprocess.run([binary, "--list-methods", "--json"], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        sys.exit(f"update-method-lists: {binary} --list-methods --json exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def bidir_rule(row: dict) -> dict:
    """The row rule whose `if` names methods and asks for bidir figures (the only such rule)."""
    rules = [r for r in row["allOf"] if "method" in r.get("if", {}).get("properties", {})
             and "enum" in r["if"]["properties"]["method"]]
    if len(rules) != 1:
        sys.exit(f"update-method-lists: {SCHEMA}: expected one row rule with a method enum, found {len(rules)}")
    return rules[0]["if"]["properties"]["method"]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    listing = method_list(sys.argv[1])
    methods = json.loads(listing)["methods"]
    METHODS.write_text(listing, encoding="utf-8")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    row = schema["definitions"]["row"]
    row["properties"]["method"]["enum"] = [m["name"] for m in methods]
    bidir_rule(row)["enum"] = [m["name"] for m in methods if m["kind"] in BIDIR_WITH_DIRECTIONS_KINDS]
    SCHEMA.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{METHODS.relative_to(REPO)}: {len(methods)} methods; {SCHEMA.relative_to(REPO)}: method enums")
    return 0


if __name__ == "__main__":
    sys.exit(main())
