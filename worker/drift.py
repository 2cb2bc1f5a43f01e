"""What an outline promises a lecture covers, against what the lecture's own notes do.

A syllabus is written once; the lecture notes are rewritten each year. EC 607's syllabus and intro
slides both list "16. Databases: SQL(ite) and BigQuery", while the notes titled "Lecture 16:
Databases" never name SQLite and start with "Getting started: DuckDB". No sentence states the engine
as a value, so the value check (``worker.conflicts``) has nothing to compare; what differs is which
*tools* each document names. Here a drift is an outline entry naming a tool (a name printed with
capitals inside it: "BigQuery", "SQL(ite)", "CSS") that the notes of that lecture never print, while
the notes' opening (title and contents) names a tool the entry does not: both sides, each cited,
are the disagreement. Both the teacher's list and the answer's note read them from here; pure functions
over a collection's passages, read once per snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from syllabot.worker.answerers.decision import terms
from syllabot.worker.chunking import chunk_body
from syllabot.worker.outlines import NUMBERED, UNITS, Entry, Outline, same_entry
from syllabot.worker.sentences import split_sentences

#: "SQL(ite)", "Git(Hub)": a name written with its optional tail in brackets is the whole name.
_BRACKETED_TAIL = re.compile(r"\b([A-Za-z]{2,})\(([a-z]{1,5}|[A-Z][a-z]{1,5})\)")
#: A tool's name as printed: two capitals or more in a word of three letters or more ("CSS",
#: "BigQuery", "DuckDB", "APIs"), or a capital after a small letter ("ggplot2"'s kin aside).
_NAME = re.compile(r"\b(?=[A-Za-z0-9]*[A-Z][A-Za-z0-9]*[A-Z])[A-Za-z][A-Za-z0-9]{2,}\b")
#: A person's name, however capitalised ("McDermott", "DeLong"): no tool.
_SURNAME = re.compile(r"^(?:Mc|Mac|De|Di|Da|La|Le|Van|Von|O)[A-Z][a-z]")
#: A quoted sentence of the notes has at least this many words when one has ("duckdb embeds a
#: DuckDB database." is a list's item).
_SAYS_WORDS = 8
#: The notes' tool is printed in at least this many of their sentences (the contents' line being
#: one): a name said once in passing is not what the lecture uses.
_USED = 2


@dataclass(frozen=True)
class Drift:
    """One outline entry against its lecture's notes: the entry (its outline's document and
    chunk row), the names it gives that the notes never print, and what the notes use instead:
    the tool their opening (title and contents) names that the entry does not, with the sentence
    (and its row) where the notes first print it."""

    outline_doc: str
    unit: str
    entry: Entry[int]
    lecture_doc: str
    missing: tuple[str, ...]
    instead: str
    sentence: str
    row: int


def names_in(text: str) -> tuple[str, ...]:
    """The tools ``text`` names, as printed, in order, each once ("SQL(ite)" read as "SQLite")."""
    joined = _BRACKETED_TAIL.sub(lambda m: m.group(1) + m.group(2), text)
    found = (_singular(m.group()) for m in _NAME.finditer(joined))
    return tuple(dict.fromkeys(n for n in found if not _SURNAME.match(n)))


def _singular(name: str) -> str:
    """ "APIs" is the API: a plural "s" after capitals is no part of the name."""
    return name[:-1] if len(name) > 3 and name.endswith("s") and name[:-1].isupper() else name


def _prints(text: str, name: str) -> bool:
    """Whether ``text`` prints ``name`` (any case, as a word's start: "API" in "APIs")."""
    return re.search(rf"\b{re.escape(name)}", text, re.IGNORECASE) is not None


def _names(sentence: str, name: str) -> bool:
    """Whether ``sentence`` prints ``name`` as printed, a whole word ("DuckDB", not "duckdb")."""
    return re.search(rf"\b{re.escape(name)}\b", sentence) is not None


def _spelled_out(text: str, acronym: str) -> bool:
    """Whether ``text`` spells an acronym out ("breadth-first search" for "BFS"): the notes then
    name it, in other words."""
    if not (acronym.isupper() and 2 < len(acronym) < 6):
        return False
    words = r"[\w’']*[\s-]+".join(re.escape(c) for c in acronym.lower())
    return re.search(rf"\b{words}\w*", text, re.IGNORECASE) is not None


def titled_unit(title: str) -> tuple[str, int, frozenset[str]] | None:
    """The unit, number and title words of a document titled as one unit ("Lecture 16:
    Databases" -> ("lecture", 16, {"database"})), or None."""
    m = NUMBERED.search(title)  # the one "lecture 16" pattern, also a question's
    if m is None:
        return None
    return UNITS[m.group("unit").lower()], int(m.group("number")), frozenset(terms(title[m.end() :]))


def _instead(rows: Sequence[tuple[int, str]], outline_text: str) -> tuple[str, str, int] | None:
    """The tool the notes' opening passage (their title and contents) names and the outline's
    document never prints (not a header every page repeats: "MIT" is in the syllabus too), printed
    again in the notes, the most printed if several, with the first sentence after the
    opening that prints it (the section itself, not the contents' line) and its row; None when the
    opening names no such tool."""
    if not rows:
        return None
    # the sentences after the opening first, the opening's last (its contents' line is no quote)
    sentences = [
        (" ".join(sentence.split()), row)
        for row, text in [*rows[1:], rows[0]]
        for sentence in split_sentences(chunk_body(text))
    ]
    distinct = {sentence for sentence, _ in sentences}  # a document's windows overlap

    def printed(name: str) -> int:
        return sum(1 for sentence in distinct if _names(sentence, name))

    new = [
        n for n in names_in(chunk_body(rows[0][1])) if not _prints(outline_text, n) and printed(n) >= _USED
    ]
    if not new:
        return None
    name = max(new, key=printed)
    said = [(sentence, row) for sentence, row in sentences if _names(sentence, name)]
    # a sentence that says something ("… using the excellent DuckDB backend …") before a list item
    full = [(sentence, row) for sentence, row in said if len(sentence.split()) >= _SAYS_WORDS]
    return (name, *(full or said)[0]) if said else None


def lecture_drifts(
    outlines: Sequence[tuple[str, Outline[int], str]],
    lectures: Sequence[tuple[str, str, Sequence[tuple[int, str]]]],
) -> list[Drift]:
    """The drifts of one course: ``outlines`` are (doc_id, outline, the document's whole text) of
    its documents that print one, ``lectures`` (doc_id, title, [(row, text)] in order) of its
    documents titled as one unit. An entry is compared with the document of its unit and number
    whose title shares its words; a tool the notes spell out ("breadth-first search" for "BFS") is
    printed there."""
    found: list[Drift] = []
    for doc_id, title, rows in lectures:
        titled = titled_unit(title)
        if titled is None:
            continue
        unit, number, words = titled
        notes = "\n".join(text for _, text in rows)
        for outline_doc, outline, outline_text in outlines:
            if outline_doc == doc_id or outline.unit != unit:
                continue
            entry = next((e for e in outline.entries if e.number == number), None)
            if entry is None or not same_entry(entry.words, words):
                continue
            missing = tuple(
                n for n in names_in(entry.text) if not _prints(notes, n) and not _spelled_out(notes, n)
            )
            if not missing:
                continue
            instead = _instead(rows, outline_text)
            if instead is not None:
                found.append(Drift(outline_doc, unit, entry, doc_id, missing, *instead))
    return found


#: A question asking what a lecture uses ("which database do we use", "what db engine r the notes
#: built on", "do i need to install sqlite").
_ASKS_TOOL = re.compile(
    r"\b(?:use[sd]?|using|built|engine|tools?|software|packages?|librar(?:y|ies)|backend|install\w*|platform)\b",
    re.IGNORECASE,
)


def asks_about(question: str, drift: Drift) -> bool:
    """Whether ``question`` asks about what the drifted lecture uses: it names a tool the outline
    promises and the notes never print ("do i need to install sqlite"), or it asks what a lecture
    uses and names the notes' tool or the lecture (by its number or its title's words). "how do i
    connect to duckdb" alone asks the notes, not the outline."""
    if any(_prints(question, n) for n in drift.missing):
        return True
    if not _ASKS_TOOL.search(question):
        return False
    if _prints(question, drift.instead):
        return True
    number = NUMBERED.search(question)
    if number is not None:
        unit = UNITS[number.group("unit").lower()]
        return unit == drift.unit and int(number.group("number")) == drift.entry.number
    return bool(set(terms(question)) & drift.entry.words)
