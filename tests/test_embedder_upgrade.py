"""The int8 MiniLM replaced the fp32 one as the default: collections built before keep being answered
with their own model until they are re-indexed, `doctor` lists them, and `syllabot index --reindex
--all` moves every collection over. A real Redis, both real models, the real CLI in a subprocess."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import redis

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.worker.cpu_pool import CpuPool
from syllabot.worker.doctor import check_collections
from syllabot.worker.embedders import get_embedder
from syllabot.worker.embedders.minilm import INT8_MODEL_ID, MODEL_ID
from syllabot.worker.engine import Engine
from tests.queue_helpers import cli_in

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
WARRANTY = ("warranty.md", (CORPUS / "warranty.md").read_bytes())
SHIPPING = ("shipping.md", (CORPUS / "shipping.md").read_bytes())


def _fp32(settings: Settings) -> Settings:
    return settings.model_copy(update={"embedder": "minilm-fp32"})


def test_an_earlier_embedders_collection_is_answered_with_its_model_until_reindexed(
    minilm_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    before = Engine(_fp32(minilm_settings))
    before.ingest("up1", [WARRANTY, SHIPPING])
    expected = before.search("up1", "Are tyres covered by the warranty?")
    assert expected.hits and before.snapshot("up1").embedder_id == MODEL_ID  # type: ignore[union-attr]

    engine = Engine(minilm_settings)
    assert engine.embedder.id == INT8_MODEL_ID
    with caplog.at_level(logging.WARNING, logger="syllabot.worker.engine"):
        served = engine.search("up1", "Are tyres covered by the warranty?")
        engine.search("up1", "What is the delivery fee?")
    # The very ranking and scores of the old model: its vectors answered the question.
    assert [(h.text, h.cosine) for h in served.hits] == [(h.text, h.cosine) for h in expected.hits]
    warnings = [r.getMessage() for r in caplog.records if "earlier embedder" in r.getMessage()]
    assert len(warnings) == 1 and "up1" in warnings[0] and "--reindex" in warnings[0]

    report = engine.reindex("up1")
    assert report.changed and engine.snapshot("up1").embedder_id == INT8_MODEL_ID  # type: ignore[union-attr]
    after = engine.search("up1", "Are tyres covered by the warranty?")
    assert after.hits[0].doc_id == expected.hits[0].doc_id
    assert [h.score for h in after.hits] != [h.score for h in expected.hits]  # now the int8 vectors


async def test_the_workers_cpu_pool_serves_an_earlier_embedders_collection(minilm_settings: Settings) -> None:
    Engine(_fp32(minilm_settings)).ingest("up2", [WARRANTY])
    current = Engine(minilm_settings)
    current.ingest("up3", [WARRANTY])
    pool = CpuPool(current, minilm_settings)
    try:
        old = await pool.search("up2", "Are tyres covered?")
        new = await pool.search("up3", "Are tyres covered?")
    finally:
        pool.close()
    assert old.hits and new.hits and old.hits[0].doc_id == new.hits[0].doc_id
    assert old.hits[0].cosine != new.hits[0].cosine  # each with its own index's model


def test_doctor_lists_collections_on_the_earlier_embedder(minilm_settings: Settings) -> None:
    Engine(_fp32(minilm_settings)).ingest("up4", [WARRANTY])
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
    assert checks["collection up4"].status == "warn"
    assert "earlier embedder" in checks["collection up4"].detail
    assert "syllabot index --reindex --all" in checks["collection up4"].detail
    assert checks["collection up5"].status == "ok"


def test_reindex_all_moves_every_collection_to_the_current_embedder(
    minilm_settings: Settings, tmp_path: Path
) -> None:
    old = Engine(_fp32(minilm_settings))
    old.ingest("up6", [WARRANTY])
    old.ingest("up7", [SHIPPING])
    cli = cli_in(minilm_settings, tmp_path, embedder="minilm", timeout_s=300)
    done = cli("index", "--reindex", "--all")
    assert done.returncode == 0, done.stderr
    assert "re-indexed 2 of 2 collections" in done.stderr
    engine = Engine(minilm_settings)
    assert {engine.snapshot(c).embedder_id for c in ("up6", "up7")} == {INT8_MODEL_ID}  # type: ignore[union-attr]

    lone = cli("index", "--all")
    assert lone.returncode == 2 and "--all goes with --reindex" in lone.stderr
    both = cli("index", "--reindex", "--all", "-c", "up6")
    assert both.returncode == 2 and "leave out --collection" in both.stderr
