"""The methods the report knows, read once from schema/methods.json.

That file is what `p2pbench --list-methods --json` prints from the C++ method registry
(src/vocab/methods.cpp; tests/cli keeps the two equal), so a method added there reaches the
report's order, colours and titles without a Python list to edit. It is found beside the results
schema in use (schema.py: the repository's schema/, or the folder P2PBENCH_SCHEMA names when the
package is copied elsewhere), else in the repository's schema/.
"""

from __future__ import annotations

import json
from pathlib import Path

from p2pbench_report.errors import InputError
from p2pbench_report.schema import REPOSITORY_SCHEMA, SCHEMA_ENV_VARIABLE, schema_path

METHODS_FILE_NAME = "methods.json"


def methods_path() -> Path:
    beside = schema_path().parent / METHODS_FILE_NAME
    return beside if beside.is_file() else REPOSITORY_SCHEMA.parent / METHODS_FILE_NAME


def _read_list(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(path, f"cannot read the method list ({error.strerror}); set {SCHEMA_ENV_VARIABLE} "
                               f"to the folder of the results schema and {METHODS_FILE_NAME}") from None


_LIST = _read_list(methods_path())
METHODS: list[dict] = _LIST["methods"]  # in the file's (the registry's) order
# The fields methods declare for their rows (name, type, unit, description, ..., the methods that
# write each): src/results/method_row_fields.hpp. A list written before methods declared fields
# has none.
ROW_FIELDS: list[dict] = _LIST.get("row_fields", [])
# The declared variables of a case (host_memory, host_numa): every row has them, null where its
# method declares none; the report matches cases on them.
IDENTITY_FIELDS = tuple(f["name"] for f in ROW_FIELDS if f.get("identity"))
# The value a row without an identity field (written before it existed), or with null there, ran on.
IDENTITY_DEFAULTS = {f["name"]: f["default"] for f in ROW_FIELDS if f.get("identity") and "default" in f}


def identity_defaults_of(method: str) -> dict:
    """The identity fields `method`'s rows carry that have a default (host-link: host_memory pinned,
    host_numa local; interference: transfer_priority normal), with it."""
    return {f["name"]: f["default"] for f in ROW_FIELDS
            if f.get("identity") and "default" in f and method in f.get("methods", ())}


# How a case's description names an identity field's value ("{} host memory").
IDENTITY_LABELS = {f["name"]: f["label"] for f in ROW_FIELDS if f.get("identity") and "label" in f}
# Declared statistics objects (tflops): flattened to <field>_<stat> columns where rows have them.
STATS_ROW_FIELDS = tuple(f["name"] for f in ROW_FIELDS if f["type"] == "stats")
# The kernel-shape axes of a row, in the registry's order (src/vocab/shape_axes.cpp): name, short
# label, counts_bytes and value_before_axis (what a row without the field ran at, or null).
if "shape_axes" not in _LIST:
    raise InputError(methods_path(), "the method list has no shape_axes: regenerate it with "
                                     "scripts/update-method-lists.py")
SHAPE_AXES: list[dict] = _LIST["shape_axes"]
_IN_REPORT_ORDER = sorted(METHODS, key=lambda m: m["report_order"])
METHOD_ORDER = tuple(m["name"] for m in _IN_REPORT_ORDER)
# Report order also orders whatever iterates the colours (the uni-vs-bidir bar groups).
METHOD_COLORS = {m["name"]: m["color"] for m in _IN_REPORT_ORDER if m["color"] is not None}
METHOD_TITLES = {m["name"]: m["title"] for m in _IN_REPORT_ORDER}
LATENCY_METHODS = tuple(m["name"] for m in _IN_REPORT_ORDER if m["figure"] == "latency")
# The methods that may run beside another case: a latency case's load, an interference case's
# transfer (its row's `engine`).
LOAD_METHODS = tuple(m["name"] for m in _IN_REPORT_ORDER if m["runs_as_load"])
# The methods an interference case may move its bytes with: the loads, and the flows whose two
# ends both run (put with signal), which only the interference loop runs on both ranks.
INTERFERENCE_ENGINES = tuple(m["name"] for m in _IN_REPORT_ORDER
                             if m["runs_as_load"] or m.get("runs_beside_workload", False))


def names_of_kinds(*kinds: str) -> tuple[str, ...]:
    """The methods of the given kinds ("copy", "two_sided_baseline", ...), in report order."""
    return tuple(m["name"] for m in _IN_REPORT_ORDER if m["kind"] in kinds)
