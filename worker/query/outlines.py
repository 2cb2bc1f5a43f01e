"""A course's numbered outlines read whole, and what a question asks of them.

Why: a syllabus numbers its lectures 1–20 while the course README lists 1–19, and a revised lecture
plan renumbers what the first one said. "How many lectures are there", "what's the last lecture",
"which lecture is PCA" and "is there a lecture on ethics" are answered by a whole list, which
retrieval returns in pieces (an outline runs over several windows and pages), and the conflict
check's sentences (``worker.indexes.conflicts``) never hold a list's length or its last entry. Here an
outline is read as a list, from a document's passages in order: its entries, their numbers and
titles, and the unit it numbers (lecture, week, module …) named by its own heading or prefix.

Pure functions over text. ``IndexSnapshot.outline_of`` reads each document's outline once per
snapshot, ``retrieval.outline_rows`` passes the asked unit's outlines of the top hits' course to the
answer path, ``answerers.extractive.outline_reply`` answers from the current document's outline, and
``conflicts.outline_conflict`` says when two documents' outlines answer differently.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from syllabot.worker.text.terms import terms

S = TypeVar("S")

#: What an outline numbers, by the words that name it ("Lecture outline", "Weekly schedule").
UNITS = {
    "lecture": "lecture",
    "lectures": "lecture",
    "lec": "lecture",
    "lecs": "lecture",
    "week": "week",
    "weeks": "week",
    "weekly": "week",
    "wk": "week",
    "module": "module",
    "modules": "module",
    "session": "session",
    "sessions": "session",
    "unit": "unit",
    "units": "unit",
}
_UNIT = "|".join(sorted(UNITS, key=len, reverse=True))
#: One numbered entry on a line of its own: "14. Docker", "3) Clustering", "Week 7: Collect data",
#: "•Week 6: Implement an experiment" (a slide's bullet before it).
_ENTRY = re.compile(
    rf"^[ \t]*(?:[•●▪◦*-][ \t]*)?(?:(?P<unit>{_UNIT})[ \t]*)?(?P<number>\d{{1,2}})[ \t]*(?:[.):]|(?(unit)[-–—]))[ \t]+(?P<what>\S.*)$",
    re.IGNORECASE,
)
#: An indented sub-item of the entry above it ("    - Part 1"): part of that entry.
_SUB_ITEM = re.compile(r"^[ \t]{2,}[-–•▪◦●*][ \t]+(?P<what>\S.*)$")
#: A sub-item that is one part of its entry ("Part 1", "Part II").
_PART = re.compile(r"^part\s+(?:\d{1,2}|[ivx]{1,4}|one|two|three|four)\b", re.IGNORECASE)
#: A Markdown list of links after a title ("[.html | .pdf | .Rmd]"): not part of what it is called.
_LINKS = re.compile(r"\s*\[+[^\]]*(?:\||\.html|\.pdf|\.rmd|https?:)[^\]]*\]+", re.IGNORECASE)
_URL = re.compile(r"(?:https?://|www\.)", re.IGNORECASE)
#: The heading words an outline's unit is named by, read just before its first entry.
_NAMES_UNIT = re.compile(rf"\b({_UNIT})\b", re.IGNORECASE)
#: How far before the first entry its heading is looked for.
HEADING_CHARS = 200
#: An outline has at least this many entries (a list of three readings is not an outline).
MIN_ENTRIES = 5
#: Two entries are the same unit when this share of the shorter one's words is in the other:
#: "Google Compute Engine" is "Virtual machines / cloud servers (Google Compute Engine)".
SAME_SHARE = 0.5


@dataclass(frozen=True)
class Entry(Generic[S]):
    """One numbered entry: its number, its text as printed (number and sub-items included), its
    title's content words, and where it is printed (a passage's row, or the hit that cites it)."""

    number: int
    text: str
    words: frozenset[str]
    source: S
    parts: int = 0  # its sub-items named as parts ("- Part 1", "- Part 2"): one entry taught in two


@dataclass(frozen=True)
class Outline(Generic[S]):
    """A document's numbered outline: the unit it numbers and its entries, 1 to N in order."""

    unit: str
    entries: tuple[Entry[S], ...]

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def whole(self) -> bool:
        """Whether it starts at 1: a schedule's later part ("Week 6" to "Week 10") cannot say how
        many units there are."""
        return self.entries[0].number == 1


