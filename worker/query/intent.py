"""What a question asks for, read from its words alone: a pure function, no retrieval.

Why: a student asking for "the COs of CN" wants the *whole* list of one course's outcomes, not the
three sentences that happen to share the most words with the question; "how many credits?" wants
the one table row holding a number; "when is the exam?" wants a date, and a passage about exams
without one does not answer it; "which module covers paging?" wants a module named first. The
answerer uses an :class:`Intent` to pick the shape of the reply and the evidence it needs.

Section intents name the kinds of block the chunker keeps whole (``worker/ingest/chunking.py``): course
outcomes, textbooks, reference books, lab programs, the marks split. (Objectives are kept whole by
the chunker too, but asking for them as a block bought nothing held out: docs/BENCHMARKS.md.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from syllabot.worker.query.question import references
from syllabot.worker.query.values import DATE, DAY_SHORT, MONTH_NAMES, NUMBERED_UNIT, TIMES, WEEKDAYS
from syllabot.worker.text.documents import Chunk

_I = re.IGNORECASE

#: (intent name, question pattern, section-name pattern of the chunks that hold it)
_SECTIONS: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = (
    (
        "outcomes",
        re.compile(r"\b(?:course\s+)?outcomes?\b|\bcos\b|\bco'?s\b|\bco\d+\b|\bclos?\s+outcomes?\b", _I),
        re.compile(r"outcome", _I),
    ),
    (
        "references",
        re.compile(r"\breference\s*-?\s*books?\b|\bref\.?\s*books?\b|\breferences\b", _I),
        re.compile(r"reference", _I),
    ),
    (
        "textbooks",
        re.compile(
            r"\btext\s*-?\s*books?\b|\bprescribed\s+books?\b|\bwhich\s+books?\b|\bbooks?\s+(?:to|for|do)\b",
            _I,
        ),
        re.compile(r"text\s*-?\s*book", _I),
    ),
    (
        "lab",
        re.compile(
            r"\blab(?:oratory)?\s*(?:programs?|programmes?|experiments?|exercises?|component|list|questions?)\b"
            r"|\bexperiments?\b|\bpractical\s+(?:component|programs?|list)\b|\blab\s+(?:syllabus|topics)\b",
            _I,
        ),
        re.compile(r"^(?:practical|laboratory)\s+component|experiment|^lab\b|lab\s+(?:programs?|list)", _I),
    ),
    (
        "marks",
        re.compile(
            r"\b(?:marks?|mark)\s+(?:split|breakup|break-up|distribution|division|scheme)\b"
            r"|\bcie\b.*\b(?:split|breakup|break-up|distribution|consist|made\s+up|calculated|tests?|assignments?)\b"
            r"|\binternals?\b.*\b(?:tests?|marks?|assessment|how\s+many)\b"
            r"|\b(?:tests?|assignments?)\b.*\b(?:cie|internals?)\b|\bassessment\s+(?:details|scheme|pattern)\b",
            _I,
        ),
        re.compile(r"continuous\s+internal|\bcie\b|assessment|components?\s+marks|evaluation", _I),
    ),
)

_WHERE = re.compile(
    r"\b(?:which|what|wich|whch|in\s+which)\s+(?:module|unit|chapter|mod|part)\b"
    r"|\b(?:module|unit|mod|chapter)\s+(?:no\.?|number)\b"
    r"|\b(?:come|comes|coming|covered|taught|falls?)\s+(?:in|under)\s+(?:which|what|wich)\b"
    r"|\bin\s+(?:which|what|wich)\s+(?:module|unit|mod)\b"
    r"|\b(?:module|mod|unit)\s*\?\s*$",
    _I,
)

#: What answers "when": a day, a date, a time, or a span ("within 10 days of the exam").
_WHEN = ("weekday", "date", "time", "duration")

#: The kinds of value a question asks for, by its words, read once (:func:`read_intent`) for both
#: consumers so they cannot disagree: (kind, the value the answer's sentence must hold, the kinds of
#: value the conflict check compares, pattern). ``Intent.wants`` is the first matching row's value:
#: rows run from the most particular ("how many hours" asks a duration before a number). A row with
#: no value is a hint only ("is it due Monday", "CIE", "which edition"): too loose to make a sentence without
#: such a value no answer, enough for the check, which compares only values two passages both give.
_KINDS: tuple[tuple[str, str | None, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (kind, wants, compared, re.compile(pattern, _I))
    for kind, wants, compared, pattern in (
        (
            "duration",
            "duration",
            ("duration",),
            r"\bhow\s+(?:long|soon)\b|\bduration\b|\bhow\s+many\s+(?:minutes|hours|days|weeks|months)\b",
        ),
        (
            "when",
            "date",
            _WHEN,
            r"\bwhen\b|\bwhat\s+(?:time|date)\b|\bwhich\s+(?:day|date|week)\b|\bdeadlines?\b|\bdates?\b",
        ),
        ("count", "number", ("count",), r"\bhow\s+many\b|\bnumber\s+of\b"),
        ("percent", "number", ("percent",), r"\bpercent(?:age)?\b|\bweightage\b"),
        ("marks", "number", ("marks", "percent"), r"\bmarks?\b"),
        ("hours", None, ("time", "weekday"), r"\bhours?\b|\bhrs\b"),
        ("amount", "number", (), r"\bminimum\b|\bhow\s+much\b|\bcredits?\b|\bl\s*:\s*t\s*:\s*p"),
        ("due", None, _WHEN, r"\bdue\b|\bday\s+of\b|\b(?:what|which)\s+days?\b"),
        (
            "counted",
            None,
            ("count",),
            r"\bcount\b|#\s*of\b"
            r"|\b(?:\d+|one|two|three|four)\b(?:\s+\w+){0,3}\s+or\s+(?:just\s+)?(?:\d+|one|two|three|four)\b"
            r"|\b(?:is\s+it|just|only)\s+(?:\d+|one|two|three|four|a\s+single)\s+[a-z]"
            # what *each* one is worth depends on how many there are ("1 × … 10%" against "2 × … (5% each)")
            r"|\beach\b.{0,40}\b(?:worth|weigh|count)|\b(?:worth|weigh)\w*\s+each\b",
        ),
        ("split", None, ("marks", "percent"), r"\bcie\b|\bsee\b|\binternal\b|\bexternal\b|\bsplit\b"),
        ("breakdown", None, ("percent", "count"), r"\bbreak\s*down|\bgrading\b|\bgrade\s+split"),
        ("edition", None, ("edition",), r"\bedition\b|\b(?:text\s*)?books?\b"),
        ("version", None, ("version",), r"\bversion\b|\bwhich\s+v\b"),
        ("item", None, ("item",), NUMBERED_UNIT.pattern),
    )
)

#: The value kinds a sentence must hold to answer such a question.
VALUE_PATTERNS: dict[str, re.Pattern[str]] = {
    "date": re.compile(
        rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{MONTH_NAMES})\b|{DATE.pattern}|{TIMES.pattern}"
        rf"|\b\d{{1,2}}[/.-]\d{{1,2}}(?:[/.-]\d{{2,4}})?\b|\b(?:{'|'.join(WEEKDAYS)})s?\b|\b(?:{'|'.join(DAY_SHORT)})\b"
        r"|\b(?:every|each)\s+(?:\w+\s+){0,2}(?:day|week|month|moon|morning|evening|night|weekend)\b"
        r"|\b(?:week|day|month|semester)\s+\d+\b|\b\d+(?:st|nd|rd|th)\s+(?:week|day|class|lecture)\b"
        r"|\b(?:noon|midnight|finals?\s+week|end\s+of\s+(?:the\s+)?(?:semester|term|week|class))\b",
        _I,
    ),
    "duration": re.compile(
        r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|several|a\s+few"
        r"|a\s+couple\s+of)\s*(?:working\s+|business\s+|calendar\s+)?(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?"
        r"|semesters?|terms?|quarters?)\b",
        _I,
    ),
    "number": re.compile(
        r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)\b", _I
    ),
}


@dataclass(frozen=True)
class Intent:
    """The shape of answer a question asks for (see the module docstring)."""

    section: str | None = None  # "outcomes", "textbooks", ... : a whole list from one block
    where: bool = False  # "which module covers X?": name the module first
    #: the value to find: "duration", "date", "number" (none for a list or a module; who teaches, how
    #: to reach them and when they meet are the course card's slots, ``worker.query.card``)
    wants: str | None = None
    #: the kinds of value the conflict check compares (``worker.indexes.conflicts``): from the same ``_KINDS``
    #: rows as ``wants``, read once
    compared: frozenset[str] = frozenset()
    cos: tuple[int, ...] = ()  # specific course outcomes asked ("CO3")
    modules: tuple[str, ...] = ()  # modules named ("Module 3", "Unit II")
    breakdown: bool = False  # "how is the grade broken down?": every graded component and its weight

    @property
    def is_list(self) -> bool:
        """Asks for a whole block: a list section, or "what's in module 3" (not one CO of the list)."""
        return (self.section is not None and not self.cos) or (bool(self.modules) and not self.where)


def section_pattern(section: str) -> re.Pattern[str]:
    """The pattern a chunk's section name matches when it holds ``section`` (an intent name)."""
    for name, _, chunk_pattern in _SECTIONS:
        if name == section:
            return chunk_pattern
    raise KeyError(section)


