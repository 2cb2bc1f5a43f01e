"""Headings and course headers: the lines that open a block of a syllabus, read one line at a time.

Why a module of its own: the chunker (``worker/ingest/chunking.py``) cuts a document along these lines,
and document families (``worker/ingest/families/``) add headings of their own through
:class:`HeadingRule`; both need the rules without the rest of the chunker. Everything here is a
pure function of one line or of a document's lines.

* a **heading** is a module/unit/chapter line ("Module-1", "UNIT III") normalised by
  :func:`module_label`, one of the general named blocks (:data:`HEADINGS`: objectives, outcomes,
  textbooks, references, prerequisites) or a family's, or an unnamed short ALL-CAPS or title line
  (:func:`generic_heading`);
* a **course header** is a "Course Code: 21CS44" line with the title and semester lines printed
  above it (:func:`find_courses`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from syllabot.worker.text.sentences import NUMBERED_ITEM, ROUND_BULLETS

#: A line that starts a list item, a CO/CLO, or a Markdown heading: never a heading of its own.
LIST_START = re.compile(rf"^(?:{NUMBERED_ITEM}|[{ROUND_BULLETS}\-*–]\s|CO\s*\d|CLO\s*\d|#{{1,6}}\s)")

_MODULE_RE = re.compile(
    r"^(?P<kw>(?i:module|unit|chapter))\s*[-–—:.]?\s*(?P<num>\d{1,2}|[IVX]{1,6})(?!\w)"
    r"\s*(?P<sep>[-–—:.)]?)\s*(?P<rest>.*?)\s*$"
)
_HOURS_RE = re.compile(
    r"^\(?\s*(?:no\.?\s*of\s*)?(?:hours|hrs)?\s*[:.\-]?\s*\d{1,3}\s*(?:hours?|hrs?\.?|h|l)?\s*\)?\.?$",
    re.IGNORECASE,
)
_MD_HEADING_PREFIX = re.compile(r"^#{1,6}\s+")
_ROMAN = {"I": 1, "V": 5, "X": 10}


@dataclass(frozen=True)
class HeadingRule:
    """A line that opens a block of a known kind: the general ones below, and those a document
    family adds (``worker.ingest.families``: VTU's "Continuous Internal Evaluation", "Laboratory
    Component" …)."""

    pattern: re.Pattern[str]
    kind: str
    name: str | None  # None: use the heading line itself
    strong: bool  # strong headings also end a module; weak ones only end non-module sections
    #: Kept whole like the structured kinds (split only beyond twice ``max_chars``): blocks whose items
    #: only make sense together — how the CIE marks are split, a list of lab programs.
    whole: bool = False


_I = re.IGNORECASE
HEADINGS: tuple[HeadingRule, ...] = (
    HeadingRule(
        re.compile(r"^(?:course\s+(?:learning\s+)?objectives?|learning\s+objectives?)\b", _I),
        "objectives",
        "Course objectives",
        True,
    ),
    HeadingRule(
        re.compile(r"^(?:(?:course|learning)\s+outcomes?\b|outcomes?\s*:?\s*$)", _I),
        "outcomes",
        "Course outcomes",
        True,
    ),
    HeadingRule(
        re.compile(r"^(?:prescribed\s+|suggested\s+)?text\s*-?\s*books?\s*[:.]?\s*$", _I),
        "textbooks",
        "Textbooks",
        True,
    ),
    HeadingRule(
        re.compile(r"^(?:reference\s*-?\s*books?|references)\s*[:.]?\s*$", _I),
        "references",
        "Reference books",
        True,
    ),
    HeadingRule(re.compile(r"^pre\s*-?\s*requisites?\s*:?\s*$", _I), "section", "Prerequisites", False),
)


@dataclass(frozen=True)
class Heading:
    kind: str
    section: str | None
    module: str | None
    strong: bool
    whole: bool = False


def _roman_to_int(numeral: str) -> int:
    total = 0
    for i, ch in enumerate(numeral):
        value = _ROMAN[ch]
        nxt = _ROMAN[numeral[i + 1]] if i + 1 < len(numeral) else 0
        total += -value if value < nxt else value
    return total


def module_label(keyword: str, number: str) -> str:
    """Normalise a module/unit/chapter number: "Module 3" (arabic), "Unit II" (roman kept), "Chapter 4"."""
    kw = keyword.lower()
    if kw == "module":
        n = number if number.isdigit() else str(_roman_to_int(number.upper()))
        return f"Module {int(n)}"
    if kw == "unit":
        return f"Unit {number.upper() if not number.isdigit() else int(number)}"
    return f"Chapter {number.upper() if not number.isdigit() else int(number)}"


def heading_candidate(text: str) -> str:
    """The line as a heading would read: markdown ``#`` prefix removed (DOCX headings carry one)."""
    return _MD_HEADING_PREFIX.sub("", text.strip())


def _looks_like_heading_line(text: str) -> bool:
    """Headings start with a capital and do not end a sentence.

    Why: PDF text wraps mid-sentence, so "course outcomes." continuing a paragraph must not be
    taken for the "Course outcomes" heading.
    """
    return bool(text) and text[0].isupper() and not text.rstrip().endswith((".", ",", ";"))


def _match_module(text: str) -> Heading | None:
    line = heading_candidate(text)
    if not line or not line[0].isupper() or len(line) > 100:
        return None
    m = _MODULE_RE.match(line)
    if not m:
        return None
    rest, sep = m.group("rest"), m.group("sep")
    title: str | None = None
    if rest and not _HOURS_RE.match(rest):
        # "Module 1: Introduction" or "MODULE 2 RELATIONAL MODEL"; reject prose ("Unit 3 & Unit 4)").
        if not (rest[0].isupper() and len(line) <= 80 and not line.endswith((".", ","))):
            return None
        if not sep and not rest.split()[0].isupper() and not rest.istitle():
            return None
        title = rest.strip(" :-–—")
    label = module_label(m.group("kw"), m.group("num"))
    return Heading("module", title or None, label, True)


def generic_heading(text: str, previous: str) -> Heading | None:
    """An unnamed heading ("EXAM REVIEW SESSIONS", "Grading schedule") in a syllabus's prose part.

    Why: without it, the first recognised heading of a US-style syllabus ("TEXTBOOK:") would swallow
    every later policy section. Only short lines that start a block count: ALL CAPS after a blank
    line or a finished sentence, or a short capitalised phrase after a blank line. Never used inside
    a module or the course header, where wrapped lines ("Database", "EditionTata Mcgraw Hill ...")
    look just like this.
    """
    line = heading_candidate(text)
    if not (3 <= len(line) <= 60) or any(c.isdigit() for c in line) or LIST_START.match(line):
        return None
    if not line[0].isupper() or line.endswith((".", ",", ";", "!", "?")):
        return None
    if re.search(r"[,;=_{}\[\]<>|]|\w\(", line):  # code or data ("CUSTOMERS(ID,NAME,AGE)"), not a title
        return None
    words = line.rstrip(":").split()
    letters = [c for c in line if c.isalpha()]
    after_break = not previous or previous.endswith((".", "!", "?", ":", '"', "”", ")"))
    all_caps = len(letters) >= 3 and all(c.isupper() for c in letters)
    if all_caps and len(words) <= 8 and after_break:
        return Heading("section", smart_title(line.rstrip(" :")), None, False)
    if not previous and len(words) <= 5:
        return Heading("section", line.rstrip(" :"), None, False)
    return None


@functools.cache
def heading_rules() -> tuple[HeadingRule, ...]:
    """The general headings, then every document family's (read once: the families import this
    module, so they are asked on first use, not at import)."""
    from syllabot.worker.ingest.families import FAMILIES

    return HEADINGS + tuple(rule for family in FAMILIES for rule in family.headings)


def match_heading(text: str) -> Heading | None:
    """Classify a line as a module or section heading, or None for body text."""
    heading = _match_module(text)
    if heading:
        return heading
    line = heading_candidate(text)
    if not _looks_like_heading_line(line) or len(line) > 90:
        return None
    for rule in heading_rules():
        if rule.pattern.match(line):
            name = rule.name or smart_title(line.rstrip(" :").strip())
            return Heading(rule.kind, name, None, rule.strong, rule.whole)
    return None


# ----------------------------------------------------------------------------------------------
# Course headers
# ----------------------------------------------------------------------------------------------

CODE_LINE = re.compile(
    r"(?i:\b(?:course|subject|paper)\s*code)\s*[:：|.]?\s*(?P<code>[A-Z0-9]{2,12}(?:\s*/\s*[A-Z0-9]{2,12})*)\b"
)
CODE_SHAPE = re.compile(r"^(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{4,12}$")
_TITLE_FIELD = re.compile(r"^(?i:course\s*(?:title|name))\s*[:：|]?\s*(?P<title>.+)$")
_META_LINE = re.compile(
    r"^(?:[IVX]+\s*(?:st|nd|rd|th)?\s+semester\b.*|semester\s*[:\-]?\s*[\w/ ,]*|category\s*:.*|stream\s*:.*"
    r"|\(.*\)|course\s*type\s*:.*)$",
    re.IGNORECASE,
)
_TRAILING_SEMESTER = re.compile(r"\s+semester\s*[:\-]?\s*[\w/]+\s*$", re.IGNORECASE)
_SMALL_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"}
)
_ACRONYMS = frozenset({"DBMS", "SQL", "IOT", "VLSI", "NLP", "API", "CAD", "GIS", "HCI", "CAM", "DSP", "AIML"})