def same_entry(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two entries' words name one unit (shared words, by the shorter's share)."""
    if not a or not b:
        return False
    return len(a & b) >= SAME_SHARE * min(len(a), len(b))


#: A link's site as Markdown links are read ("Guest lecture (docs.google.com)"): where it points,
#: not what the entry is ("docs" would name "Docker").
_HOST = re.compile(r"\(\s*[\w-]+(?:\.[\w-]+)+\s*\)")


def _title_words(text: str) -> frozenset[str]:
    return frozenset(t for t in terms(_HOST.sub(" ", text)) if not t.isdigit())


#: A heading-like line: a Markdown heading, or a few words with no number that end no sentence
#: ("Lecture plan", "Weekly schedule:"); "Three Unit Tests each of 20 Marks" and "One lecture a
#: week." are prose, not headings.
_HEADING_WORDS = 6
_MD_HEADING = re.compile(r"^\s*#{1,6}\s+")
#: Emphasis, brackets and quotes around a line's words: "*in the browser.*" ends a sentence, and
#: a wrapped paragraph's next line ("in HTML format.*") starts in lower case: prose, not a heading.
_CLOSING = "*_)]\"'”’"
_OPENING = "*_([\"'“‘ \t"


#: A line that ends in a heading naming a unit, its word capitalised as headings are ("… Syllabus
#: Lecture outline", "Weekly schedule:"); "one lecture a week" is prose.
_HEADING_TAIL = re.compile(
    rf"(?:^|\s)({_UNIT})(?:\s+(?:outline|plan|schedule|list|topics|overview))?\s*:?\s*$", re.IGNORECASE
)


def _unit_of(heading: str) -> str | None:
    """The unit the nearest heading before the first entry names, if any: prose lines between
    them are passed over ("Updated: 5 January 2026. This plan replaces …"), and the first
    heading-like line decides, so a unit word in prose ("Three Unit Tests each of 20 Marks") or
    under another heading ("Continuous Internal Evaluation:") names no outline."""
    for line in reversed(heading.split("\n")):
        words = line.split()
        if not words:
            continue
        tail = _HEADING_TAIL.search(line)
        if tail and tail.group(1)[0].isupper():
            # a heading run on after the sentence before it, as windows join a PDF's or text file's
            # lines ("… Spring 2026 syllabus. Lecture outline")
            return UNITS[tail.group(1).lower()]
        if _MD_HEADING.match(line) or (
            len(words) <= _HEADING_WORDS
            and not re.search(r"\d", line)
            and not line.rstrip().rstrip(_CLOSING).endswith((".", "!", "?", ";", ","))
            and not line.lstrip(_OPENING)[:1].islower()
        ):
            found = _NAMES_UNIT.findall(line)
            return UNITS[found[-1].lower()] if found else None
    return None


def read_outline(passages: Sequence[tuple[S, str]]) -> Outline[S] | None:
    """The longest numbered outline in a document's passages (in document order): entries numbered
    1, 2, 3 … on lines of their own, headings and sub-items between them allowed, an entry
    repeated by overlapping windows read once; None when no such list of :data:`MIN_ENTRIES` names
    its unit (by a prefix, "Week 3:", or by a heading just before entry 1, "Lecture outline")."""
    best: Outline[S] | None = None
    run: list[Entry[S]] = []
    unit: str | None = None

    def close() -> None:
        nonlocal best
        if unit and len(run) >= MIN_ENTRIES and (best is None or len(run) > len(best)):
            best = Outline(unit, tuple(run))

    for source, text in passages:
        lines = text.split("\n")
        for at, line in enumerate(lines):
            sub = _SUB_ITEM.match(line)
            if sub and run and run[-1].source == source:
                last = run[-1]
                what = _LINKS.sub("", sub.group("what")).strip()
                if what and what not in last.text:
                    run[-1] = Entry(
                        last.number,
                        f"{last.text} - {what}",
                        last.words | _title_words(what),
                        source,
                        last.parts + bool(_PART.match(what)),
                    )
                continue
            m = _ENTRY.match(line)
            if not m:
                continue
            number = int(m.group("number"))
            what = _LINKS.sub("", m.group("what")).strip()
            words = _title_words(what)
            if not words or _URL.match(what):
                continue  # a numbered list of links ("1. https://nptel.ac.in/…") names no units
            printed = f"{prefix.capitalize()} {number}: {what}" if (prefix := m.group("unit")) else None
            entry = Entry(number, printed or f"{number}. {what}", words, source)
            continues = run and number == run[-1].number + 1
            if number == 1 or (prefix and not continues and not run):
                # an outline starts at 1, or where its unit is printed on each entry ("Week 6: …" after
                # five themes): a schedule's later part
                close()
                before = lines[:at]
                # a chunk's first line is its context line ("Title — Section"): the section heads it
                if before:
                    before[0] = before[0].rsplit(" — ", 1)[-1]
                heading = "\n".join(before)[-HEADING_CHARS:]
                unit = UNITS[prefix.lower()] if prefix else _unit_of(heading)
                run = [entry]
            elif continues:
                run.append(entry)
            elif (
                run
                and run[0].number <= number <= run[-1].number
                and same_entry(run[number - run[0].number].words, words)
            ):
                continue  # the next window repeats the lines the last one ended with
            else:
                close()
                run, unit = [], None
    close()
    return best


def outlines_by_document(
    passages: Sequence[tuple[str, str]], unit: str, offset: int = 0
) -> dict[str, Outline[int]]:
    """Each document's outline of ``unit`` read from ``passages`` ((doc_id, text), each document's
    in its order, as ``retrieval.outline_rows`` hands them over), an entry's source being ``offset``
    plus its passage's index; ``unit`` "" takes an outline of any unit."""
    by_doc: dict[str, list[tuple[int, str]]] = {}
    for i, (doc_id, text) in enumerate(passages):
        by_doc.setdefault(doc_id, []).append((offset + i, text))
    found = {doc_id: read_outline(texts) for doc_id, texts in by_doc.items()}
    return {doc_id: o for doc_id, o in found.items() if o is not None and o.unit == (unit or o.unit)}


