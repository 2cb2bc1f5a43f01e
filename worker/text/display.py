"""Text as a student reads it, apart from the text the index reads (pure functions).

Why apart: a symbol font's bullet that PDFium reads as a capital "I" ("I Grading I 40% Two
Midterm Exams") is debris to a student, but reading it as "•" in the text the embedder and the
keyword index read cost held-out answers (``docs/benchmarks/extraction.md``). So the extractor
records where such bullets are (``pdf_figures``), the chunker carries them on each chunk as
non-space character offsets (:func:`find_bullets`, ``Chunk.bullets``, as ``page_marks`` carries
page starts), and the answerers read each passage through :func:`shown` before they quote it.
Offsets count non-space characters, so a quote re-spaced by an answer still lines up, and showing
a bullet replaces one character by one: page marks stay true.

A word a line end broke with a printed hyphen ("asyn-chronously") is mended at ingest only when
the vocabulary or its own document spells it whole (``pdf_repair``); a course's own words often
are in neither but are spelled whole in another of its documents. :func:`broken_words` finds
those against the whole collection, and :func:`joined` shows them whole: again display only, so
the index reads what it read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from syllabot.worker.text.vocabulary import known

__all__ = ["BULLET", "broken_words", "find_bullets", "joined", "literal_asterisks", "shown"]

#: How a symbol-font bullet is shown.
BULLET = "\u2022"

#: How an asterisk a document prints is shown: the asterisk operator looks the same and is no
#: chat markup.
ASTERISK = "\u2217"
#: An asterisk printed in running text ("AI*", "check**", "*optional"), not a list's "* " bullet.
_LITERAL_ASTERISK = re.compile(r"(?<=\S)\*|\*(?=\S)")


def literal_asterisks(text: str) -> str:
    """``text`` with the asterisks a (non-Markdown) document prints shown as :data:`ASTERISK`.
    Why: a PDF's footnote marks ("best to check** Homework", "Internet/ AI*") are characters of the
    page, but two of them in a chat reply are bold or italics (Discord) and swallow the words
    between; one character for one keeps every offset true."""
    return _LITERAL_ASTERISK.sub(ASTERISK, text)


def shown(text: str, bullets: Sequence[int]) -> str:
    """``text`` with the characters at the non-space offsets ``bullets`` shown as :data:`BULLET`."""
    if not bullets:
        return text
    wanted = set(bullets)
    chars = list(text)
    seen = 0
    for i, ch in enumerate(chars):
        if ch.isspace():
            continue
        if seen in wanted:
            chars[i] = BULLET
        seen += 1
    return "".join(chars)


def find_bullets(text: str, probes: Iterable[str]) -> tuple[int, ...]:
    """The non-space offsets in ``text`` where each probe (a bullet's glyph and the non-space
    characters after it, ``Document.bullets``) stands: its glyph's offset, for each place found."""
    flat = "".join(text.split())
    out: set[int] = set()
    for probe in probes:
        at = flat.find(probe)
        while at >= 0:
            out.add(at)
            at = flat.find(probe, at + 1)
    return tuple(sorted(out))


#: A word written with a hyphen between two lower-case runs ("asyn-chronously", "trade-offs").
_HYPHENATED = re.compile(r"\b([A-Za-z]{2,})-([a-z]{2,})\b")


def broken_words(texts: Iterable[str], more_whole: Callable[[str, str], bool]) -> dict[str, str]:
    """The hyphenated words of ``texts`` that a line end broke, each with the word whole
    ("asyn-chronously" → "asynchronously"). Broken: the two halves are not both words (so
    "trade-offs" and "well-known" stay) and ``more_whole(left, right)``, the collection spelling
    the joined word whole more often than it prints the two halves together."""
    out: dict[str, str] = {}
    for text in texts:
        if "-" not in text:
            continue
        for m in _HYPHENATED.finditer(text):
            form, left, right = m.group(0), m.group(1), m.group(2)
            if form in out or (known(left) and known(right)):
                continue
            if more_whole(left, right):
                out[form] = left + right
    return out


def joined(text: str, breaks: Mapping[str, str]) -> str:
    """``text`` with each broken word of ``breaks`` (:func:`broken_words`) shown whole."""
    if not breaks or "-" not in text:
        return text
    return _HYPHENATED.sub(lambda m: breaks.get(m.group(0), m.group(0)), text)
