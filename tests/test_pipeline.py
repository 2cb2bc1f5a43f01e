"""The ingest pipeline: embedding overlaps reading, batches grouped by token length give the same
vectors, builds give exactly the index of embedding the final chunks, and progress keeps flowing.
Real Redis, the real engine, the real MiniLM where vectors are compared."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from syllabot.shared.config import Settings
from syllabot.worker.indexes.embedders import EmbedderError, get_embedder
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.indexes.pipeline import EmbedPipeline, tightest_run
from syllabot.worker.ingest.chunking import chunk_document
from syllabot.worker.ingest.families import may_be_relinked
from syllabot.worker.ingest.loaders import load_document
from syllabot.worker.ops.sample import sample_files
from tests.conftest import shared_data


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, noting each call (and optionally failing on the n-th)."""

    def __init__(self, fail_on_call: int | None = None) -> None:
        super().__init__(256)
        self.calls: list[int] = []
        self.first_call = threading.Event()
        self.fail_on_call = fail_on_call

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.first_call.set()
        if self.fail_on_call is not None and len(self.calls) >= self.fail_on_call:
            raise EmbedderError("the embedder broke mid-build")
        return super()._raw_documents(texts)


def _syllabi() -> list[tuple[str, bytes]]:
    folder = shared_data("syllabi")
    return [(p.name, p.read_bytes()) for p in sorted(folder.glob("*.pdf")) if "scanned" not in p.name]


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for name, data in sample_files():
        texts += [c.text for c in chunk_document(load_document(data, name, 10**8))]
    return texts


def _embed_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "syllabot-embed"]


def test_minilm_vectors_are_the_same_whatever_the_batch_order(minilm_settings: Settings) -> None:
    """Grouping passages by token length only changes padding: each vector is the one the passage
    gets alone (no padding at all) and the one batches in arrival order give, within float tolerance;
    and the batches the pipeline cuts while reading give them too."""
    embedder = get_embedder(minilm_settings)
    texts = _corpus_texts()[::2]
    lengths = embedder.token_lengths(texts)  # type: ignore[attr-defined]
    assert max(lengths) > 3 * min(lengths)  # a spread of lengths, so the order matters for padding
    # One call: MiniLM orders the whole list by tokens, embeds in its batches, restores the order.
    grouped = embedder.embed_documents(texts)
    alone = np.vstack([embedder.embed_documents([t]) for t in texts])
    # Unsorted batches of 8, each run as one padded batch (MiniLM sorts only within a call).
    unsorted = np.vstack([embedder.embed_documents(texts[i : i + 8]) for i in range(0, len(texts), 8)])
    np.testing.assert_allclose(grouped, alone, atol=1e-5)
    np.testing.assert_allclose(grouped, unsorted, atol=1e-5)
    assert grouped.shape == (len(texts), embedder.dim)
    with EmbedPipeline(embedder, batch_size=8) as pipe:
        for start in range(0, len(texts), 5):
            pipe.feed(texts[start : start + 5])
        np.testing.assert_allclose(pipe.finish(texts), alone, atol=1e-5)


def test_minilm_token_lengths_count_real_tokens(minilm_settings: Settings) -> None:
    embedder = get_embedder(minilm_settings)
    short, long = "Module 2", "process scheduling " * 400
    lengths = embedder.token_lengths([short, long])  # type: ignore[attr-defined]
    assert 3 <= lengths[0] <= 6  # [CLS] module 2 [SEP]
    assert lengths[1] == minilm_settings.embed_max_tokens  # truncated like the model input


def test_a_build_is_exactly_the_index_of_its_final_chunks(settings: Settings) -> None:
    """Chunks embedded while reading plus course tails relabelled afterwards (embedded under their
    final text) give the same matrix as embedding the published chunks in one go."""
    files = _syllabi() + sample_files()
    engine = Engine(settings)
    report = engine.ingest("term", files, "test")
    assert report.changed
    snapshot = engine.snapshot("term")
    assert snapshot is not None
    raw_tails = [c for name, data in _syllabi() for c in chunk_document(load_document(data, name, 10**8))]
    assert any(may_be_relinked(c) for c in raw_tails)  # the case the deferral exists for is present
    expected = engine.embedder.embed_documents([c.text for c in snapshot.chunks])
    np.testing.assert_allclose(snapshot.matrix, expected, atol=1e-6)
    # And a reindex (the other path through the pipeline) reproduces it.
    engine.reindex("term")
    again = engine.snapshot("term")
    assert again is not None and len(again) == len(snapshot)
    before = {(c.chunk_id, c.text): row for c, row in zip(snapshot.chunks, snapshot.matrix, strict=True)}
    after = {(c.chunk_id, c.text): row for c, row in zip(again.chunks, again.matrix, strict=True)}
    assert before.keys() == after.keys()  # documents come back in storage order; same chunks
    for key, row in before.items():
        np.testing.assert_allclose(after[key], row, atol=1e-6)


