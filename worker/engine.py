"""The retrieval engine: one per process, holding the embedder and the per-collection index cache.

Synchronous on purpose: the worker's arq jobs call it through ``asyncio.to_thread`` so CPU-heavy
work (parsing, embedding, scoring) stays off the event loop, and the CLI calls it directly.
Checking that the cached index is still current costs one Redis GET per search.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import redis

from syllabot.shared.bindings import validate_collection_name
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.labels import citation_label
from syllabot.shared.redis_conn import Durability, sync_client
from syllabot.shared.schema import (
    CollectionInfo,
    ConflictInfo,
    DropReport,
    FileReport,
    Hit,
    IngestReport,
    SourceInfo,
)
from syllabot.shared.threads import Turn
from syllabot.worker.answerers.breakdown import prints_weights
from syllabot.worker.buildlock import BuildLock
from syllabot.worker.cancel import CancelToken
from syllabot.worker.chunking import chunk_document, link_course_tails, may_be_relinked
from syllabot.worker.conflicts import (
    READ_HITS,
    Candidate,
    Conflict,
    Disagreement,
    collection_conflicts,
    drift_conflict,
    drift_disagreements,
    list_disagreements,
    more_to_read,
    outline_disagreements,
)
from syllabot.worker.conversation import follow_up, switched_course
from syllabot.worker.documents import Chunk, Document
from syllabot.worker.drift import asks_about
from syllabot.worker.embedders import earlier_embedder, get_embedder
from syllabot.worker.embedders.base import Embedder
from syllabot.worker.index import IndexSnapshot, build_snapshot
from syllabot.worker.intent import asks_about_a_change, read_intent
from syllabot.worker.keyword import keyword_scores
from syllabot.worker.loaders import IngestError, TooLarge, load_document
from syllabot.worker.outlines import Outline, read_ask
from syllabot.worker.pipeline import EmbedPipeline
from syllabot.worker.question import clean_question
from syllabot.worker.search import Selection, hybrid_scores, select
from syllabot.worker.snapshot_cache import SnapshotCache
from syllabot.worker.spelling import correct_spelling, unknown_words
from syllabot.worker.store import CollectionStore

#: progress(stage, done, total), e.g. ("embedding", 120, 300)
Progress = Callable[[str, int, int], None]

log = logging.getLogger(__name__)


class NothingToIndex(ValueError):
    """A reindex or remove found nothing to work on."""


class UnknownCollection(NothingToIndex):
    """A command named a collection that does not exist (the message names the ones that do)."""


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
    query: str = ""  # the question as searched: greetings, emoji and mentions dropped, CO/Module normalised
    courses: tuple[str, ...] = ()  # the courses the question names (chunk subjects); hits come from these
    topic: str = ""  # the query without its course names: what it asks about
    carried: tuple[str, ...] = ()  # words a follow-up took from its conversation (worker/conversation.py)
    earlier: tuple[str, ...] = ()  # the conversation's earlier questions, oldest first (LLM context)
    vector: np.ndarray | None = None  # the unit query vector searched with (the gap report groups these)
    related: list[Hit] = field(default_factory=list)  # the course's other passages on the asked value
    drift: Conflict | None = None  # an outline entry against its lecture's notes, when asked (``drifted``)
    unknown: tuple[str, ...] = ()  # the topic's words the collection never uses (PreparedQuery.unknown)

    @property
    def passages(self) -> list[Hit]:
        """What an answer may quote and cite, numbered in this order: the hits, then the
        ``related`` passages (another document's statement of the asked value, a numbered outline
        read whole). Both answerers read these, so a model sees the whole lecture plan too."""
        return [*self.hits, *self.related]


@dataclass(frozen=True)
class PreparedQuery:
    """A question made ready for search: what is embedded, what the keyword leg reads, which courses."""

    text: str
    courses: tuple[str, ...] = ()
    topic: str = ""
    carried: tuple[str, ...] = ()
    #: words of the topic the collection never uses (``spelling.unknown_words``): the decision reads
    #: how much of the question they weigh
    unknown: tuple[str, ...] = ()

    @property
    def keyword_text(self) -> str:
        """ "CO3" is printed "CO 3." in some syllabi and "CO3" in others: the keyword leg sees both."""
        return _SPLIT_REFERENCE.sub(lambda m: f"{m.group(0)} {m.group(1)} {m.group(2)}", self.text)


@dataclass(frozen=True)
class PendingSearch:
    """A search waiting for its query vector (:meth:`Engine.begin_search`)."""

    snapshot: IndexSnapshot
    query: PreparedQuery
    collection: str
    question: str
    turns: tuple[Turn, ...] = ()
    #: The embedder of the snapshot's vectors (:meth:`Engine.embedder_for`); None: the engine's own.
    embedder: Embedder | None = None


#: Added to the hybrid score of chunks holding the block a list question asks for (see search_snapshot).
SECTION_BOOST = 0.25

_SPLIT_REFERENCE = re.compile(r"\b(CO|CLO|PO|PSO)(\d{1,2})\b", re.IGNORECASE)


#: Syllabus shorthand a student types that shares no word with the page: (pattern, what it means).
_EXPANSIONS = (
    (re.compile(r"\bl\s*:\s*t\s*:\s*p(?:\s*:\s*s)?\b", re.IGNORECASE), "teaching hours/week (L:T:P:S)"),
)


def _expand(text: str) -> str:
    for pattern, meaning in _EXPANSIONS:
        text = pattern.sub(meaning, text)
    return text


def prepare_query(question: str, snapshot: IndexSnapshot | None, turns: Sequence[Turn] = ()) -> PreparedQuery:
    """Clean the question as students write it and find the courses it names in this collection;
    a follow-up that names none is read against the conversation's ``turns`` (worker/conversation.py)."""
    text = _expand(clean_question(question))
    if snapshot is None:
        return PreparedQuery(text, (), text)
    text = correct_spelling(text, snapshot.keyword)
    courses = snapshot.catalog.mentioned(text)
    topic = snapshot.catalog.without_mentions(text) if courses else text
    prepared = PreparedQuery(text, tuple(courses), topic or text)
    if turns and not courses:
        catalog = snapshot.catalog
        follow = follow_up(text, topic, turns, lambda key: catalog.get(key) is not None)
        if follow is not None:
            prepared = PreparedQuery(follow.text, follow.courses, follow.topic, follow.carried)
    elif turns and courses:
        previous = clean_question(turns[-1].question)
        carried = switched_course(topic, snapshot.catalog.without_mentions(previous))
        if carried:
            words = " ".join(carried)
            prepared = PreparedQuery(f"{text} {words}", tuple(courses), f"{topic} {words}".strip(), carried)
    return dataclasses.replace(prepared, unknown=unknown_words(prepared.topic, snapshot.keyword))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_version() -> str:
    """Sortable, unique snapshot id: milliseconds since the epoch (hex) plus a random tail."""
    return f"{int(time.time() * 1000):x}-{uuid.uuid4().hex[:6]}"


