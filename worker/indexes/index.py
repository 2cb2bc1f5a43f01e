"""An index snapshot: unit vectors, chunk metadata and keyword statistics of one collection version.

Snapshots are immutable. A build produces a new one; the collection's "current" pointer moves to it
only after it is completely written (see :mod:`worker.indexes.store`). The snapshot records which embedder
made its vectors, and :meth:`IndexSnapshot.check_embedder` refuses a query vector from another one:
mixing models gives scores that look plausible and mean nothing.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import zlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import numpy as np

from syllabot.shared.labels import citation_label
from syllabot.shared.schema import ConflictInfo
from syllabot.worker.indexes.conflicts import (
    list_disagreements,
    outline_disagreements,
    told_apart,
)
from syllabot.worker.indexes.embedders.base import EmbedderMismatch
from syllabot.worker.indexes.search import superseded_mask
from syllabot.worker.indexes.versions import Recorded, VersionRecord, record_of
from syllabot.worker.ingest.courses import CourseCatalog
from syllabot.worker.query.card import CourseCard, read_card
from syllabot.worker.query.intent import holds_section
from syllabot.worker.query.outlines import Outline, read_outline
from syllabot.worker.text.documents import Chunk
from syllabot.worker.text.keyword import KeywordIndex, build_keyword_index

#: Vectors whose length strays further than this from 1 are a bug upstream, never silently used.
UNIT_TOLERANCE = 1e-3


class CorruptSnapshot(RuntimeError):
    """A stored snapshot does not decode or does not hold unit vectors; re-index the collection."""


@dataclass
class IndexSnapshot:
    version: str
    collection: str
    embedder_id: str
    dim: int
    matrix: np.ndarray  # (N, dim) float32, unit rows
    chunks: list[Chunk]
    keyword: KeywordIndex
    built_at: str
    superseded: np.ndarray = field(init=False)  # (N,) bool: superseded versions with a current sibling

    _catalog: CourseCatalog | None = field(default=None, init=False, repr=False)
    _section_masks: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _documents: dict[str, tuple[int, int]] | None = field(default=None, init=False, repr=False)
    _outlines: dict[str, Outline[int] | None] = field(default_factory=dict, init=False, repr=False)
    _named: dict[str, tuple[str, ...]] | None = field(default=None, init=False, repr=False)
    #: Where versions of the collection's documents disagree (``worker.indexes.versions``): built with the
    #: snapshot and stored with it; None until read or built (a snapshot stored before the record
    #: existed builds it on first use).
    _versions: VersionRecord | None = field(default=None, repr=False)
    _by_doc: dict[str, list[tuple[Recorded, int]]] | None = field(default=None, init=False, repr=False)
    #: The course card (``worker.query.card``): the collection's course facts in typed slots, read
    #: at index time (``build_snapshot``) and stored with the snapshot; None until read or built (a
    #: snapshot stored before cards reads it on first use).
    _card: CourseCard | None = field(default=None, repr=False)
    _current_card: CourseCard | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.superseded = superseded_mask(self.chunks)

    @property
    def course_card(self) -> CourseCard:
        """The course card, read from the chunks the first time when not built or loaded with the snapshot."""
        if self._card is None:
            self._card = read_card(self.chunks)
        return self._card

    @property
    def current_card(self) -> CourseCard:
        """The course card without the facts of documents marked as an earlier version
        (``superseded``): what answers, the card's disagreements and the teacher's list read. The
        stored card keeps them (a document un-marked answers again without a rebuild)."""
        if self._current_card is None:
            card = self.course_card
            out = self.superseded
            kept = tuple(f for f in card.facts if not (0 <= f.row < len(out) and out[f.row]))
            self._current_card = (
                card if len(kept) == len(card.facts) else dataclasses.replace(card, facts=kept)
            )
        return self._current_card

    @property
    def versions(self) -> VersionRecord:
        """The record of the documents' versions (:meth:`build_versions`), built on first use when
        neither built with the snapshot nor loaded with it."""
        return self._versions if self._versions is not None else self.build_versions()

    def build_versions(self, check: Callable[[], None] | None = None) -> VersionRecord:
        """Build the record of the documents' versions (``worker.indexes.versions.record_of``): their
        disagreements, newest first, which documents are versions of each other, and the
        teacher's list of them (:meth:`_listed`). ``build_snapshot`` calls it, so the record is
        built at index time, not by the first question."""
        record = record_of(self.chunks, self.superseded.tolist(), check)
        self._versions = dataclasses.replace(record, listed=self._listed(record))
        return self._versions

    def _listed(self, record: VersionRecord) -> tuple[ConflictInfo, ...]:
        """The teacher's list: the record's disagreements between aligned statements, and of two
        current documents that are versions of each other the numbered outlines that differ
        (``conflicts.outline_disagreements``) and the lists of questions with a question that
        differs (``conflicts.list_disagreements``), those of the most recently uploaded documents
        first."""
        chunks = self.chunks
        entries = []
        for entry in record.entries:
            (first, first_text), (second, second_text) = told_apart(
                [(chunks[side.row], side.text) for side in entry.sides]
            )
            entries.append(
                ConflictInfo(
                    topic=entry.about or entry.kind,
                    kind=entry.kind,
                    first=first,
                    first_text=first_text,
                    second=second,
                    second_text=second_text,
                    docs=(entry.sides[0].doc_id, entry.sides[1].doc_id),
                    current=entry.current_reason,
                )
            )
        # of documents that are versions of each other only: two decks' lists of steps, or a
        # collection of copies read pair by pair, are no versions
        versions = {doc for pair in record.pairs for doc in pair}
        passages = [
            (c.doc_id, citation_label(c), c.text)
            for c, out in zip(chunks, self.superseded, strict=True)
            if not out and c.doc_id in versions
        ]
        outlines = [o for o in self.course_outlines() if o[1] in versions]
        found = [
            *entries,
            *(d for d in outline_disagreements(outlines) if record.related(*d.docs)),
            *(d for d in list_disagreements(passages) if record.related(*d.docs)),
        ]
        uploaded = {
            doc_id: chunks[self.document_rows(doc_id).start].uploaded_at or "" for doc_id in self.documents()
        }
        return tuple(sorted(found, key=lambda d: max(uploaded.get(doc, "") for doc in d.docs), reverse=True))

    def course_outlines(self) -> list[tuple[str, str, str, Outline[int]]]:
        """(course, doc_id, citation label, outline) of every current document that prints a numbered
        outline; a document of no detected course counts as the course its first passage names."""
        out: list[tuple[str, str, str, Outline[int]]] = []
        for doc_id in self.documents():
            outline = self.outline_of(doc_id)
            if outline is None or self.superseded[self.document_rows(doc_id).start]:
                continue
            label = citation_label(self.chunks[outline.entries[0].source])
            out.append((self.course_of(doc_id), doc_id, label, outline))
        return out

    def recorded_in(self, doc_id: str) -> list[tuple[Recorded, int]]:
        """The recorded disagreements one side of which is in ``doc_id``, with that side's index."""
        if self._by_doc is None:
            by_doc: dict[str, list[tuple[Recorded, int]]] = {}
            for entry in self.versions.entries:
                for n, side in enumerate(entry.sides):
                    by_doc.setdefault(side.doc_id, []).append((entry, n))
            self._by_doc = by_doc
        return self._by_doc.get(doc_id, [])

    def section_mask(self, section: str) -> np.ndarray:
        """True for the chunks holding the block a list question asks for (``worker.query.intent``
        section names: "outcomes", "textbooks", "lab" ...); computed once per snapshot."""
        mask = self._section_masks.get(section)
        if mask is None:
            mask = np.fromiter(
                (holds_section(c, section) for c in self.chunks), dtype=bool, count=len(self.chunks)
            )
            self._section_masks[section] = mask
        return mask

    def rows_with_terms(self, words: Collection[str], at_least: int, limit: int) -> list[int]:
        """The chunks (positions) holding at least ``at_least`` of the content words ``words``, most
        first and then in order, at most ``limit``, superseded versions left out: read from the
        keyword postings, so a large collection costs what the terms' postings cost.

        ``words`` are :func:`terms.terms` forms, stemmed as the keyword index stems them (one
        stemmer, ``keyword_stem``): looked up as they are, never stemmed twice ("kurose" is "kuros"
        in both; stemmed again it was "kuro", and found nothing)."""
        distinct = frozenset(words)
        found = [rows for rows, _ in map(self.keyword.postings, distinct) if len(rows)]
        if not found:
            return []
        counts = np.bincount(np.concatenate(found), minlength=len(self.chunks))
        rows = np.flatnonzero((counts >= min(at_least, len(distinct))) & ~self.superseded)
        order = np.lexsort((rows, -counts[rows]))[:limit]  # most terms first, then in order
        return [int(r) for r in rows[order]]

    def _spans(self) -> dict[str, tuple[int, int]]:
        """Each document's (first, end) chunk positions, in stored order (a document's chunks are
        stored together); built on first use, once per snapshot."""
        if self._documents is None:
            ids = [c.doc_id for c in self.chunks]
            starts = [0, *(row for row in range(1, len(ids)) if ids[row] != ids[row - 1]), len(ids)]
            self._documents = {ids[a]: (a, b) for a, b in itertools.pairwise(starts) if a < b}
        return self._documents

    def document_rows(self, doc_id: str) -> range:
        """The positions of a document's chunks, in document order; empty when the snapshot holds
        no such document."""
        first, end = self._spans().get(doc_id, (0, 0))
        return range(first, end)

    def documents(self) -> list[str]:
        """Every document's id, in stored order."""
        return list(self._spans())

    def documents_of(self, subject: str) -> list[str]:
        """The documents whose first chunk belongs to ``subject`` (a course's syllabus, slides and
        notes), in stored order."""
        return [d for d, (first, _) in self._spans().items() if self.chunks[first].subject == subject]

    def named_courses(self) -> dict[str, tuple[str, ...]]:
        """The documents of no detected course whose first passage names a course of the catalog
        by its code ("22AI205 Machine Learning — Lecture plan", "this notice updates the 21CS44
        syllabus"), and the courses they name: a README, lecture plan or notice of the course,
        searched with it when a question names it. Built on first use, once per snapshot."""
        if self._named is None:
            codes: dict[str, list[str]] = {}
            for course in self.catalog:
                if course.code:
                    codes.setdefault(course.code.lower(), []).append(course.key)
            named: dict[str, tuple[str, ...]] = {}
            if codes:
                pattern = re.compile(r"\b(" + "|".join(map(re.escape, codes)) + r")\b", re.IGNORECASE)
                for doc_id, (first, _) in self._spans().items():
                    if self.chunks[first].subject is None:
                        found = dict.fromkeys(
                            key
                            for m in pattern.finditer(self.chunks[first].text)
                            for key in codes[m.group(1).lower()]
                        )
                        if found:
                            named[doc_id] = tuple(found)
            self._named = named
        return self._named

    def course_mask(self, keys: Collection[str]) -> np.ndarray:
        """True for the chunks of the courses ``keys``: their subject is one of them
        (``CourseCatalog.mask``), or their document, of no detected course, names one
        (:meth:`named_courses`)."""
        mask = self.catalog.mask(keys)
        for doc_id, courses in self.named_courses().items():
            if set(courses) & set(keys):
                rows = self.document_rows(doc_id)
                mask[rows.start : rows.stop] = True
        return mask

    def outline_of(self, doc_id: str) -> Outline[int] | None:
        """A document's numbered outline (``worker.query.outlines.read_outline``; sources are chunk
        positions), read on first use and kept for the snapshot's life."""
        if doc_id not in self._outlines:
            rows = self.document_rows(doc_id)
            self._outlines[doc_id] = read_outline([(r, self.chunks[r].text) for r in rows])
        return self._outlines[doc_id]

    def course_of(self, doc_id: str) -> str:
        """The course a document belongs to: its detected subject, else the course its first passage
        names (a README or lecture plan titled "22AI205 Machine Learning — Lecture plan"), else ""."""
        first = self.chunks[self.document_rows(doc_id).start]
        return first.subject or next(iter(self.named_courses().get(doc_id, ())), "")

    @property
    def catalog(self) -> CourseCatalog:
        """The courses this snapshot holds and the names students use for them (built on first use)."""
        if self._catalog is None:
            self._catalog = CourseCatalog.from_chunks(self.chunks)
        return self._catalog

    def __len__(self) -> int:
        return len(self.chunks)

    def check_embedder(self, embedder_id: str, dim: int) -> None:
        if embedder_id != self.embedder_id or dim != self.dim:
            raise EmbedderMismatch(
                f"collection '{self.collection}' was indexed with embedder {self.embedder_id} "
                f"({self.dim} dimensions) but this worker uses {embedder_id} ({dim} dimensions). "
                f"Re-index it with the current embedder: `syllabot index --reindex --collection "
                f"{self.collection}` or /reindex in chat."
            )

    # --- serialisation --------------------------------------------------------------------------
    def to_fields(self) -> dict[str, bytes]:
        """Hash fields for Redis. The matrix is raw little-endian float32; the rest zlib'd JSON."""
        meta = {
            "version": self.version,
            "collection": self.collection,
            "embedder_id": self.embedder_id,
            "dim": self.dim,
            "count": len(self.chunks),
            "built_at": self.built_at,
        }
        return {
            "meta": json.dumps(meta).encode(),
            "matrix": np.ascontiguousarray(self.matrix, dtype="<f4").tobytes(),
            "chunks": zlib.compress(json.dumps([c.to_dict() for c in self.chunks]).encode()),
            "keyword": zlib.compress(json.dumps(self.keyword.to_json()).encode()),
            "versions": zlib.compress(json.dumps(self.versions.to_json()).encode()),
            "card": zlib.compress(json.dumps(self.course_card.to_json()).encode()),
        }

    @classmethod
    def from_fields(cls, fields: dict[bytes, bytes]) -> IndexSnapshot:
        try:
            meta = json.loads(fields[b"meta"])
            dim, count = int(meta["dim"]), int(meta["count"])
            matrix = as_search_layout(np.frombuffer(fields[b"matrix"], dtype="<f4").reshape(count, dim))
            shared: dict[str, str] = {}
            chunks = [Chunk.from_dict(d, shared) for d in json.loads(zlib.decompress(fields[b"chunks"]))]
            keyword = KeywordIndex.from_json(json.loads(zlib.decompress(fields[b"keyword"])))
            versions = (
                VersionRecord.from_json(json.loads(zlib.decompress(fields[b"versions"])))
                if b"versions" in fields
                else None
            )
            card = (
                CourseCard.from_json(json.loads(zlib.decompress(fields[b"card"])))
                if b"card" in fields
                else None
            )
        except (KeyError, ValueError, zlib.error) as exc:
            raise CorruptSnapshot(
                f"stored index snapshot is unreadable ({exc}); re-index the collection"
            ) from exc
        check_unit_rows(matrix)
        return cls(
            meta["version"],
            meta["collection"],
            meta["embedder_id"],
            dim,
            matrix,
            chunks,
            keyword,
            meta["built_at"],
            versions,
            _card=card,
        )


