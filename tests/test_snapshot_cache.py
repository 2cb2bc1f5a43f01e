"""The worker's snapshot cache: LRU within a memory budget, weighed honestly, visible in metrics and
doctor. Real Redis and the real engine throughout; collections are built by ``Engine.ingest``."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
import tracemalloc
from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import AskRequest
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.indexes.snapshot_cache import SnapshotCache, snapshot_bytes
from syllabot.worker.ops.doctor import run_checks
from syllabot.worker.ops.metrics import WorkerMetrics
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import running_worker

QUESTION = "How many days do I have to return a new bike?"


def _build(settings: Settings, collections: list[str]) -> Engine:
    """Each collection from a different slice of the sample corpus, so sizes and answers differ."""
    builder = Engine(settings)
    files = sample_files()
    for i, name in enumerate(collections):
        chosen = files[i % len(files) :] + files[: i % len(files)]
        report = builder.ingest(name, chosen[: 3 + i % 3], "test")
        assert report.changed, report
    return builder


def _sizes(engine: Engine, collections: list[str]) -> dict[str, int]:
    out = {}
    for name in collections:
        version = engine.store.current_version(name)
        snapshot = engine.store.load_snapshot(name, version or "")
        assert snapshot is not None
        out[name] = snapshot_bytes(snapshot)
    return out


def _with_budget(settings: Settings, budget_bytes: int) -> Settings:
    return settings.model_copy(update={"snapshot_cache_mb": budget_bytes / (1024 * 1024)})


def test_snapshot_weight_matches_what_python_really_allocates(settings: Settings) -> None:
    builder = _build(settings, ["big"])
    version = builder.store.current_version("big") or ""
    gc.collect()
    tracemalloc.start()
    try:
        snapshot = builder.store.load_snapshot("big", version)
        gc.collect()
        allocated, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert snapshot is not None and len(snapshot) > 20
    estimate = snapshot_bytes(snapshot)
    assert 0.8 * allocated <= estimate <= 1.2 * allocated, (estimate, allocated)
    assert estimate > snapshot.matrix.nbytes + sum(len(c.text) for c in snapshot.chunks)


def test_a_loaded_snapshot_holds_a_documents_repeated_fields_once(settings: Settings) -> None:
    builder = _build(settings, ["big"])
    snapshot = builder.store.load_snapshot("big", builder.store.current_version("big") or "")
    assert snapshot is not None
    by_doc: dict[str, list[Any]] = {}
    for chunk in snapshot.chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    first, second = next(chunks for chunks in by_doc.values() if len(chunks) > 1)[:2]
    # one string object for the whole document, not one per chunk; no per-chunk __dict__ either
    assert first.file is second.file and first.title is second.title and first.doc_id is second.doc_id
    assert first.status is second.status and not hasattr(first, "__dict__")


def test_least_recently_used_collection_is_evicted_first_and_the_budget_holds(settings: Settings) -> None:
    names = ["a", "b", "c", "d"]
    builder = _build(settings, names)
    sizes = _sizes(builder, names)
    # Room for a and b (plus a little), not for a third snapshot.
    budget = sizes["a"] + sizes["b"] + min(sizes.values()) // 2
    engine = Engine(_with_budget(settings, budget))
    engine.search("a", QUESTION)
    engine.search("b", QUESTION)
    engine.search("a", QUESTION)  # a is now the most recently used
    assert engine.cache.collections() == ["b", "a"]
    engine.search("c", QUESTION)
    assert "b" not in engine.cache.collections() and engine.cache.collections()[-1] == "c"
    stats = engine.cache.stats()
    assert stats.evictions >= 1 and stats.misses == 3 and stats.hits == 1
    assert stats.bytes <= budget
    for name in ["d", "a", "b", "c", "d", "d", "a"]:
        engine.search(name, QUESTION)
        stats = engine.cache.stats()
        assert stats.bytes <= budget and stats.bytes == sum(sizes[n] for n in engine.cache.collections())
    assert stats.over_budget == 0


def test_a_reloaded_snapshot_answers_exactly_as_before_its_eviction(settings: Settings) -> None:
    names = ["a", "b"]
    builder = _build(settings, names)
    sizes = _sizes(builder, names)
    engine = Engine(_with_budget(settings, max(sizes.values()) + 1))
    before = engine.search("a", QUESTION)
    engine.search("b", QUESTION)
    assert engine.cache.collections() == ["b"]
    after = engine.search("a", QUESTION)
    assert engine.cache.stats().misses == 3
    assert before.hits and [h.model_dump() for h in after.hits] == [h.model_dump() for h in before.hits]
    assert after.index_version == before.index_version and after.fallback == before.fallback


def test_a_snapshot_bigger_than_the_budget_is_served_kept_alone_and_logged(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    builder = Engine(settings)
    assert builder.ingest("small", sample_files()[:2], "test").changed
    assert builder.ingest("huge", sample_files(), "test").changed
    sizes = _sizes(builder, ["small", "huge"])
    engine = Engine(_with_budget(settings, sizes["small"] + 1))
    engine.search("small", QUESTION)
    with caplog.at_level(logging.INFO, logger="syllabot.cache"):
        result = engine.search("huge", QUESTION)
    assert result.hits
    assert engine.cache.collections() == ["huge"]
    stats = engine.cache.stats()
    assert stats.over_budget == 1 and stats.evictions == 1 and stats.bytes == sizes["huge"]
    events = [json.loads(r.getMessage()) for r in caplog.records if r.name == "syllabot.cache"]
    loads = [e for e in events if e["event"] == "snapshot_load"]
    assert loads and loads[-1]["collection"] == "huge" and loads[-1]["evicted"] == ["small"]
    assert loads[-1]["load_ms"] >= 0 and loads[-1]["bytes"] == sizes["huge"]
    assert any(e["event"] == "snapshot_over_budget" and e["collection"] == "huge" for e in events)


def test_a_rebuilt_collection_replaces_its_old_snapshot_without_counting_an_eviction(
    settings: Settings,
) -> None:
    builder = _build(settings, ["a"])
    engine = Engine(settings)
    engine.search("a", QUESTION)
    builder.ingest("a", sample_files()[-2:], "test")
    engine.search("a", QUESTION)
    stats = engine.cache.stats()
    assert stats.entries == 1 and stats.misses == 2 and stats.evictions == 0
    assert stats.bytes == _sizes(engine, ["a"])["a"]


def test_two_threads_asking_a_cold_collection_load_it_once(settings: Settings) -> None:
    _build(settings, ["a"])
    engine = Engine(settings)

    async def both() -> None:
        await asyncio.gather(*(asyncio.to_thread(engine.search, "a", QUESTION) for _ in range(4)))

    asyncio.run(both())
    stats = engine.cache.stats()
    assert stats.loads == 1 and stats.misses == 1 and stats.hits == 3


def test_cache_counts_unit() -> None:
    """The empty cache reports zeros and its budget (what a fresh worker exports)."""
    stats = SnapshotCache(1024).stats()
    assert (stats.budget_bytes, stats.bytes, stats.entries, stats.misses, stats.evictions) == (
        1024,
        0,
        0,
        0,
        0,
    )


def _samples(metrics: WorkerMetrics) -> dict[str, float]:
    text = generate_latest(metrics.registry).decode()
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}


async def test_worker_metrics_and_doctor_show_the_cache(settings: Settings) -> None:
    names = ["a", "b", "c"]
    builder = await asyncio.to_thread(_build, settings, names)
    sizes = await asyncio.to_thread(_sizes, builder, names)
    budget = sizes["a"] + sizes["b"] + 1
    limited = _with_budget(settings, budget)
    async with running_worker(limited) as worker, QueueClient(limited) as client:
        for name in ["a", "b", "a", "c"]:
            answer = await client.ask(AskRequest(question=QUESTION, collection=name, platform="test"))  # type: ignore[arg-type]
            assert answer.citations
        engine: Engine = worker.ctx["engine"]
        stats = engine.cache.stats()
        assert stats.misses == 3 and stats.evictions == 1 and stats.entries == 2

        samples = _samples(worker.ctx["metrics"])
        assert samples["syllabot_snapshot_cache_bytes"] == stats.bytes <= budget
        assert samples["syllabot_snapshot_cache_budget_bytes"] == stats.budget_bytes
        assert samples["syllabot_snapshot_cache_entries"] == 2
        assert samples["syllabot_snapshot_cache_misses_total"] == 3
        assert samples["syllabot_snapshot_cache_evictions_total"] == 1
        assert samples["syllabot_snapshot_cache_hits_total"] >= 1
        assert samples["syllabot_snapshot_load_seconds_count"] == 3
        assert samples["syllabot_snapshot_load_seconds_sum"] > 0

        # doctor reads what the heartbeat publishes (every 2 s): wait for the figures to arrive.
        deadline = time.monotonic() + 10
        while True:
            report = await asyncio.to_thread(run_checks, limited)
            check = {c.name: c for c in report.checks}["snapshot cache"]
            reported: list[dict[str, Any]] = check.data["workers"]
            if (reported and reported[0]["misses"] == 3) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
    assert check.status == "ok", check.detail
    assert reported[0]["id"] == worker.ctx["worker_id"]
    assert reported[0]["bytes"] == stats.bytes and reported[0]["entries"] == 2
    assert reported[0]["evictions"] == 1 and reported[0]["budget_bytes"] == budget
    assert reported[0]["load_ms_mean"] > 0
    assert "2 snapshots, 3 misses, 1 evictions" in check.detail
    builder.client.close()
