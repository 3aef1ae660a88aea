"""The report package's shape: no import circle between its modules (function-level imports
included, which once hid one), and the matplotlib backend chosen in one module only."""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "p2pbench_report"


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        found |= {name.removeprefix("p2pbench_report.") for name in names if name.startswith("p2pbench_report.")}
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _imports(path) & modules.keys() for name, path in modules.items()}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_no_import_cycle():
    cycle = _find_cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_cycle_finder_finds_one():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_backend_chosen_once():
    users = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if "matplotlib.use(" in p.read_text()]
    assert users == ["plots/backend.py"]