def test_embedding_starts_while_documents_are_still_being_read(settings: Settings) -> None:
    """The reader waits, at the last file, until the embedder has been called: it must be called
    before reading ends (a sequential build would wait forever here and fail the assertion)."""
    embedder = RecordingEmbedder()
    engine = Engine(settings.model_copy(update={"embed_batch_size": 4}), embedder=embedder)
    files = sample_files()
    overlapped: list[bool] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "reading" and done == total - 1:
            overlapped.append(embedder.first_call.wait(timeout=30))

    report = engine.ingest("shop", files, "test", progress)
    assert report.changed and overlapped == [True]


def test_progress_keeps_flowing_through_a_long_ingest(settings: Settings) -> None:
    events: list[tuple[str, int, int]] = []
    engine = Engine(settings.model_copy(update={"embed_batch_size": 8}))
    files = sample_files()
    report = engine.ingest("shop", files, "test", lambda s, d, t: events.append((s, d, t)))
    reading = [(d, t) for s, d, t in events if s == "reading"]
    assert reading == [(i, len(files)) for i in range(len(files) + 1)]
    embedding = [(d, t) for s, d, t in events if s == "embedding"]
    total = report.total_chunks
    assert {t for _, t in embedding} == {total}
    done = [d for d, _ in embedding]
    assert done == sorted(done) and done[-1] == total
    # Reading and embedding overlap, so part may be done before the count starts; the rest is
    # reported batch by batch.
    assert len(embedding) >= 1 + (total - done[0]) // 8
    stages = [s for s, _, _ in events]
    assert stages.index("storing") > max(i for i, s in enumerate(stages) if s == "embedding")
    assert events[-1] == ("done", 1, 1)


def test_reindex_reports_reading_then_embedding(settings: Settings) -> None:
    engine = Engine(settings)
    engine.ingest("shop", sample_files()[:4], "test")
    events: list[tuple[str, int, int]] = []
    report = engine.reindex("shop", lambda s, d, t: events.append((s, d, t)))
    stages = list(dict.fromkeys(s for s, _, _ in events))
    assert stages == ["reading", "embedding", "done"]
    assert ("embedding", report.total_chunks, report.total_chunks) in events


def test_an_embedder_failure_mid_build_publishes_nothing_and_stops_the_thread(settings: Settings) -> None:
    engine = Engine(settings)
    first = engine.ingest("shop", sample_files()[:2], "test")
    broken = Engine(settings.model_copy(update={"embed_batch_size": 4}), embedder=RecordingEmbedder(3))
    with pytest.raises(EmbedderError, match="broke mid-build"):
        broken.ingest("shop", sample_files()[2:], "test")
    assert engine.store.current_version("shop") == first.index_version
    assert not _embed_threads()


def test_a_failure_while_reading_stops_the_embedding_thread(settings: Settings) -> None:
    engine = Engine(settings)

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "reading" and done == 3:
            raise RuntimeError("the caller gave up")

    with pytest.raises(RuntimeError, match="gave up"):
        engine.ingest("shop", sample_files(), "test", progress)
    assert engine.store.current_version("shop") is None
    assert not _embed_threads()


def test_pipeline_returns_vectors_in_the_asked_order_with_duplicates() -> None:
    embedder = HashingEmbedder(64)
    texts = ["a long passage about deadlocks and scheduling", "short", "medium length text", "short"]
    with EmbedPipeline(embedder, batch_size=2) as pipe:
        pipe.feed(texts[:2])
        matrix = pipe.finish(texts)
    np.testing.assert_allclose(matrix, embedder.embed_documents(texts), atol=1e-6)


def test_tightest_run_picks_the_batch_that_pads_least() -> None:
    assert tightest_run([5, 10, 50, 51, 52, 90], 3) == 2  # 50, 51, 52: 3 tokens of padding
    assert tightest_run([7, 7, 8, 100], 2) == 0
    assert tightest_run([1, 2], 4) == 0  # fewer than a batch: all of them


def test_batches_cut_while_reading_pad_less_than_arrival_order(settings: Settings) -> None:
    """With passages of mixed lengths arriving over time, the batches embedded are each of nearly
    one length (the longest of a batch is never more than twice its shortest here)."""
    seen: list[list[int]] = []

    class Lengths(HashingEmbedder):
        def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
            seen.append(sorted(len(t) for t in texts))
            return super()._raw_documents(texts)

    rng = np.random.default_rng(1)
    texts = [f"{i} " + "word " * int(n) for i, n in enumerate(rng.integers(1, 200, 64))]
    with EmbedPipeline(Lengths(64), batch_size=4) as pipe:
        for start in range(0, 48, 4):
            pipe.feed(texts[start : start + 4])
        matrix = pipe.finish(texts)
    np.testing.assert_allclose(matrix, HashingEmbedder(64).embed_documents(texts), atol=1e-6)
    assert sum(len(b) for b in seen) == len(texts)
    assert all(b[-1] <= 2 * b[0] for b in seen[:-2])  # the last batches take what is left
