"""The errors the CLI turns into exit status 2: input it cannot use, a missing Python package.

The message always names the file and, where one is to blame, the field (a JSON path such as
`$.results[3].bandwidth_gbps`), so that a user can go straight to the culprit.
"""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Unusable input: a file that is missing, not JSON, not schema-valid, or not importable."""

    def __init__(self, source: str | Path, message: str, field: str | None = None):
        self.source = str(source)
        self.field = field
        self.message = message
        where = f"{self.source}: {field}" if field else self.source
        super().__init__(f"{where}: {message}")


class DependencyError(Exception):
    """A Python package this subcommand needs is not installed (e.g. on a node without PyPI)."""

    def __init__(self, package: str, needed_for: str):
        super().__init__(f"the Python package {package} is needed {needed_for}: "
                         f"pip install -r scripts/requirements.txt")


def require(module: str, needed_for: str):
    """Imports `module`, or raises DependencyError saying what it is for."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise DependencyError(module.split(".")[0], needed_for) from None
