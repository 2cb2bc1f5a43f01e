"""Versions aligned at index time: the record of where two documents of a collection say one
thing differently.

Why: real courses disagree because a document was revised (this term's syllabus beside last
term's, a schedule changed mid-term, slides restating the syllabus they summarise). The sentence
carrying the other version rarely shares a word with the student's question ("Fall 2017. Design
217. Tuesday & Thursday 1:30am–5:20pm." for "what time is class"), so a check at question time,
reading what the question retrieved, never sees it. Here, once per index snapshot, every pair of
documents that are likely versions or restatements of each other is aligned unit by unit, and
each aligned pair of units stating a value differently is recorded, with both places and which
side is current. The answer reads the record (``retrieval.recorded_for``, ``answerers.notes.lead_with_record``),
the question-time check compares only documents it calls versions (:meth:`VersionRecord.related`),
and the teacher's list (`syllabot conflicts`) is the record itself (``IndexSnapshot.versions``).

One general mechanism, no per-course patterns:

1. **Units** (:func:`units_of`): a document's sentences, bullets and table rows, read from its
   passages in order (overlapping windows read once), each with its normalised words (values and
   numbers left out, a numbered thing such as "Homework 2" kept as one word).
2. **Alignment** (:func:`align`): the heaviest in-order chain of unit pairs of similar wording
   (a weighted Dice over the words, rare words weighing most), i.e. a sequence alignment.
3. **Pairs of documents** (:func:`record_of`): versions when their chain holds :data:`MIN_ANCHORS`
   units worded alike that no third document prints, or they share a title no other document has
   (the likely-new-version rule of ``worker.indexes.building``), or one says it revises the others; never
   two of a numbered series. Documents that are no versions are never compared.
4. **Disagreement** (:func:`differ`): an aligned pair whose values of one kind (dates, days,
   times, percentages, counts, durations, editions, marks, versions) differ. Two terms' calendars
   and two documents' own dates are not compared.
5. **Current**: the one rule of ``worker.text.currency`` (``how_current_named``, ``current_first``:
   a revision said in the name or text, the later year printed as a date, the later upload of one
   title); a document that says it is a revision is a version of every other one.

Pure functions over chunks (no I/O); the record is built by ``index.build_snapshot`` and stored
with the snapshot (``IndexSnapshot.to_fields``), so it is versioned with it.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from syllabot.shared.labels import title_key
from syllabot.shared.schema import ConflictInfo
from syllabot.worker.indexes.conflicts import Conflict, clash
from syllabot.worker.ingest.chunking import chunk_body
from syllabot.worker.query.reading import Question
from syllabot.worker.query.values import (
    DATE,
    DAY_SHORT,
    MONTH_NAMES,
    NUMBERED_UNIT,
    NUMERIC_DATE,
    VALUE_WORDS,
    WEEKDAYS,
    Value,
    from_a_date,
    other_terms,
    read_values,
    topic_of,
    unit_tokens,
)
from syllabot.worker.text.currency import Currency, current_first, how_current_named
from syllabot.worker.text.documents import Chunk
from syllabot.worker.text.sentences import ROUND_BULLETS, looks_like_code, split_sentences_once
from syllabot.worker.text.terms import terms
from syllabot.worker.text.text_caches import PER_TEXT
from syllabot.worker.text.value_shapes import THING_NUMBER

#: The kinds of value whose difference is a disagreement ("item", a schedule line's description,
#: was compared too; deleted: no gain held out).
KINDS = frozenset({"percent", "count", "weekday", "date", "time", "duration", "edition", "marks", "version"})

#: A slide's bullets flattened into one line by the text layer ("▶ 6 homeworks ... ▶ Office hours").
_INLINE_BULLET = re.compile(rf"\s+(?=[{ROUND_BULLETS}▶►➢])")
#: Where a row of a flattened table begins: a date or a numbered unit ("Week 3:").
_ROW_START = re.compile(rf"{NUMERIC_DATE.pattern}|{DATE.pattern}|{NUMBERED_UNIT.pattern}\s*:", re.IGNORECASE)
#: What joins two dates of one row ("Jan 8 – May 2", "Mon & Wed"): no new row after these.
_JOINED = re.compile(r"(?:[–—\-&,/]|\b(?:to|and|or|through|until|from|between|by|on|of))\s*$", re.IGNORECASE)
#: A thing with its number ("Homework 2", "Prelim 1", "Studio 217"): one word of the unit, so that
#: homework 1's line never aligns with homework 2's.
_NUMBERED = re.compile(
    rf"\b([a-z]{{3,}})\s+#?({THING_NUMBER})\b(?![/.:\-–]?\d|\s*(?:%|[ap]\.?m\b|st\b|nd\b|rd\b|th\b"
    r"|(?:day|week|hour|minute|month|year|point|mark|page|credit|percent)s?\b))",
    re.IGNORECASE,
)
#: Words a number after which is a date or a day, not a thing's number ("May 2", "fri 10").
_CALENDAR_WORDS = frozenset(
    [*MONTH_NAMES.split("|"), *DAY_SHORT, *WEEKDAYS, *(f"{d}s" for d in (*DAY_SHORT, *WEEKDAYS))]
)
#: Words a number follows as a quantity, not as a name ("within 14", "every 3", "first 2").
_QUANTITY = frozenset({"every", "first", "last", "least", "next", "past", "only", "most", "per"})
_MONTH_WORDS = frozenset(MONTH_NAMES.split("|"))
_NUMBERED_WORD = re.compile(r"([a-z]+?)(\d+)")
_DIGIT = re.compile(r"\d")
#: Units longer than this are paragraphs, not statements of one fact: not compared.
MAX_UNIT_CHARS = 400


@dataclass(frozen=True)
class Unit:
    """One statement of a document: where it was read (the chunk position), as printed, its
    words, and the numbered things among them by name ("homework" -> "2")."""

    row: int
    text: str
    words: frozenset[str]
    numbered: tuple[tuple[str, str], ...] = ()

    @property
    def values(self) -> tuple[Value, ...]:
        """Its values of the kinds compared (read when the unit is aligned, not before)."""
        return _unit_values(self.text)


def _rows(sentence: str) -> list[str]:
    """A sentence cut into table rows when it is a flattened table: two or more rows each opening
    with a date or a numbered unit ("08.21.2018 Tutorial | Lidar 08.23.2018 Studio | ..."). A
    date joined to the one before ("Jan 8 – May 2") opens no row."""
    starts = [m.start() for m in _ROW_START.finditer(sentence)] if _DIGIT.search(sentence) else []
    if len(starts) < 2:
        return [sentence]
    cuts = [0]
    for at in starts:
        before = sentence[cuts[-1] : at]
        if at > 0 and len(re.findall(r"[A-Za-z]{2,}", before)) >= 1 and not _JOINED.search(before):
            cuts.append(at)
    return [sentence[a:b].strip() for a, b in zip(cuts, [*cuts[1:], len(sentence)], strict=True)]


def _pieces(body: str) -> Iterable[str]:
    """A passage's statements: sentences, flattened bullets and table rows (read uncached, as
    :func:`_unit_values` reads values: the record reads every unit of a collection once, and the
    question path's per-text caches would evict the passages questions keep coming back to)."""
    for sentence in split_sentences_once(body):
        for part in _INLINE_BULLET.split(sentence):
            yield from _rows(part)


