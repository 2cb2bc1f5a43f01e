"""When the materials disagree: the asked fact's values in each retrieved document, compared.

Real classes carry a syllabus, slides and a README written at different times ("1 × short
presentations" in the syllabus, "2 × short presentations (5% each)" in the first-week slides). An
answer quoting one of them is a silent pick. Here, for a question that asks a fact of a kind we can
read (a count, a percentage or marks split, a day, a time, a date, an edition, a version), the
sentences of each retrieved document that are about what was asked are read for values of that kind
(``worker.query.values``, the one value recogniser the answer uses too), each labelled with what it is a
value of; two documents disagree when one gives a value the other gives differently for the same
thing (``clash``). Different wording of one value is agreement: values are compared normalised
("Mondays" = "Mon" = "monday"; "11:59PM" = "23:59"; a dated "May 2, 2025" is also a Friday). When
one side is evidently the current one (``worker.text.currency``: a revision said in its name or
text, a later year printed as a date, or of two documents with the same title the later upload), it
comes first, with why.

Pure functions over hits and text (no I/O), shared by the answer path (:func:`find_conflict`,
weighed by ``decision.decide``; the note's words are the answerers', ``worker.answerers.notes``) and
the teacher's list's outline and list entries (:func:`outline_disagreements`,
:func:`list_disagreements`, read into the record of versions at index time,
``worker.indexes.versions``). The two stay one module because they judge and name a disagreement
with the same helpers (``clash``, :func:`tell_apart`, ``_outline_said``).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from syllabot.shared.labels import citation_label, title_key
from syllabot.shared.schema import ConflictInfo, Hit
from syllabot.worker.query.outlines import (
    Outline,
    OutlineAsk,
    Reading,
    outlines_by_document,
    parts_of,
    read_for,
    readings_differ,
    same_entry,
)
from syllabot.worker.query.reading import Question, read_question
from syllabot.worker.query.values import Value, from_a_date, other_terms, topic_of, values_in
from syllabot.worker.text.currency import current_first, how_current
from syllabot.worker.text.documents import Chunk
from syllabot.worker.text.sentences import ITEM_START, ROUND_BULLETS, looks_like_code, split_sentences
from syllabot.worker.text.terms import terms

if TYPE_CHECKING:
    from syllabot.worker.indexes.retrieval import SearchResult

#: Two descriptions of one unit agree when they share at least this share of their words
#: ("implement an experiment" = "implement your experiment"; "collect data" is not "human subjects
#: training, collect data").
_ITEM_AGREES = 0.5


#: A slide's bullet on a line of its own ("\n•Week 7: Collect data"), as the chunker writes them.
_BULLET_LINE = re.compile(f"[ \t]*\n[ \t]*(?=[{ROUND_BULLETS}])")


def _statements(text: str) -> list[str]:
    """The sentences the check reads: a slide's bullets read together, as one statement (a schedule
    is compared by its units, ``values._items``, and "wk 7 plan for the final project?" is about the
    slide's list, whose "Week 10: project presentations" names the project, not its week-7 line
    alone)."""
    return split_sentences(_BULLET_LINE.sub(" ", text))


@dataclass(frozen=True)
class Side:
    """One document's say on the asked fact: the passage that says it (and cites it), the sentence,
    its values about the topic, and how evidently current the document is."""

    hit: Hit
    sentence: str
    found: tuple[Value, ...] = ()
    newer: tuple[int, int, str] = (0, 0, "")  # said current (+1) or old (-1), latest year, why

    @property
    def label(self) -> str:
        return self.hit.label or self.hit.file

    @property
    def file(self) -> str:
        return self.hit.file

    @property
    def doc_id(self) -> str:
        return self.hit.doc_id

    @property
    def title(self) -> str:
        """The document's display title, lower-cased."""
        return title_key(self.hit)

    @property
    def uploaded_at(self) -> str:
        """Its first upload (ISO time; "" when unknown)."""
        return self.hit.uploaded_at or ""

    @property
    def course(self) -> str:
        """The course its passage belongs to ("" when it names none)."""
        return self.hit.subject or ""

    @property
    def quoted(self) -> tuple[str, ...]:
        """The values as printed, once each, for quoting."""
        return tuple(dict.fromkeys(v.text for v in self.found))


