"""Helpers for the queue and worker tests: a worker running in the test's event loop, stand-in
engines, and worker subprocesses configured through the environment like a deployment would be."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.schema import Hit, IngestReport, SourceInfo
from syllabot.worker.indexes.retrieval import SearchResult
from syllabot.worker.indexes.snapshot_cache import SnapshotCache
from syllabot.worker.main import FastWorker, build_worker

REPO = Path(__file__).resolve().parent.parent


def search_result(hits: list[Hit], **extra: Any) -> SearchResult:
    """A real ``SearchResult`` with these hits, as a stand-in engine returns it (index "v-test")."""
    values: dict[str, Any] = {"index_version": "v-test", "embed_ms": 0.1, "search_ms": 0.1, "fallback": False}
    return SearchResult(hits, **{**values, **extra})


def make_hit(rank: int, text: str, score: float = 0.6, cosine: float = 0.7, **extra: Any) -> Hit:
    data: dict[str, Any] = {
        "rank": rank,
        "doc_id": f"doc-{rank}",
        "file": f"doc-{rank}.md",
        "title": f"Document {rank}",
        "subject": "21CS44 Operating Systems",
        "module": f"Module {rank}",
        "page": rank,
        "score": score,
        "cosine": cosine,
        "keyword": 0.5,
        "text": text,
        "label": f"21CS44 Operating Systems — Module {rank}, p. {rank}",
    }
    data.update(extra)
    return Hit(**data)


@dataclass
class StandInEngine:
    """The Engine's sync interface with scripted behaviour, for tests of the queue itself."""

    search_delay_s: float = 0.0
    fail_with: Exception | None = None
    progress_steps: int = 0
    progress_delay_s: float = 0.0
    #: When set, ingest waits for it (as a real ingest waits for another build's lock).
    ingest_gate: threading.Event | None = None
    calls: list[tuple[str, tuple]] = field(default_factory=list)

    #: What the worker reads of an engine's cache (metrics, doctor): a real one, always empty.
    cache: SnapshotCache = field(default_factory=lambda: SnapshotCache(0))

    def search(
        self, collection: str, question: str, k: int | None = None, turns: Sequence[object] = ()
    ) -> SearchResult:
        return self.begin_search(collection, question, turns)

    def begin_search(self, collection: str, question: str, turns: Sequence[object] = ()) -> SearchResult:
        """The whole search, as ``Engine.begin_search`` returns it when there is nothing to embed."""
        self.calls.append(("search", (collection, question)))
        if self.search_delay_s:
            time.sleep(self.search_delay_s)
        if self.fail_with is not None:
            raise self.fail_with
        text = (
            "Deadlock is a situation where processes wait for each other forever. "
            "The banker's algorithm avoids deadlock."
        )
        # the passage's section is the question itself: a stand-in for a search that found what was
        # asked, scored as the default verdict answers (a close cosine over a passage holding none of
        # the question's words is "uncertain")
        return search_result([make_hit(1, text, score=0.9, cosine=0.85, section=question)])

    def ingest(
        self,
        collection: str,
        files: list[tuple[str, bytes]],
        who: str = "cli",
        progress: Any = None,
        replace: bool = False,
    ) -> IngestReport:
        self.calls.append(("ingest", (collection, [name for name, _ in files], who)))
        if self.ingest_gate is not None:
            self.ingest_gate.wait(30)
        for step in range(1, self.progress_steps + 1):
            if progress:
                progress("embedding", step, self.progress_steps)
            time.sleep(self.progress_delay_s)
        if self.fail_with is not None:
            raise self.fail_with
        return IngestReport(collection=collection, index_version="v2", total_chunks=len(files), changed=True)

    def reindex(self, collection: str, progress: Any = None) -> IngestReport:
        self.calls.append(("reindex", (collection,)))
        return IngestReport(collection=collection, index_version="v3", changed=True)

    def remove(self, collection: str, doc_id: str) -> IngestReport:
        self.calls.append(("remove", (collection, doc_id)))
        return IngestReport(collection=collection, index_version="v4", changed=True)

    def sources(self, collection: str) -> list[SourceInfo]:
        return [SourceInfo(doc_id="d1", file="a.md", title="A", pages=1, chunks=2, indexed_at="now")]

    def snapshot(self, collection: str) -> None:
        """No index is held: the worker's index-size gauge is left alone."""
        return None


