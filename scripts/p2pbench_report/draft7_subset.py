"""A JSON Schema draft 7 validator for the keywords schema/*.schema.json use, for a node without
the jsonschema package (a GPU node with no package index). schema.py uses jsonschema wherever it
is importable, and this module otherwise.

Its errors are shaped like jsonschema's (message, validator, validator_value, instance, schema,
path, parent, context), carry jsonschema's message texts, come in jsonschema's order, and
best_match picks among them by jsonschema's rule: a file gets the same verdict and the same
message either way (tests/schema/test_validators_agree.py compares the two where jsonschema is
installed). A schema that uses anything outside KEYWORDS is refused (UnsupportedSchema), never
checked in part.
"""

from __future__ import annotations

import heapq
import re
from collections import deque
from typing import Any, Callable, Iterator

DRAFT7 = "http://json-schema.org/draft-07/schema#"
# Keywords that constrain nothing: read by people, or only a place that $ref points into.
ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "definitions"})
TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
WEAK_MATCHES = frozenset({"anyOf", "oneOf"})  # jsonschema's: another error at the same place wins


class UnsupportedSchema(ValueError):
    """The schema uses a keyword (or a form of one) this validator does not implement."""


class ValidationError(Exception):
    """One violation, with the attributes of jsonschema.exceptions.ValidationError that
    schema.py reads. `path`: where the instance lies, relative to the parent's (for an error
    inside oneOf/anyOf) or to the document."""

    def __init__(self, message: str, context: list[ValidationError] = ()):
        super().__init__(message)
        self.message = message
        self.path = self.relative_path = deque()
        self.context = list(context)
        self.parent = None
        self.validator = self.validator_value = self.instance = self.schema = None
        self._unset = True
        for error in self.context:
            error.parent = self

    def _set(self, keyword: str, value: Any, instance: Any, schema: dict) -> None:
        """Details of the innermost keyword that failed; outer keywords leave them alone."""
        if self._unset:
            self.validator, self.validator_value, self.instance, self.schema = keyword, value, instance, schema
            self._unset = False

    @property
    def absolute_path(self) -> deque:
        if self.parent is None:
            return self.relative_path
        return deque([*self.parent.absolute_path, *self.relative_path])

    def _matches_type(self) -> bool:
        try:
            expected = self.schema["type"]
        except (KeyError, TypeError):
            return False
        return any(is_type(self.instance, name) for name in _as_list(expected))


def is_type(instance: Any, name: str) -> bool:
    """Draft 7's types: an integer may be written 3.0; a boolean is no number."""
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "string":
        return isinstance(instance, str)
    if name == "null":
        return instance is None
    if name == "boolean":
        return isinstance(instance, bool)
    if isinstance(instance, bool) or not isinstance(instance, (int, float)):
        return False
    if name == "number":
        return True
    if name == "integer":
        return isinstance(instance, int) or instance.is_integer()
    raise UnsupportedSchema(f"unknown type {name!r}")


def equal(one: Any, two: Any) -> bool:
    """JSON equality: true is not 1, false is not 0, also inside arrays and objects."""
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(k in two and equal(v, two[k]) for k, v in one.items())
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return one == two


def _as_list(types: str | list[str]) -> list[str]:
    return [types] if isinstance(types, str) else types


Errors = Iterator[ValidationError]


# ---- the keywords: each yields jsonschema's errors, with its message texts ----

def _type(v: Validator, types, instance, schema) -> Errors:
    if not any(is_type(instance, name) for name in _as_list(types)):
        yield ValidationError(f"{instance!r} is not of type {', '.join(repr(t) for t in _as_list(types))}")


def _properties(v: Validator, properties, instance, schema) -> Errors:
    if isinstance(instance, dict):
        for name, subschema in properties.items():
            if name in instance:
                yield from v.descend(instance[name], subschema, path=name)


def _required(v: Validator, required, instance, schema) -> Errors:
    if isinstance(instance, dict):
        for name in required:
            if name not in instance:
                yield ValidationError(f"{name!r} is a required property")


def _additional_properties(v: Validator, allowed, instance, schema) -> Errors:
    if not isinstance(instance, dict):
        return
    extras = [name for name in instance if name not in schema.get("properties", {})]
    if isinstance(allowed, dict):
        for name in extras:
            yield from v.descend(instance[name], allowed, path=name)
    elif allowed is False and extras:
        extras.sort()
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed "
                              f"({', '.join(repr(name) for name in extras)} {verb} unexpected)")


def _items(v: Validator, items, instance, schema) -> Errors:
    if isinstance(instance, list):
        for index, item in enumerate(instance):
            yield from v.descend(item, items, path=index)