@dataclass(frozen=True)
class Conflict:
    kind: str
    sides: tuple[Side, ...]  # the current one first when one is evidently current
    current_reason: str = ""
    #: what the values that differ are of, when narrower than the sides' sentences (a table row's
    #: "short presentations" in a grading table): the words a question must ask about
    about: frozenset[str] = frozenset()


def _best_sentences(question_topic: frozenset[str], text: str) -> list[tuple[float, str]]:
    scored = []
    for sentence in _statements(text):
        topic = topic_of(sentence)
        shared = len(topic & question_topic)
        if shared:
            scored.append((shared / max(1, len(question_topic)), sentence))
    return sorted(scored, key=lambda item: -item[0])


@dataclass(frozen=True)
class _Asked:
    """What a question asks, as the check reads it: the kinds of value, the topic words, and how
    many of them a sentence must share to be about it (one, two for a question of three or more)."""

    kinds: frozenset[str]
    topic: frozenset[str]
    need: int


def _read(question: Question | str) -> Question:
    """A question as read once (``worker.query.reading``); a bare string is read here, without a collection."""
    if isinstance(question, str):
        return read_question(question)
    return question


def _asked(question: Question) -> _Asked | None:
    """What the check reads of the question, for both the related passages and the check; None when
    it asks no value the check reads."""
    return _asked_of(question.text, question.intent.compared)


@functools.lru_cache(maxsize=1024)
def _asked_of(text: str, kinds: frozenset[str]) -> _Asked | None:
    topic = topic_of(text)
    if not kinds or not topic:
        return None
    return _Asked(kinds, topic, 1 if len(topic) <= 2 else 2)


def _stated(asked: _Asked, text: str) -> tuple[float, str, list[Value]] | None:
    """The best sentence of ``text`` about the asked topic that states an asked value about it,
    with its score and those values; None when no sentence does."""
    for score, sentence in _best_sentences(asked.topic, text):
        if round(score * len(asked.topic)) < asked.need:
            break
        values = [v for v in values_in(sentence) if v.label & asked.topic and v.kind in asked.kinds]
        if values:
            return score, sentence, values
    return None


#: The top hits whose documents are compared.
READ_HITS = 8


def _outline_said(reading: Reading[int], unit: str) -> str:
    """What one document's outline says to the ask, in the words a conflict note quotes."""
    entries = "; ".join(e.text for e in reading.entries)
    if reading.what == "count":
        return f"{reading.total} {unit}s, the last being {reading.entries[-1].text}"
    if reading.what == "last":
        return f"its last {unit} (of {reading.total}) is {entries}"
    if not reading.found:
        return f"none of its {reading.total} {unit}s is on it"
    if reading.what in ("topic_count", "covered"):
        n, parts = len(reading.entries), parts_of(reading.entries)
        split = f" in {parts} parts" if parts > n else ""
        return f"{n} {unit}{'s' if n != 1 else ''}{split}: {entries}"
    return entries


#: Which documents are versions or restatements of each other (``versions.VersionRecord.related``);
#: None when unknown (every pair may be compared).
Related = Callable[[str, str], bool] | None


