"""One page's figures against their files: problems, and the page as its files would write it."""

from __future__ import annotations

from dataclasses import dataclass, field

from docs_figures.markers import Marker, MarkerError, evaluate, markers_in
from docs_figures.page import Block, blocks_of
from docs_figures.selection import values_of
from docs_figures.sources import Repository, SourceError
from docs_figures.tokens import Token, is_parameter, rounds_to, spelled_like, tokens_in


@dataclass
class PageReport:
    problems: list[str] = field(default_factory=list)
    written: str = ""  # the page with every figure that does not match written from its file
    figures: int = 0  # figures checked (fig and calc markers)
    unmarked: list[tuple[Token, list[str]]] = field(default_factory=list)  # with the files their block cites


@dataclass
class _Figure:
    block: Block
    token: Token
    marker: Marker
    keys: dict[str, str]
    values: list[float] | None = None  # None: no value (a problem was reported)


class _Page:
    def __init__(self, repo: Repository, name: str, text: str):
        self.repo, self.name, self.text = repo, name, text
        self.blocks = blocks_of(text)
        self.report = PageReport()
        self.replacements: dict[Token, str] = {}

    def where(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def problem(self, offset: int, what: str, message: str) -> None:
        self.report.problems.append(f"{self.name}:{self.where(offset)}: {what}: {message}")

    def block_at(self, offset: int) -> Block | None:
        return next((b for b in self.blocks if b.start <= offset < b.end), None)

    def cited(self, block: Block) -> list[str]:
        related = [b for b in (block.caption, block.header, block) if b is not None]
        return sorted({p for b in related for p in self.repo.citations(self.text[b.start:b.end])})

    def defaults(self, block: Block, figs: list[Marker], offset: int) -> dict[str, str]:
        """The figs keys that apply at `offset`: caption's, column's (table header), block's."""
        keys: dict[str, str] = {}
        if block.caption is not None:
            keys.update(self.scope_keys([m for m in figs if block.caption.start <= m.start < block.caption.end]))
        if block.header is not None:
            column = block.column_at(offset)
            keys.update(self.scope_keys([m for m in figs if block.header.start <= m.start < block.header.end
                                         and block.header.column_at(m.start) == column]))
        keys.update(self.scope_keys([m for m in figs if block.start <= m.start < block.end]))
        return keys

    def scope_keys(self, figs: list[Marker]) -> dict[str, str]:
        """The keys of one scope's figs markers; two that disagree on a key are a problem (a figs
        applies to its whole block, so the second would silently win)."""
        keys: dict[str, str] = {}
        for m in figs:
            for key, value in m.keys.items():
                if keys.get(key, value) != value:
                    self.problem(m.start, "figs", f"{key}={value} against {key}={keys[key]} of another figs in the "
                                 "same block: one figs per block (or table column) and key")
                keys[key] = value
        return keys


def check_page(repo: Repository, name: str, text: str) -> PageReport:
    page = _Page(repo, name, text)
    try:
        markers = markers_in(text)
    except MarkerError as error:
        page.report.problems.append(f"{name}: {error}")
        return page.report
    figs = [m for m in markers if m.kind == "figs"]
    tokens = {t.suffix_end: t for t in tokens_in(text)}
    marked: set[Token] = set()
    figures, calcs = [], []
    for marker in markers:
        if marker.kind == "figs":
            continue
        token = tokens.get(marker.start)
        block = page.block_at(marker.start)
        if token is None and block is not None and marker.kind == "fig" and "id" in marker.keys:
            token = Token(marker.start, marker.start, marker.start, "", None)  # a value for calc only
        elif token is None or block is None:
            page.problem(marker.start, text[marker.start:marker.end], "not right after a number in a block")
            continue
        marked.add(token)
        if marker.kind == "fig":
            figures.append(_Figure(block, token, marker, _figure_keys(page.defaults(block, figs, marker.start), marker)))
        elif marker.kind == "calc":
            calcs.append(_Figure(block, token, marker, {}))
    names = _read_figures(page, figures)
    for figure in calcs:
        _check_calc(page, figure, names)
    _check_unmarked(page, tokens.values(), marked)
    _check_untraceable_citations(page)
    page.report.problems = list(dict.fromkeys(page.report.problems))  # a scope's problem, once
    page.report.figures = len(figures) + len(calcs)
    page.report.written = _rewritten(text, page.replacements)
    return page.report


def _figure_keys(defaults: dict[str, str], marker: Marker) -> dict[str, str]:
    """A fig's keys over its defaults, its file names under dir= made paths from the root."""
    keys = {**defaults, **marker.keys}
    if "dir" in keys and "file" in keys:
        folder = keys["dir"].rstrip("/") + "/"
        keys["file"] = "+".join(f if f.startswith("results/") else folder + f for f in keys["file"].split("+"))
    return keys


def _read_figures(page: _Page, figures: list[_Figure]) -> dict[str, float]:
    """Reads and compares every fig; returns the values of those with an id."""
    names: dict[str, float] = {}
    for figure in figures:
        what = figure.token.text
        cited = page.cited(figure.block)
        path = figure.keys.get("file", "")
        uncited = [p for p in path.split("+") if p and not any(p == c or (c.endswith("/") and p.startswith(c))
                                                               for c in cited)]
        if uncited:
            page.problem(figure.token.start, what, f"{', '.join(uncited)} not cited by its block "
                         f"(cites: {', '.join(cited) or 'nothing'})")
            continue
        try:
            figure.values = values_of(page.repo, figure.keys)
        except SourceError as error:
            page.problem(figure.token.start, what, f"{path}: {error}")
            continue
        _compare(page, figure, f"{path} {_selection(figure.keys)}")
        if "id" in figure.keys:
            if figure.keys["id"] in names:
                page.problem(figure.token.start, what, f"id={figure.keys['id']} is used twice on the page")
            else:
                names[figure.keys["id"]] = sum(figure.values) / len(figure.values)
    return names


def _check_calc(page: _Page, figure: _Figure, names: dict[str, float]) -> None:
    try:
        figure.values = evaluate(figure.marker.expression, names)
    except (MarkerError, ZeroDivisionError) as error:
        page.problem(figure.token.start, figure.token.text, str(error))
        return
    _compare(page, figure, f"calc {figure.marker.expression}")


def _compare(page: _Page, figure: _Figure, source: str) -> None:
    """Whether the written figure is what the values round to; records the figure as written from them."""
    token, values = figure.token, figure.values
    if not token.low:  # a value for calc only: nothing written to compare
        return
    low, high = min(values), max(values)
    if token.high is None:
        good = all(rounds_to(v, token.low) for v in values)
    else:
        good = rounds_to(low, token.low) and rounds_to(high, token.high)
    if good:
        return
    shown = f"{low:.4g}" if low == high else f"{low:.4g}..{high:.4g} ({len(values)} values)"
    page.problem(token.start, token.text, f"{source} gives {shown}")
    if token.high is not None:
        between = page.text[token.start + len(token.low):token.end - len(token.high)]
        page.replacements[token] = spelled_like(low, token.low) + between + spelled_like(high, token.high)
    elif len({spelled_like(v, token.low) for v in values}) == 1:  # else: a range, or a narrower selection
        page.replacements[token] = spelled_like(values[0], token.low)


def _selection(keys: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in keys.items() if k != "file")


def _check_unmarked(page: _Page, tokens, marked: set[Token]) -> None:
    for token in tokens:
        if token in marked or is_parameter(page.text, token):
            continue
        block = page.block_at(token.start)
        if block is None or block.kind == "heading" or not page.cited(block):
            continue
        page.report.unmarked.append((token, page.cited(block)))
        page.problem(token.start, token.text, "a number in a block citing results, without a marker "
                     "(fig, calc, or param if it is a case's parameter)")


def _check_untraceable_citations(page: _Page) -> None:
    """A page cites no results file whose commit cannot be traced (marked meta.provenance
    "unknown"), figures or not: cite a traceable file that carries the claim, or drop it."""
    for block in page.blocks:
        for path, why in page.repo.untraceable_citations(page.text[block.start:block.end]):
            page.problem(block.start, path, f"cited, but cannot be traced to the code that made it ({why}): "
                         "cite a traceable file that carries the claim, or drop it")


def _rewritten(text: str, replacements: dict[Token, str]) -> str:
    for token in sorted(replacements, key=lambda t: t.start, reverse=True):
        text = text[:token.start] + replacements[token] + text[token.end:]
    return text
