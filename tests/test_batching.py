"""Micro-batching of query embeddings (worker/indexes/batching.py, worker/runtime/cpu_pool.py), on a real event loop,
real threads and a real embedder; the pool's searches against real Redis.

What must hold: questions submitted together share calls (batches of more than one), each result
is exactly what it would be alone, a batch's error reaches each of its waiters (and only them),
no batch exceeds its bound, and ``SYLLABOT_QUERY_BATCHING=false`` gives one call per question.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from syllabot.shared.config import Settings
from syllabot.worker.indexes.batching import MicroBatcher
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files
from syllabot.worker.runtime.cpu_pool import CpuPool

QUESTIONS = [f"question {i} about module {i % 5} and its course outcomes" for i in range(40)]


class Recorder:
    """The batch function: the hashing embedder's ``embed_queries``, recording each call's size.

    ``gate`` (optional) holds the first call until set, so that later submits gather behind it.
    """

    def __init__(self, gate: threading.Event | None = None, fail_on: str | None = None) -> None:
        self.embedder = HashingEmbedder(64)
        self.sizes: list[int] = []
        self.gate = gate
        self.fail_on = fail_on

    def __call__(self, texts: list[str]) -> list[np.ndarray]:
        self.sizes.append(len(texts))
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail_on is not None and self.fail_on in texts:
            raise ValueError(f"cannot embed {self.fail_on!r}")
        return list(self.embedder.embed_queries(texts))


def in_threads(executor: ThreadPoolExecutor) -> Callable[..., Any]:
    async def run(fn: Callable[[list[str]], Sequence[np.ndarray]], items: list[str]) -> Sequence[np.ndarray]:
        return await asyncio.get_running_loop().run_in_executor(executor, fn, items)

    return run


@pytest.fixture
def executor() -> Any:
    pool = ThreadPoolExecutor(max_workers=2)
    yield pool
    pool.shutdown(wait=True)


async def test_concurrent_submits_share_calls_and_get_their_own_vectors(executor: ThreadPoolExecutor) -> None:
    record = Recorder()
    batcher = MicroBatcher(record, in_threads(executor), max_size=32, max_wait_s=0.005)
    vectors = await asyncio.gather(*(batcher.submit(q) for q in QUESTIONS))
    assert sum(record.sizes) == len(QUESTIONS)
    assert max(record.sizes) > 1 and len(record.sizes) < len(QUESTIONS)
    assert batcher.stats.batches == len(record.sizes) and batcher.stats.largest == max(record.sizes)
    alone = HashingEmbedder(64)
    for question, vector in zip(QUESTIONS, vectors, strict=True):
        assert np.array_equal(vector, alone.embed_query(question))  # its own vector, in its own place


async def test_submits_gather_while_a_batch_runs_and_no_batch_exceeds_the_bound(
    executor: ThreadPoolExecutor,
) -> None:
    gate = threading.Event()
    record = Recorder(gate)
    batcher = MicroBatcher(record, in_threads(executor), max_size=4, max_wait_s=0.0)
    first = asyncio.ensure_future(batcher.submit("first"))
    while not record.sizes:  # the first call is running (held by the gate)
        await asyncio.sleep(0.001)
    rest = [asyncio.ensure_future(batcher.submit(q)) for q in QUESTIONS[:10]]
    await asyncio.sleep(0.01)
    assert record.sizes == [1]  # one batch in flight at a time: the others wait for it
    gate.set()
    await asyncio.gather(first, *rest)
    assert record.sizes == [1, 4, 4, 2]


async def test_a_batch_error_reaches_each_of_its_waiters_and_only_them(executor: ThreadPoolExecutor) -> None:
    gate = threading.Event()
    record = Recorder(gate, fail_on="poison")
    batcher = MicroBatcher(record, in_threads(executor), max_size=3, max_wait_s=0.0)
    first = asyncio.ensure_future(batcher.submit("fine, alone"))
    while not record.sizes:
        await asyncio.sleep(0.001)
    doomed = [asyncio.ensure_future(batcher.submit(q)) for q in ("a", "poison", "b")]
    spared = [asyncio.ensure_future(batcher.submit(q)) for q in ("c", "d")]
    gate.set()
    results = await asyncio.gather(*doomed, return_exceptions=True)
    assert all(isinstance(r, ValueError) and "poison" in str(r) for r in results)
    assert (await first).shape == (64,)
    assert [v.shape for v in await asyncio.gather(*spared)] == [(64,), (64,)]
    assert record.sizes == [1, 3, 2]
    assert (await batcher.submit("after the error")).shape == (64,)  # the batcher still works


async def test_a_cancelled_waiter_does_not_disturb_the_others(executor: ThreadPoolExecutor) -> None:
    gate = threading.Event()
    record = Recorder(gate)
    batcher = MicroBatcher(record, in_threads(executor), max_size=8, max_wait_s=0.0)
    first = asyncio.ensure_future(batcher.submit("first"))
    while not record.sizes:
        await asyncio.sleep(0.001)
    gone = asyncio.ensure_future(batcher.submit("gone"))
    kept = asyncio.ensure_future(batcher.submit("kept"))
    await asyncio.sleep(0)
    gone.cancel()  # e.g. arq's job timeout
    gate.set()
    assert np.array_equal(await kept, HashingEmbedder(64).embed_query("kept"))
    await first
    assert record.sizes == [1, 1]  # the cancelled question was never embedded


async def test_max_size_one_is_one_call_per_item(executor: ThreadPoolExecutor) -> None:
    record = Recorder()
    batcher = MicroBatcher(record, in_threads(executor), max_size=1, max_wait_s=0.005, max_in_flight=2)
    await asyncio.gather(*(batcher.submit(q) for q in QUESTIONS[:12]))
    assert record.sizes == [1] * 12


def test_bad_bounds_are_refused(executor: ThreadPoolExecutor) -> None:
    with pytest.raises(ValueError, match="max_size"):
        MicroBatcher(Recorder(), in_threads(executor), max_size=0, max_wait_s=0.0)
    with pytest.raises(ValueError, match="max_wait_s"):
        MicroBatcher(Recorder(), in_threads(executor), max_size=4, max_wait_s=-1.0)


# --- the worker's CPU pool: batched searches against real Redis -----------------------------------


@pytest.fixture
def engine(settings: Settings) -> Engine:
    engine = Engine(settings)
    engine.ingest("shop", sample_files(), "test")
    return engine


SHOP_QUESTIONS = [
    "How long do I have to return a bike?",
    "How long does the battery charge take?",
    "What is the RD2-24 recall?",
    "Which frame size fits me?",
    "When is delivery?",
    "Can I pay in instalments?",
] * 4


async def _searches(engine: Engine, settings: Settings) -> tuple[CpuPool, list[Any]]:
    pool = CpuPool(engine, settings)
    try:
        results = await asyncio.gather(*(pool.search("shop", q) for q in SHOP_QUESTIONS))
    finally:
        pool.close()
    return pool, results


async def test_batched_searches_rank_exactly_as_one_by_one(engine: Engine, settings: Settings) -> None:
    pool, results = await _searches(engine, settings)
    assert pool.batcher.stats.largest > 1  # the questions did share embedding calls
    assert pool.batcher.stats.items == len(SHOP_QUESTIONS)
    for question, result in zip(SHOP_QUESTIONS, results, strict=True):
        alone = engine.search("shop", question)
        assert result.hits == alone.hits  # same chunks, same order, same scores
        assert result.query == alone.query and result.fallback == alone.fallback


async def test_the_setting_turns_batching_off(engine: Engine, settings: Settings) -> None:
    off = settings.model_copy(update={"query_batching": False})
    pool, results = await _searches(engine, off)
    assert pool.batcher.stats.largest == 1
    assert pool.batcher.stats.batches == len(SHOP_QUESTIONS)
    assert [r.hits for r in results] == [engine.search("shop", q).hits for q in SHOP_QUESTIONS]


async def test_batch_size_setting_bounds_the_calls(engine: Engine, settings: Settings) -> None:
    small = settings.model_copy(update={"query_batch_max": 3})
    pool, _ = await _searches(engine, small)
    assert pool.batcher.stats.largest == 3
    assert pool.batcher.stats.items == len(SHOP_QUESTIONS)


async def test_an_embedding_error_reaches_each_question_of_the_batch(
    engine: Engine, settings: Settings
) -> None:
    class Broken(HashingEmbedder):
        def _raw_queries(self, texts: Sequence[str]) -> np.ndarray:
            raise RuntimeError("model went away")

    broken = Engine(settings, client=engine.client, embedder=Broken(256))
    pool = CpuPool(broken, settings)
    try:
        results = await asyncio.gather(
            *(pool.search("shop", q) for q in SHOP_QUESTIONS[:6]), return_exceptions=True
        )
    finally:
        pool.close()
    assert all(isinstance(r, RuntimeError) and "model went away" in str(r) for r in results)


async def test_two_embedding_calls_run_side_by_side_on_two_threads(
    engine: Engine, settings: Settings
) -> None:
    """One small onnxruntime call barely uses a second core (a question alone: 3.0 ms on one thread,
    3.1 ms on two), so the worker runs as many embedding calls at once as it has CPU threads."""
    both_running = threading.Event()
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    class Overlapping(HashingEmbedder):
        def _raw_queries(self, texts: Sequence[str]) -> np.ndarray:
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
                if state["now"] == 2:
                    both_running.set()
            both_running.wait(timeout=2.0)  # one call at a time would wait here in vain
            with lock:
                state["now"] -= 1
            return super()._raw_queries(texts)

    two = settings.model_copy(update={"worker_cpu_threads": 2, "query_batch_max": 3})
    overlapping = Engine(two, client=engine.client, embedder=Overlapping(256))
    pool = CpuPool(overlapping, two)
    try:
        results = await asyncio.gather(*(pool.search("shop", q) for q in SHOP_QUESTIONS))
    finally:
        pool.close()
    assert state["peak"] == 2 and both_running.is_set()
    assert pool.batcher.stats.largest == 3 and pool.batcher.stats.items == len(SHOP_QUESTIONS)
    assert [r.hits for r in results] == [overlapping.search("shop", q).hits for q in SHOP_QUESTIONS]