def outline_conflict(question: Question, related: Sequence[Hit], versions: Related = None) -> Conflict | None:
    """Two documents of one course whose numbered outlines of the asked unit answer ``question``
    differently (``worker.query.outlines``): a syllabus numbering 20 lectures beside a README listing 19,
    a revised lecture plan that renumbers PCA or adds an ethics lecture. ``related`` holds each
    document's outline passages in its order (``retrieval.outline_rows``). None when the question asks
    nothing of an outline, or fewer than two documents print one of that unit, or they agree."""
    ask = question.coverage if related else None
    if ask is None:
        return None
    sides: list[tuple[Side, Reading[int]]] = []
    for doc_id, outline in outlines_by_document([(h.doc_id, h.text) for h in related], ask.unit).items():
        reading = read_for(outline, ask)
        if reading is None:
            continue
        cited = related[(reading.entries or outline.entries)[0].source]
        own = [hit for hit in related if hit.doc_id == doc_id]
        newer = how_current(own[0], (hit.text for hit in own))
        sides.append((Side(cited, _outline_said(reading, outline.unit), (), newer), reading))
    for i in range(len(sides)):
        for j in range(i + 1, len(sides)):
            (a, ra), (b, rb) = sides[i], sides[j]
            if _one_course(a, b) and _versions_of(versions, a, b) and readings_differ(ra, rb):
                return ordered_sides("outline", a, b)
    return None


@dataclass(frozen=True)
class _Listed:
    """A list as a passage prints it: its items as printed (marker kept, first sentence only),
    each item's words, and the words of the lines before it (what the list is of)."""

    items: tuple[str, ...]
    words: tuple[frozenset[str], ...]
    lead: frozenset[str]
    item_words: frozenset[str]  # every item's words together


#: The fewest items two lists share to be one list in two versions, and the least share of the
#: shorter one's items that must be shared.
_LIST_SHARED = 2
_LIST_SHARE = 0.5


def lists_in(text: str) -> list[_Listed]:
    """The lists of ``text``: runs of two or more lines opening with a list marker (a number, a
    bullet or a dash; ``sentences.ITEM_START``), a nested list read as one run."""
    out: list[_Listed] = []
    run: list[str] = []
    lead: list[str] = []

    def close() -> None:
        if len(run) >= 2:
            items, words = [], []
            for line in run:
                marker = ITEM_START.match(line)
                body = line[marker.end() if marker else 0 :].strip()
                first = (split_sentences(body) or [body])[0]
                items.append(f"{line[: marker.end() if marker else 0].strip()} {first}".strip())
                words.append(frozenset(t for t in terms(first) if not t.isdigit()))
            out.append(
                _Listed(tuple(items), tuple(words), topic_of(" ".join(lead[-2:])), frozenset().union(*words))
            )

    for raw in text.split("\n"):
        line = raw.strip()
        if ITEM_START.match(line):
            run.append(line)
            continue
        close()
        if run:
            lead = []
        run = []
        if line:
            lead.append(line)
    close()
    return out


