"""What a page's plots draw as text, found on PDFium's text page.

Why: a plot exported from R, matplotlib or a spreadsheet draws its points as glyphs (R's ``pdf()``
device sets every circle as a ZapfDingbats "●"), its axes' tick labels as numbers and its legend
as a glyph and a word; a deck that includes it hands all of it to an extractor as text. Indexed, it
is quoted to students ("lecture03 ● ● ● ● ● ●", "0.00 0.25 0.50 0.75 1.00 Percent…") and a plot's
axis is read as a second grading scheme. None of it is found by listing symbols or decks: each
rule below is a shape any plot has, read from where PDFium placed the characters:

* **marks off any line of words**: a lone symbol glyph (Unicode "other symbol", a bullet, or a
  private-use icon) on a line that holds no word, or beside another such glyph;
* **legends**: a line that opens with a glyph the same page uses as a mark and says a few words;
* **axis ticks**: three or more numbers in a row, one step apart in value (or one ratio, a log
  axis), laid out evenly along one line: across a line, more than a letter's height apart (an x
  axis), or one per line, aligned down the page (a y axis).

What the slide says in words beside the plot stays: a line with words keeps them, and a glyph
starting a line of words is a bullet.

Glyphs PDFium could not map (``FPDFText_HasUnicodeMapError``), read from the same text page:

* **symbol-font bullets**: a lone unmapped glyph opening a line of words, or standing before a
  capitalised word, in a text object of its own (Beamer's msam triangle, which PDFium reads as a
  capital "I": "I Grading"). The index keeps the text as PDFium reads it: reading them as "•" in
  the index was built and measured, and cost the held-out courses answers (``docs/benchmarks/
  extraction.md``). So only where they are is recorded (:attr:`Marked.bullets`, each as the glyph
  and the characters after it on its line), and what a student reads shows them as "•"
  (``worker.text.display``).
* **undecoded runs**: two or more unmapped glyphs in a row, most of them read beyond Latin-1: a
  font without a usable map whose glyph numbers PDFium hands out as characters (a small-caps
  course code read as "ķŀĵƦƤƥ"). No reader can read them and no student types them: they are left
  out and counted (:attr:`Marked.undecoded`). A bitmap font whose codes are plain letters ("I
  think" in a Type 3 font) reads as those letters and stays.

Everything here costs a regular expression over the page's text unless the page has a symbol,
a lone glyph before a word, a character beyond Latin-1 or three numbers in a row; only then are
characters looked at.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

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
_LABEL = r"[-\u2212]?\d+(?:[.,]\d+)?%?"
_NUMBER = re.compile(_LABEL)
#: Three or more numbers in a row on one line, and three or more lines holding one number each.
_ROW = re.compile(rf"(?<!\S){_LABEL}(?:[ \t]+{_LABEL}){{2,}}(?!\S)")
_COLUMN = re.compile(rf"(?m)^[ \t]*{_LABEL}[ \t]*\r?$(?:\n[ \t]*{_LABEL}[ \t]*\r?$){{2,}}")
_TOKEN = re.compile(r"\S+")
#: A lone glyph opening a line of words, or before a capitalised word: where a symbol font's bullet
#: stands.
_LONE = re.compile(r"^[ \t]*(\S)(?=[ \t]+\S)|(?<=[ \t])(\S)(?=[ \t]+[A-Z])", re.M)
#: Two or more characters beyond Latin-1 in a row: where glyph numbers read as characters land (a
#: lone curly quote or dash is not asked about).
_WIDE = re.compile(r"[^\x00-\xff\s]{2,}")
#: How many characters after a bullet (spaces aside) say where it is in the text the chunker makes.
PROBE_CHARS = 24
#: The fewest: a bullet before a shorter line ("I Yes") is not looked for.
MIN_PROBE_CHARS = 4
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
    """What to leave out of a page's text (character indices), and how many characters of figures."""

    drop: set[int] = field(default_factory=set)
    #: characters of figures left out: marks, legends' marks and words, tick labels
    figure: int = 0
    #: symbol-font bullets: each as its glyph and the non-space characters after it on its line
    #: ("IGrading40%"), by which the chunker finds it again (``worker.text.display``)
    bullets: list[str] = field(default_factory=list)
    #: runs of glyphs no map reads (left out with ``drop``)
    undecoded: int = 0


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
    """The figure text of one page (see the module's docstring).

    Only lines that hold a symbol are split into tokens, and only runs of numbers are measured:
    most pages cost three regular expressions."""
    out = Marked()
    handle = getattr(textpage, "raw", None)
    if handle is not None:
        _unmapped(handle, raw, out)
    starts = {m.start() for m in _SYMBOL.finditer(raw)}
    if starts:
        lines: dict[int, list[_Token]] = {}
        for at in sorted(starts):
            first = raw.rfind("\n", 0, at) + 1
            if first not in lines:
                lines[first] = _line(raw, at)
        _marks(list(lines.values()), out)
    _ticks(textpage, blanked(raw, out.drop) if out.drop else raw, out)
    return out


