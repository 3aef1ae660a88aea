#!/usr/bin/env python3
"""Regenerates the method lists that derive from p2pbench's method registry.

Usage: scripts/update-method-lists.py P2PBENCH_BINARY

Writes schema/methods.json (`p2pbench --list-methods --json`) and, in schema/results.schema.json,
the row's method enum (every method), the enum of the rule that asks ok bidir rows of the copy
and two-sided baseline methods for their per-direction figures, and a property for each field a
method declares for its rows (methods.json's row_fields; marked with GENERATED_FIELD as their
$comment, so that a field no method declares any longer goes), with a rule for each set of
methods whose identity fields have no default: their rows name them, never as null (marked
GENERATED_RULE). The version 1 schema describes
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
             and "enum" in r["if"]["properties"]["method"] and r.get("$comment") != GENERATED_RULE]
    if len(rules) != 1:
        sys.exit(f"update-method-lists: {SCHEMA}: expected one row rule with a method enum, found {len(rules)}")
    return rules[0]["if"]["properties"]["method"]


GENERATED_FIELD = "a method's row field: scripts/update-method-lists.py writes it from schema/methods.json"
GENERATED_RULE = ("identity fields without a default (no file before them lacks them): their methods' rows "
                  "name them, never as null; scripts/update-method-lists.py writes it from schema/methods.json")
STATS = {"$ref": "#/definitions/stats"}


def field_schema(field: dict) -> dict:
    """The JSON Schema of a declared row field (its type, values, nullability and members)."""
    kind, nullable = field["type"], field.get("nullable", False)
    if kind == "text" and field.get("values"):
        schema = {"enum": field["values"] + ([None] if nullable else [])}
    elif kind == "text":
        schema = {"type": ["string", "null"] if nullable else "string"}
    elif kind == "flag":
        schema = {"type": ["boolean", "null"] if nullable else "boolean"}
    elif kind == "count":
        schema = {"$ref": "#/definitions/nullable_count" if nullable else "#/definitions/count"}
    elif kind == "number":
        schema = {"type": ["number", "null"] if nullable else "number", "minimum": 0}
    elif kind == "stats":
        schema = {"oneOf": [STATS, {"type": "null"}]} if nullable else dict(STATS)
    elif kind == "numbers":
        schema = {"type": "array", "items": {"type": "number"}}
    elif kind == "object":
        members = field.get("members", [])
        schema = {"type": ["object", "null"] if nullable else "object", "required": [m["name"] for m in members],
                  "additionalProperties": False, "properties": {m["name"]: field_schema(m) for m in members}}
    else:
        sys.exit(f"update-method-lists: row field {field['name']}: unknown type {kind!r}")
    words = [field.get("description") or "", f"unit: {field['unit']}" if field.get("unit") else ""]
    description = "; ".join(w for w in words if w)
    return {**({"description": description} if description else {}), **schema}


def write_row_fields(row: dict, fields: list[dict]) -> None:
    """Replaces the generated properties of the row with those of the declared fields."""
    properties = row["properties"]
    for name in [n for n, p in properties.items() if p.get("$comment") == GENERATED_FIELD]:
        del properties[name]
    for field in fields:
        if field["name"] in properties:
            sys.exit(f"update-method-lists: {SCHEMA}: the row field {field['name']} that methods "
                     f"{', '.join(field['methods'])} declare is already a property of every row")
        properties[field["name"]] = {"$comment": GENERATED_FIELD, **field_schema(field)}


def write_identity_rules(row: dict, fields: list[dict]) -> None:
    """Replaces the generated rules of the row: one per set of methods declaring identity fields
    without a default, requiring them, not null, in those methods' rows."""
    row["allOf"] = [r for r in row["allOf"] if r.get("$comment") != GENERATED_RULE]
    by_methods: dict[tuple, list[str]] = {}
    for field in fields:
        if field.get("identity") and "default" not in field:
            by_methods.setdefault(tuple(field["methods"]), []).append(field["name"])
    for methods, names in by_methods.items():
        row["allOf"].append({
            "$comment": GENERATED_RULE,
            "if": {"properties": {"method": {"enum": list(methods)}}, "required": ["method"]},
            "then": {"required": names, "properties": {name: {"not": {"type": "null"}} for name in names}},
        })


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
    fields = json.loads(listing).get("row_fields", [])
    write_row_fields(row, fields)
    write_identity_rules(row, fields)
    SCHEMA.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{METHODS.relative_to(REPO)}: {len(methods)} methods; {SCHEMA.relative_to(REPO)}: method enums, "
          "row fields")
    return 0


if __name__ == "__main__":
    sys.exit(main())