def search_snapshot(
    snapshot: IndexSnapshot,
    query_vector: np.ndarray,
    question: str | PreparedQuery,
    settings: Settings,
    k: int | None = None,
    include_superseded: bool = False,
) -> tuple[Selection, list[Hit]]:
    """Score every chunk of a snapshot for one query and select the hits (no I/O).

    A question that names courses is answered from those courses' chunks only (when they have
    any): "CO4 of ADA" must never come back as another course's CO4.
    """
    query = question if isinstance(question, PreparedQuery) else PreparedQuery(question)
    cosine = snapshot.matrix @ query_vector
    keyword = keyword_scores(query.keyword_text, snapshot.keyword, settings.keyword_method)
    scores = hybrid_scores(cosine, keyword, settings.hybrid_alpha)
    intent = read_intent(query.text)
    if intent.section is not None:
        # "The COs of CN": the outcomes block is the answer however few words it shares with the
        # question (a 2,000-character lab list embeds poorly); lift every block of that kind.
        scores = scores + SECTION_BOOST * snapshot.section_mask(intent.section)
    # Superseded versions answer only a question about the change itself, cited as earlier versions.
    excluded = None if include_superseded or asks_about_a_change(query.text) else snapshot.superseded
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
    if intent.breakdown and not selection.fallback:
        extra = weights_of_top_documents(snapshot, [s.row for s in selection.rows], excluded)
        hits += [
            hit_from_chunk(
                snapshot.chunks[r], len(hits) + n, float(scores[r]), float(cosine[r]), float(keyword[r])
            )
            for n, r in enumerate(extra, start=1)
        ]
    return selection, hits


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


#: What a superseded document's citation says (it is cited only when asked about a change, or when
#: nothing current is indexed).
EARLIER_VERSION = " (an earlier version)"

#: The marks an admin can set on a document (``Engine.mark``).
MARKS = ("superseded", "current")


def _marked(chunk: Chunk, status: str, by: str | None) -> Chunk:
    """``chunk`` with an admin's mark: superseded (``superseded_by`` the successor's id, or "" when
    none is named) or current (the mark cleared)."""
    if status == "superseded":
        return dataclasses.replace(chunk, status="superseded", superseded_by=by or "")
    return dataclasses.replace(chunk, status="current", superseded_by=None)


def mark_fields(status: str, by: str | None = None) -> dict[str, Any]:
    """What an admin's mark writes into a document's stored metadata: the status, and for
    "superseded" the successor's id (``by``; None for "current")."""
    return {"marked": status, "status": status, "superseded_by": by if status == "superseded" else None}


def marks_of(meta: dict[str, Any]) -> dict[str, Any]:
    """The admin's mark kept in a document's stored metadata (empty when it has none)."""
    if not meta.get("marked"):
        return {}
    return {"marked": meta["marked"], "superseded_by": meta.get("superseded_by"), "status": meta["marked"]}


def apply_mark(document: Document, chunks: list[Chunk], meta: dict[str, Any]) -> list[Chunk]:
    """A re-parsed document's chunks with the admin's stored mark (it wins over front matter)."""
    mark = marks_of(meta)
    if not mark:
        return chunks
    document.status = mark["status"]
    return [_marked(c, mark["status"], mark["superseded_by"]) for c in chunks]


def describe_mark(meta: dict[str, Any], docs: dict[str, dict[str, Any]]) -> str:
    """One line on a document's mark, for the admin who set it and for ``sources``."""
    if meta.get("marked") == "superseded":
        by = meta.get("superseded_by")
        successor = f" by {docs[by]['file']}" if by and by in docs else ""
        return f"marked superseded{successor}: left out of answers while a current document is indexed"
    return "marked current: answers use it"


