"""The queue client against a real Redis and a real arq worker running in the test's event loop.

The engine is a scripted stand-in here: these tests are about the round trip, its errors and its
speed; tests/test_worker_e2e.py runs the real engine.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import time

import pytest
import redis

from shared.config import Settings
from shared.keys import Keys
from shared.queue import (
    HEARTBEAT_TTL_S,
    JobFailed,
    NoWorker,
    QueueClient,
    QueueTimeout,
    RedisUnreachable,
    beat,
)
from shared.schema import AskRequest
from tests.queue_helpers import StandInEngine, collecting_progress, queue_keys_left, running_worker


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_ask_round_trip(settings: Settings) -> None:
    engine = StandInEngine()
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        answer = await client.ask(
            AskRequest(question="What is a deadlock?", collection="os", platform="test")
        )
    assert answer.in_materials
    assert answer.collection == "os"
    assert answer.question == "What is a deadlock?"
    assert answer.index_version == "v-test"
    assert answer.citations and answer.citations[0].n == 1
    assert "[1]" in answer.text
    assert answer.timings.total > 0 and answer.timings.queue is not None
    assert engine.calls[0] == ("search", ("os", "What is a deadlock?", None))
    assert queue_keys_left(settings) == 0


async def test_round_trip_is_fast(settings: Settings) -> None:
    """Far below arq's 0.5 s poll: the worker is woken by pub/sub and the result comes by BLPOP."""
    async with running_worker(settings, engine=StandInEngine()), QueueClient(settings) as client:
        request = AskRequest(question="deadlock?", platform="test")
        await client.ask(request)  # warm the connections
        times = []
        for _ in range(20):
            started = time.perf_counter()
            await client.ask(request)
            times.append(time.perf_counter() - started)
    assert statistics.median(times) < 0.1, times


async def test_concurrent_asks_all_answered(settings: Settings) -> None:
    async with running_worker(settings, engine=StandInEngine()), QueueClient(settings) as client:
        answers = await asyncio.gather(
            *(client.ask(AskRequest(question=f"deadlock {i}?", platform="test")) for i in range(50))
        )
    assert [a.question for a in answers] == [f"deadlock {i}?" for i in range(50)]


async def test_no_worker(settings: Settings) -> None:
    async with QueueClient(settings) as client:
        started = time.perf_counter()
        with pytest.raises(NoWorker, match="no Syllabot worker"):
            await client.ask(AskRequest(question="anyone there?"))
        assert time.perf_counter() - started < 1.0
        assert await client.worker_count() == 0
    assert queue_keys_left(settings) == 0  # nothing was enqueued for nobody


async def test_stale_heartbeat_counts_as_no_worker(settings: Settings) -> None:
    keys = Keys(settings.key_prefix)
    raw = redis.Redis.from_url(settings.redis_url or "")
    raw.zadd(keys.workers, {"dead-worker": 1.0})  # expired long ago
    raw.close()
    async with QueueClient(settings) as client:
        with pytest.raises(NoWorker):
            await client.ask(AskRequest(question="hello?"))


async def test_timeout_when_nobody_picks_the_job_up(settings: Settings) -> None:
    """A heartbeat without a working worker: the wait times out and the job is withdrawn."""
    async with QueueClient(settings) as client:
        pool = await client._redis()
        await beat(pool, client.keys, "zombie", HEARTBEAT_TTL_S)
        with pytest.raises(QueueTimeout, match="withdrawn"):
            await client.ask(AskRequest(question="hello?"), timeout=0.3)
    assert queue_keys_left(settings) == 0


async def test_timeout_when_the_job_is_slow(settings: Settings) -> None:
    async with (
        running_worker(settings, engine=StandInEngine(search_delay_s=1.5)),
        QueueClient(settings) as client,
    ):
        with pytest.raises(QueueTimeout, match="took the job"):
            await client.ask(AskRequest(question="slow?"), timeout=0.4)


async def test_redis_unreachable(settings: Settings) -> None:
    dead = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{_closed_port()}/0"})
    client = QueueClient(dead)
    started = time.perf_counter()
    with pytest.raises(RedisUnreachable, match="unreachable"):
        await client.ask(AskRequest(question="hello?"))
    assert time.perf_counter() - started < 3.0
    await client.close()


async def test_job_failed_carries_the_worker_message(settings: Settings) -> None:
    engine = StandInEngine(fail_with=ValueError("collection 'nope' does not exist"))
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        with pytest.raises(JobFailed, match="collection 'nope' does not exist"):
            await client.ask(AskRequest(question="hello?", collection="nope"))
        # The worker survives a failed job and keeps answering.
        engine.fail_with = None
        answer = await client.ask(AskRequest(question="hello again?"))
    assert answer.in_materials


async def test_ingest_reports_progress(settings: Settings) -> None:
    engine = StandInEngine(progress_steps=6, progress_delay_s=0.25)
    seen, progress = collecting_progress()
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        report = await client.ingest("os", "notes.md", b"# Notes\n\nText.", who="admin", progress=progress)
    assert report.changed and report.index_version == "v2"
    assert engine.calls[0] == ("ingest", ("os", ["notes.md"], "admin"))
    assert seen, "no progress was reported"
    assert all(state["stage"] == "embedding" and state["total"] == 6 for state in seen)
    dones = [state["done"] for state in seen]
    assert dones == sorted(dones) and 0 < dones[0] <= 6


async def test_reindex_sources_remove(settings: Settings) -> None:
    engine = StandInEngine()
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        assert (await client.reindex("os", who="admin")).index_version == "v3"
        assert (await client.remove("os", "d1", who="admin")).index_version == "v4"
        sources = await client.sources("os")
    assert [s.doc_id for s in sources] == ["d1"]
    assert ("remove", ("os", "d1")) in engine.calls


async def test_worker_deregisters_on_shutdown(settings: Settings) -> None:
    async with running_worker(settings, engine=StandInEngine()), QueueClient(settings) as client:
        assert await client.worker_count() == 1
    async with QueueClient(settings) as client:
        assert await client.worker_count() == 0
