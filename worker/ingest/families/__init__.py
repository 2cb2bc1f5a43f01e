"""Document families: what only one kind of document needs, behind one small interface.

The general machinery (loaders, chunker, course catalogue) knows nothing of any university's
booklets. A family that needs more — VTU scheme booklets print headings of their own (the CIE/SEE
marks split, lab components), relink a PDF's leading text to the course printed before it, date
course codes by scheme, and know the short forms students use —
implements :class:`Family`; the engine and the catalogue ask every family in :data:`FAMILIES`.
Adding a family means adding a module here and a line to :data:`FAMILIES`, not editing the
chunker. The generic answer of each call is "nothing to do": no headings, no relinking, no
aliases, no year.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from syllabot.worker.ingest.families import vtu
from syllabot.worker.ingest.headings import HeadingRule
from syllabot.worker.text.documents import Chunk


class Family(Protocol):
    """What a document family may add to the general machinery."""

    name: str
    #: Lines that open a block of a known kind in this family's documents, tried after the
    #: chunker's general headings.
    headings: tuple[HeadingRule, ...]

    def relink(self, chunks: Sequence[Chunk]) -> list[Chunk]:
        """The collection's chunks with any chunk this family misattributes given its true owner."""
        ...

    def may_be_relinked(self, chunk: Chunk) -> bool:
        """Whether :meth:`relink` may rewrite ``chunk`` (so its text waits to be embedded)."""
        ...

    def aliases(self, code: str, title: str) -> frozenset[str]:
        """The short forms students use for a course of this family (lower case)."""
        ...

    def scheme_year(self, code: str) -> int | None:
        """The year of the scheme a course code belongs to, when the family's codes carry one."""
        ...

    def preceding_course(self, code: str) -> str | None:
        """The course whose syllabus ends at the top of a document that opens with headings before
        the header of ``code`` (the previous course of the booklet it was cut from), if known."""
        ...


class VtuBooklets:
    """VTU-style scheme booklets (:mod:`worker.ingest.families.vtu`)."""

    name = "vtu"
    headings = vtu.HEADINGS

    def relink(self, chunks: Sequence[Chunk]) -> list[Chunk]:
        return vtu.link_course_tails(chunks)

    def may_be_relinked(self, chunk: Chunk) -> bool:
        return vtu.may_be_relinked(chunk)

    def aliases(self, code: str, title: str) -> frozenset[str]:
        return vtu.known_aliases(title)

    def scheme_year(self, code: str) -> int | None:
        return vtu.scheme_year(code)

    def preceding_course(self, code: str) -> str | None:
        return vtu.preceding_code(code)


FAMILIES: tuple[Family, ...] = (VtuBooklets(),)


def relink(chunks: Sequence[Chunk]) -> list[Chunk]:
    """Every family's relinking, in turn."""
    out = list(chunks)
    for family in FAMILIES:
        out = family.relink(out)
    return out


def preceding_course(code: str) -> str | None:
    """The first family's answer to :meth:`Family.preceding_course`; None when none knows."""
    return next((found for family in FAMILIES if (found := family.preceding_course(code))), None)


def may_be_relinked(chunk: Chunk) -> bool:
    return any(family.may_be_relinked(chunk) for family in FAMILIES)


def family_aliases(code: str, title: str) -> frozenset[str]:
    return frozenset().union(*(family.aliases(code, title) for family in FAMILIES))


def scheme_year(code: str) -> int | None:
    return next((y for f in FAMILIES if (y := f.scheme_year(code)) is not None), None)