def with_upload_times(chunks: list[Chunk], stored: dict[str, dict[str, Any]], now: str) -> list[Chunk]:
    """``chunks`` carrying their document's first upload time (the stored one, else ``now`` for a
    new document): a chunk copied only when its time changes, so a kept 100k-chunk index is not."""
    out = []
    for chunk in chunks:
        when = stored.get(chunk.doc_id, {}).get("uploaded_at") or chunk.uploaded_at or now
        out.append(chunk if chunk.uploaded_at == when else dataclasses.replace(chunk, uploaded_at=when))
    return out


def related_hits(snapshot: IndexSnapshot, question: str, hits: Sequence[Hit]) -> list[Hit]:
    """The passages of the course that also state the value ``question`` asks
    (``worker.conflicts.more_to_read``), as hits ranked after the retrieved ones: what the conflict
    check reads besides them, so a disagreement is found when retrieval brought one document's
    sentence and only the other's neighbouring passage, or none of the other document."""

    def passages_with(words: frozenset[str], at_least: int, limit: int) -> list[Candidate]:
        chunks = snapshot.chunks
        return [
            Candidate(row, chunks[row].doc_id, chunks[row].subject, chunks[row].text)
            for row in snapshot.rows_with_terms(words, at_least, limit)
        ]

    positions = more_to_read(question, hits, passages_with)
    positions += [r for r in outline_rows(snapshot, question, hits) if r not in positions]
    return [
        hit_from_chunk(snapshot.chunks[row], len(hits) + n + 1, 0.0, 0.0, 0.0)
        for n, row in enumerate(positions)
    ]


def drifted(snapshot: IndexSnapshot, question: str, hits: Sequence[Hit]) -> Conflict | None:
    """The note for a question about what a lecture uses when its outline entry names tools the
    lecture's own notes never print (``IndexSnapshot.drifts``): "which database do we use in the
    databases lec, sqlite?" against "16. Databases: SQL(ite) and BigQuery" and notes that use
    DuckDB. Only the top hit's course's drifts; None for nearly every question (no drift, or the
    question asks nothing of it), at the cost of a title match per document the first time."""
    if not hits:
        return None
    course = snapshot.course_of(hits[0].doc_id)
    for drift in snapshot.drifts():
        if snapshot.course_of(drift.lecture_doc) == course and asks_about(question, drift):
            entry = hit_from_chunk(snapshot.chunks[drift.entry.source], len(hits) + 1, 0.0, 0.0, 0.0)
            notes = hit_from_chunk(snapshot.chunks[drift.row], len(hits) + 2, 0.0, 0.0, 0.0)
            return drift_conflict(drift, entry, notes)
    return None


def disagreements(snapshot: IndexSnapshot) -> list[Disagreement]:
    """The teacher's list (`syllabot conflicts`): the current documents' numbered outlines that
    differ (``conflicts.outline_disagreements``), an outline's entry naming tools its lecture's
    notes never print (``IndexSnapshot.drifts``), the lists of questions printed in two documents
    with a question that differs (``conflicts.list_disagreements``), then the facts their
    sentences state differently (``conflicts.collection_conflicts``)."""
    passages = [
        (c.doc_id, citation_label(c), c.text)
        for c, out in zip(snapshot.chunks, snapshot.superseded, strict=True)
        if not out
    ]
    drifts = [
        (d, citation_label(snapshot.chunks[d.entry.source]), citation_label(snapshot.chunks[d.row]))
        for d in snapshot.drifts()
    ]
    return [
        *outline_disagreements(_course_outlines(snapshot)),
        *drift_disagreements(drifts),
        *list_disagreements(passages),
        *collection_conflicts(passages),
    ]


def _course_outlines(snapshot: IndexSnapshot) -> list[tuple[str, str, str, Outline[int]]]:
    """(course, doc_id, citation label, outline) of every current document that prints a numbered
    outline; a document of no detected course counts as the course its first passage names."""
    out: list[tuple[str, str, str, Outline[int]]] = []
    for doc_id in snapshot.documents():
        outline = snapshot.outline_of(doc_id)
        if outline is None or snapshot.superseded[snapshot.document_rows(doc_id).start]:
            continue
        label = citation_label(snapshot.chunks[outline.entries[0].source])
        out.append((snapshot.course_of(doc_id), doc_id, label, outline))
    return out


#: The most documents whose outlines one question quotes, out of at most this many read (the top
#: hits' first, then the course's others in stored order): a course of a thousand documents costs
#: what forty do.
OUTLINE_DOCUMENTS = 3
OUTLINE_READ = 40


def outline_rows(snapshot: IndexSnapshot, question: str, hits: Sequence[Hit]) -> list[int]:
    """ "How many lectures are there?", "which week is PCA": the passages holding the numbered
    outline of the unit asked about (lecture, week, module …) of the top hits' documents and of
    their course's other documents, each document's in its order (``IndexSnapshot.outline_of``).

    Why the whole outline and not the hits: an outline runs over several windows and pages and
    retrieval returns pieces of it, so its length, its last entry or the entry on a topic cannot be
    read from them; and the course's syllabus and its lecture plan may each print one, numbered
    differently. Empty for any other question, and for a superseded document unless the question
    asks about a change."""
    ask = read_ask(question, any_unit=True)
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
    old_too = asks_about_a_change(question)
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
        cite_title=chunk.cite_title or chunk.title,
        uploaded_at=chunk.uploaded_at,
        page_marks=list(chunk.page_marks),
        label=citation_label(chunk) + (EARLIER_VERSION if chunk.status == "superseded" else ""),
    )


