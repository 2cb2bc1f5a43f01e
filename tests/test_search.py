"""Pure tests of scoring, threshold/fallback, de-duplication, labels and snapshots (no Redis)."""

from __future__ import annotations

import gc
import json
import tracemalloc

import numpy as np
import pytest

from syllabot.shared.labels import citation_label
from syllabot.worker.indexes.embedders.base import EmbedderMismatch, normalise
from syllabot.worker.indexes.index import CorruptSnapshot, IndexSnapshot, build_snapshot, check_unit_rows
from syllabot.worker.indexes.search import document_family, hybrid_scores, select, superseded_mask
from syllabot.worker.text.documents import Chunk
from syllabot.worker.text.keyword import (
    KeywordIndex,
    bm25_scores,
    build_keyword_index,
    overlap_scores,
    tokenize,
)


def chunk(i: int, text: str, doc: str = "d1", **kw) -> Chunk:
    return Chunk(
        chunk_id=f"{doc}:{i}", doc_id=doc, file=kw.pop("file", f"{doc}.pdf"), title=doc, text=text, **kw
    )


def test_hybrid_is_weighted_sum() -> None:
    cos = np.array([1.0, 0.0, 0.5], dtype=np.float32)
    kw = np.array([0.0, 1.0, 0.5], dtype=np.float32)
    assert np.allclose(hybrid_scores(cos, kw, 0.7), [0.7, 0.3, 0.5])


def test_tokenize_drops_stopwords_and_stems_plurals() -> None:
    assert (
        tokenize("Which modules cover the Deadlocks?")
        == tokenize("which module covers deadlock")
        == ["modul", "cover", "deadlock"]
    )


def test_bm25_is_absolute_and_bounded() -> None:
    index = build_keyword_index(
        ["deadlock detection and recovery", "page replacement algorithms", "deadlock"]
    )
    scores = bm25_scores("deadlock", index)
    assert scores.max() <= 1.0 and scores.min() >= 0.0
    assert scores[1] == 0.0 and scores[0] > 0
    # A query whose rare second word appears nowhere cannot reach the score of a full match.
    partial = bm25_scores("deadlock quasar", index)
    assert partial.max() < scores.max()


def test_overlap_is_share_of_query_terms() -> None:
    index = build_keyword_index(["returns within thirty days", "battery charging"])
    scores = overlap_scores("returns battery", index)
    assert 0 < scores[0] < 1 and 0 < scores[1] < 1
    assert overlap_scores("zzz", index).max() == 0.0


def test_keyword_index_round_trips_through_its_stored_form_unchanged() -> None:
    texts = ["deadlock detection and recovery", "page replacement", "deadlock deadlock avoidance", ""]
    index = build_keyword_index(texts)
    stored = index.to_json()
    # the stored form is still term -> [rows, tfs]: snapshots written before the CSR layout load
    assert stored["postings"]["deadlock"] == [[0, 2], [1, 2]]
    again = KeywordIndex.from_json(json.loads(json.dumps(stored)))
    assert again.to_json() == stored
    rows, tfs = again.postings("deadlock")
    assert rows.tolist() == [0, 2] and tfs.tolist() == [1.0, 2.0] and again.df("deadlock") == 2
    assert tokenize("page")[0] in again and "quasar" not in again and again.df("quasar") == 0
    assert len(again.postings("quasar")[0]) == 0
    for query in ("deadlock", "page deadlock", "quasar"):
        assert np.array_equal(bm25_scores(query, again), bm25_scores(query, index))


def test_a_keyword_index_costs_a_little_per_term_not_two_arrays_each() -> None:
    """A course's ~1,500 terms as two small arrays each cost ~350 bytes a term before the data
    (tuple, two array objects, their data blocks); one CSR block costs the term table only."""
    words = [f"w{k}" for k in range(3000)]
    texts = [" ".join(words[(i * 37) % 2900 : (i * 37) % 2900 + 60]) for i in range(100)]
    stored = json.loads(json.dumps(build_keyword_index(texts).to_json()))
    n_terms = len(stored["postings"])
    gc.collect()
    tracemalloc.start()
    try:
        index = KeywordIndex.from_json(stored)
        allocated, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    postings = sum(len(rows) for rows, _ in stored["postings"].values())
    assert len(index.terms) == n_terms > 2000
    assert (allocated - 8 * postings) / n_terms < 150, allocated


