"""A worker that outlives a full, refusing or absent Redis, and askers told the real cause.

Drilled against a ``redis-server`` of the test's own: made full with ``CONFIG SET maxmemory``
(``noeviction``, Redis's default), and one started only after the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

import pytest
import redis
import redis.exceptions

from syllabot.bots.frontend import FailureKind, classify
from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient, RedisRefused
from syllabot.shared.redis_conn import redis_trouble
from syllabot.shared.schema import AskRequest
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import (
    PrivateRedis,
    StandInEngine,
    free_port,
    private_redis,
    queue_keys_left,
    running_worker,
    wait_for_workers,
    worker_processes,
)

QUESTION = "How many days do I have to return a new bike?"


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (
            redis.exceptions.OutOfMemoryError("OOM command not allowed when used memory > 'maxmemory'."),
            "is full",
        ),
        (
            redis.exceptions.ReadOnlyError("READONLY You can't write against a read only replica."),
            "read-only",
        ),
        (
            redis.exceptions.BusyLoadingError("LOADING Redis is loading the dataset in memory"),
            "still loading",
        ),
        (redis.exceptions.ResponseError("MISCONF Redis is configured to save RDB snapshots"), "cannot save"),
        (redis.exceptions.ResponseError("BUSY Redis is busy running a script."), "busy"),
    ],
)
def test_each_refusal_is_named_in_plain_words(exc: Exception, words: str) -> None:
    assert words in (redis_trouble(exc) or "")
    failure = classify(exc)
    assert (
        failure.kind is FailureKind.REFUSED
        and words in failure.detail
        and "Nothing you sent was lost" in failure.detail
    )


def test_a_script_error_is_no_redis_trouble() -> None:
    assert redis_trouble(redis.exceptions.ResponseError("ERR Error running script (call to f_1)")) is None
    wrapped = "Error running script (call to f_0): @user_script:5: @user_script: 5: -OOM command not allowed"
    assert "is full" in (redis_trouble(redis.exceptions.ResponseError(wrapped)) or "")
    assert redis_trouble(ValueError("x")) is None


def _fill(client: redis.Redis) -> None:
    """Set maxmemory just above what Redis holds now, write until it refuses (OOM), then set it
    below what it holds: a Redis that is full, as an upload can leave it."""
    used = int(client.info("memory")["used_memory"])
    client.config_set("maxmemory", used + 2 * 1024 * 1024)
    blob = b"x" * 100_000
    for n in range(1000):
        try:
            client.set(f"filler:{n}", blob)
        except redis.exceptions.OutOfMemoryError:
            # Well under what it holds now, so freeing a few small keys does not unblock it.
            client.config_set("maxmemory", int(client.info("memory")["used_memory"]) - 1024 * 1024)
            return
    raise AssertionError("Redis never filled up")


async def test_a_full_redis_never_kills_the_worker_and_it_answers_again_once_freed(
    settings: Settings,
) -> None:
    with private_redis() as server:
        private = settings.model_copy(update={"redis_url": server.url, "answer_cache_ttl_s": 0})
        assert Engine(private).ingest("shop", sample_files(), who="test").changed
        admin = redis.Redis.from_url(server.url)
        try:
            async with running_worker(private, worker_overrides={"health_check_interval": 1}) as worker:
                async with QueueClient(private) as client:
                    assert (
                        "30 days" in (await client.ask(AskRequest(question=QUESTION, collection="shop"))).text
                    )
                    _fill(admin)
                    with pytest.raises(RedisRefused, match="database is full"):
                        await client.ask(AskRequest(question=QUESTION, collection="shop"), timeout=5)
                    await asyncio.sleep(HEALTH_CHECKS_S)  # several of arq's health checks, all refused
                    assert worker.main_task is not None and not worker.main_task.done()
                    with pytest.raises(RedisRefused, match="database is full"):  # heartbeats lapsed too
                        await client.ask(AskRequest(question=QUESTION, collection="shop"), timeout=5)
                    admin.config_set("maxmemory", 0)  # the admin frees memory
                    freed = time.monotonic()
                    answer = None
                    while answer is None and time.monotonic() - freed < 10:
                        try:
                            answer = await client.ask(
                                AskRequest(question=QUESTION, collection="shop"), timeout=5
                            )
                        except Exception:  # noqa: BLE001 - until the worker beats again
                            await asyncio.sleep(0.1)
                    took = time.monotonic() - freed
                assert answer is not None and "30 days" in answer.text
                assert took <= 5.0, took
                assert not worker.main_task.done()
        finally:
            admin.close()


async def test_a_result_a_full_redis_refuses_is_reported_and_the_job_kept_for_a_retry(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis fills while a question is answered: the worker's one end-of-job script (push, then
    arq's bookkeeping) is refused before it writes anything, and so is arq's own end. The worker
    says the result could not be delivered and why, keeps taking jobs, and the job stays queued
    with its keys, to be run again once its claim lapses: nothing half-written, nothing lost."""
    with private_redis() as server:
        private = settings.model_copy(update={"redis_url": server.url, "answer_cache_ttl_s": 0})
        engine = StandInEngine(search_delay_s=1.0)
        admin = redis.Redis.from_url(server.url)
        try:
            with caplog.at_level(logging.WARNING, logger="syllabot.worker"):
                async with running_worker(private, engine=engine) as worker, QueueClient(private) as client:
                    asking = asyncio.create_task(
                        client.ask(AskRequest(question="What is a deadlock?", collection="os"), timeout=6)
                    )
                    while not engine.calls:
                        await asyncio.sleep(0.01)
                    _fill(admin)
                    deadline = time.monotonic() + 5
                    while worker.tasks and time.monotonic() < deadline:  # the job ended and was reaped
                        await asyncio.sleep(0.05)
                    assert not worker.tasks
                    assert "its result could not be delivered: " in caplog.text and "is full" in caplog.text
                    assert queue_keys_left(private) == 1
                    (job,) = admin.keys("arq:job:*")
                    job_id = job.decode().removeprefix("arq:job:")
                    assert admin.exists(f"arq:retry:{job_id}") and not admin.keys("*delivered*")
                    assert worker.main_task is not None and not worker.main_task.done()
                    asking.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await asking
        finally:
            admin.config_set("maxmemory", 0)
            admin.close()