def _collision(document: Document, other: str, where: str) -> str:
    """Why ``document`` is refused: its id is ``other``'s (a different file)."""
    return (
        f"{document.file} has the document id '{document.doc_id}' of {other}, {where}; it would replace "
        f"{other}. Rename the file (or change its front-matter id), or upload it again with replace "
        f"to replace {other}"
    )


def _require_document(docs: dict[str, dict[str, Any]], doc_id: str, collection: str) -> None:
    """:class:`NothingToIndex` naming the collection's documents when ``doc_id`` is not one."""
    if doc_id not in docs:
        known = ", ".join(sorted(docs)) or "none"
        raise NothingToIndex(f"no document '{doc_id}' in collection '{collection}' (documents: {known})")


def _one_document_report(
    snapshot: IndexSnapshot, total: int, meta: dict[str, Any], chunks: int, warnings: Sequence[str] = ()
) -> IngestReport:
    """The report of a change to one stored document (removed, marked): the new index version."""
    return IngestReport(
        collection=snapshot.collection,
        index_version=snapshot.version,
        total_chunks=total,
        changed=True,
        files=[
            FileReport(
                file=meta["file"],
                doc_id=meta["doc_id"],
                ok=True,
                pages=meta.get("pages", 0),
                chunks=chunks,
                warnings=list(warnings),
            )
        ],
    )


def display_title(meta_or_doc: dict[str, Any] | Document) -> str:
    """What citations call a document (its first page's title, else its own), for comparing."""
    if isinstance(meta_or_doc, Document):
        return (meta_or_doc.cite_title or meta_or_doc.title).strip().lower()
    return str(meta_or_doc.get("cite_title") or meta_or_doc.get("title") or "").strip().lower()


def _note_same_titles(
    stored: dict[str, dict[str, Any]],
    parsed: dict[str, tuple[Document, list[Chunk], bytes]],
    report: IngestReport,
    replace: bool,
) -> list[tuple[str, str]]:
    """A new file titled like an indexed document of another name is likely its new version. Without
    ``replace`` say so, with the commands that make it count, rather than guess (both are used
    until an admin says); with it, the upload is the admin's word: the (old, new) doc-id pairs
    returned are marked superseded by the caller, and the report says so."""
    by_title = {display_title(m): (doc_id, m) for doc_id, m in stored.items() if doc_id not in parsed}
    pairs = []
    for document, _chunks, _data in parsed.values():
        found = by_title.get(display_title(document))
        if found is None or not display_title(document):
            continue
        old_id, older = found
        if replace:
            pairs.append((old_id, document.doc_id))
            note = (
                f"has the same title as {older['file']}, already indexed: {older['file']} is marked "
                f"superseded by it (left out of answers; `syllabot current {older['file']}` undoes it)"
            )
        else:
            note = (
                f"has the same title as {older['file']}, already indexed; both are used in answers. If it "
                f"replaces {older['file']}: upload it again with replace (`syllabot index --replace`, "
                f'Discord replace: True, Slack "replace" in the mention) or `syllabot supersede '
                f"{older['file']} --by {document.file}` (Discord /supersede, Slack /syllabot-supersede)"
            )
        for entry in report.files:
            if entry.doc_id == document.doc_id and entry.ok:
                entry.warnings.append(note)
    return pairs


def _check_collisions(
    stored: dict[str, dict[str, Any]],
    parsed: dict[str, tuple[Document, list[Chunk], bytes]],
    report: IngestReport,
    replace: bool,
) -> None:
    """Refuse (drop from ``parsed``, mark in ``report``) each document whose id belongs to a stored
    document of another file name, unless ``replace``; note ``replaced`` on each that replaces one."""
    lines = {(f.doc_id, f.file): f for f in report.files if f.ok}
    for doc_id, (document, _, _) in list(parsed.items()):
        other = stored.get(doc_id)
        line = lines.get((doc_id, document.file))
        if other is None or line is None:
            continue
        if other["file"] != document.file and not replace:
            del parsed[doc_id]
            line.ok, line.error = False, _collision(document, other["file"], "already indexed")
            line.pages = line.chunks = 0
            line.modules = []
            continue
        line.replaced = other["file"]


def _published(report: IngestReport, snapshot: IndexSnapshot, progress: Progress | None) -> IngestReport:
    """Fill in what a successful build published."""
    report.index_version = snapshot.version
    report.total_chunks = len(snapshot)
    report.changed = True
    if progress:
        progress("done", 1, 1)
    return report


def _modules(chunks: Sequence[Chunk]) -> list[str]:
    return list(dict.fromkeys(c.module for c in chunks if c.module))


