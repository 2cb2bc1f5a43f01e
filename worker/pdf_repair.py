"""Repairs for what real PDFs lose or add in their text layer, as pure functions on one page's text.

Why: a slide deck exported from LaTeX or Keynote often has no ToUnicode entry for its ligature
glyphs, so "fi"/"fl"/"ffi" vanish from the text layer ("bene t", " nal presentation", "O ce
Hours"): the word a student types ("final") then never matches, and the quoted sentence reads as
garbage. Notes typeset from R Markdown or LaTeX open with a table of contents whose dot leaders
(". . . . . 3") split into hundreds of one-dot "sentences"; plots leave runs of marker glyphs
("● ● ●") that get indexed and quoted. None of this is specific to one course: each repair is a
shape of text, checked against an English vocabulary that ships with the embedder (the MiniLM
WordPiece vocabulary, ~21,700 whole words), so nothing is downloaded and no course's words are
listed here.

A repair only ever *joins* fragments into a known word or *drops* layout debris; it never changes
a word that is already a word, so text without these defects passes through unchanged
(``tests/test_pdf_repair.py`` checks the real VTU syllabi are left alone).
"""

from __future__ import annotations

import re

from syllabot.worker.vocabulary import known, match_case, vocabulary

_LIGATURES = ("fi", "fl", "ff", "ffi", "ffl")
_WORD = re.compile(r"[A-Za-z]+")
# pypdf writes U+0000 where a ligature glyph has no Unicode mapping: "work\x00ow", "\x00nal".
_NUL_SLOT = re.compile(r"([A-Za-z]*)\x00+([A-Za-z]*)")
# Two fragments with one or two spaces between them: "bene t", "O ce", "work ow", "speci c".
_SPLIT_PAIR = re.compile(r"(?<![A-Za-z'’])([A-Za-z]+)( {1,2})([A-Za-z]+)(?![A-Za-z])")
# A fragment after a double space (the glyph's own gap) or at a line start: "an  nal presentation".
_LEADING_GAP = re.compile(r"(?:(?<= )|^) ([a-z]+)\b", re.MULTILINE)
_DOT_LEADER = re.compile(r"[ \t]*(?:\.[ \t]*){5,}(?:\d{1,4}\b)?")
_GLYPH_RUN = re.compile(r"[ \t]*(?:[●○■□▲△▼▽◆◇★☆▪▫◦⋅∙•✕✖×+][ \t]*){3,}")
_PAGE_LABEL = re.compile(r"^[ \t]*(?P<n>\d{1,4})[ \t]*/[ \t]*(?P<of>\d{1,4})[ \t]*$")
_STRAY_LIGATURE = re.compile(r"^[ \t]*(?:ffi|ffl|ff|fi|fl|Th|ft)[ \t]*$")


def _joined(left: str, right: str, words: frozenset[str]) -> str | None:
    """``left + ligature + right`` when that is a word and the two are not both ordinary words."""
    for lig in _LIGATURES:
        candidate = f"{left}{lig}{right}"
        if len(candidate) >= 4 and candidate.lower() in words:
            if left.lower() in words and right.lower() in words and len(left) > 2 and len(right) > 2:
                return None  # "work ow" joins, but two real words side by side are left alone
            return candidate
    return None


def _inserted(token: str, words: frozenset[str]) -> str | None:
    """A non-word with its ligature dropped in place ("benet" -> "benefit"), else None."""
    if len(token) < 4 or token.lower() in words or not token.isalpha():
        return None
    for i in range(1, len(token) + 1):
        for lig in _LIGATURES:
            candidate = token[:i] + lig + token[i:]
            if candidate.lower() in words:
                return candidate
    return None


def repair_ligatures(text: str, words: frozenset[str] | None = None) -> str:
    """Put back ligatures a PDF's text layer dropped, where the result is a known word."""
    words = vocabulary() if words is None else words

    def pair(m: re.Match[str]) -> str:
        joined = _joined(m.group(1), m.group(3), words)
        return joined if joined else m.group(0)

    def gap(m: re.Match[str]) -> str:
        token = m.group(1)
        if not known(token, words):
            for lig in _LIGATURES:
                if known(f"{lig}{token}", words):
                    return f"{lig}{token}"  # the glyph's gap was the extra space
        return m.group(0)

    def single(m: re.Match[str]) -> str:
        token = m.group(0)
        fixed = _inserted(token, words)
        return match_case(fixed, token) if fixed else token

    def slot(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        for lig in _LIGATURES:
            if known(f"{left}{lig}{right}", words):
                return f"{left}{lig}{right}"
        for lig in _LIGATURES:  # a compound the vocabulary lacks: "work" + "flow"
            if (not left or left.lower() in words) and known(f"{lig}{right}", words):
                return f"{left}{lig}{right}"
        return f"{left}fi{right}"  # the commonest ligature by far

    text = _NUL_SLOT.sub(slot, text)
    text = _SPLIT_PAIR.sub(pair, text)
    text = _LEADING_GAP.sub(gap, text)
    return _WORD.sub(single, text)


def _is_page_label(line: str, page: int | None) -> bool:
    """ "12 / 48" printed by a slide deck: the page's own number over the deck's length.

    Only the last line of a page, and only when the number is that page's (when known): a
    schedule's "2/6" is a date, not a label.
    """
    m = _PAGE_LABEL.match(line)
    if not m or int(m.group("n")) > int(m.group("of")):
        return False
    return int(m.group("n")) == page if page is not None else " " in line.strip()


def drop_layout_debris(text: str, page: int | None = None) -> str:
    """Dot leaders, plot-marker runs, the slide's "12 / 48" label and stray ligature glyph lines."""
    text = _DOT_LEADER.sub(" ", text)
    text = _GLYPH_RUN.sub(" ", text)
    lines = [ln for ln in text.split("\n") if not _STRAY_LIGATURE.match(ln)]
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=None)
    if last is not None and _is_page_label(lines[last], page):
        del lines[last]
    return "\n".join(lines)


def repair_page_text(text: str, page: int | None = None) -> str:
    """Everything above, in the order that keeps each step's input clean."""
    return repair_ligatures(drop_layout_debris(text, page))