def _min_items(v: Validator, least, instance, schema) -> Errors:
    if isinstance(instance, list) and len(instance) < least:
        yield ValidationError(f"{instance!r} {'should be non-empty' if least == 1 else 'is too short'}")


def _max_items(v: Validator, most, instance, schema) -> Errors:
    if isinstance(instance, list) and len(instance) > most:
        yield ValidationError(f"{instance!r} {'is expected to be empty' if most == 0 else 'is too long'}")


def _const(v: Validator, const, instance, schema) -> Errors:
    if not equal(instance, const):
        yield ValidationError(f"{const!r} was expected")


def _enum(v: Validator, values, instance, schema) -> Errors:
    if not any(equal(value, instance) for value in values):
        yield ValidationError(f"{instance!r} is not one of {values!r}")


def _bound(compare: Callable[[Any, Any], bool], words: str):
    """minimum, maximum and their exclusive forms: numbers only, as draft 7 says."""
    def check(v: Validator, limit, instance, schema) -> Errors:
        if is_type(instance, "number") and compare(instance, limit):
            yield ValidationError(f"{instance!r} is {words} {limit!r}")
    return check


def _pattern(v: Validator, pattern, instance, schema) -> Errors:
    if isinstance(instance, str) and not re.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _all_of(v: Validator, subschemas, instance, schema) -> Errors:
    for subschema in subschemas:
        yield from v.descend(instance, subschema)


def _any_of(v: Validator, subschemas, instance, schema) -> Errors:
    collected = []
    for subschema in subschemas:
        errors = list(v.descend(instance, subschema))
        if not errors:
            return
        collected.extend(errors)
    yield ValidationError(f"{instance!r} is not valid under any of the given schemas", context=collected)


def _one_of(v: Validator, subschemas, instance, schema) -> Errors:
    collected = []
    for index, subschema in enumerate(subschemas):
        errors = list(v.descend(instance, subschema))
        if not errors:
            break
        collected.extend(errors)
    else:
        yield ValidationError(f"{instance!r} is not valid under any of the given schemas", context=collected)
        return
    also_valid = [other for other in subschemas[index + 1:] if v.is_valid(instance, other)]
    if also_valid:
        shown = ", ".join(repr(each) for each in [*also_valid, subschema])
        yield ValidationError(f"{instance!r} is valid under each of {shown}")


def _not(v: Validator, forbidden, instance, schema) -> Errors:
    if v.is_valid(instance, forbidden):
        yield ValidationError(f"{instance!r} should not be valid under {forbidden!r}")


def _if(v: Validator, condition, instance, schema) -> Errors:
    branch = "then" if v.is_valid(instance, condition) else "else"
    if branch in schema:
        yield from v.descend(instance, schema[branch])


def _ref(v: Validator, ref, instance, schema) -> Errors:
    yield from v.descend(instance, v.resolve(ref))


KEYWORDS: dict[str, Callable[..., Errors]] = {
    "type": _type, "properties": _properties, "required": _required,
    "additionalProperties": _additional_properties, "items": _items, "minItems": _min_items,
    "maxItems": _max_items, "const": _const, "enum": _enum,
    "minimum": _bound(lambda x, limit: x < limit, "less than the minimum of"),
    "maximum": _bound(lambda x, limit: x > limit, "greater than the maximum of"),
    "exclusiveMinimum": _bound(lambda x, limit: x <= limit, "less than or equal to the minimum of"),
    "exclusiveMaximum": _bound(lambda x, limit: x >= limit, "greater than or equal to the maximum of"),
    "pattern": _pattern, "allOf": _all_of, "anyOf": _any_of, "oneOf": _one_of, "not": _not,
    "if": _if, "$ref": _ref,
}
BRANCHES = frozenset({"then", "else"})  # read by "if"


class Validator:
    """Validates instances against `schema`; its "$ref"s are JSON pointers into `schema` itself
    ("#/definitions/stats"). Raises UnsupportedSchema for a schema it would check only in part."""

    def __init__(self, schema: dict):
        problems = unsupported(schema)
        if problems:
            raise UnsupportedSchema("; ".join(problems))
        self.schema = schema

    def iter_errors(self, instance: Any) -> Errors:
        return self.descend(instance, self.schema)

    def is_valid(self, instance: Any, schema: Any = None) -> bool:
        return next(self.descend(instance, self.schema if schema is None else schema), None) is None

    def descend(self, instance: Any, schema: Any, path: str | int | None = None) -> Errors:
        if schema is True:
            return
        if schema is False:
            error = ValidationError(f"False schema does not allow {instance!r}")
            error._set(None, None, instance, schema)
            yield _placed(error, path)
            return
        # Draft 7: beside "$ref", every other keyword is ignored.
        keywords = [("$ref", schema["$ref"])] if schema.get("$ref") is not None else schema.items()
        for keyword, value in keywords:
            check = KEYWORDS.get(keyword)
            for error in check(self, value, instance, schema) if check else ():
                error._set(keyword, value, instance, schema)
                yield _placed(error, path)

    def resolve(self, ref: str) -> Any:
        return _lookup(self.schema, ref)