@contextlib.asynccontextmanager
async def running_worker(
    settings: Settings,
    worker_overrides: dict[str, Any] | None = None,
    kind: type[FastWorker] | None = None,
    **ctx: Any,
) -> AsyncIterator[FastWorker]:
    """A FastWorker (or ``kind``) in this event loop until the block ends; ``ctx`` may hold
    engine/answerer, ``worker_overrides`` replaces arq ``Worker`` arguments (e.g. ``functions``)."""
    worker = build_worker(
        settings, kind, handle_signals=False, ctx={"settings": settings, **ctx}, **(worker_overrides or {})
    )
    task = asyncio.create_task(worker.async_run())
    try:
        await wait_for_workers(settings, 1)
        yield worker
    finally:
        await worker.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def wait_for_workers(settings: Settings, count: int, timeout: float = 60.0) -> None:
    """Until ``count`` workers have a live heartbeat (their engine is loaded and they beat)."""
    from syllabot.shared.queue import QueueClient

    deadline = time.monotonic() + timeout
    async with QueueClient(settings) as client:
        while await client.worker_count() < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"fewer than {count} workers came up within {timeout} s")
            await asyncio.sleep(0.05)


def worker_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment a worker subprocess needs to serve these settings."""
    env = dict(os.environ)
    env.update(
        {
            "REDIS_URL": settings.redis_url or "",
            "SYLLABOT_KEY_PREFIX": settings.key_prefix,
            "SYLLABOT_DATA_DIR": str(settings.data_dir),
            "SYLLABOT_EMBEDDER": settings.embedder,
            "SYLLABOT_ANSWERER": settings.answerer,
            "SYLLABOT_WORKER_MAX_JOBS": str(settings.worker_max_jobs),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    return env


def start_worker_process(settings: Settings, log_path: Path, **extra_env: str) -> subprocess.Popen:
    """``python -m syllabot.worker.main`` in a clean working directory (no stray .env), logging to a file."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_file = open(log_path, "wb")  # noqa: SIM115 - owned by the process for its lifetime
    return subprocess.Popen(
        [sys.executable, "-m", "syllabot.worker.main"],
        cwd=log_path.parent,
        env=worker_env(settings, **extra_env),
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )


@contextlib.contextmanager
def worker_processes(
    settings: Settings, tmp_path: Path, names: list[str], **env: str
) -> Iterator[dict[str, subprocess.Popen]]:
    """``python -m syllabot.worker.main`` processes, one per name, logging to
    ``tmp_path/<name>/worker.log``, stopped (SIGTERM, then SIGKILL) when the block ends. ``{name}``
    in an environment value is replaced by the worker's name. The one way tests run worker
    processes; wait for them with :func:`wait_for_workers`."""
    procs: dict[str, subprocess.Popen] = {}
    try:
        for name in names:
            extra = {k: v.replace("{name}", name) for k, v in env.items()}
            procs[name] = start_worker_process(settings, tmp_path / name / "worker.log", **extra)
        yield procs
    finally:
        for proc in procs.values():
            stop_process(proc)


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


def _major(binary: str) -> int:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
        return int(out.split("v=")[1].split(".")[0])
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        return 0


def redis7_binary() -> str:
    """A ``redis-server`` of version 7 or later. The first one on PATH may not be: the embedded-Redis
    package puts a 6.2 into virtual environments (the shadowing issue 14 found), so look further."""
    candidates = [shutil.which("redis-server"), "/usr/bin/redis-server", "/usr/local/bin/redis-server"]
    for binary in dict.fromkeys(c for c in candidates if c):
        if _major(binary) >= 7:
            return binary
    pytest.fail(f"the fault drills need redis-server >= 7 (looked at {candidates})")