# --- what a question asks of an outline -------------------------------------------------------------


@dataclass(frozen=True)
class OutlineAsk:
    """What a question asks of an outline of ``unit``s: ``count`` (how many in all), ``last``,
    ``which`` (the number of the entry on ``topic``), ``topic_count`` (how many on ``topic``),
    ``covered`` (is there one on ``topic``) or ``number`` (what entry ``number`` is, or, ``named``,
    what it is called)."""

    unit: str  # "" for a question that names no unit ("is workflow covered anywhere"): any outline's
    what: str
    topic: frozenset[str] = frozenset()
    number: int = 0  # the entry asked for by its number ("number"): "what is lecture 3 about"
    named: bool = False  # asks what the entry is called: its title, not the lecture, is the value


#: The unit words of a question ("weekly" names a schedule's heading, but "how many weekly
#: snippets" asks no count of weeks).
_Q_UNIT = rf"(?P<unit>{'|'.join(sorted((u for u in UNITS if u != 'weekly'), key=len, reverse=True))})"
#: The forms of question, each with its ask, first match wins (one unit group per pattern).
_ASKS = [
    ("topic_count", rf"\bhow\s+many\s+(?P<topic>(?:[\w&'-]+\s+){{1,4}}?){_Q_UNIT}\b"),
    # "1 lecture or 2", "one lecture or split in 2 parts"
    ("topic_count", rf"\b(?:1|one)\s+{_Q_UNIT}\s+or\s+(?:[\w-]+\s+){{0,3}}?(?:2|two|more|several)\b"),
    ("count", rf"\bhow\s+many\s+{_Q_UNIT}\b"),
    ("count", rf"\b(?:number|no\.?)\s+of\s+{_Q_UNIT}\b"),
    # "the last lecture" is the final one; "what did we do last week" the one before this
    ("last", rf"\b(?:the\s+(?:very\s+)?last|final)\s+(?:\w+\s+){{0,2}}?{_Q_UNIT}\b"),
    # "last topic in the lecture list": the list's end, whatever "last" stands before
    (
        "last",
        rf"\blast\s+(?:\w+\s+){{0,2}}?(?:in|of|on)\s+the\s+{_Q_UNIT}\s+(?:list|outline|plan|schedule)\b",
    ),
    ("which", rf"\b(?:which|what)\s+{_Q_UNIT}\b(?!\s+(?:plan|list|outline|schedule))"),
    ("covered", rf"\b(?:is|are)\s+there\s+(?:a|an|any)?\s*{_Q_UNIT}\b"),
    # "do we get a lecture on …", "do we def get a machine learning lec"
    (
        "covered",
        rf"\b(?:do|will)\s+we\s+(?:\w+\s+)?(?:get|have|do)\s+(?:a|an|any)\s+(?:[\w&'-]+\s+){{0,3}}?{_Q_UNIT}\b",
    ),
    ("covered", rf"\bwill\s+there\s+be\s+(?:a|an|any)\s+{_Q_UNIT}\b"),
    ("covered", rf"\bany\s+{_Q_UNIT}\s+(?:on|about|covering)\b"),
]
_ASK_PATTERNS = [(what, re.compile(pattern, re.IGNORECASE)) for what, pattern in _ASKS]
#: The words of such a question that are not its topic.
_NOT_TOPIC = frozenset(
    terms(
        "lecture lectures lec lecs week weeks module modules session sessions unit units outline plan list "
        "schedule total course class quarter semester sem term cover covers covered covering topic topics "
        "called name named about last final very first number no which what whats happen happens there "
        "get do we one two nah pls please split part parts optional anywhere taught teach"
    )
)
#: "is project workflow covered anywhere in the course", "do we do fairness n ethics or nah": whether
#: the course covers a topic, in no unit's words (read only where ``any_unit`` is asked for); the
#: topic is what the question names there, never a preposition's object ("do we do in this class") nor a
#: count ("do we each do 1 or 2 short presentations" asks how many).
_COVERED_ANY = re.compile(
    r"^(?!.*\bhow\s+(?:many|much)\b).*?(?:"
    r"\b(?:is|are)\s+(?P<topic>(?:[\w&'’/-]+\s+){1,5}?)(?:covered|taught)\b"
    r"|\bdo\s+we\s+(?:\w+\s+)?(?:do|cover|learn|study)\s+(?!(?:a|an|any|the|in|on|at|for|this|it|that|each|\d+|one|two|three)\b)"
    r"(?P<what>[^?.,;]{3,80})"
    r")",
    re.IGNORECASE,
)
#: A question asking what an entry is called ("whats lecture 14 called"), not what it is about.
_ASKS_NAME = re.compile(r"\b(?:called|named|titled|title|name)\b", re.IGNORECASE)


