"""The shapes of the values a line can print: days, dates, times, terms, course codes, rooms, page
labels and version marks, as patterns; and the one pattern each of a year, a percentage and a
numbered thing's number, which every other pattern of them builds on (they were written two or
three times with different ranges).

Why in the text stage: the value recogniser (``worker.query.values``) reads these to normalise what a
sentence states, and ingest reads the same shapes to tell a document's title from a line that only
prints a value (a room, a date, a page label: ``worker.ingest.doc_titles``). Ingest may not import the
question's reading, so the patterns live here, once, for both. Patterns only; no I/O.
"""

from __future__ import annotations

import re

#: A year as courses print one (1900–2099): the one range every year pattern uses (a date's, a
#: term's, a document's dating, a reference's).
YEAR = r"(?:19|20)\d\d"

#: A numbered thing's number ("Week 7", "Homework 12", "Lecture 19", "Studio 217"): one to three
#: digits, for every pattern of a thing and its number (the values' units, the record's numbered
#: things); four digits are a year, a room or a course code (:data:`NUMBERED_NAME`).
THING_NUMBER = r"\d{1,3}"

#: A percentage ("40%", "12.5 %", "10 percent"), its number (at most three digits) as group 1: the
#: value recogniser's percents and the course card's weights.
PERCENT = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*(?:%|percent\b)", re.IGNORECASE)

#: The weekdays and their short forms ("Tue", "Thurs"): one table for the values ``worker.query.values`` reads, the words
#: that are no topic, and the date a value question's sentence must hold (``intent.VALUE_PATTERNS``).
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DAY_SHORT = ("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun")
DAY_WORD = re.compile(
    rf"\b({'|'.join(DAY_SHORT)})(?:day)?s?\b\.?|\b({'|'.join(WEEKDAYS)})s?\b", re.IGNORECASE
)
MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for m in names
}
#: The month names, longest first ("september" before "sep"): the values' dates and the intent's.
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
DATE = re.compile(rf"\b({MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.IGNORECASE)
#: A date written in numbers: "10/9", "8/26/2020", "11.29.2018" (dotted only with its year: "10.5" is a
#: number), "2021-02-15". Month first unless the first number cannot be a month ("17.10.2022").
NUMERIC_DATE = re.compile(
    r"(?<![\w./:-])(?:(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?|(\d{1,2})\.(\d{1,2})\.(\d{4})"
    r"|(\d{4})-(\d{2})-(\d{2}))(?![\w/]|\.\d)"
)

TIMES = re.compile(
    r"(?<![\d:])(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b|(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])", re.IGNORECASE
)
#: Days written as a run of letters before a time ("MWF 10:10", "TTh 2pm").
DAY_RUN = re.compile(r"\b((?:Th|Tu|[MTWRF]){2,4})\b(?=\s*,?\s*\d{1,2}(?::\d{2}|\s*[ap]\.?m))")

#: A term with its season and year read apart ("Fall 2018", "Spring semester 2024", "Spr 2024",
#: "2023 Summer", "Fall 2018/19"): the course card orders documents by it (``worker.text.currency``).
SEASON_TERM = re.compile(
    r"\b(?P<season>spring|spr|summer|fall|autumn|winter)(?:\s+(?:semester|term|quarter|session))?,?\s+"
    rf"(?P<year>{YEAR})(?:\s*/\s*\d{{2,4}})?\b"
    rf"|\b(?P<year2>{YEAR})\s+(?P<season2>spring|summer|fall|autumn|winter)\b",
    re.IGNORECASE,
)
#: A term, its short forms too ("SP23", "fa 19").
TERM = re.compile(
    rf"{SEASON_TERM.pattern}|\b(?:spr|sp|fa|su|wi)\.?\s?'?(?:19|20)?\d\d\b",
    re.IGNORECASE,
)
#: A course code: a department and a number ("CER 210", "GLAZEBIO 215", "CLAY118QX", "ART-ED 500",
#: "CER 365P"). The same shape prints a room ("CER 114"): :func:`place_line` tells them apart.
COURSE_CODE = re.compile(
    r"(?<![A-Za-z0-9])(?P<dept>[A-Z]{2,8}(?:-[A-Z]{2,8})?)[ \t]?(?P<num>\d{2,4}[A-Z]{0,2})(?![A-Za-z0-9])"
)
#: Capitalised words a number follows that are no department: a term, a room, a page, a unit.
NOT_DEPARTMENT = frozenset(
    {"SPRING", "FALL", "SUMMER", "WINTER", "ROOM", "PAGE", "WEEK", "LECTURE", "UNIT", "MODULE", "AM", "PM"}
)
#: A word and a number of three or four digits: a room ("Room 2047", "Studio 217", "Hale B03") or a
#: course written out ("Biology 151"); either way no title by itself.
NUMBERED_NAME = re.compile(r"\b[A-Z][A-Za-z]*\.?[ \t]+[A-Z]?\d{3,4}[A-Z]?\b")
#: The words that say a line names a place: what follows is a room, not a course.
PLACE_WORD = re.compile(
    r"\b(?:room|rm|hall|building|bldg|location|where|classroom|venue|office|auditorium|online|zoom)\b",
    re.IGNORECASE,
)
#: A page label: "Page 1", "p. 3", "1/12", "3 of 40".
PAGE_LABEL = re.compile(
    r"\b(?:page|p\.|pp\.)\s*\d+(?:\s*(?:/|of)\s*\d+)?|(?<![\w/])\d{1,3}\s*(?:/|\bof\b)\s*\d{1,3}(?![\w/])",
    re.IGNORECASE,
)
#: A version mark: "v1.8.10", "version 2.1".
VERSION_MARK = re.compile(r"\bv(?:ersion)?\s*\d+(?:\.\d+)+\b", re.IGNORECASE)

#: Every shape a line may print that names no document, in the order they are taken out.
_VALUE_SHAPES = (
    VERSION_MARK,
    TERM,
    DATE,
    NUMERIC_DATE,
    DAY_RUN,
    TIMES,
    DAY_WORD,
    PAGE_LABEL,
    COURSE_CODE,
    NUMBERED_NAME,
)


def meeting_line(line: str) -> bool:
    """A line that says when something meets: it prints a time or a day ("Lectures: MWF 9-10 am")."""
    return bool(TIMES.search(line) or DAY_RUN.search(line) or DAY_WORD.search(line))


def place_line(line: str) -> bool:
    """A line that names a place or a meeting ("Location: CER 114", "TR 2:30-3:45, CER 114"): a code
    printed there is a room."""
    return bool(PLACE_WORD.search(line)) or meeting_line(line)


def prints_value(line: str) -> bool:
    """Whether ``line`` prints any of the values :func:`without_values` takes out."""
    return any(shape.search(line) for shape in _VALUE_SHAPES)


def without_values(line: str) -> str:
    """``line`` with every value it prints taken out (dates, times, terms, codes, rooms, page labels,
    version marks): what is left is what the line says in words."""
    for shape in _VALUE_SHAPES:
        line = shape.sub(" ", line)
    return line