_LAB_IN_MODULE = re.compile(r"laboratory\s+component\s*:", _I)


def holds_section(chunk: Chunk, section: str) -> bool:
    """Does this chunk hold (part of) the block ``section`` names? VTU prints lab programs inside
    each module under "Laboratory Component:", so for "lab" such module chunks count too."""
    if chunk.section and section_pattern(section).search(chunk.section):
        return True
    return section == "lab" and chunk.module is not None and bool(_LAB_IN_MODULE.search(chunk.text))


@lru_cache(maxsize=4096)
def read_intent(question: str) -> Intent:
    """The :class:`Intent` of a cleaned question (``worker.query.question.clean_question`` output)."""
    refs = references(question)
    section = next((name for name, pattern, _ in _SECTIONS if pattern.search(question)), None)
    if refs.cos and section is None:
        section = "outcomes"
    where = bool(_WHERE.search(question))
    asks = [(wants, compared) for _, wants, compared, pattern in _KINDS if pattern.search(question)]
    wants = None
    if section is None and not where:
        wants = next((value for value, _ in asks if value), None)
    # "what % of the grade is the final exam?" asks one component's weight, "… for each" them all
    breakdown = (
        section is None
        and not where
        and bool(_BREAKDOWN.search(question))
        and (wants is None or bool(_ALL_PARTS.search(question)))
    )
    return Intent(
        section=section,
        where=where,
        wants=wants,
        compared=frozenset(kind for _, compared in asks for kind in compared),
        cos=refs.cos,
        modules=refs.modules,
        breakdown=breakdown,
    )