#: "What is lecture 3 about", "what r we doing in week 7", "lec 5 topics?": one numbered entry.
#: One unit by its number ("lecture 3", "wk 7", "lec #5"), never a range ("weeks 6 thru 10").
NUMBERED = re.compile(
    r"\b(?P<unit>lecture|lec|week|wk|module|session|unit)\s*(?:no\.?\s*|#\s*)?(?P<number>\d{1,2})\b"
    r"(?!\s*(?:-|–|to|thru|through|and|&)\s*\d)",
    re.IGNORECASE,
)
#: The words of a question that asks only what a numbered entry is ("what is lecture 3 about",
#: "what do we do in week 7", "lec 5 topics?"); any other word asks something else of it.
_ONLY_WHAT = _NOT_TOPIC | frozenset(
    terms(
        "topic topics cover covers covered happen happens doing learn learning plan content contents first 1st"
    )
)
_FIRST = re.compile(rf"\b(?:first|1st)\s+(?:\w+\s+){{0,2}}?{_Q_UNIT}\b", re.IGNORECASE)
_ASKS_WHAT = re.compile(
    r"\b(?:what|which|whats|topics?|about|cover(?:s|ed)?|happens?|doing|do\s+we)\b", re.IGNORECASE
)


#: What follows a question ("? trying to plan my quarter") and values offered after a comma at its
#: end (", vms or cloud computing?").
_ADDED = re.compile(r"(?<=\S)\?\s*\S.*$|,\s*(?:[\w'’&/-]+\s+){0,3}?or\s+(?:[\w'’&/-]+\s*){1,3}\??$")


