"""Repairs for what real PDFs lose or add in their text layer, as pure functions on the pages' text.

Why: a slide deck exported from LaTeX or Keynote often has no ToUnicode entry for its ligature
glyphs, and PDFium (``pdf_text``) writes U+FFFE for each glyph it could not map: "\\ufffenal",
"work\\ufffeow", "bene\\ufffet". It writes the same mark for a hyphen that broke a word at a line's
end ("ob\\ufffejectives"). The word a student types ("final") then never matches, and the quoted
sentence reads as garbage. Notes typeset from R Markdown or LaTeX open with a table of contents whose
dot leaders (". . . . . 3") split into one-dot "sentences"; slides print "12 / 48" and a running
header or footer on every page. (What plots draw as text is left out earlier, where PDFium still
says where each character lies: ``pdf_figures``.) None of this is
specific to one course: each repair is a shape of text, checked against the English words the
worker already ships (``worker.text.vocabulary``, ~21,700 whole words) and the document's own words, so
nothing is downloaded and no course's words are listed here.

A repair only ever *joins* fragments into a known word or *drops* layout debris; it never changes a
word that is already a word, so text without these defects passes through unchanged
(``tests/test_pdf_repair.py`` checks the real VTU syllabi are left alone). Every drop is counted
(:class:`Dropped`) for the ingest report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from functools import cache, cached_property

from syllabot.worker.text.vocabulary import known, vocabulary

#: PDFium's mark for a glyph without a Unicode mapping, and the soft hyphen some writers emit.
MARK = "\ufffe"
_LIGATURES = ("fi", "fl", "ff", "ffi", "ffl")
_WORDS = re.compile(r"[A-Za-z]{2,}")
# A mark (or soft hyphen) at a line's end, the word continuing on the next line: "documen\ufffe\ntation".
_LINE_END_MARK = re.compile(r"([A-Za-z]*)[\ufffe\u00ad][ \t]*\n[ \t]*([A-Za-z]+)")
# A printed hyphen at a line's end: joined only when the joined word is a word ("documen-\ntation").
_LINE_END_HYPHEN = re.compile(r"([A-Za-z]{2,})-[ \t]*\n[ \t]*([a-z]{2,})")
_IN_WORD_MARK = re.compile(r"([A-Za-z]*)\ufffe+([A-Za-z]*)")
_DOT_LEADER = re.compile(r"[ \t]*(?:\.[ \t]*){5,}(?:\d{1,4}\b)?")
# A cheap first look: the pattern above starts with optional spaces, so the engine tries it at every
# position of a page; most pages have no two dots in a row.
_DOT_PAIR = re.compile(r"\.[ \t]*\.")
_PAGE_LABEL = re.compile(r"^[ \t]*(?P<n>\d{1,4})[ \t]*/[ \t]*(?P<of>\d{1,4})[ \t]*$")
_TRAILING_LABEL = re.compile(r"(?<=\S)[ \t]+(?P<n>\d{1,4})[ \t]*/[ \t]*(?P<of>\d{1,4})[ \t]*$")
_DIGITS = re.compile(r"\d+")
_PAGE_OF = re.compile(r"^(?:page|p\.|slide)\s*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
_TRAILING_NUMBER = re.compile(r"[\s,.:;|-]*\d{1,4}(?:\s*/\s*\d{1,4})?\s*$")
#: A line on at least this share of a document's pages (and on :data:`RUNNING_MIN_PAGES` or more)
#: is a running header or footer.
RUNNING_SHARE = 0.6
RUNNING_MIN_PAGES = 4
#: How many lines at a page's top and bottom a running header or footer is looked for in.
_EDGE_LINES = 2


@dataclass
class Dropped:
    """What the repairs left out of the indexed text, counted for the ingest report."""

    plot_glyphs: int = 0  # characters of plots: marks ("● ● ●"), legends, tick labels (``pdf_figures``)
    page_labels: int = 0  # a slide's "12 / 48"
    dot_leaders: int = 0  # a table of contents' ". . . . . 3"
    running_lines: int = 0  # a header or footer repeated on most pages
    hidden_chars: int = 0  # text no reader sees (``pdf_text``)
    undecoded_runs: int = 0  # words in a font without a usable map: glyph numbers (``pdf_figures``)
    unmended_marks: int = 0  # U+FFFE marks no word could be found for

    def add(self, other: Dropped) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_report(self) -> dict[str, int]:
        """The non-zero counts by name, for the ingest report."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


