"""The queue client against a real Redis and a real arq worker running in the test's event loop.

The engine is a scripted stand-in here: these tests are about the round trip, its errors and its
speed; tests/test_worker_e2e.py runs the real engine.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import threading
import time

import pytest
import redis
from arq.worker import func

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue import (
    JobFailed,
    NoWorker,
    QueueClient,
    QueueTimeout,
    RedisUnreachable,
)
from syllabot.shared.queue_protocol import HEARTBEAT_INTERVAL_S, HEARTBEAT_TTL_S, JOB_ASK, beat
from syllabot.shared.schema import AskRequest
from syllabot.worker.main import worker_kwargs
from syllabot.worker.runtime import jobs
from tests.queue_helpers import (
    StandInEngine,
    collecting_progress,
    end_watch,
    monitored,
    private_redis,
    queue_keys_left,
    running_worker,
    wait_for_workers,
)


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
    assert engine.calls[0] == ("search", ("os", "What is a deadlock?"))
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
        with pytest.raises(QueueTimeout, match="withdrawn") as raised:
            await client.ask(AskRequest(question="hello?"), timeout=0.3)
    assert raised.value.withdrawn and raised.value.timeout_s == 0.3  # an attribute, not a string search
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


# --- Redis outages, dead workers, stalls ---------------------------------------------------------


async def test_worker_survives_a_redis_restart(settings: Settings) -> None:
    """Redis goes away and comes back (empty): the worker keeps running, beats again, answers."""
    with private_redis() as server:
        private = settings.model_copy(update={"redis_url": server.url})
        async with running_worker(private, engine=StandInEngine()) as worker:
            async with QueueClient(private) as client:
                assert (await client.ask(AskRequest(question="before?"))).in_materials
            server.stop()
            await asyncio.sleep(1.5)  # several claim attempts against a dead server
            server.start()
            await wait_for_workers(private, 1, timeout=8)
            assert worker.main_task is not None and not worker.main_task.done()
            async with QueueClient(private) as client:
                answer = await client.ask(AskRequest(question="after?"), timeout=5)
            assert answer.in_materials


async def test_worker_whose_claim_loop_died_stops_advertising(settings: Settings) -> None:
    """The heartbeat is its own task; it must not keep a worker "alive" that no longer claims."""
    async with running_worker(settings, engine=StandInEngine()) as worker, QueueClient(settings) as client:
        assert await client.worker_count() == 1
        assert worker.main_task is not None
        worker.main_task.cancel()  # the claim loop ends; the heartbeat task is left running
        deadline = time.monotonic() + 2 * HEARTBEAT_INTERVAL_S + 1.5
        while await client.worker_count() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert await client.worker_count() == 0


async def test_client_survives_a_redis_restart(settings: Settings) -> None:
    """The first call after Redis restarted must not fail on a pooled connection the server closed."""
    with private_redis() as server:
        private = settings.model_copy(update={"redis_url": server.url})
        async with QueueClient(private) as client:
            assert await client.worker_count() == 0
            server.restart()
            assert await client.worker_count() == 0
            with pytest.raises(NoWorker):
                await client.ask(AskRequest(question="anyone?"))


async def test_stalled_redis_still_honours_the_timeout(settings: Settings) -> None:
    """A Redis that stops answering mid-call (DEBUG SLEEP) must not hold the caller past its timeout."""
    with private_redis() as server:
        private = settings.model_copy(update={"redis_url": server.url})
        async with QueueClient(private) as client:
            pool = await client._redis()
            await beat(pool, client.keys, "stand-in", HEARTBEAT_TTL_S)  # let the enqueue through
            await client.worker_count()  # a warm connection
            sleeper = threading.Thread(
                target=lambda: redis.Redis.from_url(server.url).execute_command("DEBUG", "SLEEP", "5")
            )
            sleeper.start()
            await asyncio.sleep(0.3)
            started = time.perf_counter()
            with pytest.raises((RedisUnreachable, QueueTimeout)):
                await client.ask(AskRequest(question="stalled?"), timeout=1.0)
            elapsed = time.perf_counter() - started
            await asyncio.to_thread(sleeper.join)
        assert elapsed < 2.5, elapsed


async def test_no_worker_while_waiting_withdraws_the_job(settings: Settings) -> None:
    """The only worker vanishes while the job waits: NoWorker, and the job leaves the queue."""
    async with QueueClient(settings) as client:
        pool = await client._redis()
        await beat(pool, client.keys, "short-lived", 1.0)
        with pytest.raises(NoWorker):
            await client.ask(AskRequest(question="hello?"), timeout=10)
    assert queue_keys_left(settings) == 0


async def test_draining_worker_does_not_spin(settings: Settings) -> None:
    """After SIGTERM (allow_pick_jobs=False) with jobs still queued, the loop must sleep, not spin."""
    slots = settings.model_copy(update={"worker_max_jobs": 2})
    async with (
        running_worker(slots, engine=StandInEngine(search_delay_s=1.0)) as worker,
        QueueClient(slots) as client,
    ):
        asks = [asyncio.create_task(client.ask(AskRequest(question="q"), timeout=5)) for _ in range(5)]
        try:
            deadline = time.monotonic() + 3
            while not (worker._backlog and worker.job_counter == 2) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            worker.allow_pick_jobs = False  # what arq's SIGTERM handler does
            turns = [0]
            original = worker._poll_iteration

            async def counted() -> None:
                turns[0] += 1
                await original()

            worker._poll_iteration = counted  # type: ignore[method-assign]
            await asyncio.sleep(1.5)  # the two running jobs finish; three stay queued
            turns[0] = 0
            await asyncio.sleep(1.0)
            assert turns[0] < 10, f"{turns[0]} loop turns in 1 s while draining"
        finally:
            for task in asks:
                task.cancel()
            await asyncio.gather(*asks, return_exceptions=True)


async def test_job_timed_out_on_the_worker_tells_the_client_at_once(settings: Settings) -> None:
    functions = [f for f in worker_kwargs(settings)["functions"] if f.name != JOB_ASK]
    functions.append(func(jobs.ask, name=JOB_ASK, timeout=0.3, max_tries=jobs.JOB_MAX_TRIES))
    async with (
        running_worker(
            settings, worker_overrides={"functions": functions}, engine=StandInEngine(search_delay_s=1.0)
        ),
        QueueClient(settings) as client,
    ):
        started = time.perf_counter()
        with pytest.raises(JobFailed, match="timed out on the worker"):
            await client.ask(AskRequest(question="slow?"), timeout=8)
        assert time.perf_counter() - started < 2.0


async def test_waiting_ingests_do_not_starve_questions(settings: Settings) -> None:
    """Uploads blocked on a build lock hold threads; a question on another collection still runs."""
    gate = threading.Event()
    engine = StandInEngine(ingest_gate=gate)
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        uploads = [
            asyncio.create_task(client.ingest("busy", f"f{i}.md", b"# Notes", who="admin", timeout=20))
            for i in range(10)
        ]
        try:
            await asyncio.sleep(0.5)
            started = time.perf_counter()
            answer = await client.ask(AskRequest(question="deadlock?", collection="other"), timeout=3)
            assert answer.in_materials
            assert time.perf_counter() - started < 1.0
        finally:
            gate.set()
            reports = await asyncio.gather(*uploads, return_exceptions=True)
        assert all(not isinstance(r, BaseException) for r in reports), reports


def test_a_new_event_loop_closes_the_old_connections(settings: Settings) -> None:
    """Callers using asyncio.run per request must not leave one open connection per call behind."""
    with private_redis() as server:
        private = settings.model_copy(update={"redis_url": server.url})
        client = QueueClient(private)
        for _ in range(4):
            assert asyncio.run(client.worker_count()) == 0
        observer = redis.Redis.from_url(server.url)
        try:
            connected = len(observer.client_list()) - 1  # not counting the observer itself
        finally:
            observer.close()
        asyncio.run(client.close())
    assert connected <= 1, connected


async def test_a_job_run_twice_delivers_its_result_once(settings: Settings) -> None:
    """A worker killed after pushing but before arq marked the job done leaves it to be run again:
    the second run's push must not give the asker a second answer."""
    import redis.asyncio as aioredis

    from syllabot.shared.queue_protocol import RESULT_TTL_S, push_result

    keys = Keys(settings.key_prefix)
    client = aioredis.Redis.from_url(settings.redis_url or "")
    try:
        assert await push_result(client, keys, "job-twice", b"first") is True
        assert await push_result(client, keys, "job-twice", b"second") is False
        assert await client.lrange(keys.result_list("job-twice"), 0, -1) == [b"first"]
        assert 0 < await client.ttl(keys.delivered("job-twice")) <= RESULT_TTL_S
        assert await push_result(client, keys, "another-job", b"its own") is True
    finally:
        await client.delete(keys.result_list("job-twice"), keys.delivered("job-twice"))
        await client.delete(keys.result_list("another-job"), keys.delivered("another-job"))
        await client.aclose()