def _matrix(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    return normalise(np.random.default_rng(seed).normal(size=(n, dim)))


def test_threshold_filters_and_fallback_never_returns_empty() -> None:
    chunks = [chunk(i, f"text number {i} about topic{i}") for i in range(5)]
    matrix = _matrix(5)
    scores = np.array([0.05, 0.10, 0.02, 0.01, 0.12], dtype=np.float32)
    selection = select(scores, scores, scores * 0, chunks, matrix, k=3, threshold=0.15, near_cosine=0.95)
    assert selection.fallback is True
    assert [r.row for r in selection.rows] == [4, 1, 0]

    scores[2] = 0.5
    selection = select(scores, scores, scores * 0, chunks, matrix, k=3, threshold=0.15, near_cosine=0.95)
    assert selection.fallback is False
    assert [r.row for r in selection.rows] == [2]


def test_overlapping_windows_of_one_document_collapse() -> None:
    base = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    chunks = [
        chunk(0, base),
        chunk(1, base + " lambda"),  # an overlapping window: nearly all its words are in the other
        chunk(2, "completely different words here about networks", doc="d2"),
    ]
    scores = np.array([0.9, 0.8, 0.5], dtype=np.float32)
    selection = select(scores, scores, scores, chunks, _matrix(3), k=3, threshold=0.15, near_cosine=0.95)
    assert [r.row for r in selection.rows] == [0, 2]


def test_near_identical_chunks_across_documents_collapse_but_related_ones_survive() -> None:
    text = "Normalisation: first, second and third normal forms, BCNF, functional dependencies."
    vec = normalise(np.ones((1, 8)))[0]
    other = normalise(np.arange(8, dtype=np.float32)[None, :])[0]
    matrix = np.vstack([vec, vec, other])
    chunks = [
        chunk(0, text, doc="21cs53"),
        chunk(0, text, doc="bcs403"),
        chunk(0, "Normalisation and functional dependencies in relational design", doc="x"),
    ]
    scores = np.array([0.9, 0.85, 0.8], dtype=np.float32)
    rows = [r.row for r in select(scores, scores, scores, chunks, matrix, 3, 0.15, 0.95).rows]
    assert rows == [0, 2]


def test_superseded_version_dropped_only_when_current_exists() -> None:
    chunks = [
        chunk(0, "returns within 30 days", doc="kc-returns-v3", version="3", status="current"),
        chunk(0, "returns within 14 days", doc="kc-returns-v2", version="2", status="superseded"),
        chunk(0, "old gift card terms", doc="kc-gifts-v1", status="superseded"),
    ]
    mask = superseded_mask(chunks)
    assert mask.tolist() == [False, True, False]
    assert document_family("kc-returns-v2", "en") == document_family("kc-returns-v3", "en")
    assert document_family("kc-returns-v3", "bn") != document_family("kc-returns-v3", "en")
    scores = np.array([0.5, 0.9, 0.4], dtype=np.float32)
    rows = [r.row for r in select(scores, scores, scores, chunks, _matrix(3), 3, 0.15, 0.95, mask).rows]
    assert rows == [0, 2]
    rows = [r.row for r in select(scores, scores, scores, chunks, _matrix(3), 3, 0.15, 0.95, None).rows]
    assert rows == [1, 0, 2]


def test_citation_labels() -> None:
    c = chunk(0, "x", subject="21CS44 Operating Systems", module="Module 2", page=1, page_end=2)
    assert citation_label(c) == "21CS44 Operating Systems — Module 2, pp. 1–2"
    c = chunk(0, "x", subject="21CS44 Operating Systems", module="Module 3", page=3, page_end=3)
    assert citation_label(c) == "21CS44 Operating Systems — Module 3, p. 3"
    md = chunk(0, "x", doc="kc-returns-v3", file="returns-policy.md", section="How refunds are paid", page=1)
    assert citation_label(md) == "kc-returns-v3 — How refunds are paid"


def test_snapshot_round_trip_and_embedder_check() -> None:
    chunks = [chunk(i, f"chunk {i} text") for i in range(4)]
    snap = build_snapshot("v1", "default", "fake-8", 8, chunks, _matrix(4), "2026-11-30T00:00:00+00:00")
    fields = {k.encode(): v for k, v in snap.to_fields().items()}
    back = IndexSnapshot.from_fields(fields)
    assert back.version == "v1" and len(back) == 4
    assert np.allclose(back.matrix, snap.matrix)
    assert back.chunks[2].text == "chunk 2 text"
    back.check_embedder("fake-8", 8)
    with pytest.raises(EmbedderMismatch, match=r"[Rr]e-index"):
        back.check_embedder("all-MiniLM-L6-v2-onnx-int8", 384)


def test_non_unit_vectors_are_refused_at_the_door() -> None:
    raw = np.random.default_rng(1).normal(size=(3, 8)).astype(np.float32)
    with pytest.raises(CorruptSnapshot, match="not unit length"):
        check_unit_rows(raw)
    with pytest.raises(CorruptSnapshot):
        build_snapshot("v", "c", "e", 8, [chunk(i, "t") for i in range(3)], raw, "now")


def test_duplicate_printed_in_another_courses_file_gives_way_to_the_courses_own_copy() -> None:
    header = "21CS53 Database Management Systems, Course Code 21CS53, Credits 03, CIE 50, SEE 50"
    vec = normalise(np.ones((1, 8)))[0]
    matrix = np.vstack([vec, vec])
    foreign_copy = chunk(0, header, doc="21cs52", subject="21CS53 Database Management Systems", foreign=True)
    own_copy = chunk(0, header, doc="21cs53", subject="21CS53 Database Management Systems")
    scores = np.array([0.6, 0.6], dtype=np.float32)  # identical text and vectors: an exact tie
    rows = [
        r.row for r in select(scores, scores, scores, [foreign_copy, own_copy], matrix, 5, 0.15, 0.95).rows
    ]
    assert rows == [1]
    rows = [
        r.row for r in select(scores, scores, scores, [own_copy, foreign_copy], matrix, 5, 0.15, 0.95).rows
    ]
    assert rows == [0]
