"""A table as data, rendered as Markdown (terminals, CI logs) or HTML (reports)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    numeric: set[int] = field(default_factory=set)  # column indices aligned right

    def add(self, *cells: object) -> None:
        self.rows.append(["" if c is None else str(c) for c in cells])

    def to_markdown(self) -> str:
        widths = [max([len(h)] + [len(r[i]) for r in self.rows]) for i, h in enumerate(self.headers)]

        def line(cells: list[str]) -> str:
            padded = [c.rjust(w) if i in self.numeric else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
            return "| " + " | ".join(padded) + " |"

        rule = "| " + " | ".join(("-" * (w - 1) + ":") if i in self.numeric else "-" * w
                                 for i, w in enumerate(widths)) + " |"
        escaped = [[c.replace("|", "\\|") for c in row] for row in self.rows]
        return "\n".join([line(self.headers), rule] + [line(r) for r in escaped])

    def to_html(self, css_class: str = "") -> str:
        def cell(tag: str, text: str, index: int) -> str:
            align = ' class="num"' if index in self.numeric else ""
            return f"<{tag}{align}>{html.escape(text)}</{tag}>"

        head = "".join(cell("th", h, i) for i, h in enumerate(self.headers))
        body = "\n".join("<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>" for r in self.rows)
        attribute = f' class="{css_class}"' if css_class else ""
        return f"<table{attribute}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"
