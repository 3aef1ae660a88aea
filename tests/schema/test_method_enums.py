"""The schemas' method lists agree with the method registry.

schema/methods.json is what `p2pbench --list-methods --json` prints from the registry (tests/cli
keeps the two equal), and `scripts/update-method-lists.py BINARY` writes it and the results
schema's method enums. A method added to the registry and not to the schema (or left there after
removal) fails here, not in a user's validation of a file the tool has just written. The version 1
schema describes files that hold only the methods of version 1: its enums stay a subset.
"""
import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
METHODS = json.loads((REPO / "schema" / "methods.json").read_text())["methods"]
RESULT_SCHEMAS = ("results.schema.json", "results-v1.schema.json")
REGENERATE = "regenerate: scripts/update-method-lists.py build/src/p2pbench"
# Kinds whose ok bidir rows must carry `overlap` and per-direction figures (the schema's if/then).
BIDIR_WITH_DIRECTIONS_KINDS = ("copy", "two_sided_baseline")


def _names(kinds=None):
    return sorted(m["name"] for m in METHODS if kinds is None or m["kind"] in kinds)


def _schema(name):
    return json.loads((REPO / "schema" / name).read_text())


def _conditional_method_enums(schema):
    """The method enums of the row's if/then rules (each names the methods a rule applies to)."""
    for rule in schema["definitions"]["row"].get("allOf", []):
        enum = rule.get("if", {}).get("properties", {}).get("method", {}).get("enum")
        if enum is not None:
            yield sorted(enum)


def _row_enum(schema_name):
    return _schema(schema_name)["definitions"]["row"]["properties"]["method"]["enum"]


def test_row_method_enum_is_the_registry():
    assert sorted(_row_enum("results.schema.json")) == _names(), \
        f"results.schema.json: definitions.row.properties.method.enum; {REGENERATE}"
    assert set(_row_enum("results-v1.schema.json")) <= set(_names()), "results-v1.schema.json names unknown methods"


def test_bidir_direction_rule_names_the_copy_and_baseline_methods():
    enums = list(_conditional_method_enums(_schema("results.schema.json")))
    assert _names(BIDIR_WITH_DIRECTIONS_KINDS) in enums, \
        f"results.schema.json: no row rule whose method enum is the copy and two-sided baseline methods; {REGENERATE}"


def test_the_generator_writes_what_is_committed(tmp_path, monkeypatch):
    """update-method-lists.py, given the committed list, leaves the committed schema as it is."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("update_method_lists", REPO / "scripts" / "update-method-lists.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for name in ("methods.json", "results.schema.json"):
        (tmp_path / name).write_text((REPO / "schema" / name).read_text())
    monkeypatch.setattr(tool, "SCHEMA", tmp_path / "results.schema.json")
    monkeypatch.setattr(tool, "METHODS", tmp_path / "methods.json")
    monkeypatch.setattr(tool, "REPO", tmp_path)
    monkeypatch.setattr(tool, "method_list", lambda binary: (REPO / "schema" / "methods.json").read_text())
    monkeypatch.setattr(tool.sys, "argv", ["update-method-lists.py", "p2pbench"])
    assert tool.main() == 0
    assert (tmp_path / "results.schema.json").read_text() == (REPO / "schema" / "results.schema.json").read_text()


def test_every_conditional_enum_names_registered_methods():
    known = set(_names())
    for schema_name in RESULT_SCHEMAS:
        for enum in _conditional_method_enums(_schema(schema_name)):
            assert set(enum) <= known, f"{schema_name}: unknown methods {sorted(set(enum) - known)}"


def test_report_reads_the_same_list():
    import sys
    sys.path.insert(0, str(REPO / "scripts"))
    from p2pbench_report.methods import METHOD_ORDER
    assert sorted(METHOD_ORDER) == _names()
    assert len(set(m["report_order"] for m in METHODS)) == len(METHODS), "report_order repeats"


def test_every_shape_axis_is_a_row_property():
    """The results writer puts every axis of the table (methods.json's shape_axes) on every row; the
    schema describes each by hand (its description says what the value means)."""
    properties = _schema("results.schema.json")["definitions"]["row"]["properties"]
    axes = [a["name"] for a in json.loads((REPO / "schema" / "methods.json").read_text())["shape_axes"]]
    assert [a for a in axes if a not in properties] == [], "add the axis' property to schema/results.schema.json"
