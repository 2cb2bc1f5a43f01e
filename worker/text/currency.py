"""Which of two documents is the current one: the one rule, for every place that asks.

Why one rule: a collection holds a syllabus beside its revision, last term's beside this term's, the
first week's slides beside the syllabus they summarise, and the conflict note, the record of
versions, the grading breakdown, the outline answer and the course card each have to say which one
a student should follow. Read in several places, they disagreed ("v1" counted as a revision in one
and not in another, "this document revises" read by one only), and a note could lead with a
document the record called older. Here, once, in the text stage every later stage may import:

* a document **says it is a revision** (:func:`claims_revision`): its name or title says so
  ("…_revised.pdf", "Syllabus v2", "(updated)"), or its text does with a date ("Revised: January
  2026", "last updated 3/4") or in words ("this notice updates the syllabus");
* its name says it is **old** ("draft", "previous", "archived");
* the **latest year it prints as a date** (:func:`latest_year`): a year in a date, a term, beside
  "revised" or a copyright sign; a number that is not a date ("Room 2047", "CS 2040", a count)
  dates nothing;
* its **term** (:func:`term_of`: "Fall 2018" after "Spring 2018"), for the course card;
* of two files of one title both kept, the **later upload** (:func:`current_first`).

Patterns and pure functions only (no I/O).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from syllabot.shared.schema import Hit
from syllabot.worker.text.value_shapes import MONTH_NAMES, SEASON_TERM, YEAR

#: A year printed as part of a date or a term ("May 2, 2025", "Spring 2026", "03/14/2025",
#: "2025-03-14", "Revised 2026", "© 2024"): a number that is not a date ("Room 2047", "CS 2040",
#: a count) dates nothing.
DATED_YEAR = re.compile(
    rf"\b(?:{MONTH_NAMES})\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?({YEAR})\b"
    rf"|\b(?:spring|summer|fall|autumn|winter|semester|term|revised|updated|version\s+of)\W{{0,3}}({YEAR})\b"
    rf"|(?:©|\(c\)|copyright)\s*({YEAR})\b"
    rf"|\b\d{{1,2}}[/.]\d{{1,2}}[/.]({YEAR})\b|\b({YEAR})-\d{{2}}-\d{{2}}\b",
    re.IGNORECASE,
)

#: A name or title that says its document is a revision: "revised", "revision", "updated",
#: "amended", "corrected", "newer", "newest", "new version", "latest version", a version mark of 2 or
#: more ("v2", "v3.1", "v10", "version 2"). Not "v1" (a first version), and not a bare "new",
#: "latest" or "current", which title things ("New methods", "Current topics").
_REVISION_NAME = re.compile(
    r"\b(revised|revision|updated?|amended|corrected|newer|newest|(?:new|latest|current)\s+version"
    r"|v(?:ersion\s*)?(?:[2-9]|[1-9]\d+)(?:\.\d+)*)\b",
    re.IGNORECASE,
)
#: A name that says its document is old.
_OLD_NAME = re.compile(r"\b(old(?:er)?|outdated|previous|draft|superseded|archive[d]?)\b", re.IGNORECASE)
#: A text that says it is a revision, with its date ("Revised: January 2026", "updated on 3/4",
#: "last updated 2025"; not "the Revised Universal Soil Loss Equation", a name), or that it revises
#: the others in words ("this notice updates the 21CS44 syllabus", "this version supersedes …").
_REVISED_ON = re.compile(
    rf"\b(revised|updated)\b\s*(?:on|in|:|-|–)?\s*(?=\d|(?:{MONTH_NAMES})\b)", re.IGNORECASE
)
_REVISES = re.compile(
    r"\bthis\s+(?:notice|document|version|syllabus|schedule|announcement|update|revision)\s+"
    r"(?:updates|supersedes|replaces|revises|amends|corrects)\b",
    re.IGNORECASE,
)

_SEASON_ORDER = {"winter": 0, "spring": 1, "spr": 1, "summer": 2, "fall": 3, "autumn": 3}

#: How evidently current a document is (:func:`how_current`): said current (+1) or old (-1), the
#: latest year it prints as a date, and why in a few words.
Currency = tuple[int, int, str]


def _as_words(name: str) -> str:
    return name.replace("_", " ").replace("-", " ")


def _said_in_text(text: str) -> str:
    """Why ``text`` says it is a revision ("" when it does not)."""
    dated = _REVISED_ON.search(text)
    if dated:
        return f"it says it is {dated.group(1).lower()}"
    if _REVISES.search(text):
        return "it says it updates the others"
    return ""


def claims_revision(name: str, texts: Iterable[str]) -> str:
    """Why a document says it revises the others, by its name or title (``name``) or its text:
    "“v2” in its name", "it says it is revised", "it says it updates the others"; "" when it does not."""
    named = _REVISION_NAME.search(_as_words(name))
    if named:
        return f"“{named.group(0)}” in its name"
    return _said_in_text(" ".join(texts))


def latest_year(texts: Iterable[str]) -> int:
    """The latest year the texts print as a date or a term (:data:`DATED_YEAR`); 0 when none."""
    years = [int(next(y for y in groups if y)) for groups in DATED_YEAR.findall(" ".join(texts))]
    return max(years, default=0)


def how_current_named(name: str, texts: Iterable[str]) -> Currency:
    """How evidently current a document is: +1 when it says it is a revision (:func:`claims_revision`),
    -1 when its name says it is old; the latest year it prints as a date; and the reason in a few
    words."""
    texts = [" ".join(texts)]
    latest = latest_year(texts)
    why = claims_revision(name, texts)
    if why:
        return 1, latest, why
    if _OLD_NAME.search(_as_words(name)):
        return -1, latest, ""
    return 0, latest, ""


def how_current(hit: Hit, texts: Iterable[str]) -> Currency:
    """How evidently current the document of ``hit`` is (:func:`how_current_named`, its file name,
    title and label as its name)."""
    return how_current_named(f"{hit.file} {hit.title} {hit.label}", texts)


def current_first(a: tuple[Currency, str, str], b: tuple[Currency, str, str]) -> tuple[int, str]:
    """Which of two documents, each (:data:`Currency`, display title, first upload time), the
    materials say is current: 0 or 1 and why, or (0, "") when they do not say. Said current or old
    first, then the later printed year, then, of two files of one title both kept, the later
    upload (most likely the new version)."""
    ((sa, ya, why_a), title_a, up_a), ((sb, yb, why_b), title_b, up_b) = a, b
    if sa != sb:
        first, why = (0, why_a) if sa > sb else (1, why_b)
        if why:
            return first, why
    if ya and yb and ya != yb:
        return (0 if ya > yb else 1), f"it is dated {max(ya, yb)}, the other {min(ya, yb)}"
    if title_a and title_a == title_b and up_a and up_b and up_a != up_b:
        later = 0 if up_a > up_b else 1
        return later, f"it was uploaded later ({max(up_a, up_b)[:10]}) under the same title"
    return 0, ""


def term_of(text: str) -> re.Match[str] | None:
    """The first term ``text`` prints ("Fall 2018"), or None."""
    return SEASON_TERM.search(text)


def term_order(term: re.Match[str]) -> tuple[int, int]:
    """A term matched by ``value_shapes.SEASON_TERM`` as (year, season order), to compare two documents' terms:
    "Fall 2018" after "Spring 2018"."""
    season = (term.group("season") or term.group("season2")).lower()
    year = int(term.group("year") or term.group("year2"))
    return year, _SEASON_ORDER[season]
