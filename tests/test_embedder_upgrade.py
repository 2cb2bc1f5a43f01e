"""Each new default MiniLM graph (fp32 arithmetic, then the base weights in int8, now the course-tuned
graph) keeps the collections built before it answered with their own model, and decided on that
model's thresholds, until they are re-indexed; `doctor` lists them, and `syllabot index --reindex
--all` moves every collection over. A real Redis, the real models, the real CLI in a subprocess."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import redis

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.worker.answerers.decision import THRESHOLDS, thresholds_for
from syllabot.worker.answerers.extractive import ExtractiveAnswerer, reply_for
from syllabot.worker.indexes.embedders import EmbedderMismatch, get_embedder
from syllabot.worker.indexes.embedders.minilm import GRAPHS
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.doctor import check_collections
from syllabot.worker.runtime.cpu_pool import CpuPool
from tests.queue_helpers import cli_in

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
WARRANTY = ("warranty.md", (CORPUS / "warranty.md").read_bytes())
SHIPPING = ("shipping.md", (CORPUS / "shipping.md").read_bytes())
DEFAULT_ID = GRAPHS["minilm"].id
#: The earlier defaults, newest first.
EARLIER = ("minilm-base", "minilm-fp32")


def _on(settings: Settings, kind: str) -> Settings:
    return settings.model_copy(update={"embedder": kind})


@pytest.mark.parametrize("kind", EARLIER)
def test_an_earlier_embedders_collection_is_answered_with_its_model_until_reindexed(
    kind: str, minilm_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"up1-{kind}"
    before = Engine(_on(minilm_settings, kind))
    before.ingest(name, [WARRANTY, SHIPPING])
    expected = before.search(name, "Are tyres covered by the warranty?")
    assert expected.hits and before.snapshot(name).embedder_id == GRAPHS[kind].id  # type: ignore[union-attr]

    engine = Engine(minilm_settings)
    assert engine.embedder.id == DEFAULT_ID
    with caplog.at_level(logging.WARNING, logger="syllabot.worker.engine"):
        served = engine.search(name, "Are tyres covered by the warranty?")
        engine.search(name, "What is the delivery fee?")
    # The very ranking and scores of the old model: its vectors answered the question.
    assert [(h.text, h.cosine) for h in served.hits] == [(h.text, h.cosine) for h in expected.hits]
    assert served.embedder_id == GRAPHS[kind].id  # so the verdict reads the old model's scale
    warnings = [r.getMessage() for r in caplog.records if "earlier embedder" in r.getMessage()]
    assert len(warnings) == 1 and name in warnings[0] and "--reindex" in warnings[0]

    report = engine.reindex(name)
    assert report.changed and engine.snapshot(name).embedder_id == DEFAULT_ID  # type: ignore[union-attr]
    after = engine.search(name, "Are tyres covered by the warranty?")
    assert after.hits[0].doc_id == expected.hits[0].doc_id
    assert [h.score for h in after.hits] != [h.score for h in expected.hits]  # now the default's vectors
    assert after.embedder_id == DEFAULT_ID


def test_a_base_graph_collection_is_decided_on_the_base_graphs_thresholds(minilm_settings: Settings) -> None:
    """Served with the base graph, a question is decided with the verdict calibrated for the base
    graph's cosines, not the course-tuned graph's: the answer is the one those thresholds give."""
    assert THRESHOLDS[GRAPHS["minilm-base"].id] != THRESHOLDS[DEFAULT_ID]
    Engine(_on(minilm_settings, "minilm-base")).ingest("up8", [WARRANTY, SHIPPING])
    engine = Engine(minilm_settings)
    answerer = ExtractiveAnswerer(minilm_settings)
    for question in ("Are tyres covered by the warranty?", "What is the delivery fee?", "Is there a gym?"):
        result = engine.search("up8", question)
        assert result.embedder_id == GRAPHS["minilm-base"].id
        answer = answerer.answer_sync(question, result, "up8")
        base = thresholds_for(GRAPHS["minilm-base"].id)
        assert result.read is not None
        expected = reply_for(result.read, result.hits, result.fallback, base, result.related)
        assert answer.status == expected.status


async def test_the_workers_cpu_pool_serves_an_earlier_embedders_collection(minilm_settings: Settings) -> None:
    Engine(_on(minilm_settings, "minilm-fp32")).ingest("up2", [WARRANTY])
    Engine(_on(minilm_settings, "minilm-base")).ingest("up2b", [WARRANTY])
    current = Engine(minilm_settings)
    current.ingest("up3", [WARRANTY])
    pool = CpuPool(current, minilm_settings)
    try:
        fp32 = await pool.search("up2", "Are tyres covered?")
        base = await pool.search("up2b", "Are tyres covered?")
        new = await pool.search("up3", "Are tyres covered?")
    finally:
        pool.close()
    assert fp32.hits and base.hits and new.hits
    assert fp32.hits[0].doc_id == base.hits[0].doc_id == new.hits[0].doc_id
    # each with its own index's model
    assert len({fp32.hits[0].cosine, base.hits[0].cosine, new.hits[0].cosine}) == 3
    assert [r.embedder_id for r in (fp32, base, new)] == [
        GRAPHS[k].id for k in ("minilm-fp32", "minilm-base", "minilm")
    ]


def test_doctor_lists_collections_on_an_earlier_embedder(minilm_settings: Settings) -> None:
    Engine(_on(minilm_settings, "minilm-fp32")).ingest("up4", [WARRANTY])
    Engine(_on(minilm_settings, "minilm-base")).ingest("up4b", [WARRANTY])
    Engine(minilm_settings).ingest("up5", [WARRANTY])
    client = redis.Redis.from_url(minilm_settings.redis_url or "")
    try:
        checks = {
            c.name: c
            for c in check_collections(
                client, Keys(minilm_settings.key_prefix), get_embedder(minilm_settings)
            )
        }
    finally:
        client.close()
    for name, kind in (("up4", "minilm-fp32"), ("up4b", "minilm-base")):
        check = checks[f"collection {name}"]
        assert check.status == "warn"
        assert f"earlier embedder {GRAPHS[kind].id}" in check.detail
        assert f"syllabot index --reindex -c {name}" in check.detail
        assert "syllabot index --reindex --all" in check.detail
    assert checks["collection up5"].status == "ok"


def test_the_base_graph_still_serves_an_fp32_collection(minilm_settings: Settings) -> None:
    """A worker pinned to the previous default (SYLLABOT_EMBEDDER=minilm-base) keeps serving what
    it served before: the fp32 collections; a course-tuned collection is not earlier than it."""
    Engine(_on(minilm_settings, "minilm-fp32")).ingest("up9", [WARRANTY])
    Engine(minilm_settings).ingest("up10", [WARRANTY])
    pinned = Engine(_on(minilm_settings, "minilm-base"))
    assert pinned.search("up9", "Are tyres covered?").embedder_id == GRAPHS["minilm-fp32"].id
    with pytest.raises(EmbedderMismatch, match="syllabot index --reindex"):
        pinned.search("up10", "Are tyres covered?")


def test_reindex_all_moves_every_collection_to_the_current_embedder(
    minilm_settings: Settings, tmp_path: Path
) -> None:
    Engine(_on(minilm_settings, "minilm-fp32")).ingest("up6", [WARRANTY])
    Engine(_on(minilm_settings, "minilm-base")).ingest("up7", [SHIPPING])
    cli = cli_in(minilm_settings, tmp_path, embedder="minilm", timeout_s=300)
    done = cli("index", "--reindex", "--all")
    assert done.returncode == 0, done.stderr
    assert "re-indexed 2 of 2 collections" in done.stderr
    engine = Engine(minilm_settings)
    assert {engine.snapshot(c).embedder_id for c in ("up6", "up7")} == {DEFAULT_ID}  # type: ignore[union-attr]

    lone = cli("index", "--all")
    assert lone.returncode == 2 and "--all goes with --reindex" in lone.stderr
    both = cli("index", "--reindex", "--all", "-c", "up6")
    assert both.returncode == 2 and "leave out --collection" in both.stderr
