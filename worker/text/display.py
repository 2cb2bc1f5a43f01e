"""Text as a student reads it, apart from the text the index reads (pure functions).

Why apart: a symbol font's bullet that PDFium reads as a capital "I" ("I Grading I 40% Two
Midterm Exams") is debris to a student, but reading it as "•" in the text the embedder and the
keyword index read cost held-out answers (``docs/benchmarks/extraction.md``). So the extractor
records where such bullets are (``pdf_figures``), the chunker carries them on each chunk as
non-space character offsets (:func:`find_bullets`, ``Chunk.bullets``, as ``page_marks`` carries
page starts), and the answerers read each passage through :func:`shown` before they quote it.
Offsets count non-space characters, so a quote re-spaced by an answer still lines up, and showing
a bullet replaces one character by one: page marks stay true.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["BULLET", "find_bullets", "shown"]

#: How a symbol-font bullet is shown.
BULLET = "\u2022"


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
