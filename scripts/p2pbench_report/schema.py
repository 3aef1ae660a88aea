"""Validation of a results document against the repository's JSON Schema.

The schema is found relative to this package (scripts/p2pbench_report -> ../../schema), so the
tool always checks against the contract of the checkout it belongs to. P2PBENCH_SCHEMA may name
another schema file (e.g. when the package is copied elsewhere).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from p2pbench_report.errors import InputError, require

SCHEMA_ENV_VARIABLE = "P2PBENCH_SCHEMA"
REPOSITORY_SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "results.schema.json"


def schema_path() -> Path:
    override = os.environ.get(SCHEMA_ENV_VARIABLE)
    return Path(override) if override else REPOSITORY_SCHEMA


@functools.lru_cache(maxsize=4)
def _validators(path: Path):
    """(validator of a whole document, validator of one `results` row) for the schema at path."""
    jsonschema = require("jsonschema", "to validate results files against the schema")
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(path, f"cannot read the results schema ({error.strerror}); "
                               f"set {SCHEMA_ENV_VARIABLE} to its path") from None
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    # The row schema carries the definitions along, so that its "#/definitions/..." resolve.
    row_schema = dict(schema["properties"]["results"]["items"], definitions=schema.get("definitions", {}))
    return validator_class(schema), validator_class(row_schema)


def _json_path(path_parts) -> str:
    text = "$"
    for part in path_parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _describe(error, prefix: list) -> tuple[str, str]:
    """(field as a JSON path, message) for one validation error; prefix: where its instance lies."""
    parts = prefix + list(error.absolute_path)
    if error.validator == "required":
        # "'samples' is a required property": name the missing field itself.
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        if missing:
            return _json_path(parts + [missing[0]]), "required field is missing"
    if error.validator == "additionalProperties":
        return _json_path(parts), error.message
    shown = json.dumps(error.instance)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    same_instance = error.validator == "type" and not error.relative_path
    alternatives = error if error.validator in ("oneOf", "anyOf") else (error.parent if same_instance else None)
    if alternatives is not None and alternatives.validator in ("oneOf", "anyOf"):
        # "390" against oneOf [stats object, null]: name every type the field may have.
        types = [t for e in alternatives.context if e.validator == "type" and not e.path
                 for t in ([e.validator_value] if isinstance(e.validator_value, str) else e.validator_value)]
        if types and (error is not alternatives or len(types) == len(alternatives.context)):
            return _json_path(parts), f"{shown} is not of type {' or '.join(dict.fromkeys(types))}"
    return _json_path(parts), f"{error.message.replace(repr(error.instance), shown)}"


def first_error(document: Any) -> tuple[str, str] | None:
    """The (field, message) of the first schema violation, or None if valid. The document
    without its rows is checked first, then the rows in order (a person fixes a file top-down;
    an early bad row also spares validating the rest)."""
    document_validator, row_validator = _validators(schema_path())
    import jsonschema.exceptions  # importable: _validators checked
    rows = document.get("results") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        return _best(jsonschema.exceptions, document_validator.iter_errors(document), [])
    problem = _best(jsonschema.exceptions, document_validator.iter_errors(dict(document, results=[])), [])
    if problem:
        return problem
    for index, row in enumerate(rows):
        problem = _best(jsonschema.exceptions, row_validator.iter_errors(row), ["results", index])
        if problem:
            return problem
    return None


def _best(exceptions, errors, prefix: list) -> tuple[str, str] | None:
    """The most specific error, described: among the errors deepest in the instance, jsonschema's
    best_match (which descends into oneOf/anyOf alternatives)."""
    errors = list(errors)
    if not errors:
        return None
    deepest = max(len(e.path) for e in errors)
    return _describe(exceptions.best_match(e for e in errors if len(e.path) == deepest), prefix)


def validate(document: Any, source: str | Path) -> None:
    """Raises InputError naming the file and the first offending field."""
    problem = first_error(document)
    if problem is not None:
        field, message = problem
        raise InputError(source, f"not a valid p2pbench results file: {message}", field=field)
