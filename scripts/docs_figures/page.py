"""A markdown page cut into the blocks its figures are read in: paragraphs, list items, table
rows and headings, each with its span in the page. A table's rows and a list's items share the
paragraph just before them (their caption: "Measured on ... (`results/...`):"); a table's body
rows know their header row, whose cells name the columns. Fenced code holds no blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FENCE = re.compile(r"^\s*(```|~~~)")
TABLE_ROW = re.compile(r"^\s*\|")
TABLE_RULE = re.compile(r"^\s*\|[\s:|-]+\|\s*$")
HEADING = re.compile(r"^#{1,6}\s")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


@dataclass(eq=False)
class Block:
    kind: str  # paragraph, item, header (a table's first row), row, heading
    start: int
    end: int
    line: int  # where it starts, from 1
    caption: "Block | None" = None
    header: "Block | None" = None  # a body row's header row
    cells: list[tuple[int, int]] = field(default_factory=list)  # a table row's cells, page offsets

    def column_at(self, offset: int) -> int | None:
        """The index of the cell holding `offset` (table rows), else None."""
        for index, (start, end) in enumerate(self.cells):
            if start <= offset < end:
                return index
        return None


def _cells(line: str, offset: int) -> list[tuple[int, int]]:
    """The spans between a row's unescaped bars, at page offsets."""
    bars = [i for i, c in enumerate(line) if c == "|" and (i == 0 or line[i - 1] != "\\")]
    return [(offset + a + 1, offset + b) for a, b in zip(bars, bars[1:])]


class _Cutter:
    """Walks the page line by line; `blocks` gets every block in order."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.open: Block | None = None  # a paragraph or item still taking lines
        self.before: Block | None = None  # the block just closed, with only blank lines since
        self.table: tuple[Block | None, Block | None] | None = None  # (caption, header) of the table now read
        self.list_caption: Block | None = None
        self.in_list = False

    def close(self) -> None:
        if self.open is not None:
            self.before = self.open
        self.open = None

    def add(self, kind: str, start: int, end: int, line: int, **links) -> Block:
        block = Block(kind, start, end, line, **links)
        self.blocks.append(block)
        return block

    def table_line(self, text: str, start: int, number: int) -> None:
        if self.table is None:
            self.close()
            caption = self.before if self.before is not None and self.before.kind == "paragraph" else None
            header = self.add("header", start, start + len(text), number, caption=caption, cells=_cells(text, start))
            self.table = (caption, header)
        elif not TABLE_RULE.match(text):
            caption, header = self.table
            self.add("row", start, start + len(text), number, caption=caption, header=header,
                     cells=_cells(text, start))
        self.before = None
        self.in_list = False

    def text_line(self, text: str, start: int, number: int) -> None:
        self.table = None
        if HEADING.match(text):
            self.close()
            self.add("heading", start, start + len(text), number)
            self.before, self.in_list = None, False
        elif LIST_ITEM.match(text):
            self.close()
            if not self.in_list:
                lead = self.before
                self.list_caption = lead if lead is not None and lead.kind == "paragraph" else None
            self.open = self.add("item", start, start + len(text), number, caption=self.list_caption)
            self.in_list = True
        elif self.open is not None:
            self.open.end = start + len(text)
        else:
            self.in_list = False
            self.open = self.add("paragraph", start, start + len(text), number)

    def blank_line(self) -> None:
        self.table = None
        self.close()


def blocks_of(text: str) -> list[Block]:
    cutter = _Cutter()
    in_fence = False
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        body = line.rstrip("\n")
        if FENCE.match(body):
            in_fence = not in_fence
            cutter.blank_line()
            cutter.before = None
        elif in_fence:
            pass
        elif not body.strip():
            cutter.blank_line()
        elif TABLE_ROW.match(body):
            cutter.table_line(body, offset, number)
        else:
            cutter.text_line(body, offset, number)
        offset += len(line)
    return cutter.blocks