def cli_in(
    settings: Settings, folder: Path, embedder: str = "hashing", timeout_s: float = 120
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """A ``syllabot ARGS`` runner for these settings' Redis and key prefix (the hashing embedder
    unless told), working in ``folder`` with its data directory under it."""
    env = {**os.environ, "REDIS_URL": settings.redis_url or "", "SYLLABOT_KEY_PREFIX": settings.key_prefix}
    env.update({"SYLLABOT_EMBEDDER": embedder, "SYLLABOT_DATA_DIR": str(folder / "data")})

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "syllabot", *args],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )

    return run


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PrivateRedis:
    """A throw-away ``redis-server`` of the test's own, to stop, restart or stall at will."""

    port: int
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no"]
        version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
        if "v=" in version and int(version.split("v=")[1].split(".")[0]) >= 7:
            command += ["--enable-debug-command", "local"]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        try:
            while True:
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        raise
                    time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


@contextlib.contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis(free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


def queue_keys_left(settings: Settings) -> int:
    """How many jobs are still sitting in the queue (should be 0 after every test)."""
    client = redis.Redis.from_url(settings.redis_url or "")
    try:
        return int(client.zcard(Keys(settings.key_prefix).queue))
    finally:
        client.close()


ProgressLog = list[dict]


def collecting_progress() -> tuple[ProgressLog, Callable[[dict], Any]]:
    seen: ProgressLog = []

    async def progress(state: dict) -> None:
        seen.append(state)

    return seen, progress


#: A document added during the re-index tests and drills, and the question only it answers.
NEW_DOC = (
    "moonlight-club.md",
    b"""---
id: kc-moonlight-club-v1
title: Moonlight riding club
version: 1
status: current
lang: en
---

## Moonlight riding club

The Kestrel moonlight riding club meets every full moon at the Harbour gate at 21:00. Members ride
an easy 25 km loop with lights and reflective vests. Membership of the moonlight club is free.
""",
)
NEW_QUESTION = "When does the moonlight riding club meet?"


async def redis_texts(client: Any, prefix: str) -> list[str]:
    """Every key under ``prefix`` and every value stored there, as text (strings, hashes, lists,
    sets, sorted sets and streams), for tests that grep what is stored for something that must
    not be (a raw user id)."""
    texts: list[str] = []
    async for raw in client.scan_iter(match=f"{prefix}*", count=500):
        key = raw.decode(errors="replace")
        texts.append(key)
        kind = (await client.type(raw)).decode()
        if kind == "string":
            values: list[Any] = [await client.get(raw)]
        elif kind == "hash":
            values = [item for pair in (await client.hgetall(raw)).items() for item in pair]
        elif kind == "list":
            values = await client.lrange(raw, 0, -1)
        elif kind == "set":
            values = list(await client.smembers(raw))
        elif kind == "zset":
            values = await client.zrange(raw, 0, -1)
        elif kind == "stream":
            values = [v for _, fields in await client.xrange(raw) for pair in fields.items() for v in pair]
        else:
            values = []
        texts += [v.decode(errors="replace") if isinstance(v, bytes) else str(v) for v in values]
    return texts


#: The command that ends :func:`monitored`'s recording.
END_OF_WATCH = "end-of-watch"


def monitored(url: str, seen: list[dict]) -> threading.Thread:
    """Every command the Redis at ``url`` runs, as MONITOR reports it, appended to ``seen`` until
    someone ECHOes :data:`END_OF_WATCH` (call :func:`end_watch`; MONITOR lags, so whatever ran
    before that is in ``seen`` once the thread has ended)."""
    started = threading.Event()

    def watch() -> None:
        client = redis.Redis.from_url(url)
        with client.monitor() as monitor:
            started.set()
            for command in monitor.listen():
                if END_OF_WATCH in command["command"]:
                    break
                seen.append(command)
        client.close()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    assert started.wait(5)
    return thread


def end_watch(url: str, thread: threading.Thread) -> None:
    """End a :func:`monitored` recording and wait for it."""
    client = redis.Redis.from_url(url)
    client.echo(END_OF_WATCH)
    client.close()
    thread.join(10)