def _topic_words(text: str) -> frozenset[str]:
    """What a question's words say the asked entries are about: no number, no unit or ask word."""
    return frozenset(t for t in terms(text) if not t.isdigit() and t not in _NOT_TOPIC and len(t) > 1)


@functools.lru_cache(maxsize=1024)
def read_ask(question: str, any_unit: bool = False) -> OutlineAsk | None:
    """What ``question`` (chat words spelled out, course names out) asks of an outline, or None.

    "How many lectures" asks the length, or a topic's count when its other words name entries
    (:func:`read_for`); words between "how many" and the unit ("how many machine learning
    lectures") and "1 lecture or 2" ask a topic's count; "which/what lecture" and "lecture no. what"
    a topic's number; "is there a lecture on …" whether one covers it.

    Only the question is read, not what a student adds after it ("how many lecs r in the outline?
    trying to plan my quarter"), nor the values offered after a comma ("what is lecture 14 called,
    vms or cloud computing?"): neither names the topic.

    With ``any_unit`` (the conflict check, which compares the course's outlines, whatever they
    number), "is X covered anywhere", "do we do X" ask whether any outline covers X (unit "")."""
    offered = question
    question = _ADDED.sub("", question).strip() or question
    for what, pattern in _ASK_PATTERNS:
        m = pattern.search(question)
        if not m:
            continue
        unit = UNITS[m.group("unit").lower()]
        topic = _topic_words(question)
        if (
            what == "topic_count"
            and "topic" in m.groupdict()
            and not set(terms(m.group("topic"))) - _NOT_TOPIC
        ):
            what = "count"
        if what == "count" and {UNITS[u.lower()] for u in _NAMES_UNIT.findall(question)} - {unit}:
            return None  # "how many lectures a week": how often, not how many in the outline
        if what == "last":
            return OutlineAsk(unit, what)
        if topic or what == "count":
            return OutlineAsk(unit, what, topic)
    covered = _COVERED_ANY.search(question) if any_unit else None
    if covered:
        topic = _topic_words(covered.group("topic") or covered.group("what"))
        return OutlineAsk("", "covered", topic) if topic else None
    if not _ASKS_WHAT.search(question) or not {t for t in terms(question) if not t.isdigit()} <= _ONLY_WHAT:
        return None  # "what software do i need b4 the first lec" asks about software, not lecture 1
    named = bool(_ASKS_NAME.search(offered))
    first = _FIRST.search(question)
    if first:
        return OutlineAsk(UNITS[first.group("unit").lower()], "number", number=1, named=named)
    numbered = NUMBERED.search(question)
    if numbered:
        return OutlineAsk(
            UNITS[numbered.group("unit").lower()], "number", number=int(numbered.group("number")), named=named
        )
    return None


def _matches(words: frozenset[str], topic: frozenset[str]) -> int:
    """How many of the topic's words an entry's title holds, a word also matching its longer or
    shorter form ("nets" the outline's "networks", "eval" its "evaluation"): chat shortens words
    and an outline's titles are terse, so a shared start of three letters or more counts."""
    found = 0
    for t in topic:
        if t in words or any(
            len(t) >= 3 and len(w) >= 3 and (w.startswith(t) or t.startswith(w)) for w in words
        ):
            found += 1
    return found