def _unmapped(handle: Any, raw: str, out: Marked) -> None:
    """Symbol-font bullets and undecoded runs (see the module): only characters where either may
    stand are asked about."""
    import pypdfium2.raw as pdfium_c

    from syllabot.worker.ingest.pdf_text import _address  # pdf_text imports this module

    error, owner = pdfium_c.FPDFText_HasUnicodeMapError, pdfium_c.FPDFText_GetTextObject
    n = len(raw)
    seen: set[int] = set()
    for at in (i for m in _WIDE.finditer(raw) for i in range(m.start(), m.end())):
        if at in seen or error(handle, at) != 1:
            continue
        start, end = at, at + 1
        while start > 0 and not raw[start - 1].isspace() and error(handle, start - 1) == 1:
            start -= 1
        while end < n and not raw[end].isspace() and error(handle, end) == 1:
            end += 1
        seen.update(range(start, end))
        wide = sum(1 for ch in raw[start:end] if ord(ch) > 0xFF)
        if end - start >= 2 and 2 * wide >= end - start:
            out.drop.update(range(start, end))
            out.undecoded += 1
    for m in _LONE.finditer(raw):
        at = m.start(1) if m.group(1) is not None else m.start(2)
        if at in out.drop or error(handle, at) != 1:
            continue
        after = at + 1
        while after < n and raw[after].isspace():
            after += 1
        # a glyph set in a font of its own: a word of a text font without a map ("I think", in a
        # bitmap font) shares its object with the words after it
        if after < n and _address(owner(handle, at)) != _address(owner(handle, after)):
            line_end = raw.find("\n", after)
            rest = "".join(raw[after : n if line_end < 0 else line_end].split()).split("\ufffe")[0]
            probe = raw[at] + rest[: PROBE_CHARS - 1]
            if len(probe) >= MIN_PROBE_CHARS:
                out.bullets.append(probe)


def blanked(raw: str, drop: set[int]) -> str:
    """``raw`` with the characters at ``drop`` as spaces: the same length, so that character indices
    still point where PDFium's do, and the words either side stay apart."""
    chars = list(raw)
    for i in drop:
        chars[i] = " "
    return "".join(chars)


def _is_mark(token: _Token) -> bool:
    """A token of symbols only ("●", "••")."""
    return len(token.text) <= 3 and all(c in _SYMBOLS for c in token.text)


def _marks(lines: list[list[_Token]], out: Marked) -> None:
    used: Counter[str] = Counter()  # how often the page sets each glyph as a plot's mark
    openers: list[tuple[list[_Token], _Token]] = []
    for tokens in lines:
        marked = [_is_mark(t) for t in tokens]
        wordless = not any(t.words for t in tokens)
        for k, (token, is_mark) in enumerate(zip(tokens, marked, strict=True)):
            if not is_mark:
                continue
            if k == 0 and len(tokens) > 1 and not marked[1] and _value(tokens[1].text) is None:
                openers.append((tokens, token))  # a bullet, or a legend's entry
            elif wordless or (k > 0 and marked[k - 1]) or (k + 1 < len(tokens) and marked[k + 1]):
                _drop(out, token)
                used[token.text] += 1
    for tokens, mark in openers:
        if used[mark.text] >= MIN_MARKS and len(tokens) - 1 <= LEGEND_WORDS:
            for token in tokens:  # a legend's entry: the plot's mark and what it names
                _drop(out, token)


def _drop(out: Marked, token: _Token) -> None:
    out.drop.update(range(token.start, token.end))
    out.figure += token.end - token.start


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
                    _drop(out, token)


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