#: A question about how the grade is made up, in any course's words ("how is the grade broken
#: down? like % for each thing", "grading breakdown", "how r grades calculated", "what are the
#: grade weights"); VTU's CIE/SEE marks split is its own section (``marks``).
_ALL_PARTS = re.compile(r"\beach\b|\bbreak\s*-?\s*down\b|\bbroken\s+down\b|\bsplit\b|\bweights\b", _I)
_BREAKDOWN = re.compile(
    r"\bgrad(?:e|es|ing)\b[^?]{0,40}?\b(?:break\s*-?\s*down|broken\s+down|split|distribution|weights?"
    r"|weighting|weighted|composed|made\s+up|calculated|determined|computed|components?|schedule"
    r"|scheme|structure)\b"
    r"|\b(?:break\s*-?\s*down|weights?|weighting|split|distribution)\s+(?:of\s+)?(?:the\s+|my\s+|our\s+)?"
    r"(?:final\s+)?grad"
    r"|%\s*(?:for|of)\s+each\b",
    _I,
)


#: A question about what changed between versions ("did the grading change?", "what was the old
#: deadline"): the only questions a superseded document may answer (cited as an earlier version).
_CHANGE = re.compile(
    r"\b(?:chang(?:e|ed|es|ing)|earlier|previous(?:ly)?|old(?:er)?\s+(?:version|syllabus|one|policy)"
    r"|used\s+to|originally|orig|before\s+the\s+(?:update|revision|change)|revis(?:ed|ion)|updated?)\b",
    re.IGNORECASE,
)


def asks_about_a_change(text: str) -> bool:
    """Whether the question asks what changed, or what an earlier version said."""
    return _CHANGE.search(text) is not None