def _aligned(a: Sequence[frozenset[str]], b: Sequence[frozenset[str]]) -> list[tuple[int, int]]:
    """The longest in-order pairing of items of ``a`` and ``b`` that name the same thing
    (``outlines.same_entry``)."""
    n, m = len(a), len(b)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = (
                best[i + 1][j + 1] + 1 if same_entry(a[i], b[j]) else max(best[i + 1][j], best[i][j + 1])
            )
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if same_entry(a[i], b[j]) and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def list_difference(a: _Listed, b: _Listed) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Where two versions of one list say different things: most of the shorter one's items are
    in the other, in order, and at one place each prints an item the other has not (the syllabus's
    "3.) What are the impediments to my progress?" where the slides ask "What are you stuck on?").
    Returns each list's items from the first shared one to the last differing one, or None (two
    different lists, the same list, or one that only adds or drops items)."""
    pairs = _aligned(a.words, b.words)
    if len(pairs) < max(_LIST_SHARED, _LIST_SHARE * min(len(a.items), len(b.items))):
        return None
    bounds = [(-1, -1), *pairs, (len(a.items), len(b.items))]
    last = None
    for (i0, j0), (i1, j1) in itertools.pairwise(bounds):
        if i1 - i0 > 1 and j1 - j0 > 1:
            last = (i1 - 1, j1 - 1)
    if last is None:
        return None
    (ia, ja) = pairs[0]
    start_a, start_b = min(ia, last[0]), min(ja, last[1])
    return a.items[start_a : last[0] + 1], b.items[start_b : last[1] + 1]


def find_conflict(
    question: Question | str,
    hits: Sequence[Hit],
    max_hits: int = READ_HITS,
    related: Sequence[Hit] = (),
    versions: Related = None,
) -> Conflict | None:
    """The disagreement among ``hits`` (the top ``max_hits``) and the ``related`` passages of their
    course (:func:`more_to_read`) on the fact ``question`` asks, or None; only between documents
    that are ``versions`` of each other, when the index says which (:func:`_versions_of`).

    A question about a numbered outline ("how many lectures", "which week is PCA") is first
    answered from each document's whole outline (:func:`outline_conflict`; read on the question's
    topic, without the course names it used, so "ml" is not a topic the outline's entries must name).

    Each passage speaks through its best sentence about the question's topic words that states an
    asked value about them (:func:`_stated`). For each asked kind, a document's say is its
    best-scoring such sentence holding values of that kind; two documents disagree when
    :func:`clash` finds a value of one against a differing value of the same thing in the other.
    """
    question = _read(question)
    outlined = outline_conflict(question, related, versions)
    if outlined is not None:
        return outlined
    asked = _asked(question)
    if asked is None:
        return None
    by_doc: dict[str, list[Hit]] = {}
    for hit in [*hits[:max_hits], *related]:
        by_doc.setdefault(hit.doc_id, []).append(hit)
    if len(by_doc) < 2:
        return None
    # Per document: (score, sentence, its values about the topic, the passage) of each passage.
    read: dict[str, list[tuple[float, str, list[Value], Hit]]] = {}
    for doc_id, doc_hits in by_doc.items():
        for hit in doc_hits:
            stated = _stated(asked, hit.text)
            if stated is not None:
                read.setdefault(doc_id, []).append((*stated, hit))
    newer = {doc_id: how_current(by_doc[doc_id][0], (h.text for h in by_doc[doc_id])) for doc_id in read}
    best: Conflict | None = None
    best_strength = 0.0
    for kind in sorted(asked.kinds):
        sides: list[tuple[float, Side]] = []
        for doc_id, sentences in read.items():
            chosen: tuple[float, str, list[Value], Hit] | None = None
            for score, sentence, values, hit in sentences:
                of_kind = [v for v in values if v.kind == kind]
                if of_kind and (chosen is None or score > chosen[0]):
                    chosen = (score, sentence, of_kind, hit)
            if chosen is not None:
                score, sentence, values, first = chosen  # cited by the hit that says it
                sides.append((score, Side(first, sentence, tuple(values), newer[doc_id])))
        for i in range(len(sides)):
            for j in range(i + 1, len(sides)):
                (si, a), (sj, b) = sides[i], sides[j]
                if not _one_course(a, b) or not _versions_of(versions, a, b):
                    continue  # two courses (21CS53 and BCS403 DBMS): different facts, not versions
                if clash(a.found, b.found, of=asked.topic) is None or _says_both(by_doc, a, b):
                    continue
                if si + sj > best_strength:
                    best_strength = si + sj
                    best = ordered_sides(kind, a, b)
    return best


#: The other passages kept per document beyond the retrieved ones, at most this many kept in all, out
#: of at most this many read.
MORE_PER_DOC = 2
MORE_KEPT = 6
MORE_READ = 40


@dataclass(frozen=True)
class Candidate:
    """A passage of the collection the conflict check may read besides the retrieved ones."""

    position: int
    doc_id: str
    subject: str | None
    text: str


def more_to_read(
    question: Question | str,
    hits: Sequence[Hit],
    passages_with: Callable[[frozenset[str], int, int], Sequence[Candidate]],
    max_hits: int = READ_HITS,
    per_doc: int = MORE_PER_DOC,
) -> list[int]:
    """Other passages of the course that state a value of the asked kind about the asked thing.

    The fact a question asks is often said by two documents, and retrieval, ranking by the
    question's words, brings one of them the sentence and the other only its neighbour, or nothing
    ("do i have to do 2 short pres or just one": the slides' grading table and the syllabus's "Short
    presentations" paragraph, not its grading list). ``passages_with(words, at_least, limit)`` gives
    the collection's passages holding at least ``at_least`` of the topic ``words``; kept are those of
    the top hits' documents or course (a passage of another course is another course's fact), not
    already retrieved, that state an asked value about the topic (:func:`_stated`), ``per_doc`` at
    most per document and :data:`MORE_KEPT` in all: their positions, best first. Empty when the
    question asks no value :func:`find_conflict` reads, so most questions cost nothing here; a value
    question over 97,000 chunks costs ~2–3 ms (postings counted with numpy)."""
    asked = _asked(_read(question))
    top = hits[:max_hits]
    if asked is None or not top:
        return []
    docs = {h.doc_id for h in top}
    courses = {h.subject for h in top if h.subject}
    seen = {" ".join(h.text.split()) for h in top}
    ranked: dict[str, list[tuple[float, int]]] = {}
    for passage in passages_with(asked.topic, asked.need, MORE_READ):
        if passage.doc_id not in docs and (
            passage.subject not in courses
            if passage.subject
            else courses and not any(names_course(passage.text, c) for c in courses)
        ):
            continue  # another course's passage, or a notice of no course that names none of these
        if len(ranked.get(passage.doc_id, ())) >= per_doc or " ".join(passage.text.split()) in seen:
            continue  # candidates come most topic words first: a document's first finds are its best
        stated = _stated(asked, passage.text)
        if stated is not None:
            ranked.setdefault(passage.doc_id, []).append((stated[0], passage.position))
    found = [item for items in ranked.values() for item in items]
    return [position for _, position in sorted(found, key=lambda item: (-item[0], item[1]))[:MORE_KEPT]]


def names_course(text: str, course: str) -> bool:
    """Whether ``text`` names ``course`` ("21CS44 Operating Systems"): its code or its whole name."""
    words = course.split()
    if not words:
        return False
    lowered = text.lower()
    return re.search(rf"\b{re.escape(words[0].lower())}\b", lowered) is not None or course.lower() in lowered


def _versions_of(versions: Related, a: Side, b: Side) -> bool:
    """Whether two sides' documents may be versions of one fact: the index's record says they are
    versions or restatements of each other (``worker.indexes.versions``; two homework sheets, two
    lectures or the schedule and a lecture's notes are not), or nothing is known."""
    return versions is None or versions(a.doc_id, b.doc_id)


def _one_course(a: Side, b: Side) -> bool:
    """Whether two sides can be versions of one course's fact: the same course, or no course on
    either, or a side of no course (a Markdown notice) whose passage names the other's course."""
    if a.course and b.course:
        return a.course == b.course
    known, other = (a, b) if a.course else (b, a)
    return not known.course or names_course(other.hit.text, known.course)


def _says_both(by_doc: dict[str, list[Hit]], a: Side, b: Side) -> bool:
    """Either document also says the other's sentence word for word (a re-issued copy of one
    syllabus): the two sentences are two facts of both, not two versions of one."""

    def said(doc_id: str, sentence: str) -> bool:
        wanted = " ".join(sentence.split())
        return any(wanted in " ".join(hit.text.split()) for hit in by_doc[doc_id])

    return said(b.doc_id, a.sentence) or said(a.doc_id, b.sentence)


def clash(
    a: Sequence[Value],
    b: Sequence[Value],
    ignore: frozenset[str] = frozenset(),
    of: frozenset[str] = frozenset(),
) -> tuple[Value, Value] | None:
    """Two values that disagree: of the same thing (their labels share a word, and they are of the
    same part of the asked topic ``of``: :func:`_same_thing`), different, and neither agreed
    elsewhere. Different wording of one value is agreement, and so is a detail beside it: "1 ×
    short presentations 10%" and "2 × short presentations (5% each) 10%" disagree on the count (1
    against 2) and agree on the 10% (the 5% each has the 10% beside it); a CIE mark is compared
    with a CIE mark, never with an SEE one. Dates of two terms' calendars
    (``values.other_terms``) are not compared."""
    if other_terms(a, b):
        a, b = [v for v in a if not from_a_date(v)], [v for v in b if not from_a_date(v)]
    for va in a:
        matches = [vb for vb in b if (va.label & vb.label) - ignore and _same_thing(va, vb, of)]
        if not matches or any(_same(va, vb) for vb in matches):
            continue
        for vb in matches:
            if not any(_same(x, vb) for x in a if (x.label & vb.label) - ignore):
                return va, vb
    return None


def _same_thing(a: Value, b: Value, topic: frozenset[str]) -> bool:
    """Whether two values are of the same part of what was asked: the asked topic's words beside
    each are the same, or each has most of them (a word glued to its neighbour in one document's
    text layer, "RossPearson", costs one). "How long do I have to return a bike": "a bike may be
    returned within 30 days" has both words, "expect the bike back within 10 working days" (after
    a recall) has "bike" alone, so the two are no disagreement on the asked thing."""
    if not topic:
        return True
    near_a, near_b = a.label & topic, b.label & topic
    return near_a == near_b or (2 * len(near_a) > len(topic) and 2 * len(near_b) > len(topic))


def _same(a: Value, b: Value) -> bool:
    """One value, however worded: equal normal forms, or two descriptions of one unit sharing most
    of their words."""
    if a.norm == b.norm:
        return True
    if a.kind != "item" or b.kind != "item":
        return False
    wa, wb = set(a.norm.split()), set(b.norm.split())
    return len(wa & wb) >= _ITEM_AGREES * len(wa | wb)


def ordered_sides(kind: str, a: Side, b: Side) -> Conflict:
    """The current side first, with why, when the materials say which one is current
    (:func:`current_first`)."""
    first, why = current_first((a.newer, a.title, a.uploaded_at), (b.newer, b.title, b.uploaded_at))
    return Conflict(kind, (a, b) if first == 0 else (b, a), why)


def told_apart(sides: Sequence[tuple[Chunk, str]]) -> list[tuple[str, str]]:
    """(citation label, sentence) of each side read from a chunk, labels told apart by file."""
    names = tell_apart([citation_label(c) for c, _ in sides], [c.file for c, _ in sides])
    return [(name, text) for name, (_, text) in zip(names, sides, strict=True)]


def tell_apart(labels: Sequence[str], names: Sequence[str]) -> list[str]:
    """Citation labels, each followed by its file or document name when two are the same (two
    files of one title), so that a reader can tell the sides apart."""
    if len(set(labels)) == len(labels):
        return list(labels)
    return [f"{label} ({name})" for label, name in zip(labels, names, strict=True)]


def conflict_of(result: SearchResult, question: Question | None = None) -> Conflict | None:
    """The disagreement a search result shows on what its question asks: among its hits and the
    ``related`` passages of their course (:func:`find_conflict`)."""
    versions = result.versions.related if result.versions is not None else None
    return find_conflict(question or result.asked, result.hits, related=result.related, versions=versions)


def list_disagreements(passages: Sequence[tuple[str, str, str]], limit: int = 20) -> list[ConflictInfo]:
    """The teacher's list's entries for a list of questions printed in two documents with a
    question that differs (:func:`list_difference`; the weekly snippet's "What are the impediments
    to my progress?" against "What are you stuck on?"): ``passages`` are (doc_id, citation label,
    text). Only where both differing items are questions: with no student question to say which
    list is meant, any two lists sharing two items paired windows of one outline cut at different
    lines and two decks' lists of steps (16 entries on the two courses, 1 of them real). Only lists
    sharing two item words are compared, so a collection's hundreds of bullet lists cost little."""
    lists: list[tuple[str, str, _Listed]] = []
    for doc_id, label, text in passages:
        if "?" in text and not looks_like_code(text):
            lists.extend((doc_id, label, listed) for listed in lists_in(text) if len(listed.items) <= 12)
    by_term: dict[str, list[int]] = {}
    for i, (_, _, listed) in enumerate(lists):
        for term in listed.item_words:
            by_term.setdefault(term, []).append(i)
    found: dict[tuple[str, str], ConflictInfo] = {}
    for i, (doc_a, label_a, a) in enumerate(lists):
        shared: dict[int, int] = {}
        for term in a.item_words:
            for j in by_term[term]:
                if j > i and lists[j][0] != doc_a:
                    shared[j] = shared.get(j, 0) + 1
        for j, n in shared.items():
            doc_b, label_b, b = lists[j]
            differ = list_difference(a, b) if n >= _LIST_SHARED else None
            if differ is None or not all(side[-1].endswith("?") for side in differ):
                continue
            first, second = sorted((doc_a, doc_b))
            if (first, second) not in found:
                name_a, name_b = tell_apart([label_a, label_b], [doc_a, doc_b])
                about = " ".join(sorted(a.lead & b.lead)[:4]) or "a list of questions"
                found[first, second] = ConflictInfo(
                    topic=about,
                    kind="list",
                    first=name_a,
                    first_text=" ".join(differ[0]),
                    second=name_b,
                    second_text=" ".join(differ[1]),
                    docs=(doc_a, doc_b),
                )
    return list(found.values())[:limit]


def outline_disagreements(outlines: Sequence[tuple[str, str, str, Outline[int]]]) -> list[ConflictInfo]:
    """The teacher's list's entries for numbered outlines: ``outlines`` are (course, doc_id,
    label, outline) of the collection's documents. Two documents of one course whose outlines of
    one unit differ are listed by their lengths when both start at 1 and the lengths differ (a
    syllabus's 20 lectures against a README's 19), and by the first number they name differently
    (PCA lecture 9 against lecture 8; the README's "19. Workflow & project management" against the
    syllabus's "19. Machine learning: (2)"): where one entry was inserted, the entries after it all
    differ, so only the first is listed. Before it, an entry taught in parts in one outline and
    whole in the other is listed too (the README's "14. Google Compute Engine - Part 1 - Part 2"
    against the syllabus's "14. Virtual machines / cloud servers (Google Compute Engine)")."""
    found: list[ConflictInfo] = []
    for i, (course_a, doc_a, label_a, a) in enumerate(outlines):
        for course_b, doc_b, label_b, b in outlines[i + 1 :]:
            if course_a != course_b or doc_a == doc_b or a.unit != b.unit:
                continue
            name_a, name_b = tell_apart([label_a, label_b], [doc_a, doc_b])
            count = OutlineAsk(a.unit, "count")
            ra, rb = read_for(a, count), read_for(b, count)
            if ra is not None and rb is not None and readings_differ(ra, rb):
                said_a, said_b = _outline_said(ra, a.unit), _outline_said(rb, b.unit)
                found.append(
                    ConflictInfo(
                        topic=f"how many {a.unit}s",
                        kind="outline",
                        first=name_a,
                        first_text=said_a,
                        second=name_b,
                        second_text=said_b,
                        docs=(doc_a, doc_b),
                    )
                )
            numbered = {e.number: e for e in b.entries}
            for entry in a.entries:
                other = numbered.get(entry.number)
                if other is None:
                    continue
                renamed = not same_entry(entry.words, other.words)
                if renamed or parts_of([entry]) != parts_of([other]):  # or one lecture against two parts
                    topic = f"{a.unit} {entry.number}"
                    found.append(
                        ConflictInfo(
                            topic=topic,
                            kind="outline",
                            first=name_a,
                            first_text=entry.text,
                            second=name_b,
                            second_text=other.text,
                            docs=(doc_a, doc_b),
                        )
                    )
                if renamed:
                    break
    return found
