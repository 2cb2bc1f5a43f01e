"""The engine's façade: one per process, holding the embedder and the per-collection index cache.

The read side (one question's search over a snapshot, ``SearchResult``) is ``worker.indexes.retrieval``;
the build side's pure helpers (marks, collisions, reports) are ``worker.indexes.building``; here is the
flow around them: loading and caching snapshots, embedding, locking and publishing builds.

Synchronous on purpose: the worker's arq jobs call it through ``asyncio.to_thread`` so CPU-heavy
work (parsing, embedding, scoring) stays off the event loop, and the CLI calls it directly.
Checking that the cached index is still current costs one Redis GET per search.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import redis

from syllabot.shared.bindings import validate_collection_name
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.labels import display_title
from syllabot.shared.redis_conn import Durability, sync_client
from syllabot.shared.schema import (
    CollectionInfo,
    ConflictInfo,
    DropReport,
    FileReport,
    IngestReport,
    SourceInfo,
)
from syllabot.shared.source_names import check_seen
from syllabot.shared.threads import Turn
from syllabot.worker.indexes.building import (
    MARKS,
    _check_collisions,
    _collision,
    _marked,
    _note_same_titles,
    _one_document_report,
    _require_document,
    apply_mark,
    describe_mark,
    mark_fields,
    marks_of,
    with_upload_times,
)
from syllabot.worker.indexes.building import NothingToIndex as NothingToIndex
from syllabot.worker.indexes.building import UnknownCollection as UnknownCollection
from syllabot.worker.indexes.buildlock import BuildLock
from syllabot.worker.indexes.cancel import CancelToken
from syllabot.worker.indexes.embedders import earlier_embedder, get_embedder
from syllabot.worker.indexes.embedders.base import Embedder
from syllabot.worker.indexes.index import IndexSnapshot, build_snapshot
from syllabot.worker.indexes.pipeline import EmbedPipeline
from syllabot.worker.indexes.retrieval import (
    PendingSearch,
    SearchResult,
    disagreements,
    related_hits,
    result_of,
    search_snapshot,
)
from syllabot.worker.indexes.snapshot_cache import SnapshotCache
from syllabot.worker.indexes.store import CollectionStore
from syllabot.worker.ingest.chunking import chunk_document
from syllabot.worker.ingest.families import may_be_relinked, relink
from syllabot.worker.ingest.loaders import IngestError, TooLarge, load_document
from syllabot.worker.query.card import CourseCard, SlotMeanings, slot_meanings
from syllabot.worker.query.reading import read_question
from syllabot.worker.text.documents import Chunk, Document

#: progress(stage, done, total), e.g. ("embedding", 120, 300)
Progress = Callable[[str, int, int], None]

log = logging.getLogger("syllabot.worker.engine")  # the name operators filter on, kept when it moved


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_version() -> str:
    """Sortable, unique snapshot id: milliseconds since the epoch (hex) plus a random tail."""
    return f"{int(time.time() * 1000):x}-{uuid.uuid4().hex[:6]}"


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
        terminal); builds check it between files, pages, embedder calls and lock polls."""
        self.settings = settings
        self.cancel = cancel or CancelToken()
        self.keys = Keys(settings.key_prefix)
        self._client = client
        self._embedder = embedder
        self._warned_earlier: set[str] = set()
        self._meanings: dict[str, SlotMeanings] = {}
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
    # the questions that arrive together in one call (worker/runtime/cpu_pool.py).
    def begin_search(
        self, collection: str, question: str, turns: Sequence[Turn] = ()
    ) -> PendingSearch | SearchResult:
        """The snapshot and the prepared query; an empty result when there is nothing to search."""
        snapshot = self.snapshot(collection)
        if snapshot is None or len(snapshot) == 0:
            return SearchResult(
                [],
                snapshot.version if snapshot else None,
                0.0,
                0.0,
                True,
                collection,
                question,
                embedder_id=snapshot.embedder_id if snapshot else None,
            )
        embedder = self.embedder_for(snapshot)
        return PendingSearch(
            snapshot,
            read_question(question, snapshot, turns),
            collection,
            question,
            tuple(turns),
            None if embedder is self.embedder else embedder,
        )

    def embedder_for(self, snapshot: IndexSnapshot) -> Embedder:
        """The embedder whose vectors ``snapshot`` holds.

        The engine's own, or, for a collection built with an earlier default (the base MiniLM in
        int8 or in fp32, ``worker.indexes.embedders.EARLIER``), that model: its questions are answered as
        before, and decided on that model's scale (the result carries the index's embedder id), with
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

    def slot_meanings(self, embedder: Embedder) -> SlotMeanings:
        """The course card's slot examples embedded by ``embedder``, once per embedder (a hundred-odd
        short questions, a quarter of a second: the worker embeds them as it starts, ``load_engine``)."""
        meanings = self._meanings.get(embedder.id)
        if meanings is None:
            meanings = self._meanings[embedder.id] = slot_meanings(embedder.id, embedder.embed_queries)
        return meanings

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
        related = related_hits(pending.snapshot, query, hits)
        return result_of(
            pending.snapshot,
            hits,
            related,
            selection.fallback,
            pending.collection,
            pending.question,
            query,
            embed_ms=embed_ms,
            search_ms=(time.perf_counter() - t1) * 1000,
            earlier=tuple(t.question for t in pending.turns),
            vector=query_vector,
            meanings=self.slot_meanings(pending.embedder or self.embedder),
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

    def _built(
        self,
        collection: str,
        embedder_id: str,
        dim: int,
        chunks: list[Chunk],
        matrix: np.ndarray,
        built_at: str | None = None,
    ) -> IndexSnapshot:
        """A new version's snapshot of ``collection``, built under this build's cancel token: every
        build publishes one, and each must notice a cancel while it reads the passages."""
        return build_snapshot(
            new_version(), collection, embedder_id, dim, chunks, matrix, built_at or _now(), self.cancel.check
        )

    def card(self, collection: str) -> CourseCard:
        """The collection's course card (``worker.query.card``), read at index time: what a teacher
        checks and corrects with a course-facts document. The current card: a document marked as
        an earlier version fills no slot here either, so the teacher reads what students are
        answered from and the disagreements ``conflicts`` lists."""
        return self._indexed(collection).current_card

    def conflicts(self, collection: str) -> list[ConflictInfo]:
        """Facts on which the collection's current documents disagree, for the teacher to fix
        before students ask: the snapshot's record of versions (``worker.indexes.versions``), built at
        index time, newest first, then the course card's (``retrieval.disagreements``); no model needed."""
        return disagreements(self._indexed(collection))

    def _indexed(self, collection: str) -> IndexSnapshot:
        """The collection's snapshot, for a teacher's command that reads it; a clear error when it
        has none."""
        snapshot = self.snapshot(validate_collection_name(collection))
        if snapshot is None:
            raise NothingToIndex(f"collection '{collection}' has no index; index some documents first")
        return snapshot

    def sources(self, collection: str) -> list[SourceInfo]:
        docs = self.store.documents(collection)
        return [
            SourceInfo(
                doc_id=m["doc_id"],
                file=m["file"],
                title=display_title(m),
                pages=m.get("pages", 0),
                chunks=m.get("chunks", 0),
                indexed_at=m.get("indexed_at", ""),
                version=m.get("version"),
                status=m.get("status"),
                bytes=m.get("bytes", 0),
                superseded_by=m.get("superseded_by") if m.get("marked") == "superseded" else None,
                sha256=m.get("sha256"),
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
        """Embeds passages while the build goes on reading (see worker/indexes/pipeline.py)."""
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
            # other course is indexed too (see worker.ingest.families.vtu.link_course_tails).
            new_chunks = relink(kept_chunks + [c for _, cs, _ in parsed.values() for c in cs])
            new_chunks = new_chunks[len(kept_chunks) :]
            new_matrix = pipe.finish([c.text for c in new_chunks], kept=len(kept_chunks))
            chunks = kept_chunks + new_chunks
            matrix = np.vstack([previous.matrix[keep_rows], new_matrix]) if previous else new_matrix
            if progress:
                progress("storing", 0, 1)
            indexed_at = _now()
            chunks = with_upload_times(chunks, stored, indexed_at)
            snapshot = self._built(collection, embedder.id, embedder.dim, chunks, matrix, indexed_at)
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
        chunks = relink([c for _, cs, _ in parsed.values() for c in cs])
        matrix = pipe.finish([c.text for c in chunks])
        indexed_at = _now()
        chunks = with_upload_times(chunks, stored, indexed_at)
        embedder = self.embedder
        snapshot = self._built(collection, embedder.id, embedder.dim, chunks, matrix, indexed_at)
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

    def mark(
        self,
        collection: str,
        doc_id: str,
        status: str,
        by: str | None = None,
        seen: Mapping[str, str] | None = None,
    ) -> IngestReport:
        """An admin's word on which version counts: ``status`` "superseded" (optionally ``by`` another
        document of the collection) or "current". A superseded document is left out of answers
        while a current one is indexed; the mark is stored in the document's metadata (``sources``
        shows it) and in the index, and outlives a re-index. No re-embedding: the index is
        republished with the same vectors and the document's chunks re-marked. ``seen``: doc_id ->
        sha256 of the versions the admin looked at; one replaced since is refused (``VersionGone``,
        checked under the build lock), so a mark never lands on an upload the admin never saw."""
        collection = validate_collection_name(collection)
        if status not in MARKS:
            raise ValueError(f"status must be one of {', '.join(MARKS)}, not {status!r}")
        with self._build_lock(collection, "mark", None) as lock:
            docs = self.store.documents(collection)
            for name in (doc_id, by):
                if name is not None:
                    _require_document(docs, name, collection)
            check_seen(docs, seen, collection)
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
            snapshot = self._built(collection, previous.embedder_id, previous.dim, chunks, previous.matrix)
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
            snapshot = self._built(collection, embedder_id, dim, chunks, matrix)
            self.cancel.commit()
            self.store.publish(
                snapshot, previous.version if previous else None, delete_doc_ids=[doc_id], lock=lock
            )
        return _one_document_report(snapshot, len(chunks), docs[doc_id], 0)
