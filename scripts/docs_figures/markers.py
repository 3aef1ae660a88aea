"""The markers a page carries and what their keys mean.

    <!--fig KEY=VALUE ...-->   right after a figure: where it comes from
    <!--figs KEY=VALUE ...-->  defaults for the figures of its block, table column or caption
    <!--calc EXPRESSION-->     right after a figure derived from others (their id=), + - * / ( ),
                               min(), max(), abs() and numbers: 100*(tma/ldst-1); a range takes
                               two, comma-separated
    <!--fig id=NAME ...-->     where no number comes before it: a value for calc only
    <!--param-->               right after a number that is a case's parameter, not a figure

Keys of fig and figs (values with spaces in double quotes):
    file=PATH    the file, from the repository's root (one the block or its caption cites);
                 FILE+FILE for the values of several
    dir=PATH     the folder file= names are in (a figs default keeps the markers short)
    stat=NAME    the statistic: median (default), min, max, mean, p95, ...
    field=NAME   the figure: bandwidth_gbps or latency_us (default: the rows' metric), tflops,
                 time_us, or any column of the report's row frame (pct_of_peak,
                 directions_0_bandwidth_gbps_median, workload_slowdown_pct, ...)
    scale=X      multiply the value (1000: µs written as ns)
    agg=HOW      mean, min, max or sum of the selected rows' values, as one figure
    per=COLUMNS  with agg: one figure per group of rows alike in these columns (bytes+method)
    id=NAME      the name a calc uses for this figure's value (the mean of its values)
    json=PATH    a number of the document instead of a row (meta.topology.peak_gbps_per_direction;
                 rounds_agreement.*.max_abs_difference_pct: * is every item of a list)
    match=REGEX  a text file: the number is the first group of the pattern that takes part, in
                 every match (A(x)|B(y) reads both); after=REGEX / before=REGEX: only
                 between the first line matching after= and the next matching before=
    COLUMN=V[+V] any other key selects rows: the column has one of the values (sizes such as
                 bytes=1G or chunk_bytes=4K in binary units; null for none)

A figure written alone must be what every selected row rounds to; a range low–high the
smallest and largest of them.
"""

from __future__ import annotations

import ast
import operator
import re
import shlex
from dataclasses import dataclass

MARKER = re.compile(r"<!--\s*(fig|figs|calc|param)\b(.*?)-->", re.S)
RESERVED = ("file", "dir", "stat", "field", "scale", "agg", "per", "id", "json", "match", "after", "before")
AGGREGATES = ("mean", "min", "max", "sum")


class MarkerError(Exception):
    """A marker that cannot be read (bad syntax, a key without a value)."""


@dataclass(frozen=True)
class Marker:
    kind: str
    start: int
    end: int
    keys: dict[str, str]
    expression: str = ""  # calc


CODE = re.compile(r"^\s*```.*?^\s*```|`(?:[^`\n]|\n(?!\s*\n))*`", re.S | re.M)  # fenced, then quoted


def markers_in(text: str) -> list[Marker]:
    """The page's markers, leaving out those shown as code (a page that explains them)."""
    code = [m.span() for m in CODE.finditer(text)]
    found = []
    for m in MARKER.finditer(text):
        if any(start <= m.start() < end for start, end in code):
            continue
        kind, body = m.group(1), m.group(2).strip()
        if kind == "calc":
            found.append(Marker(kind, m.start(), m.end(), {}, body))
        else:
            found.append(Marker(kind, m.start(), m.end(), parse_keys(body)))
    return found


def parse_keys(body: str) -> dict[str, str]:
    try:
        words = shlex.split(body, posix=True)
    except ValueError as error:
        raise MarkerError(f"cannot read {body!r}: {error}") from None
    keys = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key or not value:
            raise MarkerError(f"{word!r} is not KEY=VALUE")
        keys[key] = value
    return keys


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.USub: operator.neg, ast.UAdd: operator.pos}
_FUNCTIONS = {"min": min, "max": max, "abs": abs}


def evaluate(expression: str, names: dict[str, float]) -> list[float]:
    """Arithmetic over named figures, one value per comma-separated expression (a range's two
    ends); MarkerError names what it cannot do."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise MarkerError(f"calc {expression!r} is not an expression") from None
    parts = tree.body.elts if isinstance(tree.body, ast.Tuple) else [tree.body]
    return [_value(part, names, expression) for part in parts]


def _value(node: ast.AST, names: dict[str, float], expression: str) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise MarkerError(f"calc {expression!r}: no figure with id={node.id} on this page")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value(node.left, names, expression), _value(node.right, names, expression))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value(node.operand, names, expression))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return _FUNCTIONS[node.func.id](*[_value(a, names, expression) for a in node.args])
    raise MarkerError(f"calc {expression!r}: only numbers, ids, + - * / ( ) and min, max, abs")