class Engine:
    def __init__(
        self,
        settings: Settings,
        client: redis.Redis | None = None,
        embedder: Embedder | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """``cancel``: a token whose cancellation stops a build before it publishes (Ctrl-C in the
        terminal); builds check it between files, pages, embedding batches and lock polls."""
        self.settings = settings
        self.cancel = cancel or CancelToken()
        self.keys = Keys(settings.key_prefix)
        self._client = client
        self._embedder = embedder
        self._warned_earlier: set[str] = set()
        self.cache = SnapshotCache(settings.snapshot_cache_bytes)

    @property
    def client(self) -> redis.Redis:
        if self._client is None:
            self._client = sync_client(self.settings)
        return self._client

    @property
    def store(self) -> CollectionStore:
        return CollectionStore(self.client, self.keys, Durability.of(self.settings))

    @property
    def embedder(self) -> Embedder:
        """Loaded on first use and then kept: model loading is the slowest thing a worker does."""
        if self._embedder is None:
            self._embedder = get_embedder(self.settings)
        return self._embedder

    # --- reading --------------------------------------------------------------------------------
    def snapshot(self, collection: str) -> IndexSnapshot | None:
        """The collection's current snapshot, from the cache unless Redis says it has moved on.

        A miss loads it from Redis (timed and logged by :class:`SnapshotCache`), which may evict the
        least recently used collections to stay within ``SYLLABOT_SNAPSHOT_CACHE_MB``.
        """
        version = self.store.current_version(collection)
        if version is None:
            return None
        store = self.store
        return self.cache.get_or_load(collection, version, lambda: store.load_snapshot(collection, version))

    def search(
        self,
        collection: str,
        question: str,
        k: int | None = None,
        include_superseded: bool = False,
        turns: Sequence[Turn] = (),
    ) -> SearchResult:
        """Search for one question; ``turns``: its conversation so far (a follow-up), oldest first."""
        pending = self.begin_search(collection, question, turns)
        if isinstance(pending, SearchResult):
            return pending
        t0 = time.perf_counter()
        query_vector = (pending.embedder or self.embedder).embed_query(pending.query.text)
        embed_ms = (time.perf_counter() - t0) * 1000
        return self.finish_search(pending, query_vector, embed_ms, k, include_superseded)

    # The two halves of search(), for callers that embed the query elsewhere: the worker embeds
    # the questions that arrive together in one call (worker/cpu_pool.py).
    def begin_search(
        self, collection: str, question: str, turns: Sequence[Turn] = ()
    ) -> PendingSearch | SearchResult:
        """The snapshot and the prepared query; an empty result when there is nothing to search."""
        snapshot = self.snapshot(collection)
        if snapshot is None or len(snapshot) == 0:
            return SearchResult(
                [], snapshot.version if snapshot else None, 0.0, 0.0, True, collection, question
            )
        embedder = self.embedder_for(snapshot)
        return PendingSearch(
            snapshot,
            prepare_query(question, snapshot, turns),
            collection,
            question,
            tuple(turns),
            None if embedder is self.embedder else embedder,
        )

    def embedder_for(self, snapshot: IndexSnapshot) -> Embedder:
        """The embedder whose vectors ``snapshot`` holds.

        The engine's own, or, for a collection built with the earlier default (MiniLM computing in
        fp32, before the int8 model shipped), that model: its questions are answered as before, with
        a warning once per collection, until it is re-indexed (``syllabot index --reindex --all``;
        ``doctor`` lists such collections). Any other mismatch is refused with what to run.
        """
        current = self.embedder
        if snapshot.embedder_id == current.id and snapshot.dim == current.dim:
            return current
        earlier = earlier_embedder(self.settings, current.id, snapshot.embedder_id)
        if earlier is None or earlier.dim != snapshot.dim:
            snapshot.check_embedder(current.id, current.dim)  # raises EmbedderMismatch
            return current
        if snapshot.collection not in self._warned_earlier:
            self._warned_earlier.add(snapshot.collection)
            log.warning(
                "collection %s was indexed with the earlier embedder %s; serving it with that model "
                "until it is re-indexed (syllabot index --reindex -c %s, or --reindex --all)",
                snapshot.collection,
                snapshot.embedder_id,
                snapshot.collection,
            )
        return earlier

    def finish_search(
        self,
        pending: PendingSearch,
        query_vector: np.ndarray,
        embed_ms: float,
        k: int | None = None,
        include_superseded: bool = False,
    ) -> SearchResult:
        """Score and select with the query's unit vector (``embedder.embed_query(pending.query.text)``)."""
        t1 = time.perf_counter()
        query = pending.query
        selection, hits = search_snapshot(
            pending.snapshot, query_vector, query, self.settings, k, include_superseded
        )
        return SearchResult(
            hits,
            pending.snapshot.version,
            embed_ms,
            (time.perf_counter() - t1) * 1000,
            selection.fallback,
            pending.collection,
            pending.question,
            query.text,
            query.courses,
            query.topic,
            query.carried,
            tuple(t.question for t in pending.turns),
            vector=query_vector,
            related=related_hits(pending.snapshot, query.text, hits),
            unknown=query.unknown,
            drift=drifted(pending.snapshot, query.text, hits),
        )

    def collections(self) -> list[CollectionInfo]:
        """Every collection with its documents, chunks, embedder, size and last indexing."""
        store = self.store
        return store.collection_infos(store.collections())

    def drop(self, collection: str) -> DropReport:
        """Delete a collection completely -- documents, index, kept questions, cached answers and the
        bindings to it -- under its build lock, so no build publishes into it half-way."""
        collection = validate_collection_name(collection)
        with self._build_lock(collection, "drop", None) as lock:
            store = self.store
            info = store.collection_info(collection)
            if info is None:
                known = ", ".join(store.collections()) or "none"
                raise UnknownCollection(f"collection '{collection}' does not exist; known: {known}")
            self.cancel.commit()
            keys, bindings = store.drop(collection, lock)
        self.cache.drop(collection)
        return DropReport(dropped=info, keys=keys, bindings=bindings)

    def conflicts(self, collection: str) -> list[ConflictInfo]:
        """Facts on which the collection's current documents disagree, for the teacher to fix
        before students ask (``worker.conflicts.collection_conflicts``; no model needed)."""
        snapshot = self.snapshot(validate_collection_name(collection))
        if snapshot is None:
            raise NothingToIndex(f"collection '{collection}' has no index; index some documents first")
        return [
            ConflictInfo(
                topic=d.topic,
                kind=d.kind,
                first=d.first[0],
                first_text=d.first[1],
                second=d.second[0],
                second_text=d.second[1],
            )
            for d in disagreements(snapshot)
        ]

    def sources(self, collection: str) -> list[SourceInfo]:
        docs = self.store.documents(collection)
        return [
            SourceInfo(
                doc_id=m["doc_id"],
                file=m["file"],
                title=m.get("title") or m["file"],
                pages=m.get("pages", 0),
                chunks=m.get("chunks", 0),
                indexed_at=m.get("indexed_at", ""),
                version=m.get("version"),
                status=m.get("status"),
                bytes=m.get("bytes", 0),
                superseded_by=m.get("superseded_by") if m.get("marked") == "superseded" else None,
            )
            for m in sorted(docs.values(), key=lambda m: m["file"].lower())
        ]

    # --- writing --------------------------------------------------------------------------------
    def _build_lock(self, collection: str, what: str, progress: Progress | None) -> BuildLock:
        """The collection's build lock; a build that must wait reports whom it waits for."""

        def on_wait(owner: str) -> None:
            if progress:
                progress(f"waiting for another build ({owner})", 0, 0)

        return self.store.build_lock(
            collection, what, ttl_s=self.settings.build_lock_ttl_s, on_wait=on_wait, check=self.cancel.check
        )

    def _pipeline(self, progress: Progress | None) -> EmbedPipeline:
        """Embeds passages while the build goes on reading (see worker/pipeline.py)."""
        return EmbedPipeline(
            self.embedder,
            self.settings.embed_batch_size or self.embedder.batch_size,
            progress,
            check=self.cancel.check,
        )

    @staticmethod
    def _feed(pipe: EmbedPipeline, chunks: Sequence[Chunk]) -> None:
        """Start embedding a document's chunks that linking the batch cannot change."""
        pipe.feed([c.text for c in chunks if not may_be_relinked(c)])

    def _parse(self, filename: str, data: bytes) -> tuple[Document, list[Chunk]]:
        self.cancel.check()
        settings = self.settings
        document = load_document(
            data,
            filename,
            settings.max_document_bytes,
            self.cancel.check,
            max_expanded_bytes=settings.max_expanded_bytes,
            max_text_chars=settings.max_text_chars,
        )
        chunks = chunk_document(document)
        if not chunks:
            raise IngestError(f"{filename}: no text could be cut into passages; is the file empty?")
        if len(chunks) > settings.max_chunks:
            raise TooLarge(
                f"{document.file} would be cut into {len(chunks)} passages, over the {settings.max_chunks} "
                "limit for one document; split it into smaller files (an operator can raise "
                "SYLLABOT_MAX_CHUNKS)",
                file=document.file,
            )
        return document, chunks

    @staticmethod
    def _doc_meta(
        document: Document,
        chunks: list[Chunk],
        data: bytes,
        who: str,
        indexed_at: str,
        uploaded_at: str | None = None,
    ) -> dict[str, Any]:
        return {
            "doc_id": document.doc_id,
            "file": document.file,
            "title": document.title,
            "cite_title": document.cite_title,
            "pages": len(document.pages),
            "chunks": len(chunks),
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "version": document.version,
            "status": document.status,
            "lang": document.lang,
            "kind": document.kind,
            "subject": document.subject,
            "modules": _modules(chunks),
            "uploaded_by": who,
            "uploaded_at": uploaded_at or indexed_at,
            "indexed_at": indexed_at,
            "warnings": document.warnings,
        }

    @staticmethod
    def _report(document: Document, chunks: list[Chunk]) -> FileReport:
        return FileReport(
            file=document.file,
            doc_id=document.doc_id,
            ok=True,
            pages=len(document.pages),
            chunks=len(chunks),
            modules=_modules(chunks),
            warnings=list(document.warnings),
            dropped=dict(document.dropped),
        )

    def ingest(
        self,
        collection: str,
        files: list[tuple[str, bytes]],
        who: str = "cli",
        progress: Progress | None = None,
        replace: bool = False,
    ) -> IngestReport:
        """Store the files and rebuild the index; files that cannot be used are reported, not fatal.

        If no file in the batch can be used, nothing is written and the previous index stays as it was.
        Documents already indexed keep their vectors when the embedder is unchanged, so adding one file
        embeds only that file.

        A file whose document id is taken by a *different* file (``Course Plan.pdf`` then
        ``course_plan.md``, or a front-matter ``id:`` another file has) is refused, naming both,
        unless ``replace``: it would silently replace that document. Uploading the same file name
        again replaces it, as before, and the report says so (``FileReport.replaced``). A file with
        the title of an indexed document of another name is flagged as its likely new version; with
        ``replace`` it supersedes that document (marked, kept for "an earlier version said", as
        :meth:`mark` does).
        """
        collection = validate_collection_name(collection)
        with self._pipeline(progress) as pipe:
            return self._ingest(collection, files, who, progress, pipe, replace)

    def _ingest(
        self,
        collection: str,
        files: list[tuple[str, bytes]],
        who: str,
        progress: Progress | None,
        pipe: EmbedPipeline,
        replace: bool = False,
    ) -> IngestReport:
        report = IngestReport(collection=collection)
        parsed: dict[str, tuple[Document, list[Chunk], bytes]] = {}
        for done, (filename, data) in enumerate(files, start=1):
            if progress:
                progress("reading", done - 1, len(files))
            try:
                document, chunks = self._parse(filename, data)
            except IngestError as exc:
                report.files.append(FileReport(file=filename, ok=False, error=str(exc)))
                continue
            if document.doc_id in parsed:
                earlier = parsed[document.doc_id][0].file
                if not replace:
                    report.files.append(
                        FileReport(
                            file=document.file,
                            doc_id=document.doc_id,
                            ok=False,
                            error=_collision(document, earlier, "in this batch"),
                        )
                    )
                    continue
                document.warnings.append(
                    f"replaces {earlier} from the same batch (same id {document.doc_id})"
                )
            parsed[document.doc_id] = (document, chunks, data)
            self._feed(pipe, chunks)
            report.files.append(self._report(document, chunks))
        if progress and files:
            progress("reading", len(files), len(files))
        if not parsed:
            return report

        with self._build_lock(collection, "ingest", progress) as lock:
            stored = self.store.documents(collection)  # read once, under the lock
            _check_collisions(stored, parsed, report, replace)
            if not parsed:
                return report
            # With replace, a same-title upload supersedes the older document in this same build.
            marks = {
                old: mark_fields("superseded", new)
                for old, new in _note_same_titles(stored, parsed, report, replace)
            }
            previous = self.snapshot(collection)
            embedder = self.embedder
            reuse = (
                previous is not None and previous.embedder_id == embedder.id and previous.dim == embedder.dim
            )
            if previous is not None and not reuse:
                # The collection was built with another model: everything must be re-embedded.
                return self._rebuild(
                    collection,
                    progress,
                    extra=parsed,
                    report=report,
                    who=who,
                    lock=lock,
                    pipe=pipe,
                    marks=marks,
                )
            keep_rows = (
                []
                if previous is None
                else [i for i, c in enumerate(previous.chunks) if c.doc_id not in parsed]
            )
            kept_chunks = [previous.chunks[i] for i in keep_rows] if previous else []
            kept_chunks = [
                _marked(c, "superseded", marks[c.doc_id]["superseded_by"]) if c.doc_id in marks else c
                for c in kept_chunks
            ]
            # A syllabus page that starts with another course's tail names that course once the
            # other course is indexed too (see chunking.link_course_tails).
            new_chunks = link_course_tails(kept_chunks + [c for _, cs, _ in parsed.values() for c in cs])
            new_chunks = new_chunks[len(kept_chunks) :]
            new_matrix = pipe.finish([c.text for c in new_chunks])
            chunks = kept_chunks + new_chunks
            matrix = np.vstack([previous.matrix[keep_rows], new_matrix]) if previous else new_matrix
            if progress:
                progress("storing", 0, 1)
            indexed_at = _now()
            chunks = with_upload_times(chunks, stored, indexed_at)
            snapshot = build_snapshot(
                new_version(), collection, embedder.id, embedder.dim, chunks, matrix, indexed_at
            )
            puts = [
                (
                    self._doc_meta(d, cs, data, who, indexed_at, stored.get(d.doc_id, {}).get("uploaded_at")),
                    data,
                )
                for d, cs, data in parsed.values()
            ]
            self.cancel.commit()
            self.store.publish(
                snapshot,
                previous.version if previous else None,
                put_documents=puts,
                update_meta=[{**stored[doc_id], **mark} for doc_id, mark in marks.items()],
                lock=lock,
            )
        return _published(report, snapshot, progress)

    def reindex(self, collection: str, progress: Progress | None = None) -> IngestReport:
        """Re-read every stored document and re-embed it with the current embedder."""
        collection = validate_collection_name(collection)
        with self._build_lock(collection, "reindex", progress) as lock, self._pipeline(progress) as pipe:
            return self._rebuild(
                collection,
                progress,
                extra={},
                report=IngestReport(collection=collection),
                who="reindex",
                lock=lock,
                pipe=pipe,
            )

    def _rebuild(
        self,
        collection: str,
        progress: Progress | None,
        extra: dict[str, tuple[Document, list[Chunk], bytes]],
        report: IngestReport,
        who: str,
        lock: BuildLock | None,
        pipe: EmbedPipeline,
        marks: dict[str, dict[str, Any]] | None = None,
    ) -> IngestReport:
        """Full build from the stored documents plus ``extra`` new ones (already fed to ``pipe``),
        with ``marks`` (doc id -> :func:`mark_fields`) applied to stored documents on the way.
        Caller holds the build lock."""
        stored = {
            doc_id: {**meta, **(marks or {}).get(doc_id, {})}
            for doc_id, meta in self.store.documents(collection).items()
        }
        parsed = dict(extra)
        todo = [(doc_id, meta) for doc_id, meta in stored.items() if doc_id not in parsed]
        for done, (doc_id, meta) in enumerate(todo):
            if progress:
                progress("reading", done, len(todo))
            data = self.store.document_bytes(collection, doc_id)
            if data is None:
                report.files.append(
                    FileReport(
                        file=meta["file"],
                        doc_id=doc_id,
                        ok=False,
                        error="stored bytes are missing; upload the file again",
                    )
                )
                continue
            try:
                document, chunks = self._parse(meta["file"], data)
            except IngestError as exc:
                report.files.append(FileReport(file=meta["file"], doc_id=doc_id, ok=False, error=str(exc)))
                continue
            chunks = apply_mark(document, chunks, meta)  # an admin's mark outlives a re-index
            parsed[doc_id] = (document, chunks, data)
            self._feed(pipe, chunks)
            report.files.append(self._report(document, chunks))
        if progress and todo:
            progress("reading", len(todo), len(todo))
        if not parsed:
            if not stored:
                raise NothingToIndex(f"collection '{collection}' has no documents; upload some first")
            return report
        previous_version = self.store.current_version(collection)
        chunks = link_course_tails([c for _, cs, _ in parsed.values() for c in cs])
        matrix = pipe.finish([c.text for c in chunks])
        indexed_at = _now()
        chunks = with_upload_times(chunks, stored, indexed_at)
        embedder = self.embedder
        snapshot = build_snapshot(
            new_version(), collection, embedder.id, embedder.dim, chunks, matrix, indexed_at
        )
        metas = [
            (
                self._doc_meta(
                    d,
                    cs,
                    data,
                    stored.get(d.doc_id, {}).get("uploaded_by", who),
                    indexed_at,
                    stored.get(d.doc_id, {}).get("uploaded_at"),
                ),
                data,
            )
            for d, cs, data in parsed.values()
        ]
        for m, _ in metas:
            m.update(marks_of(stored.get(m["doc_id"], {})))
        new_docs = [(m, data) for m, data in metas if m["doc_id"] in extra]
        updated = [m for m, _ in metas if m["doc_id"] not in extra]
        self.cancel.commit()
        self.store.publish(snapshot, previous_version, put_documents=new_docs, update_meta=updated, lock=lock)
        return _published(report, snapshot, progress)

    def mark(self, collection: str, doc_id: str, status: str, by: str | None = None) -> IngestReport:
        """An admin's word on which version counts: ``status`` "superseded" (optionally ``by`` another
        document of the collection) or "current". A superseded document is left out of answers
        while a current one is indexed; the mark is stored in the document's metadata (``sources``
        shows it) and in the index, and outlives a re-index. No re-embedding: the index is
        republished with the same vectors and the document's chunks re-marked."""
        collection = validate_collection_name(collection)
        if status not in MARKS:
            raise ValueError(f"status must be one of {', '.join(MARKS)}, not {status!r}")
        with self._build_lock(collection, "mark", None) as lock:
            docs = self.store.documents(collection)
            for name in (doc_id, by):
                if name is not None:
                    _require_document(docs, name, collection)
            if by == doc_id:
                raise ValueError(f"a document cannot supersede itself ({doc_id})")
            previous = self.snapshot(collection)
            if previous is None:
                raise NothingToIndex(f"collection '{collection}' has no index; re-index it first")
            meta = {**docs[doc_id], **mark_fields(status, by)}
            chunks = [
                _marked(c, status, meta["superseded_by"]) if c.doc_id == doc_id else c
                for c in previous.chunks
            ]
            snapshot = build_snapshot(
                new_version(), collection, previous.embedder_id, previous.dim, chunks, previous.matrix, _now()
            )
            self.cancel.commit()
            self.store.publish(snapshot, previous.version, update_meta=[meta], lock=lock)
        return _one_document_report(
            snapshot, len(chunks), meta, meta.get("chunks", 0), [describe_mark(meta, docs)]
        )

    def remove(self, collection: str, doc_id: str) -> IngestReport:
        """Drop one document and its chunks; the rest of the index keeps its vectors."""
        collection = validate_collection_name(collection)
        with self._build_lock(collection, "remove", None) as lock:
            docs = self.store.documents(collection)
            _require_document(docs, doc_id, collection)
            previous = self.snapshot(collection)
            if previous is not None:  # the usual case: no model needed to drop rows
                keep = [i for i, c in enumerate(previous.chunks) if c.doc_id != doc_id]
                chunks = [previous.chunks[i] for i in keep]
                matrix = previous.matrix[keep]
                embedder_id, dim = previous.embedder_id, previous.dim
            else:
                chunks, embedder_id, dim = [], self.embedder.id, self.embedder.dim
                matrix = np.zeros((0, dim), dtype=np.float32)
            snapshot = build_snapshot(new_version(), collection, embedder_id, dim, chunks, matrix, _now())
            self.cancel.commit()
            self.store.publish(
                snapshot, previous.version if previous else None, delete_doc_ids=[doc_id], lock=lock
            )
        return _one_document_report(snapshot, len(chunks), docs[doc_id], 0)