def _same_title(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two entries' titles say the same words, each word also matching its longer or
    shorter form ("Intro to R" is "Introduction to R"; "Google Compute Engine" is not "Virtual
    machines / cloud servers (Google Compute Engine)")."""
    return _matches(a, b) == len(b) and _matches(b, a) == len(a)


@dataclass(frozen=True)
class Reading(Generic[S]):
    """What one outline says to an ask: ``value``, comparable between two documents' outlines
    ("13" lectures, entries "8", "yes"), the entries that say it, in order, and the outline's
    length; ``found`` is False when the ask's topic names no entry (the answer is then "no")."""

    value: str
    entries: tuple[Entry[S], ...]
    total: int
    found: bool = True
    what: str = "count"  # what was read: the ask's, "topic_count" for a count that names a topic, or
    # "name" for a numbered entry asked for by what it is called


@functools.lru_cache(maxsize=4096)
def _initials(text: str) -> frozenset[str]:
    """The initials of each run of two to four words of an entry's title ("ml" for "Machine
    learning", "gce" for "Google Compute Engine"): students ask by the abbreviation."""
    words = [w for w in re.findall(r"[A-Za-z]+", text) if len(w) > 1]
    return frozenset(
        "".join(w[0] for w in words[i : i + n]).lower() for n in (2, 3, 4) for i in range(len(words) - n + 1)
    )


def parts_of(entries: Sequence[Entry[S]]) -> int:
    """How many parts ``entries`` are taught in: an entry with "Part 1", "Part 2" sub-items counts
    as its parts, any other as one."""
    return sum(max(e.parts, 1) for e in entries)


def on_topic_entries(outline: Outline[S], topic: frozenset[str]) -> tuple[Entry[S], ...]:
    """The entries naming the topic best, in order: those holding the most of its words, at least
    half of them (a topic of one word, that word)."""
    if not topic:
        return ()
    scored = [(_matches(e.words | _initials(e.text), topic), e) for e in outline.entries]
    best = max((n for n, _ in scored), default=0)
    if best == 0 or 2 * best < len(topic):
        return ()
    return tuple(e for n, e in scored if n == best)


def read_for(outline: Outline[S], ask: OutlineAsk) -> Reading[S] | None:
    """What ``outline`` says to ``ask`` (the unit is the caller's to match); None where it cannot
    say: how many there are, from a schedule's later part, or when the count's other words name no
    entry."""
    entries = outline.entries
    if ask.what == "number":
        at = [e for e in entries if e.number == ask.number]
        value = " ".join(sorted(at[0].words)) if at else ""
        return Reading(value, tuple(at), len(entries), bool(at), "name" if ask.named else "number")
    if ask.what == "count" and ask.topic:
        if not on_topic_entries(outline, ask.topic):
            return None  # "how many lectures can i miss" asks the attendance policy, not the outline
        ask = OutlineAsk(ask.unit, "topic_count", ask.topic)  # "how many lectures on regression"
    if ask.what == "count":
        return Reading(str(len(entries)), entries, len(entries)) if outline.whole else None
    if ask.what == "last":
        last = entries[-1]
        return Reading(" ".join(sorted(last.words)), (last,), len(entries), what="last")
    on = on_topic_entries(outline, ask.topic)
    if ask.what == "topic_count":
        # "14. Google Compute Engine - Part 1 - Part 2" is one lecture in two parts, which a count of
        # entries alone would call the same as another outline's single "14. Virtual machines"
        parts = parts_of(on)
        value = f"{len(on)} in {parts} parts" if parts > len(on) else str(len(on))
        return Reading(value, on, len(entries), bool(on), "topic_count")
    if ask.what == "covered":
        if not on and not outline.whole:
            return None  # a schedule's later part ("Week 6" to "Week 10") cannot say "not covered"
        # "do we def get a machine learning lec": two lectures on it in one outline, one in another,
        # is the same yes said differently enough to tell the student
        return Reading(f"yes, {parts_of(on)}" if on else "no", on, len(entries), bool(on), "covered")
    return Reading(",".join(str(e.number) for e in on), on, len(entries), bool(on), "which")


def readings_differ(a: Reading[S], b: Reading[S]) -> bool:
    """Whether two documents' outlines answer one ask differently: another count, another last
    entry, another number for the topic, or the topic in one and not the other. A topic neither
    names is no disagreement (nothing to compare), and "last" compares what the entries are."""
    if a.what != b.what:
        return False  # one outline names the topic, the other not: read as two different asks
    if a.what == "last":
        return not same_entry(a.entries[0].words, b.entries[0].words) or a.total != b.total
    if a.what == "number":  # lecture 3 in both, named alike; a number one outline lacks is no change
        return a.found and b.found and not same_entry(a.entries[0].words, b.entries[0].words)
    if a.what == "name":  # "whats lecture 14 called": its title is the value, every word of it
        return a.found and b.found and not _same_title(a.entries[0].words, b.entries[0].words)
    if not (a.found or b.found) or (a.what == "which" and not (a.found and b.found)):
        return False  # "which lecture is X" where one outline names no X: a wording apart, not a change
    return a.value != b.value
