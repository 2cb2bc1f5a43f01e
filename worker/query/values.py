"""The one value recogniser: the counts, percentages, marks splits, days, times, dates, durations,
editions, versions and numbered schedule lines a sentence states, each normalised and labelled with
what it is a value of.

Why a module of its own: the answer and the conflict check must read a value the same way. What a
question asks and what a sentence must hold to answer it (``worker.query.intent``: ``VALUE_PATTERNS``'
date is built from the month, weekday, date and time patterns here, the ``item`` kind from
:data:`NUMBERED_UNIT`), the counts a question names (``worker.query.reading``), and the values the
conflict check compares (``worker.indexes.conflicts``) all come from these tables and :func:`values_in`,
so no two of them can read "Mondays", "11:59PM" or "May 2, 2025" differently. The patterns of the
days, dates and times live in ``worker.text.value_shapes``, where ingest reads them too (a line that
only prints a date or a room is no document's title). Pure functions over text (no I/O).
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from syllabot.worker.query.outlines import UNITS
from syllabot.worker.text.keyword import keyword_stem
from syllabot.worker.text.terms import terms
from syllabot.worker.text.text_caches import PER_TEXT
from syllabot.worker.text.value_shapes import DATE as DATE
from syllabot.worker.text.value_shapes import DAY_RUN as _DAY_RUN
from syllabot.worker.text.value_shapes import DAY_SHORT as DAY_SHORT
from syllabot.worker.text.value_shapes import DAY_WORD as _DAY_WORD
from syllabot.worker.text.value_shapes import MONTH_NAMES as MONTH_NAMES
from syllabot.worker.text.value_shapes import MONTHS as _MONTHS
from syllabot.worker.text.value_shapes import NUMERIC_DATE, PERCENT, THING_NUMBER, WEEKDAYS, YEAR
from syllabot.worker.text.value_shapes import TIMES as TIMES

#: A span of time ("10-11 am", "1:30-3:00pm", "12:30am–3:20pm"): the start takes the end's half of
#: the day when it prints none ("1:30" is 13:30 here, not 01:30), unless it would then be after the
#: end ("11-1pm" starts at 11 am).
_TIME_RANGE = re.compile(
    r"(?<![\d:.])(\d{1,2})(?::(\d{2}))?\s*(?:([ap])\.?m\.?)?\s*[-–—]\s*(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b",
    re.IGNORECASE,
)
_DASH = re.compile(r"\s*[-–—]\s*")
#: Days written as a run of letters before a time ("MW 1:30-3:00pm", "MWF 10:10", "TTh 2pm"): R and
#: Th are Thursday, T and Tu Tuesday.
_DAY_LETTER = {"m": "monday", "t": "tuesday", "tu": "tuesday", "w": "wednesday", "r": "thursday",
               "th": "thursday", "f": "friday"}  # fmt: skip
_DAY_LETTERS = re.compile(r"Th|Tu|[MTWRF]")
_MULTIPLE = re.compile(r"(?<![\d.])(\d{1,2})\s*[×x]\s+(?=[a-z])", re.IGNORECASE)
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "single": 1,
}
_COUNT = re.compile(
    r"(?<![\d.,:/-])\b(\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\s+(?:[a-z-]+\s+){0,2}?([a-z]{3,}s)\b",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"(?<![\d.,:/-])\b(\d{1,3}|"
    + "|".join(_NUMBER_WORDS)
    + r")[\s-]+(?:working\s+|business\s+|calendar\s+)?(day|week|hour|minute|month|year)s?\b",
    re.IGNORECASE,
)
_EDITION = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:ed\.|edition)\b", re.IGNORECASE)
_MARKS = re.compile(r"\b(CIE|SEE|internal|external)\b\D{0,25}?(\d{2,3})\b(?!\s*%)", re.IGNORECASE)
_VERSION = re.compile(r"\bversion\s+(\d+\.\d+(?:\.\d+)?)|\bv(\d+\.\d+(?:\.\d+)?)\b", re.IGNORECASE)
#: A numbered unit of a schedule or outline ("Week 7", "wk 7", "lecture seven", "Module 3"): the
#: outlines' one table of unit words (``outlines.UNITS``), in the singular a number follows.
_UNIT_WORDS = {word: unit for word, unit in UNITS.items() if word[-1] != "s" and word != "weekly"}
#: The numbers a unit is written with in words ("week seven"): the counts' words, "single" aside.
_UNIT_NUMBERS = {**{w: n for w, n in _NUMBER_WORDS.items() if w != "single"}, "eleven": 11}
_UNIT_WORD = "|".join(_UNIT_WORDS)
NUMBERED_UNIT = re.compile(
    rf"\b({_UNIT_WORD})\s*[-#]?\s*({THING_NUMBER}|{'|'.join(_UNIT_NUMBERS)})\b", re.IGNORECASE
)
#: What a schedule says of one unit: "Week 7: human subjects training, collect data", up to the
#: next bullet, the next unit, a "Note:" after it, or the end of the sentence.
_ITEM = re.compile(
    NUMBERED_UNIT.pattern
    + rf"\s*[:–—-]\s*(?P<what>[^•▪◦●\n]+?)(?=\s*[•▪◦●\n]|\s+\b(?:{_UNIT_WORD})\s*[-#]?\s*{THING_NUMBER}\s*[:–—-]"
    + r"|\s+(?:Note|NB|N\.B\.)\s*:|[.;](?:\s|$)|$)",
    re.IGNORECASE,
)

#: Words that say nothing about *what* a value is of (the question's and the sentences' own).
_NOT_A_TOPIC = frozenset(
    {
        "many",
        "much",
        "number",
        "day",
        "date",
        "time",
        "due",
        "deadline",
        "week",
        "class",
        "course",
        "percent",
        "worth",
        "weight",
        "grade",
        "edition",
        "version",
        "hour",
        "hr",
        "hw",
        "pls",
        "lol",
        "nah",
        "actually",
        "again",
        "one",
        "two",
        "each",
        "total",
        "whole",
        "entire",
        "exactly",
        "wait",
        # the days a question offers ("due monday or friday?") are the values asked for, not its topic
        *WEEKDAYS,
        *DAY_SHORT,
    }
)


#: The same words as the keyword index stems them ("grade" is "grad" there): what a unit of the
#: version record says is read without them (``worker.indexes.versions``).
VALUE_WORDS = frozenset(keyword_stem(w) for w in _NOT_A_TOPIC)


@dataclass(frozen=True)
class Value:
    """A value of one kind, normalised for comparison, as printed for quoting, with what it is a
    value of: the content words around it (a table row's "2 × short presentations (5% each) 10%"
    gives 2 and 10% to presentations, not to the homework on the same line)."""

    kind: str
    norm: str
    text: str
    label: frozenset[str] = frozenset()


#: Words on each side of a value that say what it is a value of, by kind: a count names its noun
#: after it ("4 graded labs"), a percentage its component before it ("Homework 20%"), a day or a
#: time the event around it ("snippet due Monday").
_LABEL_WORDS = {
    "count": (0, 4),
    "duration": (6, 8),
    "percent": (5, 2),
    "weekday": (8, 8),
    "time": (8, 8),
    "date": (8, 8),
    "edition": (16, 1),
    "marks": (4, 2),
    "version": (6, 2),
}


#: Where a clause ends in a list of events: "pitch an idea (Monday), present (Wednesday), • …".
_CLAUSE_BREAK = re.compile(r"[,;•▪◦●]")


def _labelled(sentence: str, values: list[tuple[Value, int, int]]) -> list[Value]:
    out = []
    days = sum(1 for value, _, _ in values if value.kind == "weekday")
    for value, start, end in values:
        before, after = _LABEL_WORDS[value.kind]
        head, tail = sentence[:start], sentence[end:]
        if value.kind == "weekday" and days > 1:
            # Several days in one sentence are days of several events: each day is labelled by its
            # own clause only ("come up with an idea (Monday)", not the next bullet's "present").
            head = _CLAUSE_BREAK.split(head.rstrip(" ("))[-1]
            tail = _CLAUSE_BREAK.split(tail)[0]
        left = head.split()[-before:] if before else []
        right = tail.split()[:after]
        if value.kind == "count":
            right = _to_clause_end(right)
        out.append(Value(value.kind, value.norm, value.text, topic_of(" ".join([*left, value.text, *right]))))
    return out


def _to_clause_end(words: list[str]) -> list[str]:
    """The words up to the end of the clause: what a count counts is its own noun phrase, so
    "two things: 1) student presentations" counts things, and "2 × short presentations (5% each)"
    short presentations."""
    out = []
    for word in words:
        if word[:1] in "([{":
            break
        out.append(word)
        if word[-1:] in ":;,)]}.":
            break
    return out


def _weekday(word: str) -> str:
    w = word.lower().rstrip(".")
    return next(d for d in WEEKDAYS if d.startswith(w[:3]))


@functools.lru_cache(maxsize=PER_TEXT)
def values_in(sentence: str) -> tuple[Value, ...]:
    """Every value of a known kind in ``sentence`` (:func:`read_values`). Cached: the same passages
    come back question after question, and the conflict check reads them for every value question."""
    return read_values(sentence)


def read_values(sentence: str) -> tuple[Value, ...]:
    """Every value of a known kind in ``sentence``, normalised ("Mondays" -> monday; "11:59PM" ->
    23:59; "May 2, 2025" -> 05-02 and, being dated, also friday). Uncached, for a reader that reads
    each text once (the record of versions reads every unit of a collection once: through
    :func:`values_in`'s cache it would evict the passages questions keep coming back to)."""
    found: list[tuple[Value, int, int]] = []
    for m in PERCENT.finditer(sentence):
        found.append((Value("percent", f"{float(m.group(1)):g}%", m.group(0)), m.start(), m.end()))
    for m in _MULTIPLE.finditer(sentence):
        found.append((Value("count", str(int(m.group(1))), m.group(0).strip()), m.start(), m.end()))
    for m in _COUNT.finditer(sentence):
        n = _number(m.group(1))
        noun = m.group(2).lower()
        if noun in ("years", "minutes", "seconds", "hours", "pages", "points", "marks", "days"):
            continue
        found.append((Value("count", str(n), m.group(0)), m.start(), m.end()))
    for m in _DAY_WORD.finditer(sentence):
        word = m.group(1) or m.group(2)
        if (
            word.lower() in ("sat", "sun", "wed", "mon")
            and m.group(0).lower() == word.lower()
            and len(word) == 3
        ):
            # "sat" and "sun" are words too; "Mon"/"Wed" stay days only before a time or after "on"
            before = sentence[max(0, m.start() - 4) : m.start()].lower()
            if "on " not in before and not re.match(r"\s*[&,/-]|\s+\d", sentence[m.end() : m.end() + 3]):
                continue
        found.append((Value("weekday", _weekday(word), m.group(0)), m.start(), m.end()))
    for m in DATE.finditer(sentence):
        month, day, year = _MONTHS[m.group(1).lower()], int(m.group(2)), m.group(3)
        if not _on_calendar(month, day, int(year or 0)):
            continue  # "February 30" is no date: never a due date, an exam day or a disagreement
        found.append((Value("date", f"{month:02d}-{day:02d}", m.group(0)), m.start(), m.end()))
        if year:
            weekday = WEEKDAYS[_dt.date(int(year), month, day).weekday()]
            found.append(
                (Value("weekday", weekday, f"{m.group(0)} (a {weekday.capitalize()})"), m.start(), m.end())
            )
    spans = []
    for m in _TIME_RANGE.finditer(sentence):
        start_hour, end_hour, end_half = int(m.group(1)), int(m.group(4)), m.group(6).lower()
        half = (m.group(3) or "").lower() or (
            end_half if start_hour % 12 <= end_hour % 12 else ("a" if end_half == "p" else "p")
        )
        dash = _DASH.search(m.group(0))
        assert dash is not None
        for hour, minute, day_half, (start, end) in (
            (start_hour, m.group(2), half, (m.start(), m.start() + dash.start())),
            (end_hour, m.group(5), end_half, (m.start() + dash.end(), m.end())),
        ):
            h24, mins = hour % 12 + (12 if day_half == "p" else 0), int(minute or 0)
            if hour <= 12 and mins < 60:
                found.append((Value("time", f"{h24:02d}:{mins:02d}", sentence[start:end]), start, end))
        spans.append((m.start(), m.end()))
    for m in _DAY_RUN.finditer(sentence):
        for letters in _DAY_LETTERS.findall(m.group(1)):
            found.append((Value("weekday", _DAY_LETTER[letters.lower()], m.group(1)), m.start(1), m.end(1)))
    for m in NUMERIC_DATE.finditer(sentence):
        dated = _numeric_date(m)
        if dated is None:
            continue
        month, day, year = dated
        found.append((Value("date", f"{month:02d}-{day:02d}", m.group(0)), m.start(), m.end()))
        if year:
            weekday = WEEKDAYS[_dt.date(year, month, day).weekday()]
            found.append(
                (Value("weekday", weekday, f"{m.group(0)} (a {weekday.capitalize()})"), m.start(), m.end())
            )
    for m in TIMES.finditer(sentence):
        if any(start <= m.start() < end for start, end in spans):
            continue  # read with its span
        if m.group(4):  # 24-hour "10:10"
            hour, minute = int(m.group(4)), int(m.group(5))
        else:
            hour, minute = (
                int(m.group(1)) % 12 + (12 if m.group(3).lower() == "p" else 0),
                int(m.group(2) or 0),
            )
        if hour < 24 and minute < 60:
            found.append((Value("time", f"{hour:02d}:{minute:02d}", m.group(0)), m.start(), m.end()))
    for m in _DURATION.finditer(sentence):
        found.append(
            (Value("duration", f"{_number(m.group(1))} {m.group(2).lower()}", m.group(0)), m.start(), m.end())
        )
    for m in _EDITION.finditer(sentence):
        found.append((Value("edition", str(int(m.group(1))), m.group(0)), m.start(), m.end()))
    for m in _MARKS.finditer(sentence):
        side = {"internal": "cie", "external": "see"}.get(m.group(1).lower(), m.group(1).lower())
        found.append((Value("marks", f"{side}={int(m.group(2))}", m.group(0)), m.start(), m.end()))
    for m in _VERSION.finditer(sentence):
        found.append((Value("version", m.group(1) or m.group(2), m.group(0)), m.start(), m.end()))
    return (*_labelled(sentence, found), *_items(sentence))


def _numeric_date(m: re.Match[str]) -> tuple[int, int, int] | None:
    """(month, day, year or 0) of a :data:`NUMERIC_DATE` match; None when it is no calendar date."""
    groups = m.groups()
    if groups[6]:
        year, month, day = int(groups[6]), int(groups[7]), int(groups[8])
    else:
        first, second, year_text = groups[0:3] if groups[0] else groups[3:6]
        month, day = int(first), int(second)
        if month > 12 >= day:
            month, day = day, month
        year = int(year_text) if year_text else 0
        if year and year < 100:
            year += 2000
    return (month, day, year) if _on_calendar(month, day, year) else None


def _on_calendar(month: int, day: int, year: int = 0) -> bool:
    """Is there such a day: in that year, or (no year printed) in some year ("2/29" is, "2/30" and
    "April 31" are not)."""
    try:
        _dt.date(year or 2000, month, day)  # 2000: a leap year
    except ValueError:
        return False
    return True


def _number(text: str, words: dict[str, int] = _NUMBER_WORDS) -> int:
    """A number written in digits or as one of ``words`` ("3", "Three")."""
    return int(text) if text.isdigit() else words[text.lower()]


def _unit_token(word: str, number: str) -> str:
    """ "Week", "seven" -> "week7": one token for a numbered unit, however it is written."""
    return f"{_UNIT_WORDS[word.lower()]}{_number(number, _UNIT_NUMBERS)}"


def _items(sentence: str) -> list[Value]:
    """What a schedule or outline says of each numbered unit, labelled with the unit alone (the
    value is the description's content words; ``conflicts._same`` compares them loosely)."""
    out = []
    for m in _ITEM.finditer(sentence):
        words = sorted(set(terms(m.group("what"))))
        if words:
            text = " ".join(m.group(0).split())
            out.append(Value("item", " ".join(words), text, frozenset({_unit_token(m.group(1), m.group(2))})))
    return out


def topic_of(text: str) -> frozenset[str]:
    """What a question or sentence is about: its content words, without value words or numbers,
    and each numbered unit it names as one token ("week 7" -> week7)."""
    words = frozenset(t for t in terms(text) if not t.isdigit() and t not in _NOT_A_TOPIC and len(t) > 2)
    return words | unit_tokens(text)


_YEAR = re.compile(rf"\b{YEAR}\b")


def from_a_date(value: Value) -> bool:
    """A date, or the weekday read from a dated date ("May 2, 2025 (a Friday)")."""
    return value.kind == "date" or (value.kind == "weekday" and value.text.endswith(")"))


def other_terms(a: Sequence[Value], b: Sequence[Value]) -> bool:
    """Whether two sets of values date their days in different years only: two terms' calendars
    ("08.21.2018 Tutorial | Lidar" against "08.22.2017 Workshop | Lidar"), whose dates are not two
    versions of one date."""
    years_a = {m.group(0) for v in a if v.kind == "date" and (m := _YEAR.search(v.text))}
    years_b = {m.group(0) for v in b if v.kind == "date" and (m := _YEAR.search(v.text))}
    return bool(years_a and years_b and not years_a & years_b)


def unit_tokens(text: str) -> frozenset[str]:
    """Each numbered unit ``text`` names, as one token ("Week 7", "wk seven" -> week7)."""
    return frozenset(_unit_token(m.group(1), m.group(2)) for m in NUMBERED_UNIT.finditer(text))