async def test_a_finished_job_is_delivered_and_ended_in_one_round_trip(settings: Settings) -> None:
    """The result push and arq's end of the job (out of the queue; job, retry and in-progress keys
    gone) are one script call of the worker's: before, a push and then arq's own MULTI/EXEC."""
    seen: list[dict] = []
    async with running_worker(settings, engine=StandInEngine()), QueueClient(settings) as client:
        watcher = monitored(settings.redis_url or "", seen)
        answer = await client.ask(
            AskRequest(question="What is a deadlock?", collection="os", platform="test")
        )
        await asyncio.sleep(0.1)  # the job's end follows its push
        end_watch(settings.redis_url or "", watcher)
    assert "deadlock" in answer.text.lower()
    (job_id,) = {
        word.removeprefix("arq:job:")
        for c in seen
        if c.get("client_type") != "lua"
        for word in c["command"].split()
        if word.startswith("arq:job:")
    }
    keys = Keys(settings.key_prefix)
    names_job = [
        c["command"].split()[0]
        for c in seen
        if c.get("client_type") != "lua" and job_id in c["command"] and "BLPOP" not in c["command"]
    ]
    # enqueue (client), then the worker: arq's start (GET, INCRBY, EXPIRE of the job), then one call
    assert names_job[-1] == "EVALSHA" and names_job.count("EVALSHA") == 2, names_job
    assert "DEL" not in names_job and "EVAL" not in names_job, names_job
    in_scripts = [
        c["command"].split()[0] for c in seen if c.get("client_type") == "lua" and job_id in c["command"]
    ]
    # the enqueue and claim scripts', then the end: the push, and arq's end of the job
    assert in_scripts[-6:] == ["SET", "RPUSH", "EXPIRE", "ZREM", "ZREM", "DEL"], in_scripts
    check = redis.Redis.from_url(settings.redis_url or "")
    try:
        assert queue_keys_left(settings) == 0
        assert not check.exists(f"arq:job:{job_id}", f"arq:retry:{job_id}", f"arq:in-progress:{job_id}")
        assert check.exists(keys.delivered(job_id)) and not check.exists(keys.result_list(job_id))
    finally:
        check.close()