def as_search_layout(matrix: np.ndarray) -> np.ndarray:
    """The matrix in column-major (Fortran) order, native float32.

    OpenBLAS's kernel for ``matrix @ query`` is ~1.8x faster on this layout than on row-major here
    (bench/search_scale.py measures both): at 100k chunks 9 ms instead of 14, level with faiss'
    flat index. Redis still stores the bytes row-major; only the in-memory copy changes.
    """
    return np.asfortranarray(matrix, dtype=np.float32)


def check_unit_rows(matrix: np.ndarray) -> None:
    """Refuse vectors that are not unit length: a broken embedder's signature, caught at the door."""
    if len(matrix) == 0:
        return
    norms = np.linalg.norm(matrix, axis=1)
    worst = float(np.max(np.abs(norms - 1.0)))
    if worst > UNIT_TOLERANCE:
        raise CorruptSnapshot(
            f"index vectors are not unit length (worst |norm - 1| = {worst:.4f}); cosine over them would be "
            "silently wrong. Re-index the collection."
        )


def build_snapshot(
    version: str,
    collection: str,
    embedder_id: str,
    dim: int,
    chunks: list[Chunk],
    matrix: np.ndarray,
    built_at: str,
    check: Callable[[], None] | None = None,
) -> IndexSnapshot:
    """The snapshot a build publishes: the search layout, the keyword index, the course card and the
    record of versions, each read once here. ``check`` (a build's cancel check) is called between
    those steps and inside the two that read every passage, so a cancel is noticed within a second
    however large the collection (12,000 passages took ~10 s here)."""
    check = check or _never
    matrix = as_search_layout(np.asarray(matrix, dtype=np.float32).reshape(len(chunks), dim))
    check_unit_rows(matrix)
    check()
    keyword = build_keyword_index([c.text for c in chunks])
    check()
    card = read_card(chunks, check)
    snapshot = IndexSnapshot(
        version, collection, embedder_id, dim, matrix, chunks, keyword, built_at, _card=card
    )
    snapshot.build_versions(check)
    return snapshot


def _never() -> None:
    """No cancel check: a snapshot built outside a build (tests, benches, a stored one read)."""