@dataclass(frozen=True)
class CourseHeader:
    """A course header found in a document's lines: code, printed title and where it starts."""

    code: str
    title: str | None
    code_index: int  # the "Course Code" line
    start_index: int  # first line of the header block (semester / title lines above the code line)

    @property
    def subject(self) -> str:
        return f"{self.code} {self.title}" if self.title else self.code


def smart_title(text: str) -> str:
    """Title-case an ALL-CAPS printed title ("DESIGN AND ANALYSIS OF ALGORITHMS"), keep others as printed."""
    text = " ".join(text.split())
    letters = [c for c in text if c.isalpha()]
    if not letters or any(c.islower() for c in letters):
        return text
    words = []
    for i, word in enumerate(text.split(" ")):
        bare = re.sub(r"[^A-Za-z]", "", word)
        if bare.lower() in _SMALL_WORDS and i > 0:
            words.append(word.lower())
        elif bare in _ACRONYMS or (0 < len(bare) <= 2):
            words.append(word)
        else:
            words.append(re.sub(r"[a-z]+", lambda m: m.group(0).capitalize(), word.lower(), count=1))
    return " ".join(words)


def _is_title_like(text: str) -> bool:
    return (
        0 < len(text) <= 100
        and any(c.isalpha() for c in text)
        and not text.endswith((".", ",", ";", ":"))
        and match_heading(text) is None
        and not CODE_LINE.search(text)
    )


