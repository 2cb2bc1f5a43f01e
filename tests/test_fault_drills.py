"""Fault drills of issue 14 with real processes: `syllabot worker` subprocesses, a Redis 7 of the
test's own (AOF on, restarted or SIGKILLed at will), SIGKILL of a worker in the middle of a burst,
and re-indexing while questions keep coming.

Each drill waits on conditions (a worker's heartbeat, a job in flight, the queue drained), never on
fixed sleeps, and asserts outcomes -- every question answered exactly once, before its asker's
timeout, from a complete index version -- rather than timings. docs/RELIABILITY.md lists them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import redis

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue import QueueClient
from syllabot.shared.queue_protocol import IN_PROGRESS_TTL_S
from syllabot.shared.schema import Answer, AskRequest
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import (
    NEW_DOC,
    NEW_QUESTION,
    free_port,
    redis7_binary,
    wait_for_workers,
    worker_processes,
)

pytestmark = pytest.mark.slow

RETURNS_QUESTION = "How many days do I have to return a new bike?"


# --- a Redis 7 of the drill's own ------------------------------------------------------------------


class DrillRedis:
    """A ``redis-server`` on its own port and data directory, with AOF on: stopped, SIGKILLed and
    started again on the same port and directory, as an operator's server would be."""

    def __init__(self, data_dir: Path) -> None:
        self.binary = redis7_binary()
        self.port = free_port()
        self.dir = data_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=10)

    def start(self) -> None:
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir)]
        command += ["--appendonly", "yes", "--save", "", "--logfile", str(self.dir / "redis.log")]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = self.client()
        deadline = time.monotonic() + 15
        try:
            while True:  # up, and done loading its AOF
                try:
                    if client.ping() and not int(client.info("persistence").get("loading", 0)):
                        return
                except (redis.ConnectionError, redis.BusyLoadingError):
                    pass
                if self.proc.poll() is not None:
                    raise AssertionError(f"redis-server exited: {self.log_tail()}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"redis-server did not come up: {self.log_tail()}")
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """SIGTERM: a clean SHUTDOWN (the AOF is flushed and fsynced); SIGKILL: a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def log_tail(self, lines: int = 15) -> str:
        path = self.dir / "redis.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


@pytest.fixture
def drill_redis(tmp_path: Path) -> Iterator[DrillRedis]:
    server = DrillRedis(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop(signal.SIGKILL)


def _log_tails(tmp_path: Path, names: list[str]) -> str:
    tails = []
    for name in names:
        path = tmp_path / name / "worker.log"
        if path.exists():
            tails.append(f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-20:]))
    return "\n".join(tails)


def _answer_lines(path: Path) -> list[dict]:
    return [
        json.loads(raw[raw.index("{") :])
        for raw in path.read_text(errors="replace").splitlines()
        if '"event": "answer"' in raw
    ]


async def _ask(client: QueueClient, question: str, collection: str, timeout: float) -> Answer:
    return await client.ask(
        AskRequest(question=question, collection=collection, platform="test"), timeout=timeout
    )


# --- 1. a worker SIGKILLed in the middle of a burst, two workers ---------------------------------


class SlowLLM:
    """An OpenAI-compatible endpoint that takes ``delay_s`` per reply, so a burst of questions is
    still in flight when a worker is killed. Each worker calls it under its own path
    (``/<name>/v1``), so the drill knows how many questions each worker holds at any moment."""

    def __init__(self, delay_s: float) -> None:
        self.lock = threading.Lock()
        self.in_flight: Counter[str] = Counter()
        self.served: Counter[str] = Counter()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                name = self.path.split("/")[1]
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    outer.in_flight[name] += 1
                try:
                    time.sleep(delay_s)
                    body = json.dumps(
                        {"choices": [{"message": {"content": "The materials say so [1]."}}]}
                    ).encode()
                    with contextlib.suppress(OSError):  # the asking worker may have been killed
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                finally:
                    with outer.lock:
                        outer.in_flight[name] -= 1
                        outer.served[name] += 1

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Deliveries:
    """Counts every RPUSH onto a result list (one per delivered result) from Redis keyspace
    notifications: a job delivered twice shows up here even when its client popped only one."""

    def __init__(self, server: DrillRedis, result_prefix: str) -> None:
        self.counts: Counter[str] = Counter()
        self.prefix = result_prefix
        self.client = server.client()
        self.client.config_set("notify-keyspace-events", "El")
        self.pubsub = self.client.pubsub()
        self.pubsub.subscribe("__keyevent@0__:rpush")
        confirmed = self.pubsub.get_message(timeout=5)  # subscribed before the first push
        assert confirmed and confirmed["type"] == "subscribe", confirmed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            message = self.pubsub.get_message(timeout=0.2)
            if message and message["type"] == "message":
                key = message["data"].decode()
                if key.startswith(self.prefix):
                    self.counts[key[len(self.prefix) :]] += 1

    def close(self) -> Counter[str]:
        self._stop.set()
        self._thread.join(5)
        self.pubsub.close()
        self.client.close()
        return self.counts


def _wait_until_drained(server: DrillRedis, keys: Keys, timeout: float) -> None:
    """Until no job is queued, claimed or stored: every job, including those the dead worker held,
    has been run again or dropped, so no late (duplicate) delivery can still come."""
    client = server.client()
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = client.zcard(keys.queue) + sum(1 for _ in client.scan_iter(match="arq:*", count=1000))
            if not left:
                return
            assert time.monotonic() < deadline, f"{left} jobs or claims still in Redis"
            time.sleep(0.1)
    finally:
        client.close()


async def test_worker_sigkilled_mid_burst_loses_and_duplicates_nothing(
    settings: Settings, drill_redis: DrillRedis, tmp_path: Path
) -> None:
    """Two workers, 60 questions at once, one worker SIGKILLed while it holds some of them: every
    question gets exactly one answer (its own), before the asker's timeout; the dead worker's
    questions are claimed again by the other once their claims lapse."""
    private = settings.model_copy(update={"redis_url": drill_redis.url})
    keys = Keys(private.key_prefix)
    n_questions, timeout = 60, 30.0
    Engine(private).ingest("drill", sample_files())
    llm = SlowLLM(delay_s=0.25)
    names = ["victim", "survivor"]
    try:
        with worker_processes(
            private,
            tmp_path,
            names,
            SYLLABOT_WORKER_MAX_JOBS="4",
            SYLLABOT_ANSWERER="openai",
            SYLLABOT_LLM_BASE_URL=f"{llm.base}/{{name}}/v1",
            SYLLABOT_LLM_TIMEOUT_S="10",
        ) as procs:
            await wait_for_workers(private, 2, timeout=30)
            deliveries = Deliveries(drill_redis, keys.result_list(""))
            async with QueueClient(private) as client:
                questions = [f"{RETURNS_QUESTION} (#{i})" for i in range(n_questions)]
                started = time.monotonic()
                burst = [asyncio.create_task(_ask(client, q, "drill", timeout)) for q in questions]
                # Mid-burst: answers are flowing and the victim holds questions right now.
                deadline = time.monotonic() + 20
                while not (llm.in_flight["victim"] and sum(llm.served.values()) >= 8):
                    assert time.monotonic() < deadline, f"the burst never reached the victim: {llm.served}"
                    await asyncio.sleep(0.01)
                held = llm.in_flight["victim"]
                os.kill(procs["victim"].pid, signal.SIGKILL)
                procs["victim"].wait()
                results = await asyncio.gather(*burst, return_exceptions=True)
                elapsed = time.monotonic() - started
            await asyncio.to_thread(_wait_until_drained, drill_redis, keys, IN_PROGRESS_TTL_S + 15)
            counts = deliveries.close()
            left = drill_redis.client().keys(keys.result_list("*"))
    finally:
        llm.close()
    failures = [r for r in results if isinstance(r, BaseException)]
    assert not failures, f"{len(failures)} lost: {failures[:3]}\n{_log_tails(tmp_path, names)}"
    assert [a.question for a in results] == questions  # type: ignore[union-attr]  # each its own answer
    assert all(a.citations and a.text for a in results)  # type: ignore[union-attr]
    assert elapsed < timeout
    assert held >= 1
    assert len(counts) == n_questions, counts  # one result list per question...
    duplicated = {job: n for job, n in counts.items() if n != 1}
    assert not duplicated, f"delivered more than once: {duplicated}"  # ...pushed exactly once
    assert not left, left  # and every one popped by its asker: no orphan result waits in Redis
    survivor_lines = _answer_lines(tmp_path / "survivor" / "worker.log")
    victim_lines = _answer_lines(tmp_path / "victim" / "worker.log")
    # The survivor answered the rest of the burst, including the questions the victim held.
    assert len(survivor_lines) + len(victim_lines) >= n_questions
    assert len(survivor_lines) >= n_questions - len(victim_lines)


# --- 2. Redis restarted (clean SHUTDOWN, or SIGKILL with appendfsync always) ----------------------


@pytest.mark.parametrize("crash", [False, True], ids=["sigterm", "sigkill-fsync-always"])
async def test_redis_restart_with_aof_keeps_the_index_and_answers_again(
    settings: Settings, drill_redis: DrillRedis, tmp_path: Path, crash: bool
) -> None:
    """Redis stops (SIGTERM: SHUTDOWN, AOF flushed; or SIGKILL after ``appendfsync always``) and starts
    again on the same port and directory: the worker process reconnects on its own, the collection
    comes back from the AOF at the same index version, and every question asked once Redis is back
    is answered, from that version."""
    private = settings.model_copy(update={"redis_url": drill_redis.url})
    keys = Keys(private.key_prefix)
    with worker_processes(private, tmp_path, ["w"], SYLLABOT_WORKER_MAX_JOBS="8") as procs:
        await wait_for_workers(private, 1, timeout=30)
        async with QueueClient(private) as client:
            report = await client.ingest_many("drill", sample_files(), who="admin", timeout=60)
            before = await _ask(client, RETURNS_QUESTION, "drill", timeout=10)
            assert before.index_version == report.index_version and "30 days" in before.text
            expected = report.index_version
            if crash:
                # Durable to the last write: a build published just before the crash survives it.
                admin = drill_redis.client()
                admin.config_set("appendfsync", "always")
                admin.close()
                rebuilt = await client.reindex("drill", who="admin", timeout=BUILD_BOUND_S)
                assert rebuilt.index_version != expected
                expected = rebuilt.index_version
            drill_redis.stop(signal.SIGKILL if crash else signal.SIGTERM)
            drill_redis.start()
            # Asked the moment Redis answers again, before the worker has necessarily reconnected.
            after = await asyncio.gather(
                *(_ask(client, RETURNS_QUESTION, "drill", timeout=15) for _ in range(10)),
                return_exceptions=True,
            )
            failures = [a for a in after if isinstance(a, BaseException)]
            assert not failures, f"{failures}\n{_log_tails(tmp_path, ['w'])}"
            assert {a.index_version for a in after} == {expected}  # type: ignore[union-attr]
            assert all("30 days" in a.text for a in after)  # type: ignore[union-attr]
            assert await client.worker_count() == 1
            assert {s.file for s in await client.sources("drill")} >= {"returns-policy.md", "warranty.md"}
        assert procs["w"].poll() is None  # the same worker process, reconnected
    check = drill_redis.client()
    try:
        assert check.get(keys.current("drill")) == expected.encode()  # type: ignore[union-attr]
        assert int(check.info("persistence")["aof_enabled"]) == 1
    finally:
        check.close()


# --- 3. re-indexing while questions keep coming ---------------------------------------------------

NEW_DOC_ID = "kc-moonlight-club-v1"


def _filler(count: int) -> list[tuple[str, bytes]]:
    """Course notes to make each build take a while (hundreds of chunks) without a real model."""
    rng = random.Random(14)
    words = (
        "lecture module syllabus exam credit lab assignment grade course unit topic chapter reading "
        "seminar tutorial project quiz marks outcome schedule"
    ).split()
    files = []
    for i in range(count):
        sections = [
            f"## Section {j}\n\n" + " ".join(rng.choice(words) for _ in range(60)) + f" note{i}x{j}.\n"
            for j in range(12)
        ]
        head = f"---\nid: filler-{i:03d}\ntitle: Filler notes {i}\nversion: 1\nstatus: current\nlang: en\n---\n\n"
        files.append((f"filler-{i:03d}.md", (head + "\n".join(sections)).encode()))
    return files


#: How long the drill waits for one build under concurrent questions before it calls it lost.
BUILD_BOUND_S = 180


async def test_reindex_under_concurrent_questions_serves_only_complete_versions(
    settings: Settings, tmp_path: Path
) -> None:
    """Two worker processes; askers keep asking while one worker adds a document (a new version) and
    re-indexes the collection (another): no question errors, and every answer comes from one complete
    version -- known, never empty, never citing the new document from the version before it, always
    finding it in the versions after -- and each asker's versions only move forward."""
    Engine(settings).ingest("drill", sample_files() + _filler(120))
    names = ["a", "b"]
    with worker_processes(settings, tmp_path, names, SYLLABOT_WORKER_MAX_JOBS="4"):
        await wait_for_workers(settings, 2, timeout=30)
        async with QueueClient(settings) as client:
            first = await _ask(client, RETURNS_QUESTION, "drill", timeout=15)
            stop = asyncio.Event()
            streams: list[list[tuple[float, float, Answer]]] = [[] for _ in range(6)]
            errors: list[BaseException] = []
            questions = [NEW_QUESTION, RETURNS_QUESTION, "Is the battery covered by the warranty?"]

            async def asker(slot: int) -> None:
                i = slot
                while not stop.is_set():
                    asked = time.monotonic()
                    try:
                        answer = await _ask(client, questions[i % len(questions)], "drill", timeout=15)
                    except Exception as exc:  # noqa: BLE001 - any failure of any kind is what this drill counts
                        errors.append(exc)
                    else:
                        streams[slot].append((asked, time.monotonic(), answer))
                    i += 1

            askers = [asyncio.create_task(asker(slot)) for slot in range(len(streams))]
            try:
                builds: list[tuple[float, float]] = []
                started = time.monotonic()
                # a liveness bound, not a timing: a slow 2-core machine under the whole suite took
                # over 60 s for one build while six askers kept both workers busy
                added = await client.ingest("drill", *NEW_DOC, who="admin", timeout=BUILD_BOUND_S)
                builds.append((started, time.monotonic()))
                started = time.monotonic()
                rebuilt = await client.reindex("drill", who="admin", timeout=60)
                builds.append((started, time.monotonic()))
                # A few more answers after the last build, so the new version is seen to be served.
                seen = sum(len(s) for s in streams)
                deadline = time.monotonic() + 20
                while sum(len(s) for s in streams) < seen + 12 and not errors:
                    assert time.monotonic() < deadline, "questions stopped being answered"
                    await asyncio.sleep(0.05)
            finally:
                stop.set()
                await asyncio.gather(*askers, return_exceptions=True)
            final = await _ask(client, NEW_QUESTION, "drill", timeout=15)

    assert not errors, f"{errors[:3]}\n{_log_tails(tmp_path, names)}"
    order = [first.index_version, added.index_version, rebuilt.index_version]
    assert len(set(order)) == 3 and None not in order
    during = [
        a
        for stream in streams
        for asked, answered, a in stream
        if any(asked < end and answered > start for start, end in builds)
    ]
    assert len(during) >= 5, f"only {len(during)} answers overlapped a build: nothing was proved"
    for stream in streams:
        positions = [order.index(a.index_version) for _, _, a in stream]  # ValueError: unknown version
        assert positions == sorted(positions), "an answer came from an older version after a newer one"
        for _, _, a in stream:
            assert a.citations and a.text, a  # never an empty answer
            cited = {c.doc_id for c in a.citations}
            if a.index_version == first.index_version:
                assert NEW_DOC_ID not in cited  # the old version is the old one throughout
            elif a.question == NEW_QUESTION:
                assert a.citations[0].doc_id == NEW_DOC_ID  # the new versions are whole
    served = {a.index_version for stream in streams for _, _, a in stream}
    assert rebuilt.index_version in served
    assert final.index_version == rebuilt.index_version and final.citations[0].doc_id == NEW_DOC_ID


# --- 2b. a question in flight while Redis crashes -------------------------------------------------


def _indexed_on_fsync_always(settings: Settings, drill_redis: DrillRedis) -> tuple[Settings, Keys]:
    """Settings on the drill's own Redis, a collection "drill" indexed there, every write fsynced."""
    private = settings.model_copy(update={"redis_url": drill_redis.url})
    Engine(private).ingest("drill", sample_files())
    admin = drill_redis.client()
    admin.config_set("appendfsync", "always")
    admin.close()
    return private, Keys(private.key_prefix)


async def _until_in_flight(llm: SlowLLM, name: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not llm.in_flight[name]:
        assert time.monotonic() < deadline, "the question never reached the LLM"
        await asyncio.sleep(0.01)


async def test_question_in_flight_across_a_redis_crash_is_answered_once(
    settings: Settings, drill_redis: DrillRedis, tmp_path: Path
) -> None:
    """Redis is SIGKILLed (``appendfsync always``) while a worker holds a question, and comes back:
    the asker, still within its timeout, gets the answer; it is not told "Redis unreachable" while
    the worker goes on to answer the question for nobody (issue 14, defect 3)."""
    private, keys = _indexed_on_fsync_always(settings, drill_redis)
    llm = SlowLLM(delay_s=1.5)
    try:
        with worker_processes(
            private,
            tmp_path,
            ["w"],
            SYLLABOT_ANSWERER="openai",
            SYLLABOT_LLM_BASE_URL=f"{llm.base}/{{name}}/v1",
            SYLLABOT_LLM_TIMEOUT_S="20",
        ):
            await wait_for_workers(private, 1, timeout=30)
            async with QueueClient(private) as client:
                asking = asyncio.create_task(_ask(client, RETURNS_QUESTION, "drill", timeout=20))
                await _until_in_flight(llm, "w")
                drill_redis.stop(signal.SIGKILL)
                drill_redis.start()
                answer = await asking
            await asyncio.to_thread(_wait_until_drained, drill_redis, keys, IN_PROGRESS_TTL_S + 10)
    finally:
        llm.close()
    assert answer.question == RETURNS_QUESTION and answer.citations, answer
    check = drill_redis.client()
    try:
        assert not check.keys(keys.result_list("*"))  # delivered once, to its asker: nothing unread
    finally:
        check.close()


async def test_question_whose_asker_was_told_redis_is_down_is_never_answered(
    settings: Settings, drill_redis: DrillRedis, tmp_path: Path
) -> None:
    """Redis stays down past the asker's timeout: the asker is told Redis is unreachable, and once
    Redis is back (with the job still in its AOF) no worker answers the question for nobody."""
    private, keys = _indexed_on_fsync_always(settings, drill_redis)
    llm = SlowLLM(delay_s=1.0)
    try:
        with worker_processes(
            private,
            tmp_path,
            ["w"],
            SYLLABOT_ANSWERER="openai",
            SYLLABOT_LLM_BASE_URL=f"{llm.base}/{{name}}/v1",
            SYLLABOT_LLM_TIMEOUT_S="20",
        ):
            await wait_for_workers(private, 1, timeout=30)
            async with QueueClient(private) as client:
                asking = asyncio.create_task(_ask(client, RETURNS_QUESTION, "drill", timeout=4))
                await _until_in_flight(llm, "w")
                drill_redis.stop(signal.SIGKILL)
                outcome = await asyncio.gather(asking, return_exceptions=True)  # Redis still down
                drill_redis.start()
                await wait_for_workers(private, 1, timeout=15)
            await asyncio.to_thread(_wait_until_drained, drill_redis, keys, IN_PROGRESS_TTL_S + 10)
    finally:
        llm.close()
    from syllabot.shared.queue import RedisUnreachable

    assert isinstance(outcome[0], RedisUnreachable), outcome
    check = drill_redis.client()
    try:
        assert not check.keys(keys.result_list("*"))  # nothing computed for an asker who left
    finally:
        check.close()
