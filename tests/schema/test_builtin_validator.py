"""The built-in draft 7 validator (scripts/p2pbench_report/draft7_subset.py), which checks results
files where the jsonschema package is missing: it implements every keyword the schemas in
schema/ use (a schema that starts using another one fails here first), refuses a schema it
would check only in part, and follows draft 7 where Python's own types differ from JSON's.
tests/schema/test_validators_agree.py compares it with jsonschema where that is installed."""
import json
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from p2pbench_report import draft7_subset  # noqa: E402
from p2pbench_report.errors import InputError  # noqa: E402

SCHEMAS = sorted(REPO.glob("schema/*.schema.json"))
# Where a draft 7 keyword holds schemas rather than a value: the scan below looks inside these.
HOLDS_A_SCHEMA = {"additionalProperties", "items", "not", "if", "then", "else"}
HOLDS_SCHEMAS = {"allOf", "anyOf", "oneOf"}
HOLDS_NAMED_SCHEMAS = {"properties", "definitions", "patternProperties", "dependencies"}


def keywords_used(schema) -> set[str]:
    """Every keyword of every (sub)schema, found by walking the document itself."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for keyword, value in schema.items():
        if keyword in HOLDS_A_SCHEMA:
            found |= keywords_used(value) if isinstance(value, dict) else \
                set().union(*map(keywords_used, value)) if isinstance(value, list) else set()
        elif keyword in HOLDS_SCHEMAS:
            found |= set().union(set(), *map(keywords_used, value))
        elif keyword in HOLDS_NAMED_SCHEMAS:
            found |= set().union(set(), *map(keywords_used, value.values()))
    return found


def test_the_schemas_are_found():
    assert {p.name for p in SCHEMAS} >= {"results.schema.json", "results-v1.schema.json", "expectations.schema.json"}


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.name for p in SCHEMAS])
def test_every_keyword_a_schema_uses_is_implemented(path):
    schema = json.loads(path.read_text())
    implemented = set(draft7_subset.KEYWORDS) | draft7_subset.ANNOTATIONS | draft7_subset.BRANCHES
    assert keywords_used(schema) - implemented == set(), \
        f"{path.name} uses keywords the built-in validator does not implement: add them to draft7_subset.py"
    assert draft7_subset.unsupported(schema) == []
    draft7_subset.Validator(schema)  # accepted as a whole


@pytest.mark.parametrize("schema,named", [
    ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, "'patternProperties'"),
    ({"properties": {"a": {"uniqueItems": True}}}, "#/properties/a: keyword 'uniqueItems'"),
    ({"items": [{"type": "string"}]}, "an array of schemas"),
    ({"$ref": "other.json#/definitions/a"}, "points outside the schema"),
    ({"$ref": "#/definitions/missing", "definitions": {}}, "does not resolve"),
    ({"type": "int"}, "['int']"),
    ({"$schema": "https://json-schema.org/draft/2020-12/schema"}, "only draft 7"),
])
def test_a_schema_using_more_is_refused_with_what_and_where(schema, named):
    with pytest.raises(draft7_subset.UnsupportedSchema, match=None) as refused:
        draft7_subset.Validator(schema)
    assert named in str(refused.value), str(refused.value)


def test_the_report_names_the_schema_it_cannot_check(tmp_path, monkeypatch):
    from p2pbench_report import schema as schema_module

    (tmp_path / "results.schema.json").write_text(json.dumps(
        {"properties": {"schema_version": {"const": 2}, "results": {"items": {"uniqueItems": True}}}}))
    monkeypatch.setenv(schema_module.SCHEMA_ENV_VARIABLE, str(tmp_path))
    with pytest.raises(InputError) as refused:
        schema_module.first_error({"schema_version": 2, "results": []}, schema_module.BUILT_IN)
    message = str(refused.value)
    assert str(tmp_path / "results.schema.json") in message and "'uniqueItems'" in message, message
    assert "install jsonschema" in message, message


def messages(schema, instance):
    return [e.message for e in draft7_subset.Validator(schema).iter_errors(instance)]


# (schema, instance, the messages, jsonschema's words): draft 7's rules where Python's differ.
CASES = [
    ({"type": "integer"}, 3.0, []),                       # an integer may be written 3.0
    ({"type": "integer"}, 3.5, ["3.5 is not of type 'integer'"]),
    ({"type": "number"}, True, ["True is not of type 'number'"]),   # a boolean is no number
    ({"type": ["number", "null"]}, "1", ["'1' is not of type 'number', 'null'"]),
    ({"const": 1}, True, ["1 was expected"]),
    ({"enum": [0, "a"]}, False, ["False is not one of [0, 'a']"]),
    ({"enum": [[1, 2]]}, [1, 2], []),
    ({"minimum": 0}, "x", []),                            # bounds apply to numbers only
    ({"minimum": 0}, -1, ["-1 is less than the minimum of 0"]),
    ({"exclusiveMinimum": 0}, 0, ["0 is less than or equal to the minimum of 0"]),
    ({"maximum": 1}, 1.5, ["1.5 is greater than the maximum of 1"]),
    ({"exclusiveMaximum": 1}, 1, ["1 is greater than or equal to the maximum of 1"]),
    ({"pattern": "^GPU-"}, "MIG-1", ["'MIG-1' does not match '^GPU-'"]),
    ({"minItems": 1}, [], ["[] should be non-empty"]),
    ({"minItems": 2}, [1], ["[1] is too short"]),
    ({"maxItems": 1}, [1, 2], ["[1, 2] is too long"]),
    ({"required": ["a", "b"]}, {"a": 1}, ["'b' is a required property"]),
    ({"required": ["a"]}, [1], []),                       # required applies to objects only
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": 1, "c": 0, "b": 0},
     ["1 is not of type 'string'", "Additional properties are not allowed ('b', 'c' were unexpected)"]),
    ({"additionalProperties": {"type": "integer"}}, {"x": 1, "y": "2"}, ["'2' is not of type 'integer'"]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 3,
     ["3 is valid under each of {'minimum': 0}, {'type': 'integer'}"]),
    ({"oneOf": [{"type": "integer"}, {"type": "null"}]}, "x", ["'x' is not valid under any of the given schemas"]),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, None, []),
    ({"not": {"type": "null"}}, None, ["None should not be valid under {'type': 'null'}"]),
    ({"if": {"const": 1}, "then": {"type": "integer"}, "else": {"type": "string"}}, 2, ["2 is not of type 'string'"]),
    ({"allOf": [{"minimum": 2}, {"maximum": 0}]}, 1,
     ["1 is less than the minimum of 2", "1 is greater than the maximum of 0"]),
    # Draft 7: keywords beside $ref are ignored.
    ({"definitions": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/definitions/n", "minimum": 5}}},
     {"a": 1}, []),
    ({"definitions": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/definitions/n"}}}, {"a": "1"},
     ["'1' is not of type 'integer'"]),
]


@pytest.mark.parametrize("schema,instance,expected", CASES, ids=[f"{i}-{json.dumps(c[0])[:40]}" for i, c in enumerate(CASES)])
def test_draft_7_rules_and_messages(schema, instance, expected):
    assert messages(schema, instance) == expected


def test_errors_say_where_and_best_match_picks_the_deepest_alternative():
    schema = {"properties": {"rows": {"items": {"oneOf": [{"type": "null"},
                                                          {"type": "object", "properties": {"gbps": {"type": "number"}}}]}}}}
    errors = list(draft7_subset.Validator(schema).iter_errors({"rows": [None, {"gbps": "390"}]}))
    assert [list(e.absolute_path) for e in errors] == [["rows", 1]]
    best = draft7_subset.best_match(errors)
    assert list(best.absolute_path) == ["rows", 1, "gbps"] and best.message == "'390' is not of type 'number'"