def find_courses(lines: Sequence[str]) -> list[CourseHeader]:
    """Find every course header ("Course Code: 21CS44" and the title/semester lines above it).

    Why the walk upwards: VTU prints "IV Semester / OPERATING SYSTEMS / Course Code: 21CS44"; the
    title sits above the code line and must open the new course's header chunk, not close the
    previous course's last section.
    """
    courses: list[CourseHeader] = []
    floor = 0
    for idx, raw in enumerate(lines):
        m = CODE_LINE.search(raw)
        if not m:
            continue
        code = re.split(r"\s*/\s*", m.group("code"))[0].upper()
        if not CODE_SHAPE.match(code):
            continue
        title: str | None = None
        start = idx
        # "Course Title: X" close to the code line wins over the walk-up.
        for near in range(max(floor, idx - 3), min(len(lines), idx + 4)):
            tm = _TITLE_FIELD.match(lines[near].strip())
            if tm:
                title = CODE_LINE.split(tm.group("title"))[0].strip(" :|")
                start = min(start, near)
        j = idx - 1
        seen_title = title is not None
        title_parts: list[str] = []
        while j >= floor and idx - j <= 12:
            text = heading_candidate(lines[j])  # a DOCX title paragraph arrives as "# Title"
            if not text or _META_LINE.match(text):
                if text:
                    start = j
                j -= 1
                continue
            if not seen_title and _is_title_like(text):
                title_parts.insert(0, text)
                start = j
                seen_title = True
                # A long title wrapped onto two ALL-CAPS lines.
                if j - 1 >= floor:
                    above = heading_candidate(lines[j - 1])
                    if above and above.isupper() and _is_title_like(above) and not _META_LINE.match(above):
                        title_parts.insert(0, above)
                        start = j - 1
                        j -= 1
                j -= 1
                continue
            break
        if title is None and title_parts:
            title = _TRAILING_SEMESTER.sub("", " ".join(title_parts)).strip()
        courses.append(CourseHeader(code, smart_title(title) if title else None, idx, start))
        floor = idx + 1
    return courses