def _words(text: str) -> frozenset[str]:
    """What a unit says, without its values: its topic words (``values.topic_of``: no numbers, no
    weekdays or value words), month names dropped, each numbered thing as one word."""
    found = [
        m
        for m in (_NUMBERED.finditer(text) if _DIGIT.search(text) else ())
        if m.group(1).lower() not in _QUANTITY
        and m.group(1).lower() not in _CALENDAR_WORDS
        and terms(m.group(1))
    ]
    if found:  # a number that is a value ("CIE Marks 50", "Credits 03") names no thing
        spans = [(at, at + len(v.text)) for v in _unit_values(text) if (at := text.find(v.text)) >= 0]
        found = [m for m in found if not any(a <= m.start(2) < b for a, b in spans)]
    numbered = {f"{m.group(1).lower()}{int(m.group(2))}" for m in found}
    plain = {w for w in topic_of(text) - _MONTH_WORDS - VALUE_WORDS if not any(ch.isdigit() for ch in w)}
    return frozenset(plain | numbered | unit_tokens(text))


def units_of(chunks: Sequence[Chunk], rows: Iterable[int]) -> list[Unit]:
    """A document's units in order, from its passages at ``rows``: each statement once (the
    overlapping windows of a slide or page print it several times, the first kept), a statement
    cut short at a window's edge dropped when the whole one is there too, code left out."""
    rows = list(rows)
    pieces = [[" ".join(p.split()) for p in _pieces(chunk_body(chunks[row].text))] for row in rows]
    flats = [" ".join(chunk_body(chunks[row].text).split()) for row in rows]
    seen: set[str] = set()
    out = []
    for k, row in enumerate(rows):
        for n, text in enumerate(pieces[k]):
            if len(text) < 4 or text in seen:
                continue
            if (n == 0 or n == len(pieces[k]) - 1) and any(
                text in flats[m] and text not in pieces[m] for m in (k - 1, k + 1) if 0 <= m < len(rows)
            ):
                continue  # cut at a window's edge: the next or previous window prints it whole
            seen.add(text)
            if len(text) > MAX_UNIT_CHARS or looks_like_code(text):
                continue  # a paragraph, or code
            words = _words(text)
            if words or _unit_values(text):  # a line of values alone ("Tue & Thu 1:30–5:20pm") too
                out.append(Unit(row, text, words, _numbered_in(words)))
    return out