def _placed(error: ValidationError, path: str | int | None) -> ValidationError:
    if path is not None:
        error.path.appendleft(path)
    return error


def _pointer(ref: str) -> list[str]:
    """The parts of a JSON pointer within this document ("#/definitions/a~1b" -> [definitions, a/b])."""
    if not ref.startswith("#"):
        raise UnsupportedSchema(f"$ref {ref!r} points outside the schema")
    rest = ref[1:]
    if rest and not rest.startswith("/"):
        raise UnsupportedSchema(f"$ref {ref!r} is not a JSON pointer")
    return [part.replace("~1", "/").replace("~0", "~") for part in rest.split("/")[1:]]


SUBSCHEMA = ("additionalProperties", "items", "not", "if", "then", "else")  # a schema as value
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
SUBSCHEMA_MAPS = ("properties", "definitions")


def unsupported(schema: Any, where: str = "#", root: Any = None) -> list[str]:
    """What in `schema` (a draft 7 schema) this validator does not implement, each with where it
    is: unknown keywords, "items" as an array, a $ref that does not resolve inside the schema, a
    $schema other than draft 7. Empty for a schema it checks completely."""
    root = schema if root is None else root
    if isinstance(schema, bool):
        return []
    if not isinstance(schema, dict):
        return [f"{where}: a schema must be an object or a boolean, not {schema!r}"]
    problems = [f"{where}: keyword {k!r}" for k in schema if k not in KEYWORDS and k not in ANNOTATIONS
                and k not in BRANCHES]
    if where == "#" and schema.get("$schema", DRAFT7) != DRAFT7:
        problems.append(f"#: $schema {schema['$schema']!r} (only draft 7 is implemented)")
    unknown_types = [t for t in _as_list(schema.get("type", [])) if t not in TYPES]
    if unknown_types:
        problems.append(f"{where}/type: {unknown_types} (draft 7's types are {sorted(TYPES)})")
    if isinstance(schema.get("items"), list):
        problems.append(f"{where}/items: an array of schemas (only one schema for every item is implemented)")
    if "$ref" in schema:
        problems += _unresolved(schema["$ref"], where, root)
    for keyword in SUBSCHEMA:
        if keyword in schema and not (keyword == "items" and isinstance(schema[keyword], list)):
            problems += unsupported(schema[keyword], f"{where}/{keyword}", root)
    for keyword in SUBSCHEMA_LISTS:
        for index, subschema in enumerate(schema.get(keyword, [])):
            problems += unsupported(subschema, f"{where}/{keyword}/{index}", root)
    for keyword in SUBSCHEMA_MAPS:
        for name, subschema in schema.get(keyword, {}).items():
            problems += unsupported(subschema, f"{where}/{keyword}/{name}", root)
    return problems


def _lookup(root: Any, ref: str) -> Any:
    target = root
    for part in _pointer(ref):
        target = target[int(part) if isinstance(target, list) else part]
    return target


def _unresolved(ref: Any, where: str, root: Any) -> list[str]:
    try:
        _lookup(root, ref)
    except (UnsupportedSchema, KeyError, IndexError, ValueError, TypeError) as error:
        return [f"{where}/$ref: {ref!r} does not resolve ({error})"]
    return []


def relevance(error: ValidationError) -> tuple:
    """jsonschema.exceptions.relevance: the key by which best_match ranks errors."""
    return (-len(error.path), error.path, error.validator not in WEAK_MATCHES, False, not error._matches_type())


def best_match(errors) -> ValidationError | None:
    """jsonschema.exceptions.best_match's choice: the most relevant error; then, while it holds
    the errors of oneOf/anyOf alternatives, the most relevant of those unless two tie."""
    best = max(errors, key=relevance, default=None)
    while best is not None and best.context:
        smallest = heapq.nsmallest(2, best.context, key=relevance)
        if len(smallest) == 2 and relevance(smallest[0]) == relevance(smallest[1]):
            return best
        best = smallest[0]
    return best
