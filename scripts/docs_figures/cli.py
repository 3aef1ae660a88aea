"""docs-figures: check the figures of README.md and docs/*.md against the results files they cite,
or write them from those files (--write), or list candidate rows for an unmarked number (--suggest).

Exit status: 0 every figure matches; 1 a figure does not match, has no marker, or reads a file
that cannot give it; 2 unusable arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from docs_figures.check import check_page
from docs_figures.sources import Repository
from docs_figures.suggest import suggestions

REPO = Path(__file__).resolve().parents[2]


def pages_of(root: Path) -> list[Path]:
    """The pages whose figures are checked: README.md and docs/*.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docs-figures", description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", type=Path, help="pages to check (default: README.md and docs/*.md)")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this script's)")
    parser.add_argument("--write", action="store_true", help="rewrite every marked figure from its file")
    parser.add_argument("--suggest", action="store_true", help="for each unmarked number, rows that round to it")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if not (root / "results").is_dir():
        print(f"docs-figures: --root {root}: no results/ folder there", file=sys.stderr)
        return 2
    pages = [p.resolve() for p in args.pages] or pages_of(root)
    missing = [str(p) for p in pages if not p.is_file()]
    if missing:
        print(f"docs-figures: no such page: {', '.join(missing)}", file=sys.stderr)
        return 2
    repo = Repository(root)
    problems, figures = [], 0
    for path in pages:
        name = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        text = path.read_text(encoding="utf-8")
        report = check_page(repo, name, text)
        problems += report.problems
        figures += report.figures
        if args.write and report.written != text:
            path.write_text(report.written, encoding="utf-8")
            print(f"wrote {name}")
        if args.suggest:
            for line in suggestions(repo, name, text):
                print(line)
    for problem in problems:
        print(problem)
    print(f"docs-figures: {figures} figures in {len(pages)} pages, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0