async def test_ending_a_job_that_had_delivered_pushes_nothing_and_still_ends_it(settings: Settings) -> None:
    """A job run again after its first worker pushed and died: its end pushes no second answer, and
    the job still leaves the queue with its keys."""
    import redis.asyncio as aioredis

    from syllabot.shared.queue_protocol import FINISH_AND_PUSH, finish_and_push, push_result

    keys = Keys(settings.key_prefix)
    job = "job-ended-twice"
    client = aioredis.Redis.from_url(settings.redis_url or "")
    script = client.register_script(FINISH_AND_PUSH)
    try:
        await client.zadd(keys.queue, {job: 1})
        await client.set(f"arq:job:{job}", b"job")
        await client.set(f"arq:retry:{job}", 2)
        await client.set(f"arq:in-progress:{job}", 1)
        assert await push_result(client, keys, job, b"first") is True  # the worker that died
        assert await finish_and_push(script, keys, keys.queue, job, b"second") is False
        assert await client.lrange(keys.result_list(job), 0, -1) == [b"first"]
        assert await client.zscore(keys.queue, job) is None
        assert not await client.exists(f"arq:job:{job}", f"arq:retry:{job}", f"arq:in-progress:{job}")
        assert await finish_and_push(script, keys, keys.queue, "job-ended-once", b"its own") is True
        assert await client.lrange(keys.result_list("job-ended-once"), 0, -1) == [b"its own"]
    finally:
        await client.delete(keys.result_list(job), keys.delivered(job))
        await client.delete(keys.result_list("job-ended-once"), keys.delivered("job-ended-once"))
        await client.aclose()