def document_words(pages: Iterable[str]) -> frozenset[str]:
    """The lower-case words a document spells out whole somewhere: a name a line break hyphenated on
    one page ("Srikr-ishnan") is written whole on another."""
    return frozenset(w.lower() for page in pages for w in _WORDS.findall(page.replace(MARK, " ")))


class _Mender:
    """Reads U+FFFE marks back into words: a line-end hyphen, then a ligature, then a compound."""

    def __init__(self, own: frozenset[str] | Callable[[], frozenset[str]]) -> None:
        self.words = vocabulary()
        self._own = own
        self.unmended = 0

    @cached_property
    def own(self) -> frozenset[str]:
        """The document's words, gathered only when a mark or hyphen needs them (most pages: never)."""
        return self._own if isinstance(self._own, frozenset) else self._own()

    def word(self, text: str) -> bool:
        low = text.lower()
        if known(low, self.words) or low in self.own:
            return True
        # "reproducing", "fabricated": an ending that dropped the stem's "e"
        stem = low[:-3] if low.endswith("ing") else low[:-2] if low.endswith("ed") else ""
        return len(stem) >= 3 and f"{stem}e" in self.words

    def mend(self, left: str, right: str) -> str:
        if not left and not right:
            return ""  # a mark on its own (a bullet or a code-listing prompt): nothing to read
        if left and right and right[0].isupper() and (left[-1].isupper() or self.word(left)):
            return f"{left}-{right}"  # a hyphenated compound: "NP-Complete", "Matching-Horspool"
        if left and right and self.word(left + right):
            return left + right  # a hyphen that broke the word at the line's end
        for lig in _LIGATURES:
            if self.word(f"{left}{lig}{right}"):
                return f"{left}{lig}{right}"
        for lig in _LIGATURES:  # a compound the vocabulary lacks: "work" + "flow"
            if right and (not left or self.word(left)) and self.word(f"{lig}{right}"):
                return f"{left}{lig}{right}"
        if (
            left
            and right
            and (right[0].isupper() or ((len(left) == 1 or self.word(left)) and self.word(right)))
        ):
            return f"{left}-{right}"  # a compound: "p-value", "self-directed", "Poincaré-Bendixson"
        joined = left + right  # a word broken at a line's end, or a symbol beside a word ("--version")
        if len(joined) >= 3 and not self.word(joined):
            self.unmended += 1  # a guess no vocabulary confirms
        return joined

    def line_end(self, m: re.Match[str]) -> str:
        return self.mend(m.group(1), m.group(2))

    def hyphen(self, m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        if self.word(left + right) and not (self.word(left) and self.word(right)):
            return left + right
        return m.group(0)  # "well-\nknown" stays as printed

    def in_word(self, m: re.Match[str]) -> str:
        text, start, end = m.string, m.start(), m.end()
        if (start and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
            return m.group(1) + "-" + m.group(2)  # inside a code or an address ("783KAB-tuE4")
        return self.mend(m.group(1), m.group(2))


def mend_marks(
    text: str, own: frozenset[str] | Callable[[], frozenset[str]] = frozenset()
) -> tuple[str, int]:
    """``text`` with PDFium's U+FFFE marks and soft hyphens read back into words, and how many marks
    no word was found for. ``own``: the document's words (:func:`document_words`), or what gives
    them when first needed."""
    mender = _Mender(own)
    marked = MARK in text or "\u00ad" in text  # most pages have neither: no regex runs on them
    if marked:
        text = _LINE_END_MARK.sub(mender.line_end, text)
    if "-\n" in text or "- \n" in text:
        text = _LINE_END_HYPHEN.sub(mender.hyphen, text)
    if marked:
        text = _IN_WORD_MARK.sub(mender.in_word, text).replace("\u00ad", "")
    return text, mender.unmended


def _is_page_label(line: str, page: int | None) -> bool:
    """ "12 / 48" printed by a slide deck: the page's own number over the deck's length.

    Only the last line of a page, and only when the number is that page's (when known): a
    schedule's "2/6" is a date, not a label.
    """
    m = _PAGE_LABEL.match(line)
    if not m or int(m.group("n")) > int(m.group("of")):
        return False
    return int(m.group("n")) == page if page is not None else " " in line.strip()


def drop_layout_debris(text: str, page: int | None = None) -> tuple[str, Dropped]:
    """Dot leaders and the slide's "12 / 48" label, counted."""
    dropped = Dropped()

    def leader(m: re.Match[str]) -> str:
        dropped.dot_leaders += 1
        return " "

    if _DOT_PAIR.search(text):
        text = _DOT_LEADER.sub(leader, text)
    lines = text.split("\n")
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=None)
    if last is not None and _is_page_label(lines[last], page):
        del lines[last]
        dropped.page_labels += 1
    if page is not None:  # "Bias and variance 4/27": a frame's title with the slide's label after it
        for i in _edges(lines):
            m = _TRAILING_LABEL.search(lines[i])
            if m and int(m.group("n")) == page <= int(m.group("of")):
                lines[i] = lines[i][: m.start()]
                dropped.page_labels += 1
    return "\n".join(lines), dropped


def _keys(line: str, page: int) -> frozenset[str]:
    """The line with the page's own number read as "#": "Page 3 of 12" on page 3 is "Page # of 12".
    One reading for each place the number appears, and the line as printed: on page 5 of a deck
    whose footer is "Lecture 5: Soil water 3 / 9" on page 3, the footer's "5 / 9" is the page's,
    not the lecture's; and a footer whose label was cut off is the same line on every page."""
    keys = {
        (line[: m.start()] + "#" + line[m.end() :]).strip()
        for m in _DIGITS.finditer(line)
        if int(m.group(0)) == page
    }
    return frozenset(keys | {line.strip()})


def _edges(lines: list[str]) -> set[int]:
    filled = [i for i, ln in enumerate(lines) if ln.strip()]
    return set(filled[:_EDGE_LINES] + filled[-_EDGE_LINES:])


def drop_running_lines(pages: list[str]) -> tuple[list[str], int]:
    """Pages without the header or footer line printed at the top or bottom of most of them
    ("Page 3 of 12", a course title on every slide), and how many lines were dropped.

    A page's own number is read as any ("Page 3 of 12" on page 3 and "Page 4 of 12" on page 4 are
    the same line), and only a page's first and last two lines are looked at, so a sentence the body
    repeats is never dropped.
    """
    if len(pages) < RUNNING_MIN_PAGES:
        return pages, 0
    split = [text.split("\n") for text in pages]
    seen = Counter(
        key
        for n, lines in enumerate(split, 1)
        for key in set().union(*(_keys(lines[i], n) for i in _edges(lines)))
    )
    running = {key for key, n in seen.items() if n >= max(RUNNING_MIN_PAGES, RUNNING_SHARE * len(pages))}
    if not running:
        return pages, 0
    out, dropped = [], 0
    for number, lines in enumerate(split, 1):
        edge = _edges(lines)
        kept = []
        for i, line in enumerate(lines):
            if i in edge and not running.isdisjoint(_keys(line, number)):
                dropped += 1
                continue
            kept.append(line)
        out.append("\n".join(kept))
    return out, dropped


def _plain(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def is_furniture(line: str, names: Iterable[str] = ()) -> bool:
    """A line that is slide furniture, not something the materials say: one of the document's
    ``names`` (its file stem "lecture03", its title) alone or with a page number, a page label
    ("12 / 48", "Page 3 of 12"), or symbols without a letter or digit ("● ● ●", "▶"). A table row
    ("| 10 | 20 |") and a line of numbers (a schedule's "9:00-10:15") are not furniture.

    Why here, beside the page-label and running-line repairs: what those leave in a passage
    (a stem a deck prints, a label inside a line) must still never start or make up a quote, and
    the answerer asks this one predicate (``passages.passage``)."""
    text = line.strip()
    if not text or text.startswith("|"):
        return False
    if not any(c.isalnum() for c in text):
        return True
    if _PAGE_LABEL.match(text) or _PAGE_OF.match(text):
        return True
    forms = {_plain(text), _plain(_TRAILING_NUMBER.sub("", text))} - {""}
    return any(_plain(name) in forms for name in names if name)


def without_furniture(text: str, names: Iterable[str] = ()) -> str:
    """``text`` without its furniture lines (:func:`is_furniture`); unchanged when it has none."""
    lines = text.split("\n")
    kept = [ln for ln in lines if not is_furniture(ln, names)]
    return text if len(kept) == len(lines) else "\n".join(kept)


def repair_pages(pages: list[str]) -> tuple[list[str], Dropped]:
    """Everything above over a document's pages (1-based), in the order that keeps each step's
    input clean: marks read first (a line-end mark joins two lines), then debris, then running lines."""
    own = cache(lambda: document_words(pages))
    dropped = Dropped()
    out = []
    for number, text in enumerate(pages, start=1):
        text, unmended = mend_marks(text, own)
        text, debris = drop_layout_debris(text, number)
        debris.unmended_marks = unmended
        dropped.add(debris)
        out.append(text)
    out, dropped.running_lines = drop_running_lines(out)
    return out, dropped
