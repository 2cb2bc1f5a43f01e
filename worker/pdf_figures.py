"""What a page's plots draw as text, and glyphs no font maps to Unicode, found on PDFium's text page.

Why: a plot exported from R, matplotlib or a spreadsheet draws its points as glyphs (R's ``pdf()``
device sets every circle as a ZapfDingbats "●"), its axes' tick labels as numbers and its legend
as a glyph and a word; a deck that includes it hands all of it to an extractor as text. Indexed, it
is quoted to students ("lecture03 ● ● ● ● ● ●", "0.00 0.25 0.50 0.75 1.00 Percent…") and a plot's
axis is read as a second grading scheme. None of it is found by listing symbols or decks: each
rule below is a shape any plot has, read from where PDFium placed the characters:

* **marks off any line of words**: a lone symbol glyph (Unicode "other symbol", a bullet, or a
  glyph PDFium could not map) on a line that holds no word, or beside another such glyph;
* **legends**: a line that opens with a glyph the same page uses as a mark and says a few words;
* **axis ticks**: three or more numbers in a row, one step apart in value (or one ratio, a log
  axis), laid out evenly along one line: across a line, more than a letter's height apart (an x
  axis), or one per line, aligned down the page (a y axis).

What the slide says in words beside the plot stays: a line with words keeps them, and a glyph
starting a line of words is a bullet.

Symbol fonts: a glyph PDFium could not map to Unicode (``FPDFText_HasUnicodeMapError``: a font with
no ToUnicode map and glyph names it does not know, as TeX's msam maths font drawn as a bitmap, or
an icon font) is reported as the character of its slot, so Beamer's default triangle bullet reads
as a capital "I" ("I Download LaTeX"). Such a glyph, standing alone, is a bullet "•" when it opens
a line of words and nothing elsewhere. A symbol font that PDFium does map (ZapfDingbats, cmsy's
"≤") reads as what it is.

Everything here costs a regular expression over the page's text unless the page has a symbol, a
lone glyph before a word, or a number beside a number; only then are characters looked at.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

#: A bullet PDFium could not map, as the index reads it.
BULLET = "\u2022"
#: Bullets drawn as text, read as marks only when they stand where a plot puts its points.
_BULLETS = "\u2022\u25e6"
#: Glyphs that can be a plot's marks: symbols ("●", "▲", "❍", "★"), those bullets, and the Private
#: Use Area, where icon fonts put theirs. Pages holding any of them are read for marks.
_SYMBOLS = frozenset(
    [chr(c) for c in range(0x2000, 0x3000) if unicodedata.category(chr(c)) == "So"]
    + [chr(c) for c in range(0xE000, 0xF900)]
    + list(_BULLETS)
)
_SYMBOL = re.compile("[" + "".join(re.escape(c) for c in sorted(_SYMBOLS)) + "]")
_NUMBER = re.compile(r"[-\u2212]?\d+(?:[.,]\d+)?%?")
_LABEL = r"[-\u2212]?\d+(?:[.,]\d+)?%?"
#: Three or more numbers in a row on one line, and three or more lines holding one number each.
_ROW = re.compile(rf"(?<!\S){_LABEL}(?:[ \t]+{_LABEL}){{2,}}(?!\S)")
_COLUMN = re.compile(rf"(?m)^[ \t]*{_LABEL}[ \t]*\r?$(?:\n[ \t]*{_LABEL}[ \t]*\r?$){{2,}}")
#: A lone glyph opening a line, or before a capitalised word: where an unmapped bullet may be.
_LONE = re.compile(r"^[ \t]*(\S)(?=[ \t]+\S)|(?<=[ \t])(\S)(?=[ \t]+[A-Z])", re.M)
_TOKEN = re.compile(r"\S+")
_LETTER = re.compile(r"[^\W\d_]{2,}")
#: The fewest ticks an axis is read from, and how unevenly they may lie (share of their spacing).
MIN_TICKS = 3
_SPACING = 0.15
#: The most words a legend's entry says after its mark, and how often the page must set that mark
#: in its plot.
LEGEND_WORDS = 4
MIN_MARKS = 3


@dataclass
class Marked:
    """What to leave out of a page's text (character indices) and what to read differently."""

    drop: set[int] = field(default_factory=set)
    swap: dict[int, str] = field(default_factory=dict)
    #: characters of figures left out: marks, legends' marks and words, tick labels
    figure: int = 0
    #: unmapped symbol glyphs read as a bullet or left out
    symbols: int = 0


