"""The numbers of a page's prose: where they are, what they say at their written precision, and
which of them are a case's parameters (512 B, 16 SMs) rather than measured figures.

A number is written with an optional sign (+, U+2212 minus), thousands commas and decimals; a
range is two numbers joined by an en dash, a hyphen or a spaced ellipsis (369.4–371.6). Text in
code quotes, HTML comments, link targets, dates, versions, commit names and rank arrows (0→1)
holds no figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MINUS = "\u2212"
NUMBER = r"[+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
TOKEN = re.compile(rf"(?<![\w.,/\-+\u2212'])(?P<a>{NUMBER})"
                   rf"(?:(?P<sep>\s?[\u2013-]\s?|\s\u2026\s)(?P<b>{NUMBER}))?(?![\w])")
# Spans blanked before numbers are looked for (kept at their length, so offsets hold).
NO_FIGURES = re.compile(
    r"`(?:[^`\n]|\n(?!\s*\n))*`"                   # code quotes (a line break, never a blank line)
    r"|<!--.*?-->"                                # comments (markers included)
    r"|\]\([^)\s]*\)"                             # link targets
    r"|<https?://[^>]*>|https?://\S+"             # addresses
    r"|\b\d{4}-\d{2}-\d{2}\b"                     # dates
    r"|\bv?\d+\.\d+\.\d+(?:\.\d+)?\b"             # versions (580.159.04, 2.28.3)
    r"|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"  # commit names
    r"|\d+\s*[\u2192]\s*\d+"                      # ranks: 0→1
    r"|\{[^{}\n]*\}"                               # sets of a config's values: {4 … 132}
    r"|\[\d+\]",                                  # indices: [0][1]
    re.S)
# What may stand between a figure and its marker: its unit sign.
SUFFIX = re.compile(r"[%\u00d7]?")
# A number followed by one of these is a case's parameter, not a figure ("-" joins: 4-byte, 16-SM).
PARAMETER_UNITS = (
    "B", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "bytes?", "bits?", "x", "\u00d7",
    "SMs?", "blocks?", "threads?", "warps?", "stages?", "ranks?", "tokens?", "tiles?", "chunks?",
    "samples?", "links?", "experts?", "GPUs?", "launches", "loads", "cases?", "rounds?", "runs?",
    "tries", "copy", "columns?", "channels?", "operations?", "copies", "streams?", "cores?", "nodes?",
    "pairs?", "windows?", "shapes?", "variants?", "calls?", "elements?", "values", "puts", "lines",
    "iterations?", "processes", "jobs?", "kernels?", "digits?", "entries", "placements", "slots?",
    "steps?", "deep", "address(?:es)?", "way", "L2 sizes?", "per (?:SM|warp|rank|block|lane|launch)")
# A list or range of them counts too: "2 and 4 ranks", "1, 2, 4 or 7 streams", "4 / 8 / ≥ 16 SMs".
PARAMETER_LIST = r"(?:(?:,\s|\s+(?:and|or|to)\s+|\s/\s(?:\u2265\s)?)\d+(?:\.\d+)?)*"
AFTER_PARAMETER = re.compile(PARAMETER_LIST + r"\s*-?(?:" + "|".join(PARAMETER_UNITS) + r")(?![\w/])")
# ... or preceded by one of these (an axis or a name with its number).
BEFORE_PARAMETER = re.compile(
    r"(?:\bK\s?=?\s?|\bexits?\s|\btop-|\brank\s|\branks\s|\bGPU\s|\bSM\s|\bwindow\s|\bGen|\bdriver\s"
    r"|\bCUDA\s|\bNCCL\s|\bMPI\s|\bversion\s|\bschema_version`?\s|\bdifferences?\s|\bcalls?\s|#|\bstep\s"
    r"|\bsample\s|\bslot\s|\bdevice\s|\bNVLink\s|\bx\s|\u00d7\s?|\bsm_|\b[mnk]\s?=\s?|\bexponent\s"
    r"|\bnode\s|\bunroll\s)$")


@dataclass(frozen=True)
class Token:
    """A number or range in a page: its text, its span and where its unit sign ends."""

    start: int
    end: int  # after the number or range
    suffix_end: int  # after its %/× sign, where a marker may start
    low: str
    high: str | None  # a range's upper end

    @property
    def text(self) -> str:
        return self.low if self.high is None else f"{self.low}\u2013{self.high}"


def blank(text: str) -> str:
    """`text` with everything that holds no figures replaced by spaces (offsets kept)."""
    return NO_FIGURES.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def tokens_in(text: str, start: int = 0, end: int | None = None) -> list[Token]:
    """The numbers and ranges of text[start:end], on the blanked text, at page offsets."""
    blanked = blank(text)
    end = len(text) if end is None else end
    found = []
    for m in TOKEN.finditer(blanked, start, end):
        suffix = SUFFIX.match(blanked, m.end())
        found.append(Token(m.start(), m.end(), suffix.end(), m.group("a"), m.group("b")))
    return found


def is_parameter(text: str, token: Token) -> bool:
    """The number names a case's parameter by its unit (16 SMs, 512 B) or its axis (K = 16)."""
    if token.suffix_end != token.end:  # 12%, 2×: a figure
        return False
    if AFTER_PARAMETER.match(text, token.end):
        return True
    return bool(BEFORE_PARAMETER.search(text[max(0, token.start - 24):token.start]))


def value_of(written: str) -> float:
    return float(written.replace(",", "").replace(MINUS, "-"))


def decimals_of(written: str) -> int:
    return len(written.split(".")[1]) if "." in written else 0


def rounds_to(value: float, written: str) -> bool:
    """`value` written at the precision of `written` gives `written` (half a last digit either way)."""
    step = 10.0 ** -decimals_of(written)
    return abs(value - value_of(written)) <= step / 2 * (1 + 1e-9) + 1e-12


def spelled_like(value: float, written: str) -> str:
    """`value` in the style of `written`: its decimals, thousands commas and sign characters."""
    text = f"{abs(value):,.{decimals_of(written)}f}" if "," in written else f"{abs(value):.{decimals_of(written)}f}"
    negative = value < 0 and float(text.replace(",", "")) != 0
    signed = written[:1] in ("+", MINUS, "-")
    if negative:
        return ("-" if written.startswith("-") else MINUS) + text
    return ("+" if signed else "") + text
