"""The read side of the engine: one question's search over a snapshot, and what it returns.

Pure functions over an :class:`~worker.indexes.index.IndexSnapshot` (no Redis, no embedder): the hybrid
score with its fallback and course scope (:func:`search_snapshot`), the course's related passages
the answer and the conflict check read besides the hits (:func:`related_hits`: the asked value in
other documents, whole numbered outlines), the teacher's list of disagreements
(:func:`disagreements`), and the :class:`SearchResult` handed to the answerers. ``worker.indexes.engine``
is the façade that loads snapshots and embeds queries around these.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from syllabot.shared.config import Settings
from syllabot.shared.labels import citation_label, display_title
from syllabot.shared.schema import ConflictInfo, Hit
from syllabot.shared.threads import Turn
from syllabot.worker.indexes.breakdown import prints_weights
from syllabot.worker.indexes.conflicts import (
    READ_HITS,
    Candidate,
    Conflict,
    Side,
    more_to_read,
    ordered_sides,
    told_apart,
)
from syllabot.worker.indexes.embedders.base import Embedder
from syllabot.worker.indexes.index import IndexSnapshot
from syllabot.worker.indexes.search import Selection, hybrid_scores, select
from syllabot.worker.indexes.versions import VersionRecord, printed_in
from syllabot.worker.ingest.passages import item_line, leading_items, passage, read_blocks
from syllabot.worker.query.card import (
    SLOT_OF,
    CardAnswer,
    SlotMeanings,
    answer_from_card,
    disagreement_on,
    slot_by_meaning,
)
from syllabot.worker.query.card import (
    disagreements as card_disagreements,
)
from syllabot.worker.query.reading import Question, asked, read_question
from syllabot.worker.query.values import Value, values_in
from syllabot.worker.text.currency import how_current
from syllabot.worker.text.display import broken_words
from syllabot.worker.text.documents import Chunk
from syllabot.worker.text.keyword import keyword_scores, keyword_stem


@dataclass
class SearchResult:
    """Hits plus what the answerer and the logs need about how they were found."""

    hits: list[Hit]
    index_version: str | None
    embed_ms: float
    search_ms: float
    fallback: bool  # nothing cleared the threshold; the best chunks were returned anyway
    collection: str = "default"
    question: str = ""
    #: the question as read once (``worker.query.reading.read_question``): what was searched and what it asks
    read: Question | None = None
    earlier: tuple[str, ...] = ()  # the conversation's earlier questions, oldest first (LLM context)
    vector: np.ndarray | None = None  # the unit query vector searched with (the gap report groups these)
    related: list[Hit] = field(default_factory=list)  # the course's other passages on the asked value
    #: the embedder that built the index searched (``IndexSnapshot.embedder_id``): the verdict is
    #: decided on that model's cosine scale (``decision.thresholds_for``); None: not known (a
    #: stand-in result), the default embedder's scale
    embedder_id: str | None = None
    #: the recorded disagreements between versions (``worker.indexes.versions``) one side of which a passage
    #: of this result prints (:func:`recorded_for`): the answer leads with one it quotes
    recorded: list[Conflict] = field(default_factory=list)
    #: the snapshot's record of its documents' versions: which the question-time check may compare
    versions: VersionRecord | None = None
    #: what the course card says of the asked slot (``worker.query.card.answer_from_card``), its
    #: facts cited by passage number (their passages are among ``passages``); None: no slot asked
    card: CardAnswer | None = None
    #: the documents among the passages that are of an earlier term than another document of the
    #: collection: their term and the latest (``CourseCard.older_terms``)
    older: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: words a line end broke in the passages, each with the word whole (``display.broken_words``)
    breaks: dict[str, str] = field(default_factory=dict)
    #: two current documents that state the asked slot of the course card differently
    #: (``card.disagreement_on``), both sides' passages among ``passages``: the answer says so
    card_conflict: Conflict | None = None

    @functools.cached_property
    def asked(self) -> Question:
        """The question as read (a result of nothing searched reads the question as it came, once:
        ``query``, ``courses``, ``topic`` and ``unknown`` all ask for it)."""
        return self.read if self.read is not None else asked(Question(self.question))

    @property
    def query(self) -> str:
        """The question as searched: greetings, emoji and mentions dropped, chat words spelled out."""
        return self.asked.text

    @property
    def courses(self) -> tuple[str, ...]:
        return self.asked.courses

    @property
    def topic(self) -> str:
        return self.asked.topic

    @property
    def unknown(self) -> tuple[str, ...]:
        return self.asked.unknown

    @property
    def passages(self) -> list[Hit]:
        """What an answer may quote and cite, numbered in this order: the hits, then the
        ``related`` passages (another document's statement of the asked value, a numbered outline
        read whole). Both answerers read these, so a model sees the whole lecture plan too."""
        return [*self.hits, *self.related]


@dataclass(frozen=True)
class PendingSearch:
    """A search waiting for its query vector (:meth:`Engine.begin_search`)."""

    snapshot: IndexSnapshot
    query: Question
    collection: str
    question: str
    turns: tuple[Turn, ...] = ()
    #: The embedder of the snapshot's vectors (:meth:`Engine.embedder_for`); None: the engine's own.
    embedder: Embedder | None = None


#: Added to the hybrid score of chunks holding the block a list question asks for (see search_snapshot).
SECTION_BOOST = 0.25


def search_snapshot(
    snapshot: IndexSnapshot,
    query_vector: np.ndarray,
    question: str | Question,
    settings: Settings,
    k: int | None = None,
    include_superseded: bool = False,
) -> tuple[Selection, list[Hit]]:
    """Score every chunk of a snapshot for one query and select the hits (no I/O).

    A question that names courses is answered from those courses' chunks only (when they have
    any): "CO4 of ADA" must never come back as another course's CO4.
    """
    query = question if isinstance(question, Question) else asked(Question(question))
    cosine = snapshot.matrix @ query_vector
    keyword = keyword_scores(query.text, snapshot.keyword, settings.keyword_method)
    scores = hybrid_scores(cosine, keyword, settings.hybrid_alpha)
    intent = query.intent
    if intent.section is not None:
        # "The COs of CN": the outcomes block is the answer however few words it shares with the
        # question (a 2,000-character lab list embeds poorly); lift every block of that kind.
        scores = scores + SECTION_BOOST * snapshot.section_mask(intent.section)
    # Superseded versions answer only a question about the change itself, cited as earlier versions.
    excluded = None if include_superseded or query.about_change else snapshot.superseded
    if query.courses:
        outside = ~snapshot.course_mask(query.courses)
        if not outside.all():
            excluded = outside if excluded is None else (outside | excluded)
    selection = select(
        scores,
        cosine,
        keyword,
        snapshot.chunks,
        snapshot.matrix,
        k or settings.top_k,
        settings.score_threshold,
        settings.dedup_similarity,
        excluded,
    )
    hits = [
        hit_from_chunk(snapshot.chunks[s.row], rank, s.score, s.cosine, s.keyword)
        for rank, s in enumerate(selection.rows, start=1)
    ]
    hits[:LIST_JOIN_HITS] = [
        joined_list(snapshot, s.row, hit, excluded)
        for s, hit in zip(selection.rows[:LIST_JOIN_HITS], hits[:LIST_JOIN_HITS], strict=True)
    ]
    if intent.breakdown and not selection.fallback:
        extra = weights_of_top_documents(snapshot, [s.row for s in selection.rows], excluded)
        hits += [
            hit_from_chunk(
                snapshot.chunks[r], len(hits) + n, float(scores[r]), float(cosine[r]), float(keyword[r])
            )
            for n, r in enumerate(extra, start=1)
        ]
    return selection, hits


#: How many of the top hits have a list their passage ends in read on into the next passages.
LIST_JOIN_HITS = 6
#: The longest a list read on over passages grows (as long as the longest list an answer quotes).
LIST_JOIN_CHARS = 3000


def joined_list(snapshot: IndexSnapshot, row: int, hit: Hit, excluded: np.ndarray | None = None) -> Hit:
    """``hit`` with the list its passage ends in read on into the passages after it in its document
    (each continuing it from its first line), across a page break: their leading items appended,
    its page span and page marks extended. ``hit`` itself when it ends in no list item.

    Why at search: a list cut by a passage boundary (a course outline over two pages, a slide's
    bullets split by the chunker's window) was answered with its first half, and the half after
    the cut shares few of the question's words, so it is rarely retrieved beside it. Reading on
    is structural (the next passage of the same document starts with an item), not a judgement."""
    own = read_blocks(passage(hit))
    if not (own and own[-1].item):
        return hit
    chunks = snapshot.chunks
    text, page_end, marks = hit.text, hit.page_end or hit.page, list(hit.page_marks)
    seen = {_squash(b.text) for b in own if b.item}
    said = _squash(" ".join(b.text for b in own))
    rows = snapshot.document_rows(hit.doc_id)
    nxt = row + 1
    while nxt in rows and len(text) < LIST_JOIN_CHARS and not (excluded is not None and excluded[nxt]):
        follower = hit_from_chunk(chunks[nxt], 0, 0.0, 0.0, 0.0)
        found = read_blocks(passage(follower))
        # a window overlapping this one repeats its last lines, the list's lead-in among them (not
        # a slide under the same title: what it repeats must be how this passage ends)
        repeated = next((n for n, b in enumerate(found) if _squash(b.text) not in said), len(found))
        if repeated and _ends_with(said, [_squash(b.text) for b in found[: repeated + 1]], repeated):
            found = found[repeated:]
        if not found:
            nxt += 1  # wholly inside this one: the list may go on in the next
            continue
        leading = leading_items(found)
        if not leading:
            break
        # overlapping windows repeat the items before the cut: only the new ones are read on
        items = [b.text for b in leading if _squash(b.text) not in seen]
        seen.update(_squash(t) for t in items)
        if items:
            # the item the window cut ("… linear algebra is") is read whole from the next one
            head, _, last = text.rpartition("\n")
            cut = read_blocks(last)
            if head and cut and cut[0].item and _squash(items[0]).startswith(_squash(cut[0].text)):
                text = head
            at = len("".join(text.split()))
            if follower.page is not None and follower.page != (page_end or follower.page):
                marks.append((at, follower.page))
            text += "\n" + "\n".join(item_line(t) for t in items)
            page_end = follower.page_end or follower.page or page_end
        if len(leading) < len(found):
            break  # the list ends inside this passage
        nxt += 1
    if text == hit.text:
        return hit
    return hit.model_copy(update={"text": text, "page_end": page_end, "page_marks": marks})


def _ends_with(said: str, blocks: Sequence[str], repeated: int) -> bool:
    """Whether ``said`` ends with the first ``repeated`` of ``blocks``, or with them and the start of
    the block after them (the item the earlier window cut: "… pull walls of even thick")."""
    tail = " ".join(blocks[:repeated])
    at = said.rfind(tail)
    if at < 0:
        return False
    rest = said[at + len(tail) :].strip()
    return not rest or (len(blocks) > repeated and blocks[repeated].startswith(rest))


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


#: The most passages a grading-breakdown question adds after its hits.
BREAKDOWN_EXTRA = 12


def weights_of_top_documents(
    snapshot: IndexSnapshot, rows: Sequence[int], excluded: np.ndarray | None
) -> list[int]:
    """ "How is the grade broken down?": the passages of the top hits' documents that print a graded
    component's weight and are not among the hits yet, in document order, added after them. Why
    after and not lifted: a syllabus heads each component's paragraph with its weight over two
    pages, and each paragraph shares little with the question; lifting every passage with a
    percentage in it would push R output and grade scales into the answer's own top hits."""
    chunks = snapshot.chunks
    taken = set(rows)
    out: list[int] = []
    starts: dict[str, int] = {}  # each top document's best hit
    for r in rows[:3]:
        starts.setdefault(chunks[r].doc_id, r)
    for top, start in starts.items():
        # a document's passages are stored together: read outwards from its hit, never the whole index
        first, last = start, start
        while first > 0 and chunks[first - 1].doc_id == top:
            first -= 1
        while last + 1 < len(chunks) and chunks[last + 1].doc_id == top:
            last += 1
        out += [
            r
            for r in range(first, last + 1)
            if r not in taken
            and not (excluded is not None and excluded[r])
            and prints_weights(chunks[r].text)
        ]
    return out[:BREAKDOWN_EXTRA]


def related_hits(snapshot: IndexSnapshot, question: Question | str, hits: Sequence[Hit]) -> list[Hit]:
    """The passages of the course that also state the value ``question`` asks
    (``worker.indexes.conflicts.more_to_read``), as hits ranked after the retrieved ones: what the conflict
    check reads besides them, so a disagreement is found when retrieval brought one document's
    sentence and only the other's neighbouring passage, or none of the other document."""

    def passages_with(words: frozenset[str], at_least: int, limit: int) -> list[Candidate]:
        chunks = snapshot.chunks
        return [
            Candidate(row, chunks[row].doc_id, chunks[row].subject, chunks[row].text)
            for row in snapshot.rows_with_terms(words, at_least, limit)
        ]

    question = question if isinstance(question, Question) else read_question(question, snapshot)
    positions = more_to_read(question, hits, passages_with)
    positions += [r for r in outline_rows(snapshot, question, hits) if r not in positions]
    return [
        hit_from_chunk(snapshot.chunks[row], len(hits) + n + 1, 0.0, 0.0, 0.0)
        for n, row in enumerate(positions)
    ]


def result_of(
    snapshot: IndexSnapshot,
    hits: list[Hit],
    related: list[Hit],
    fallback: bool,
    collection: str,
    question: str,
    read: Question,
    *,
    embed_ms: float = 0.0,
    search_ms: float = 0.0,
    earlier: tuple[str, ...] = (),
    vector: np.ndarray | None = None,
    meanings: SlotMeanings | None = None,
) -> SearchResult:
    """The :class:`SearchResult` of a search of ``snapshot``, with what it carries of the index
    searched (its version, its embedder, its record of versions and the disagreements recorded
    there that the passages print) filled in one place, for the engine and the benches alike; the
    course card's answer to the asked slot, its facts' passages added to ``related`` (a question
    whose words name no slot asks the one its ``vector`` is nearest by ``meanings``, when close)."""
    if (
        not read.slots
        and vector is not None
        and meanings is not None
        and meanings.embedder_id == snapshot.embedder_id
    ):
        slot = slot_by_meaning(vector, meanings)
        if slot is not None:
            read = dataclasses.replace(read, slots=(slot,))
    card, related = card_evidence(snapshot, read, hits, related)
    card_conflict, related = card_disagreement(snapshot, card, hits, related)
    return SearchResult(
        hits,
        snapshot.version,
        embed_ms,
        search_ms,
        fallback,
        collection,
        question,
        read,
        earlier,
        vector=vector,
        related=related,
        embedder_id=snapshot.embedder_id,
        recorded=recorded_for(snapshot, [*hits, *related]),
        versions=snapshot.versions,
        card=card,
        older=_older_among(snapshot, [*hits, *related]),
        breaks=broken_among(snapshot, [*hits, *related]),
        card_conflict=card_conflict,
    )


def _older_among(snapshot: IndexSnapshot, passages: Sequence[Hit]) -> dict[str, tuple[str, str]]:
    """Which of ``passages``' documents are of an earlier term than another of the collection."""
    older = snapshot.course_card.older_terms()
    return {p.doc_id: older[p.doc_id] for p in passages if p.doc_id in older}


def broken_among(snapshot: IndexSnapshot, passages: Sequence[Hit | Chunk]) -> dict[str, str]:
    """The words a line end broke in ``passages`` that the collection spells whole more often
    than it prints their halves in one passage (its keyword index counts both: a cheap look-up)."""
    index = snapshot.keyword

    def more_whole(left: str, right: str) -> bool:
        whole = index.df(keyword_stem((left + right).lower()))
        if not whole:
            return False
        rows = index.postings(keyword_stem(left.lower()))[0]
        others = index.postings(keyword_stem(right.lower()))[0]
        return whole > len(np.intersect1d(rows, others))

    return broken_words((p.text for p in passages), more_whole)


#: How many of the top hits are read for an empty slot's words before the card says it is not there.
CARD_PASSAGES = 5


def card_evidence(
    snapshot: IndexSnapshot, read: Question, hits: list[Hit], related: list[Hit]
) -> tuple[CardAnswer | None, list[Hit]]:
    """The course card's answer to the slot ``read`` asks (of the courses it names; else, in a
    collection of several courses, of the top hit's), with each fact's passage number: a passage
    already among the hits or related ones keeps its number, any other is added after them."""
    card = snapshot.current_card
    if not read.slots or not card.facts:
        return None, related
    subjects: tuple[str, ...] = ()
    if read.courses:
        mask = snapshot.course_mask(read.courses)
        subjects = tuple({snapshot.chunks[r].subject or "" for r in np.flatnonzero(mask)})
    elif hits and len({f.subject for f in card.facts}) > 1:
        subjects = (hits[0].subject or "",)
    answer = answer_from_card(
        card, read.slots, read.text, subjects, read.unknown, [h.text for h in hits[:CARD_PASSAGES]]
    )
    if answer is None:
        return None, related
    related = list(related)
    facts = (*answer.facts, *((answer.closest,) if answer.closest is not None else ()))
    cited = tuple(_cited(snapshot, fact.row, hits, related)[0] for fact in facts)
    return dataclasses.replace(answer, numbers=cited), related


def _cited(snapshot: IndexSnapshot, row: int, hits: list[Hit], related: list[Hit]) -> tuple[int, Hit]:
    """The passage that is chunk ``row`` among ``hits`` and ``related``, with its number; appended
    to ``related`` (numbered after them) when neither holds it: a card fact is cited by its passage."""
    chunk = snapshot.chunks[row]
    passages = [*hits, *related]
    for n in range(len(passages), 0, -1):  # the last one that holds it, if it is there twice
        if passages[n - 1].doc_id == chunk.doc_id and passages[n - 1].text == chunk.text:
            return n, passages[n - 1]
    hit = hit_from_chunk(chunk, len(hits) + len(related) + 1, 0.0, 0.0, 0.0)
    related.append(hit)
    return hit.rank, hit


def card_disagreement(
    snapshot: IndexSnapshot, card: CardAnswer | None, hits: list[Hit], related: list[Hit]
) -> tuple[Conflict | None, list[Hit]]:
    """The disagreement of the course card on the slot its answer quotes (``card.disagreement_on``)
    as a conflict the answer leads with: each side cited by its fact's passage (added to
    ``related`` when not among the passages), the evidently current one first."""
    found = disagreement_on(snapshot.current_card, card) if card is not None else None
    if found is None:
        return None, related
    related = list(related)
    sides = []
    for fact in (found.first, found.second):
        _, hit = _cited(snapshot, fact.row, hits, related)
        rows = snapshot.document_rows(fact.doc_id)
        texts = (snapshot.chunks[r].text for r in range(rows.start, min(rows.stop, rows.start + 3)))
        sides.append(Side(hit, fact.text, tuple(values_in(fact.text)), how_current(hit, texts)))
    return ordered_sides("card", sides[0], sides[1]), related


def recorded_for(snapshot: IndexSnapshot, passages: Sequence[Hit]) -> list[Conflict]:
    """The recorded disagreements between versions (``IndexSnapshot.versions``) one side of which
    one of ``passages`` prints, as conflicts the answer can lead with: that side cited by its
    passage, the others by the passages they were read from, the current one first. Entries that
    share that side are one conflict (a deck dated 12.2 against the schedule's two clustering
    days). A dictionary look-up per passage's document: question time is unchanged."""
    grouped: dict[tuple[str, str, str], list[Side]] = {}
    reasons: dict[tuple[str, str, str], str] = {}
    about: dict[tuple[str, str, str], frozenset[str]] = {}
    seen: set[int] = set()
    for hit in passages:
        for entry, n in snapshot.recorded_in(hit.doc_id):
            if id(entry) in seen or not printed_in(entry.sides[n].text, hit.text):
                continue
            seen.add(id(entry))
            sides = [
                Side(
                    hit if k == n else hit_from_chunk(snapshot.chunks[side.row], 0, 0.0, 0.0, 0.0),
                    side.text,
                    tuple(Value(entry.kind, norm, text) for norm, text in side.values),
                )
                for k, side in enumerate(entry.sides)
            ]
            key = (entry.kind, hit.doc_id, entry.sides[n].text)
            if key in grouped:
                grouped[key].append(sides[1 - n])
            else:
                grouped[key], reasons[key] = sides, entry.current_reason
                about[key] = frozenset(entry.about.split()) if entry.narrow else frozenset()
    return [Conflict(key[0], tuple(sides), reasons[key], about=about[key]) for key, sides in grouped.items()]


def disagreements(snapshot: IndexSnapshot) -> list[ConflictInfo]:
    """The teacher's list (`syllabot conflicts`): the snapshot's record of versions, as the teacher
    reads it (``IndexSnapshot.versions.listed``), newest first, then the course card's slots that
    two current documents fill differently (``card.disagreements``: the same ones answers name)."""
    listed = list(snapshot.versions.listed)
    shown = {(e.first_text, e.second_text) for e in listed}
    for found in card_disagreements(snapshot.current_card):
        sides = [(snapshot.chunks[f.row], f.text) for f in (found.first, found.second)]
        (first, first_text), (second, second_text) = told_apart(sides)
        if (first_text, second_text) in shown:
            continue
        listed.append(
            ConflictInfo(
                topic=SLOT_OF[found.slot].says + (f" ({found.who})" if found.who else ""),
                kind=SLOT_OF[found.slot].value,
                first=first,
                first_text=first_text,
                second=second,
                second_text=second_text,
                docs=(found.first.doc_id, found.second.doc_id),
            )
        )
    return listed


#: The most documents whose outlines one question quotes, out of at most this many read (the top
#: hits' first, then the course's others in stored order): a course of a thousand documents costs
#: what forty do.
OUTLINE_DOCUMENTS = 3
OUTLINE_READ = 40


def outline_rows(snapshot: IndexSnapshot, question: Question, hits: Sequence[Hit]) -> list[int]:
    """ "How many lectures are there?", "which week is PCA": the passages holding the numbered
    outline of the unit asked about (lecture, week, module …) of the top hits' documents and of
    their course's other documents, each document's in its order (``IndexSnapshot.outline_of``).

    Why the whole outline and not the hits: an outline runs over several windows and pages and
    retrieval returns pieces of it, so its length, its last entry or the entry on a topic cannot be
    read from them; and the course's syllabus and its lecture plan may each print one, numbered
    differently. Empty for any other question, and for a superseded document unless the question
    asks about a change."""
    ask = question.coverage
    top = hits[:READ_HITS]
    if ask is None or not top:
        return []
    course = snapshot.course_of(top[0].doc_id)
    # the documents to read, in order, each once (a dict: a course may hold thousands)
    docs = dict.fromkeys(h.doc_id for h in top if not h.subject or snapshot.course_of(h.doc_id) == course)
    if course:
        docs.update(dict.fromkeys(snapshot.documents_of(course)))
        docs.update(dict.fromkeys(d for d, named in snapshot.named_courses().items() if course in named))
    elif not snapshot.catalog.courses:
        # a collection in which no course is detected anywhere is one course (a class's own
        # syllabus, slides and README, none with a course header the chunker reads): all its documents
        docs.update(dict.fromkeys(snapshot.documents()))
    old_too = question.about_change
    rows: list[int] = []
    kept = 0
    for doc_id in itertools.islice(docs, OUTLINE_READ):
        outline = snapshot.outline_of(doc_id)
        if outline is None or outline.unit != (ask.unit or outline.unit):
            continue
        entry_rows = sorted({e.source for e in outline.entries})
        if not old_too and snapshot.superseded[entry_rows].any():
            continue
        rows += entry_rows
        kept += 1
        if kept == OUTLINE_DOCUMENTS:
            break
    return rows


#: What a superseded document's citation says (it is cited only when asked about a change, or when
#: nothing current is indexed).
EARLIER_VERSION = " (an earlier version)"


def hit_from_chunk(chunk: Chunk, rank: int, score: float, cosine: float, keyword: float) -> Hit:
    return Hit(
        rank=rank,
        doc_id=chunk.doc_id,
        file=chunk.file,
        title=chunk.title,
        subject=chunk.subject,
        module=chunk.module,
        section=chunk.section,
        page=chunk.page,
        page_end=chunk.page_end,
        score=round(score, 6),
        cosine=round(cosine, 6),
        keyword=round(keyword, 6),
        text=chunk.text,
        version=chunk.version,
        status=chunk.status,
        lang=chunk.lang,
        cite_title=display_title(chunk),
        uploaded_at=chunk.uploaded_at,
        page_marks=list(chunk.page_marks),
        bullets=list(chunk.bullets),
        markdown=chunk.markdown,
        label=citation_label(chunk) + (EARLIER_VERSION if chunk.status == "superseded" else ""),
    )