@dataclass
class _Token:
    start: int
    end: int
    text: str

    @property
    def words(self) -> bool:
        return _LETTER.search(self.text) is not None


def _line(raw: str, at: int) -> list[_Token]:
    """The tokens of the line holding character ``at``."""
    start = raw.rfind("\n", 0, at) + 1
    end = raw.find("\n", at)
    end = len(raw) if end < 0 else end
    return [_Token(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(raw, start, end)]


def mark_page(textpage: Any, raw: str) -> Marked:
    """The figure text and unmapped symbol glyphs of one page (see the module's docstring).

    Only lines that hold a symbol or an unmapped glyph are split into tokens, and only runs of
    numbers are measured: most pages cost three regular expressions."""
    out = Marked()
    lone = _unmapped(textpage, raw)
    starts = {m.start() for m in _SYMBOL.finditer(raw)} | lone
    if starts:
        lines: dict[int, list[_Token]] = {}
        for at in sorted(starts):
            first = raw.rfind("\n", 0, at) + 1
            if first not in lines:
                lines[first] = _line(raw, at)
        _marks(list(lines.values()), lone, out)
    _ticks(textpage, _blanked(raw, out.drop) if out.drop else raw, out)
    return out


def _blanked(raw: str, drop: set[int]) -> str:
    chars = list(raw)
    for i in drop:
        chars[i] = " "
    return "".join(chars)


def _unmapped(textpage: Any, raw: str) -> set[int]:
    """Indices of lone glyphs PDFium could not map, where a bullet stands: at a line's start or
    before a capitalised word."""
    import pypdfium2.raw as pdfium_c

    from syllabot.worker.pdf_text import address

    error, owner = pdfium_c.FPDFText_HasUnicodeMapError, pdfium_c.FPDFText_GetTextObject
    handle = textpage.raw
    out = set()
    for m in _LONE.finditer(raw):
        at = m.start(1) if m.group(1) is not None else m.start(2)
        if error(handle, at) != 1:
            continue
        after = at + 1
        while after < len(raw) and raw[after].isspace():
            after += 1
        # a glyph set in a font of its own: a word of a text font without a map ("I think", in a
        # bitmap font) shares its object with the words after it
        if after >= len(raw) or address(owner(handle, at)) != address(owner(handle, after)):
            out.add(at)
    return out


def _is_mark(token: _Token, lone: set[int]) -> bool:
    """A lone glyph PDFium could not map, or a token of symbols only ("●", "••")."""
    return token.start in lone or (len(token.text) <= 3 and all(c in _SYMBOLS for c in token.text))


def _marks(lines: list[list[_Token]], lone: set[int], out: Marked) -> None:
    used: Counter[str] = Counter()  # how often the page sets each glyph as a plot's mark
    openers: list[tuple[list[_Token], _Token]] = []
    for tokens in lines:
        marked = [_is_mark(t, lone) for t in tokens]
        wordless = not any(t.words for t in tokens)
        for k, (token, is_mark) in enumerate(zip(tokens, marked, strict=True)):
            if not is_mark:
                continue
            if k == 0 and len(tokens) > 1 and not marked[1] and _value(tokens[1].text) is None:
                openers.append((tokens, token))  # a bullet, or a legend's entry
            elif wordless or (k > 0 and marked[k - 1]) or (k + 1 < len(tokens) and marked[k + 1]):
                _drop(out, token, figure=token.start not in lone)
                used[token.text] += 1
            elif token.start in lone:  # an unmapped glyph inside a line: nothing to read
                _drop(out, token, figure=False)
    for tokens, mark in openers:
        if used[mark.text] >= MIN_MARKS and len(tokens) - 1 <= LEGEND_WORDS and mark.start not in lone:
            for token in tokens:  # a legend's entry: the plot's mark and what it names
                _drop(out, token, figure=True)
        elif mark.start in lone and any(t.words for t in tokens[1:]):
            out.swap[mark.start] = BULLET
            out.symbols += 1
        elif mark.start in lone:  # a piece of a formula (a brace, an integral sign): nothing to read
            _drop(out, mark, figure=False)


def _drop(out: Marked, token: _Token, *, figure: bool) -> None:
    out.drop.update(range(token.start, token.end))
    if figure:
        out.figure += token.end - token.start
    else:
        out.symbols += token.end - token.start


def _value(text: str) -> float | None:
    if _NUMBER.fullmatch(text) is None or len(text) > 9:
        return None
    return float(text.replace("\u2212", "-").rstrip("%").replace(",", "."))


def _ticks(textpage: Any, text: str, out: Marked) -> None:
    """Axis tick labels: runs of numbers across a line, and of lines that hold one number each."""
    runs: list[tuple[list[_Token], int]] = []
    for m in _ROW.finditer(text):
        tokens = [_Token(t.start(), t.end(), t.group(0)) for t in _TOKEN.finditer(text, m.start(), m.end())]
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        line = text[start : len(text) if end < 0 else end]
        # beside words, an axis is read from one tick more: "Xtrain 1 2 3" is a table's header
        runs.append((tokens, MIN_TICKS + (_LETTER.search(line) is not None)))
    for m in _COLUMN.finditer(text):
        tokens = [_Token(t.start(), t.end(), t.group(0)) for t in _TOKEN.finditer(text, m.start(), m.end())]
        runs.append((tokens, MIN_TICKS))
    for run, least in runs:
        for ticks in _even_steps(run, least):
            if _evenly_laid(textpage, ticks):
                for token in ticks:
                    _drop(out, token, figure=True)


def _even_steps(run: list[_Token], least: int) -> list[list[_Token]]:
    """The longest stretches of ``run``, ``least`` or more long, whose values step evenly (one
    difference, or one ratio)."""
    values = [_value(t.text) or 0.0 for t in run]
    out = []
    i = 0
    while i + least <= len(run):
        j = i + 2
        while j < len(run) and (
            _same(values[j] - values[j - 1], values[j - 1] - values[j - 2])
            or _same_ratio(values[j - 2], values[j - 1], values[j])
        ):
            j += 1
        if j - i >= least and values[i + 1] != values[i]:
            out.append(run[i:j])
            i = j
        else:
            i += 1
    return out


def _same(a: float, b: float) -> bool:
    return a != 0 and abs(a - b) <= 1e-6 * max(abs(a), abs(b))


def _same_ratio(a: float, b: float, c: float) -> bool:
    return a > 0 and b > a and _same(b / a, c / b)


def _evenly_laid(textpage: Any, ticks: list[_Token]) -> bool:
    """The labels lie along one line (a shared baseline, or one edge down the page) at even spacing."""
    boxes = [_box(textpage, t) for t in ticks]
    xs = [(b[0] + b[2]) / 2 for b in boxes]
    ys = [(b[1] + b[3]) / 2 for b in boxes]
    height = max(b[3] - b[1] for b in boxes) or 1.0
    across = max(ys) - min(ys) <= height / 2
    down = (
        max(b[2] for b in boxes) - min(b[2] for b in boxes) <= height
        or max(xs) - min(xs) <= height
        or max(b[0] for b in boxes) - min(b[0] for b in boxes) <= height
    )
    if not (across or down):
        return False
    if across:
        # ticks stand apart: more than a letter's height between one label and the next, where
        # numbers in a sentence ("rooms 101 102 103 104") are a space apart
        order = sorted(boxes)
        if any(b[0] - a[2] < height for a, b in pairwise(order)):
            return False
    places = xs if across else ys
    gaps = [abs(b - a) for a, b in pairwise(places)]
    mean = sum(gaps) / len(gaps)
    return mean > height / 2 and all(abs(g - mean) <= _SPACING * mean for g in gaps)


def _box(textpage: Any, token: _Token) -> tuple[float, float, float, float]:
    """The token's box on the page (left, bottom, right, top): its first and last characters'."""
    first = textpage.get_charbox(token.start)
    last = textpage.get_charbox(token.end - 1) if token.end - 1 > token.start else first
    return (
        min(first[0], last[0]),
        min(first[1], last[1]),
        max(first[2], last[2]),
        max(first[3], last[3]),
    )
