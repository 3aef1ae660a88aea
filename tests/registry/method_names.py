"""Where the source names methods: every method name the registry lists (schema/methods.json) as a
string of its own in C++ or Python code, and every built-in Method enumerator (Method::kCe), in
src/, kernels/, tools/ and scripts/. Comments and docstrings say what they like; code that picks
methods by name is a list the registry should hold instead.

`occurrences()` yields (path, line, name) for each; test_no_method_lists.py judges them.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re
from typing import Iterator

REPO = pathlib.Path(__file__).resolve().parents[2]
SCANNED = ("src", "kernels", "tools", "scripts")
CPP_SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".in"}
SHELL_SUFFIXES = {".sh"}
ENUMERATOR = re.compile(r"\bMethod::k([A-Za-z0-9]+)\b")


def method_names() -> set[str]:
    return {m["name"] for m in json.loads((REPO / "schema" / "methods.json").read_text())["methods"]}


def enumerator_names() -> dict[str, str]:
    """{'kCe': 'ce', ...}: the built-in Method enum, in vocab/methods.hpp, by the enumerator's name."""
    header = (REPO / "src" / "vocab" / "methods.hpp").read_text()
    enum = re.search(r"enum class Method \{([^}]*)\}", header).group(1)
    names = {}
    for token in re.findall(r"\bk([A-Za-z0-9]+)\b", enum):
        names["k" + token] = re.sub(r"(?<!^)(?=[A-Z])", "_", token).lower()
    return names


def cpp_code(text: str) -> Iterator[tuple[int, str, bool]]:
    """(offset, token, is_string) of a C++ file without its comments: each string literal whole,
    and the code between them."""
    i, code_start = 0, 0
    while i < len(text):
        c = text[i]
        if text.startswith("//", i) or text.startswith("/*", i):
            yield code_start, text[code_start:i], False
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2) + 2
            i = code_start = len(text) if end < 2 or end < i else end
            continue
        if c == '"' or (c == "'" and not text[i - 1:i].isalnum()):
            yield code_start, text[code_start:i], False
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            yield i, text[i + 1:j], c == '"'
            i = code_start = j + 1
            continue
        i += 1
    yield code_start, text[code_start:], False


def _cpp_occurrences(text: str, names: set[str], enumerators: dict[str, str]) -> Iterator[tuple[int, str]]:
    def line_of(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    for offset, token, is_string in cpp_code(text):
        if is_string:
            if token in names:
                yield line_of(offset), token
            continue
        for match in ENUMERATOR.finditer(token):
            name = enumerators.get("k" + match.group(1))
            if name:
                yield line_of(offset + match.start()), name


def _python_occurrences(text: str, names: set[str]) -> Iterator[tuple[int, str]]:
    tree = ast.parse(text)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    # names_of_kinds("atomic", "interference"): kinds, some of which share a method's name.
    kinds = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "id", getattr(node.func, "attr", None)) == "names_of_kinds" for arg in node.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | kinds \
                and node.value in names:
            yield node.lineno, node.value


def _shell_occurrences(text: str, names: set[str]) -> Iterator[tuple[int, str]]:
    quoted = re.compile(r"""["']([A-Za-z0-9_]+)["']""")
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        for match in quoted.finditer(line):
            if match.group(1) in names:
                yield number, match.group(1)


def _is_python(path: pathlib.Path) -> bool:
    if path.suffix == ".py":
        return True
    if path.suffix:
        return False
    try:
        return path.read_text(errors="replace").startswith("#!") and "python" in path.read_text(errors="replace").splitlines()[0]
    except OSError:
        return False


def occurrences() -> Iterator[tuple[str, int, str]]:
    """(path relative to the repository, line, method name) of every method named in code."""
    names, enumerators = method_names(), enumerator_names()
    for top in SCANNED:
        for path in sorted((REPO / top).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            relative = str(path.relative_to(REPO))
            if path.suffix in CPP_SUFFIXES:
                found = _cpp_occurrences(path.read_text(errors="replace"), names, enumerators)
            elif _is_python(path):
                found = _python_occurrences(path.read_text(), names)
            elif path.suffix in SHELL_SUFFIXES:
                found = _shell_occurrences(path.read_text(errors="replace"), names)
            else:
                continue
            for line, name in found:
                yield relative, line, name