def _numbered_in(words: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The numbered things among a unit's words, by name ("homework2" -> ("homework", "2"))."""
    return tuple((m.group(1), m.group(2)) for w in words if (m := _NUMBERED_WORD.fullmatch(w)))


#: A file name's number glued to its word ("homework1", "lecture03"): read apart.
_STEM_NUMBER = re.compile(rf"\b([A-Za-z]{{3,}})({THING_NUMBER})\b")


@functools.lru_cache(maxsize=4096)
def _unit_values(text: str) -> tuple[Value, ...]:
    """A unit's values of the kinds compared (``values.read_values``, uncached: see :func:`_pieces`)."""
    return tuple(v for v in read_values(text) if v.kind in KINDS)


class Weights:
    """How much a word says: words in few of the collection's documents weigh most
    (``1 + log((N + 1) / df)`` over documents), so a header printed on every deck aligns little."""

    def __init__(self, documents: Sequence[Sequence[Unit]]) -> None:
        counts: dict[str, int] = {}
        for units in documents:
            for word in frozenset().union(*(unit.words for unit in units)):
                counts[word] = counts.get(word, 0) + 1
        self.documents = max(len(documents), 1)
        self.df = counts
        self._weight: dict[str, float] = {}

    def of(self, word: str) -> float:
        weight = self._weight.get(word)
        if weight is None:
            weight = self._weight[word] = 1 + math.log((self.documents + 1) / self.df.get(word, 1))
        return weight

    def mass(self, words: Iterable[str]) -> float:
        return sum(self.of(w) for w in words)


def _other_number(a: Unit, b: Unit) -> bool:
    """Whether the two units name a numbered thing of one name by different numbers only."""
    if not a.numbered or not b.numbered:
        return False
    names_a: dict[str, set[str]] = {}
    names_b: dict[str, set[str]] = {}
    for numbered, names in ((a.numbered, names_a), (b.numbered, names_b)):
        for name, number in numbered:
            names.setdefault(name, set()).add(number)
    return any(name in names_b and not numbers & names_b[name] for name, numbers in names_a.items())


#: Two units are aligned candidates at this similarity, and alike (an anchor) at the second.
ALIGN_AT = 0.5
ANCHOR_AT = 0.8
#: The fewest units worded alike for two documents of different titles to be versions of each other.
MIN_ANCHORS = 3


def align(pairs: Sequence[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The aligned units of two documents, in order: (index in one, index in the other,
    similarity). ``pairs`` are the candidates (units worded alike, :func:`_alike`); the heaviest
    chain of them increasing in both positions is kept (a sequence alignment over the candidate
    pairs): O(k log k) with a running best per second position. A unit alone between two aligned
    neighbours (a substitution) and a statement moved elsewhere (each other's most similar) were
    aligned too; both were deleted: no gain held out, and the second added a false entry there."""
    ordered = sorted(pairs, key=lambda p: (p[0], -p[1]))
    # best chain ending at each pair; a sorted list of (j, best weight so far, pair index)
    weight = [0.0] * len(ordered)
    back = [-1] * len(ordered)
    js: list[int] = []
    bests: list[tuple[float, int]] = []  # prefix maxima over js: (weight, index)
    for k, (_, j, s) in enumerate(ordered):
        at = bisect.bisect_left(js, j)
        prior = bests[at - 1] if at else (0.0, -1)
        weight[k], back[k] = prior[0] + s * s, prior[1]  # squared: one strong pair beats two weak
        # insert (j, weight) keeping prefix maxima: drop later entries it dominates
        if at < len(js) and js[at] == j:
            if weight[k] <= bests[at][0]:
                continue
            js.pop(at)
            bests.pop(at)
        if at and bests[at - 1][0] >= weight[k]:
            continue
        js.insert(at, j)
        bests.insert(at, (weight[k], k))
        while at + 1 < len(js) and bests[at + 1][0] <= weight[k]:
            js.pop(at + 1)
            bests.pop(at + 1)
    if not bests:
        return []
    k = bests[-1][1]
    out = []
    while k >= 0:
        out.append(ordered[k])
        k = back[k]
    return out[::-1]


#: A word in more of the collection's documents than this share (and more than two) finds no
#: candidates (it still counts in the similarity): boilerplate, and the cost of a large collection.
COMMON_SHARE = 0.5


def _alike(
    docs: Sequence[_Doc], weights: Weights, check: Callable[[], None]
) -> dict[tuple[int, int], list[tuple[int, int, float]]]:
    """Every pair of units of two documents of one course worded alike (:data:`ALIGN_AT`), by pair
    of documents: found through the words few documents hold (their weights summed per pair of
    units as the postings are read), so only units sharing one are compared."""
    common = max(2, COMMON_SHARE * len(docs))
    units = [(d, i, unit) for d, doc in enumerate(docs) for i, unit in enumerate(doc.units)]
    postings: dict[tuple[str, str], list[int]] = {}  # by course and word: two courses never pair
    for u, (d, _, unit) in enumerate(units):
        for word in unit.words:
            if weights.df.get(word, 0) <= common:
                postings.setdefault((docs[d].course, word), []).append(u)
    rare: dict[tuple[int, int], float] = {}
    for (_, word), holders in postings.items():
        if len(holders) < 2 or len(holders) > MAX_POSTING:
            continue
        check()
        weight = weights.of(word)
        for x, u in enumerate(holders):
            d = units[u][0]
            for v in holders[x + 1 :]:
                if units[v][0] != d:
                    rare[u, v] = rare.get((u, v), 0.0) + weight
    mass = [weights.mass(unit.words) for _, _, unit in units]
    out: dict[tuple[int, int], list[tuple[int, int, float]]] = {}
    for (u, v), shared in rare.items():
        (d, i, a), (e, j, b) = units[u], units[v]
        s = 2 * (shared + _common_mass(a, b, weights, common)) / (mass[u] + mass[v])
        if s >= ALIGN_AT and not _other_number(a, b):
            key, pair = ((d, e), (i, j, s)) if d < e else ((e, d), (j, i, s))
            out.setdefault(key, []).append(pair)
    return out


def _common_mass(a: Unit, b: Unit, weights: Weights, common: float) -> float:
    """The weight of the words two units share that the postings skipped (in many documents)."""
    return sum(weights.of(w) for w in a.words & b.words if weights.df.get(w, 0) > common)


#: A word held by more units than this is read for no candidates (a collection's hundred copies).
MAX_POSTING = 200


#: A document's first units are its title block: the date there is the document's own (a deck's
#: lecture date, a syllabus's issue date), which tells versions apart rather than a fact they share.
TITLE_UNITS = 3


def differ(
    a: Unit, b: Unit, titles: bool = False
) -> tuple[str, tuple[Value, ...], tuple[Value, ...], frozenset[str]] | None:
    """The kind of value two aligned units state differently, each side's values of it, and what
    those values are of when narrower than the units (empty: the units say); None when they agree:
    the same values, however worded, or one side giving a part of the other's, unless a value of
    one is of the same thing as a differing value of the other (a table row's "2 × short
    presentations" against "1 × short presentations": ``conflicts.clash``, about "short
    presentations"). Dates of different years are two terms' calendars, not two versions of one
    date, and the dates of two title blocks (``titles``) are the two documents' own: neither is
    compared."""
    other = other_terms(a.values, b.values)
    kinds_a: dict[str, list[Value]] = {}
    kinds_b: dict[str, list[Value]] = {}
    for values, kinds in ((a.values, kinds_a), (b.values, kinds_b)):
        for v in values:
            if not ((titles or other) and from_a_date(v)):
                kinds.setdefault(v.kind, []).append(v)
    for kind in sorted(kinds_a.keys() & kinds_b.keys()):
        va, vb = kinds_a[kind], kinds_b[kind]
        na, nb = {v.norm for v in va}, {v.norm for v in vb}
        if not (na <= nb or nb <= na):
            return kind, tuple(va), tuple(vb), frozenset()
        clashing = clash(va, vb)
        if clashing is not None:
            x, y = clashing
            return kind, (x,), (y,), frozenset((x.label & y.label) - VALUE_WORDS)
    return None


@dataclass(frozen=True)
class RecordedSide:
    """One side of a recorded disagreement: the passage it was read from (its chunk position in
    the snapshot), its document, the unit as printed and its values of the kind that differs."""

    row: int
    doc_id: str
    text: str
    values: tuple[tuple[str, str], ...]  # (normal form, as printed)

    def to_json(self) -> list[object]:
        return [self.row, self.doc_id, self.text, [list(v) for v in self.values]]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> RecordedSide:
        row, doc_id, text, values = data
        return cls(int(row), str(doc_id), str(text), tuple((str(n), str(t)) for n, t in values))


@dataclass(frozen=True)
class Recorded:
    """Two documents state one fact differently: the kind of value, the words the two units
    share (what the fact is about), both sides (the current one first when the materials say
    which), why that one is current ("" when they do not) and when the newer side was uploaded."""

    kind: str
    about: str
    sides: tuple[RecordedSide, RecordedSide]
    current_reason: str = ""
    newest: str = ""
    #: ``about`` names what the differing values are of (their labels), narrower than the units
    narrow: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "about": self.about,
            "sides": [s.to_json() for s in self.sides],
            "current_reason": self.current_reason,
            "newest": self.newest,
            "narrow": self.narrow,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recorded:
        first, second = (RecordedSide.from_json(s) for s in data["sides"])
        return cls(
            str(data["kind"]),
            str(data["about"]),
            (first, second),
            str(data.get("current_reason", "")),
            str(data.get("newest", "")),
            bool(data.get("narrow", False)),
        )


@dataclass(frozen=True)
class _Doc:
    doc_id: str
    title: str
    course: str
    uploaded_at: str
    currency: Currency
    units: list[Unit]
    rows: list[int]
    identity: Unit  # the numbered things its file name and title units name ("homework" -> "1")


def _documents(chunks: Sequence[Chunk], left_out: Sequence[bool], check: Callable[[], None]) -> list[_Doc]:
    spans: dict[str, list[int]] = {}
    for row, chunk in enumerate(chunks):
        if not left_out[row]:
            spans.setdefault(chunk.doc_id, []).append(row)
    docs = []
    copies: set[tuple[str, ...]] = set()
    for doc_id, rows in spans.items():
        check()
        # a document uploaded twice (under two names) is read once: it disagrees with nothing, and
        # aligning its copies with each other and with every version is a collection of copies' cost
        texts = tuple(chunk_body(chunks[r].text) for r in rows)
        if texts in copies:
            continue
        copies.add(texts)
        first = chunks[rows[0]]
        units = units_of(chunks, rows)
        name = f"{first.file} {first.title} {first.cite_title or ''}"
        currency = how_current_named(name, (chunks[r].text for r in rows))
        title = title_key(first)
        stem = _STEM_NUMBER.sub(r"\1 \2", first.file.rsplit(".", 1)[0].replace("_", " ").replace("-", " "))
        named = " ".join([stem, *(u.text for u in units[:TITLE_UNITS])])
        words = _words(named)
        identity = Unit(rows[0], named, words, _numbered_in(words))
        docs.append(
            _Doc(doc_id, title, first.subject or "", first.uploaded_at or "", currency, units, rows, identity)
        )
    return docs


def _about(a: Unit, b: Unit, weights: Weights) -> str:
    shared = sorted(a.words & b.words, key=lambda w: -weights.of(w))
    return " ".join(sorted(shared[:4]))


def _agreed_elsewhere(a: Sequence[Unit], b: Sequence[Unit], i: int, j: int, kind: str) -> bool:
    """Whether another unit of either document holding all the words of the other side's unit
    states its value of ``kind`` as that side does (the schedule's "wed 11/18 - classification"
    and "fri 11/20 - classification - homework 5 due": the deck dated 11.20 agrees with the
    second): a fact said twice, not two versions of it."""
    for mine, theirs, at in ((a[i], b, j), (b[j], a, i)):
        values = {v.norm for v in mine.values if v.kind == kind}
        for n, unit in enumerate(theirs):
            if n != at and mine.words and mine.words <= unit.words:
                other = {v.norm for v in unit.values if v.kind == kind}
                if other and (values <= other or other <= values):
                    return True
    return False


_TOKEN = re.compile(r"\w+")


@functools.lru_cache(maxsize=PER_TEXT)
def _flat(text: str) -> str:
    """``text``'s words, lower-cased, one space apart; cached: every question reads its passages'
    texts against each recorded side their documents print (:func:`printed_in`)."""
    return " " + " ".join(_TOKEN.findall(text.lower())) + " "


def printed_in(unit: str, text: str) -> bool:
    """Whether ``text`` prints ``unit``: its words in order, however spaced, bulleted or broken."""
    return _flat(unit) in _flat(text)


#: The kinds of value a question about when something happens asks, as one.
_WHEN = frozenset({"date", "weekday", "time"})


#: The kinds of value that answer a question wanting a value of its own kind (``Intent.wants``)
#: and asking none the check compares: "how much is the fee" wants a number, not a day count.
_WANTED = {
    "number": frozenset({"count", "percent", "marks", "edition", "version"}),
    "date": _WHEN | {"duration"},
    "duration": frozenset({"duration"}),
    "contact": frozenset({"time", "weekday"}),
}


def kind_asked(conflict: Conflict, question: Question) -> bool:
    """Whether ``question`` may ask the kind of value ``conflict`` is on: it asks that kind (a
    date, a day and a time all answer "when"), or the kind of value it wants is of it, or it
    wants none; never a name or a module ("who teaches", "which module covers")."""
    intent = question.intent
    kinds = intent.compared
    if intent.wants == "person" or intent.where:
        return False
    if kinds:
        return conflict.kind in kinds or (conflict.kind in _WHEN and bool(kinds & _WHEN))
    wanted = _WANTED.get(intent.wants or "")
    return wanted is None or conflict.kind in wanted


def asked_about(conflict: Conflict, question: Question) -> bool:
    """Whether ``question`` asks about the fact ``conflict`` is on: of the kind of value it asks
    (when it asks one; a date, a day and a time are all answers to "when"), and about the same
    thing: each side's words hold one of a question's one or two topic words, two of more ("which
    chapter should i read for bootstrap" is not about the bootstrap lecture's date; "parametric
    bench % of grade?" not about a breakdown in which one term has no bench). A line of values
    alone ("Tue & Thu 1:30–5:20pm") is about whatever asks its kind, two grading breakdowns about
    the breakdown asked."""
    intent = question.intent
    kinds = intent.compared
    if not kind_asked(conflict, question):
        return False
    if intent.breakdown and conflict.kind == "percent":
        return True
    sides = [conflict.about or _words(side.sentence) for side in conflict.sides]
    if not any(sides):
        return bool(kinds)
    topic = _words(question.text)
    need = 1 if len(topic) <= 2 else 2
    return bool(topic) and all(len(topic & words) >= need for words in sides)


@dataclass(frozen=True)
class VersionRecord:
    """What an index snapshot knows of its documents' versions: the disagreements between them,
    newest first, and the pairs of documents that are versions or restatements of each other (the
    only ones the answer's question-time check compares: two homework sheets or two lectures are
    no versions of one fact)."""

    entries: tuple[Recorded, ...] = ()
    pairs: frozenset[tuple[str, str]] = frozenset()
    #: the teacher's list (`syllabot conflicts`): the entries as the teacher reads them, with the
    #: numbered outlines and lists of questions of two documents that differ, newest first
    listed: tuple[ConflictInfo, ...] = ()

    def related(self, a: str, b: str) -> bool:
        """Whether documents ``a`` and ``b`` are versions or restatements of each other."""
        return (a, b) in self.pairs or (b, a) in self.pairs

    def to_json(self) -> dict[str, object]:
        return {
            "entries": [r.to_json() for r in self.entries],
            "pairs": sorted(self.pairs),
            "listed": [_listed_to_json(d) for d in self.listed],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VersionRecord:
        entries = tuple(Recorded.from_json(r) for r in data.get("entries", ()))
        pairs = frozenset((str(a), str(b)) for a, b in data.get("pairs", ()))
        listed = tuple(_listed_from_json(d) for d in data.get("listed", ()))
        return cls(entries, pairs, listed)


def _listed_to_json(entry: ConflictInfo) -> list[object]:
    """A teacher's-list entry as the snapshot stores it: [topic, kind, [label, text] of each side,
    [doc ids], why current] (the stored shape of snapshots indexed before the entry was a
    ``ConflictInfo``)."""
    return [
        entry.topic,
        entry.kind,
        [entry.first, entry.first_text],
        [entry.second, entry.second_text],
        list(entry.docs),
        entry.current,
    ]


def _listed_from_json(data: Sequence[Any]) -> ConflictInfo:
    topic, kind, first, second, docs, current = data
    return ConflictInfo(
        topic=str(topic),
        kind=str(kind),
        first=str(first[0]),
        first_text=str(first[1]),
        second=str(second[0]),
        second_text=str(second[1]),
        docs=(str(docs[0]), str(docs[1])),
        current=str(current),
    )


def _numbered_apart(a: _Doc, b: _Doc) -> bool:
    """Two documents whose file names or title units name one numbered thing by different numbers
    ("homework1.pdf" and "homework3.pdf", "Lecture 19: …" and "Lecture 20: …"): two of a series,
    never versions of each other, however much boilerplate they share."""
    return _other_number(a.identity, b.identity)


def record_of(
    chunks: Sequence[Chunk], left_out: Sequence[bool] | None = None, check: Callable[[], None] | None = None
) -> VersionRecord:
    """The disagreements between versions of the collection's documents (see the module
    docstring), newest first, and the pairs of documents that are versions or restatements.
    ``left_out``: chunks not read (superseded versions an admin or the document's own front
    matter retired). ``check``: a build's cancel check, called per document and per pair read."""
    check = check or (lambda: None)
    docs = _documents(chunks, left_out if left_out is not None else [False] * len(chunks), check)
    weights = Weights([doc.units for doc in docs])
    # in how many documents each statement is printed: one in three or more is boilerplate (a
    # tutorial's setup lines, a deck's footer), no sign that two of them are versions
    spread: dict[frozenset[str], int] = {}
    for doc in docs:
        for words in {unit.words for unit in doc.units}:
            spread[words] = spread.get(words, 0) + 1
    # a title two documents share marks a likely new version (``building``); one shared by more
    # ("Contents", a generator's heading) names nothing
    title_count: dict[str, int] = {}
    for doc in docs:
        title_count[doc.title] = title_count.get(doc.title, 0) + 1
    found: list[tuple[float, Recorded]] = []
    related: set[tuple[str, str]] = set()
    for (d, e), pairs in _alike(docs, weights, check).items():
        check()
        a, b = docs[d], docs[e]
        aligned = align(pairs)
        anchors = sum(
            1
            for i, j, s in aligned
            if s >= ANCHOR_AT and max(spread[a.units[i].words], spread[b.units[j].words]) <= 2
        )
        same_title = bool(a.title) and a.title == b.title and title_count[a.title] == 2 and anchors >= 1
        if _numbered_apart(a, b) or not (anchors >= MIN_ANCHORS or same_title):
            continue  # no versions: nothing of theirs is compared
        related.add((a.doc_id, b.doc_id))
        first, why = current_first((a.currency, a.title, a.uploaded_at), (b.currency, b.title, b.uploaded_at))
        newest = max(a.uploaded_at, b.uploaded_at)
        for i, j, s in aligned:
            ua, ub = a.units[i], b.units[j]
            differing = differ(ua, ub, max(i, j) < TITLE_UNITS)
            if differing is None or _agreed_elsewhere(a.units, b.units, i, j, differing[0]):
                continue
            kind, va, vb, about = differing
            side_a = RecordedSide(ua.row, a.doc_id, ua.text, tuple((v.norm, v.text) for v in va))
            side_b = RecordedSide(ub.row, b.doc_id, ub.text, tuple((v.norm, v.text) for v in vb))
            sides = (side_a, side_b) if first == 0 else (side_b, side_a)
            about_words = " ".join(sorted(about)) if about else _about(ua, ub, weights)
            found.append((s, Recorded(kind, about_words, sides, why, newest, bool(about))))
    for doc in docs:
        if doc.currency[0] > 0:  # it says it revises the others (``currency.claims_revision``)
            related.update((doc.doc_id, other.doc_id) for other in docs if other is not doc)
    found.sort(key=lambda item: (item[1].newest, item[0]), reverse=True)
    return VersionRecord(tuple(entry for _, entry in found), frozenset(related))