#: How long the full-Redis drill stays full: arq's health check (every 1 s there) and the
#: heartbeats (every 2 s, valid 10 s) are refused many times over, and the heartbeats lapse.
HEALTH_CHECKS_S = 11.0


async def test_a_worker_started_before_redis_waits_for_it_and_answers(
    settings: Settings, tmp_path: Path
) -> None:
    server = PrivateRedis(free_port())
    private = settings.model_copy(update={"redis_url": server.url})
    with worker_processes(private, tmp_path, ["early"]) as procs:
        await asyncio.sleep(7.0)  # arq alone gives up after five one-second retries
        assert procs["early"].poll() is None, (tmp_path / "early" / "worker.log").read_text()
        server.start()
        try:
            up = time.monotonic()
            assert Engine(private).ingest("shop", sample_files(), who="test").changed
            await wait_for_workers(private, 1, timeout=10)
            async with QueueClient(private) as client:
                answer = await client.ask(AskRequest(question=QUESTION, collection="shop"), timeout=5)
            took = time.monotonic() - up
        finally:
            log_text = (tmp_path / "early" / "worker.log").read_text()
            server.stop()
    assert "30 days" in answer.text and took <= 5.0, took
    assert "waiting for Redis" in log_text


def test_doctor_shows_a_full_redis_against_its_maxmemory(settings: Settings) -> None:
    from syllabot.worker.ops.doctor import run_checks

    with private_redis() as server:
        private = settings.model_copy(update={"redis_url": server.url})
        admin = redis.Redis.from_url(server.url)
        try:
            _fill(admin)
            memory = next(c for c in run_checks(private).checks if c.name == "redis memory")
        finally:
            admin.close()
    assert memory.status == "warn" and "nearly full" in memory.detail and "syllabot drop" in memory.detail
    assert memory.data["used_bytes"] >= memory.data["maxmemory_bytes"] > 0
