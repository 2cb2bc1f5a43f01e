"""The sample corpus indexed into a real Redis and queried through the Engine."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from syllabot.shared.config import Settings
from syllabot.shared.schema import SEARCH_HIT_FIELDS
from syllabot.worker.indexes.embedders.base import Embedder, EmbedderMismatch
from syllabot.worker.indexes.engine import Engine, NothingToIndex
from syllabot.worker.ops.evaluation import load_questions, metrics
from syllabot.worker.ops.sample import sample_files
from tests.conftest import CORPUS

QUESTIONS = Path(__file__).parent / "data" / "sample_questions.jsonl"


@pytest.fixture(scope="module")
def minilm_engine_module(tmp_path_factory: pytest.TempPathFactory):
    """The sample corpus indexed once with the default model, for the many read-only questions."""
    import uuid

    import redis

    from tests.conftest import REDIS_URL

    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    settings = Settings(
        redis_url=REDIS_URL,
        data_dir=tmp_path_factory.mktemp("data"),
        key_prefix=prefix,
        embedder="minilm",
        _env_file=None,
    )
    engine = Engine(settings)
    report = engine.ingest("default", sample_files(), who="test")
    assert report.changed, report
    yield engine
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)


def test_sample_corpus_indexes_every_file(minilm_engine_module: Engine) -> None:
    sources = minilm_engine_module.sources("default")
    files = {s.file for s in sources}
    expected = {p.name for p in CORPUS.iterdir() if p.suffix in {".md", ".pdf"} and p.name != "README.md"}
    assert files == expected
    assert all(s.chunks > 0 for s in sources)


@pytest.mark.parametrize(
    ("question", "doc_id"),
    [
        ("How long do I have to return a bike?", "kc-returns-v3"),
        ("How long does the battery charge take?", "kc-battery-v1"),
        ("What is the RD2-24 recall?", "kc-recalls-v1"),
        ("How tall must I be for size M?", "kc-sizing-v1"),
        ("Are tyres covered by warranty?", "kc-warranty-v2"),
        ("Can I return a bike after 14 days?", "kc-returns-v3"),
        ("Can I send my bicycle back?", "kc-returns-v3"),
    ],
)
def test_named_questions_rank_the_right_document_first(
    minilm_engine_module: Engine, question: str, doc_id: str
) -> None:
    hits = minilm_engine_module.search("default", question).hits
    assert hits, question
    assert hits[0].doc_id == doc_id, [(h.doc_id, round(h.score, 3)) for h in hits[:5]]


def test_superseded_policy_is_dropped_unless_asked_for(minilm_engine_module: Engine) -> None:
    result = minilm_engine_module.search("default", "Can I return a bike after 14 days?")
    assert "kc-returns-v2" not in {h.doc_id for h in result.hits}
    with_old = minilm_engine_module.search(
        "default", "Can I return a bike after 14 days?", include_superseded=True
    )
    assert "kc-returns-v2" in {h.doc_id for h in with_old.hits}


def test_hits_are_cited_and_deduplicated(minilm_engine_module: Engine) -> None:
    result = minilm_engine_module.search("default", "Which module covers virtualisation?")
    assert 0 < len(result.hits) <= 18
    assert all(h.label for h in result.hits)
    texts = [h.text for h in result.hits]
    assert len(texts) == len(set(texts))
    assert [h.rank for h in result.hits] == list(range(1, len(result.hits) + 1))
    assert all(result.hits[i].score >= result.hits[i + 1].score for i in range(len(result.hits) - 1))


def test_labelled_questions_recall(minilm_engine_module: Engine) -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 30
    rows = []
    for q in questions:
        result = minilm_engine_module.search("default", q.question)
        assert result.hits, f"empty result for {q.question!r}: the fallback must always return chunks"
        rows.append((q, result.hits, not result.fallback))
    summary = metrics(rows)
    # Measured 2026-11-30 with the bundled MiniLM; a drop below these is a regression worth a look.
    assert summary["recall@5_file"] >= 0.9, summary
    assert summary["recall@5_page"] >= 0.85, summary


def test_whole_bad_batch_leaves_previous_index_untouched(settings: Settings) -> None:
    engine = Engine(settings)
    good = (CORPUS / "warranty.md").read_bytes()
    first = engine.ingest("c1", [("warranty.md", good)])
    assert first.changed
    before = engine.store.current_version("c1")
    report = engine.ingest(
        "c1", [("broken.pdf", b"%PDF-1.4 garbage"), ("picture.pdf", b"\x89PNG\r\n\x1a\n....")]
    )
    assert report.changed is False
    assert all(not f.ok and f.error for f in report.files)
    assert engine.store.current_version("c1") == before
    assert [s.file for s in engine.sources("c1")] == ["warranty.md"]


def test_mixed_batch_indexes_the_good_file_and_reports_the_bad(settings: Settings) -> None:
    engine = Engine(settings)
    report = engine.ingest(
        "c2", [("warranty.md", (CORPUS / "warranty.md").read_bytes()), ("broken.docx", b"not a zip at all")]
    )
    assert report.changed
    by_file = {f.file: f for f in report.files}
    assert by_file["warranty.md"].ok and by_file["warranty.md"].chunks > 0
    assert not by_file["broken.docx"].ok and "broken.docx" in (by_file["broken.docx"].error or "")


def test_oversized_document_is_refused_with_its_size(settings: Settings) -> None:
    engine = Engine(settings.model_copy(update={"max_document_mb": 0.001}))
    report = engine.ingest("c3", [("big.md", b"# t\n\n" + b"word " * 2000)])
    assert not report.changed
    assert "MB" in (report.files[0].error or "") or "bytes" in (report.files[0].error or "")


def test_upload_then_remove_and_reuse_of_vectors(settings: Settings) -> None:
    engine = Engine(settings)
    engine.ingest("c4", [("warranty.md", (CORPUS / "warranty.md").read_bytes())])
    v1 = engine.snapshot("c4")
    engine.ingest("c4", [("shipping.md", (CORPUS / "shipping.md").read_bytes())])
    v2 = engine.snapshot("c4")
    assert v1 is not None and v2 is not None and v2.version != v1.version
    kept = [i for i, c in enumerate(v2.chunks) if c.doc_id == "kc-warranty-v2"]
    assert np.allclose(v2.matrix[kept], v1.matrix)  # unchanged documents keep their vectors
    engine.remove("c4", "kc-warranty-v2")
    assert {s.doc_id for s in engine.sources("c4")} == {"kc-shipping-v1"}
    assert all(h.doc_id == "kc-shipping-v1" for h in engine.search("c4", "tyres warranty").hits)
    with pytest.raises(NothingToIndex, match="kc-warranty-v2"):
        engine.remove("c4", "kc-warranty-v2")


def test_reindex_rebuilds_from_stored_documents(settings: Settings) -> None:
    engine = Engine(settings)
    engine.ingest("c5", [("warranty.md", (CORPUS / "warranty.md").read_bytes())])
    before = engine.store.current_version("c5")
    report = engine.reindex("c5")
    assert report.changed and report.index_version != before
    assert engine.search("c5", "Are tyres covered?").hits


def test_another_engine_sees_a_new_version(settings: Settings) -> None:
    reader, writer = Engine(settings), Engine(settings)
    writer.ingest("c6", [("warranty.md", (CORPUS / "warranty.md").read_bytes())])
    assert {h.doc_id for h in reader.search("c6", "shipping delivery fee").hits} == {"kc-warranty-v2"}
    writer.ingest("c6", [("shipping.md", (CORPUS / "shipping.md").read_bytes())])
    assert reader.search("c6", "What is the delivery fee?").hits[0].doc_id == "kc-shipping-v1"


def test_query_with_another_embedder_is_refused(settings: Settings) -> None:
    Engine(settings).ingest("c7", [("warranty.md", (CORPUS / "warranty.md").read_bytes())])
    other = Engine(settings.model_copy(update={"embedder": "minilm"}))
    with pytest.raises(EmbedderMismatch, match="c7"):
        other.search("c7", "tyres")


def test_empty_collection_returns_no_hits_and_no_version(settings: Settings) -> None:
    result = Engine(settings).search("nothing-here", "anything")
    assert result.hits == [] and result.index_version is None


def test_search_json_cli_contract(settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from syllabot import cli

    Engine(settings).ingest("default", [("warranty.md", (CORPUS / "warranty.md").read_bytes())])
    monkeypatch.setattr(cli, "get_settings", lambda: settings)
    assert cli.main(["search", "Are tyres covered by warranty?", "--json", "-k", "3"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert 1 <= len(hits) <= 3
    assert list(hits[0]) == list(SEARCH_HIT_FIELDS)


class _Truncated3072(Embedder):
    """Matryoshka-style: unit 3072-d vectors cut to their first 768 dims (so no longer unit length)."""

    id = "fake-truncated-768"
    dim = 768

    def __init__(self, full: dict[str, np.ndarray]) -> None:
        self.full = full

    def _raw_documents(self, texts):
        return np.stack([self.full[t][:768] for t in texts])


def test_incident_regression_truncated_vectors_rank_and_score_as_untruncated(settings: Settings) -> None:
    """The bug this product exists for: truncated vectors, cosine silently small, nothing over 0.15."""
    from syllabot.worker.indexes.index import build_snapshot
    from syllabot.worker.indexes.retrieval import search_snapshot

    rng = np.random.default_rng(7)
    topic = rng.normal(size=3072)
    texts = [f"passage {i}" for i in range(6)]
    full = {}
    for i, t in enumerate(texts):
        v = rng.normal(size=3072) + (0.6 * topic if i == 4 else 0)
        full[t] = v / np.linalg.norm(v)
    q = 0.7 * topic / np.linalg.norm(topic) + 0.3 * rng.normal(size=3072) / np.sqrt(3072)
    full["query"] = q / np.linalg.norm(q)
    raw_dot = float(full["query"][:768] @ full["passage 4"][:768])
    assert raw_dot < 0.15  # the incident: unnormalised truncated cosine falls under the threshold

    embedder = _Truncated3072(full)
    matrix = embedder.embed_documents(texts)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("query")
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    from syllabot.worker.text.documents import Chunk

    chunks = [
        Chunk(chunk_id=f"d:{i}", doc_id=f"d{i}", file=f"d{i}.md", title=t, text=t)
        for i, t in enumerate(texts)
    ]
    snap = build_snapshot("v", "c", embedder.id, embedder.dim, chunks, matrix, "now")
    pure_cosine = settings.model_copy(update={"hybrid_alpha": 1.0})
    selection, hits = search_snapshot(snap, query, "query", pure_cosine)
    assert not selection.fallback
    assert hits[0].doc_id == "d4"
    expected = float(full["query"][:768] @ full["passage 4"][:768]) / (
        np.linalg.norm(full["query"][:768]) * np.linalg.norm(full["passage 4"][:768])
    )
    assert hits[0].cosine == pytest.approx(expected, abs=1e-4)
    # ...and close to what the full, untruncated vectors give: truncation no longer shrinks scores.
    assert hits[0].cosine == pytest.approx(float(full["query"] @ full["passage 4"]), abs=0.05)
    assert hits[0].score > 0.15
