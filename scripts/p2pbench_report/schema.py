"""Validation of a results document against the repository's JSON Schema of its version.

Each `schema_version` has its own schema file in schema/ of this checkout (found relative to this
package: scripts/p2pbench_report -> ../../schema): results-v1.schema.json for version 1 (two
ranks), results.schema.json for the current version 2 (N ranks, flows: docs/groups.md). A file is
checked against the schema whose `properties.schema_version.const` equals its own version, so
version 1 files are read exactly as before. P2PBENCH_SCHEMA may name another schema file or
folder (e.g. when the package is copied elsewhere): a file serves its own version, and the other
versions are looked for beside it.

The validator is jsonschema's where that package is installed, else the project's own
(draft7_subset: the draft 7 keywords these schemas use), so that a GPU node without a package
index can check its files; both give the same verdict and message.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from p2pbench_report import draft7_subset
from p2pbench_report.errors import InputError, require

SCHEMA_ENV_VARIABLE = "P2PBENCH_SCHEMA"
REPOSITORY_SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "results.schema.json"
SCHEMA_FILES = "results*.schema.json"


def schema_path() -> Path:
    """The schema of the current version (or the P2PBENCH_SCHEMA override, file or folder)."""
    override = os.environ.get(SCHEMA_ENV_VARIABLE)
    if not override:
        return REPOSITORY_SCHEMA
    path = Path(override)
    return path / REPOSITORY_SCHEMA.name if path.is_dir() else path


def _read_schema(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(path, f"cannot read the results schema ({error.strerror}); "
                               f"set {SCHEMA_ENV_VARIABLE} to its path") from None


def _version_of(schema: dict) -> Any:
    return ((schema.get("properties") or {}).get("schema_version") or {}).get("const")


@functools.lru_cache(maxsize=4)
def _schema_files(current: Path) -> dict[Any, Path]:
    """schema_version -> schema file: the current schema and the schema files beside it."""
    files = {_version_of(_read_schema(current)): current}
    for path in sorted(current.parent.glob(SCHEMA_FILES)):
        if path != current:
            files.setdefault(_version_of(_read_schema(path)), path)
    return files


def schema_path_for(version: Any) -> Path:
    """The schema file of `version`; the current one for a version no schema declares (whose
    `schema_version` const then names the mismatch)."""
    current = schema_path()
    readable = isinstance(version, int) and not isinstance(version, bool)
    return _schema_files(current).get(version, current) if readable else current


def known_versions() -> list[int]:
    return sorted(v for v in _schema_files(schema_path()) if isinstance(v, int))


JSONSCHEMA = "jsonschema"
BUILT_IN = "built-in"


@functools.lru_cache(maxsize=1)
def _jsonschema():
    """The jsonschema package, or None where it is not installed (a GPU node without a package
    index): then the built-in validator (draft7_subset) checks the files."""
    try:
        import jsonschema
        import jsonschema.exceptions
    except ImportError:
        return None
    return jsonschema


def engine() -> str:
    """The validator in use: jsonschema where it is importable, else the built-in one."""
    return JSONSCHEMA if _jsonschema() is not None else BUILT_IN


def schema_validator(schema: dict, use: str | None = None):
    """A draft 7 validator of `schema` (iter_errors, is_valid) of `use` (default: engine()).
    Raises DependencyError for jsonschema where it is missing, UnsupportedSchema where the
    built-in validator does not implement all the schema uses."""
    if (use or engine()) == BUILT_IN:
        return draft7_subset.Validator(schema)
    jsonschema = require("jsonschema", "to validate with jsonschema (the built-in validator needs nothing)")
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _best_match(use: str):
    return draft7_subset.best_match if use == BUILT_IN else _jsonschema().exceptions.best_match


@functools.lru_cache(maxsize=8)
def _validators(path: Path, use: str):
    """(validator of a whole document, validator of one `results` row) for the schema at path."""
    schema = _read_schema(path)
    # The row schema carries the definitions along, so that its "#/definitions/..." resolve.
    row_schema = dict(schema["properties"]["results"]["items"], definitions=schema.get("definitions", {}))
    try:
        return schema_validator(schema, use), schema_validator(row_schema, use)
    except draft7_subset.UnsupportedSchema as error:
        raise InputError(path, f"the schema uses what the built-in validator does not implement ({error}); "
                               f"install jsonschema (pip install -r scripts/requirements.txt)") from None


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


def first_error(document: Any, use: str | None = None) -> tuple[str, str] | None:
    """The (field, message) of the first schema violation, or None if valid. The document
    without its rows is checked first, then the rows in order (a person fixes a file top-down;
    an early bad row also spares validating the rest). `use`: JSONSCHEMA or BUILT_IN, by default
    engine(); both give the same answer."""
    version = document.get("schema_version") if isinstance(document, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version not in known_versions():
        readable = ", ".join(str(v) for v in known_versions())
        return "$.schema_version", f"{version} is not a schema_version this tool reads ({readable})"
    use = use or engine()
    document_validator, row_validator = _validators(schema_path_for(version), use)
    best_match = _best_match(use)
    rows = document.get("results") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        return _best(best_match, document_validator.iter_errors(document), [])
    problem = _best(best_match, document_validator.iter_errors(dict(document, results=[])), [])
    if problem:
        return problem
    for index, row in enumerate(rows):
        problem = _best(best_match, row_validator.iter_errors(row), ["results", index])
        if problem:
            return problem
    return None


def _best(best_match, errors, prefix: list) -> tuple[str, str] | None:
    """The most specific error, described: among the errors deepest in the instance, jsonschema's
    best_match (which descends into oneOf/anyOf alternatives), or the built-in one's copy of it."""
    errors = list(errors)
    if not errors:
        return None
    deepest = max(len(e.path) for e in errors)
    return _describe(best_match(e for e in errors if len(e.path) == deepest), prefix)


def validate(document: Any, source: str | Path) -> None:
    """Raises InputError naming the file and the first offending field."""
    problem = first_error(document)
    if problem is not None:
        field, message = problem
        raise InputError(source, f"not a valid p2pbench results file: {message}", field=field)
