"""The schemas' method lists agree with the method registry.

schema/methods.json is what `p2pbench --list-methods --json` prints from src/vocab/methods.cpp
(tests/cli keeps the two equal). The results schemas still spell their method enums out, so a
method added to the registry and not to a schema (or left in a schema after removal) fails here,
not in a user's validation of a file the tool has just written.
"""
import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
METHODS = json.loads((REPO / "schema" / "methods.json").read_text())["methods"]
RESULT_SCHEMAS = ("results.schema.json", "results-v1.schema.json")
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


@pytest.mark.parametrize("schema_name", RESULT_SCHEMAS)
def test_row_method_enum_is_the_registry(schema_name):
    row_enum = _schema(schema_name)["definitions"]["row"]["properties"]["method"]["enum"]
    assert sorted(row_enum) == _names(), f"{schema_name}: definitions.row.properties.method.enum"


@pytest.mark.parametrize("schema_name", RESULT_SCHEMAS)
def test_bidir_direction_rule_names_the_copy_and_baseline_methods(schema_name):
    enums = list(_conditional_method_enums(_schema(schema_name)))
    assert _names(BIDIR_WITH_DIRECTIONS_KINDS) in enums, \
        f"{schema_name}: no row rule whose method enum is the copy and two-sided baseline methods"


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
