"""The queue client: the only way front-ends talk to workers.

The protocol it shares with the worker (job names, scripts, heartbeat, claims, result envelopes)
is in :mod:`syllabot.shared.queue_protocol`; this module is the client's side of it and the errors
front-ends turn into messages.

Mechanism (measured in ``bench/queue_latency.py``; figures in ``docs/BENCHMARKS.md``). arq's stock
client and worker poll Redis every 0.5 s for new jobs and for results; ours wait on events instead:

* **Enqueue: one round trip.** A Lua script checks that a worker is alive (heartbeat sorted set
  ``Keys.workers``, scored with the Redis server's clock so hosts' clock skew does not matter),
  writes the job exactly as arq's ``ArqRedis.enqueue_job`` would (``arq:job:<id>`` pickled by
  ``arq.jobs.serialize_job``, a ZADD on the queue ``Keys(prefix).queue``) and ``PUBLISH``es the job
  id on ``Keys.wake``. No live worker -> :class:`NoWorker` and nothing is enqueued, so a question
  never sits in a queue nobody reads. arq's ``enqueue_job`` would cost three round trips (WATCH,
  EXISTS, MULTI/EXEC) to guard against a job-id collision a fresh uuid4 cannot have.
* **Start:** workers (``worker.main.FastWorker``) sleep on the wake channel rather than arq's fixed
  poll and claim jobs with one Lua call (see there).
* **Result: pushed, not polled.** The job function ``RPUSH``es a JSON envelope
  (``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "..."}``) onto
  ``Keys.result_list(job_id)`` (with an expiry) and the client waits with ``BLPOP``, so the answer
  arrives the moment it exists. arq's own pickled result storage is off (``keep_result=0``):
  nothing reads it, and it would live outside our key prefix.
* **Progress:** ingest/reindex jobs write ``stage/done/total`` into ``Keys.progress(collection,
  job_id)``; the client reads it every 0.5 s while it waits and calls the ``progress`` callback.

arq keeps its per-job bookkeeping under fixed names (``arq:job:<id>``, ``arq:in-progress:<id>``,
``arq:retry:<id>``; constants in arq, not configurable). Those keys are deleted when a job finishes
and expire otherwise; jobs expire at the caller's timeout so a question nobody waits for any more
is never answered late.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar, cast

import redis.exceptions
from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix
from arq.jobs import serialize_job
from pydantic import BaseModel, ValidationError

from syllabot.shared.config import Settings
from syllabot.shared.deadline import measure_offset_ms, redis_now_ms
from syllabot.shared.gap_report import GapReport
from syllabot.shared.keys import Keys
from syllabot.shared.partials import DRAIN_MAX, Partial, live, newest
from syllabot.shared.queue_protocol import (
    COUNT_LIVE,
    ENQUEUE,
    INGEST_TIMEOUT_S,
    JOB_ASK,
    JOB_CARD,
    JOB_COLLECTIONS,
    JOB_CONFLICTS,
    JOB_DROP,
    JOB_INGEST,
    JOB_MARK,
    JOB_REINDEX,
    JOB_REMOVE,
    JOB_REPORT,
    JOB_SOURCES,
    read_envelope,
)
from syllabot.shared.redis_conn import (
    DATABASE_FULL,
    OUTAGE_RETRY_S,
    REDIS_ERRORS,
    REDIS_TROUBLE,
    RedisUnavailable,
    async_client_at,
    describe,
    is_sentinel,
    redis_trouble,
    resolve_redis_url,
    through_failover,
    unreachable,
)
from syllabot.shared.schema import (
    SCHEMA_VERSION,
    Answer,
    AskRequest,
    CollectionInfo,
    ConflictInfo,
    DropReport,
    IngestReport,
    SourceInfo,
    version_mismatch,
    wire_version,
)
from syllabot.shared.source_names import VersionGone

log = logging.getLogger("syllabot.queue")
_M = TypeVar("_M", bound=BaseModel)

#: Extra time, beyond the caller's timeout, before a call stuck in a Redis command is abandoned.
STALL_GRACE_S = 1.0
#: How often the client looks at the progress key while it waits.
PROGRESS_POLL_S = 0.5
#: A Redis up for less than this has just (re)started: workers may still be reconnecting...
FRESH_REDIS_S = 5
#: ...so "no worker" is declared only after waiting this long for a heartbeat (workers beat at once
#: when Redis answers again). A Redis up for longer gets no grace: a true no-worker case stays fast.
RECONNECT_GRACE_S = 1.0
#: How long a client that asked a worker to cancel a write waits for the worker to say whether it
#: stopped before publishing; a build checks its token between files, pages and embedding batches
#: (well under a second), so only a worker that lost Redis or hangs runs past this.
CANCEL_CONFIRM_S = 10.0


# --- errors ------------------------------------------------------------------------------------


_NO_WORKER = "no Syllabot worker is running (no heartbeat in Redis); start one with `syllabot worker`"


class QueueError(RuntimeError):
    """Base class: every failure a front-end must turn into a message for the user."""


class RedisUnreachable(QueueError):
    """Redis did not answer."""


class RedisRefused(QueueError):
    """Redis answered but refused the request for its own state (full, read-only, loading, ...):
    the message says what, in plain words, for the user and the admin alike."""


class NoWorker(QueueError):
    """No worker is running (no live heartbeat), so nothing would ever pick the job up."""


class QueueTimeout(QueueError):
    """No result came within the timeout. ``withdrawn``: no worker had started the job, and it was
    withdrawn, so nothing changed; otherwise a worker took it and may still finish it."""

    def __init__(self, message: str, *, withdrawn: bool = False, timeout_s: float | None = None) -> None:
        super().__init__(message)
        self.withdrawn = withdrawn
        self.timeout_s = timeout_s


class JobFailed(QueueError):
    """The worker ran the job and it raised; the message is the worker's, fit to show an admin."""


class SchemaMismatch(QueueError):
    """The bot and the worker speak different schema versions (``shared/schema.py``): raised by a
    worker for a question of another version, and by the client for an answer of another version.
    ``bot`` and ``worker`` are the two versions; the message says which side to upgrade (the
    worker's own words when it refused the question)."""

    def __init__(self, bot: int, worker: int, message: str | None = None) -> None:
        super().__init__(message or version_mismatch(bot, worker))
        self.bot = bot
        self.worker = worker


class JobCancelled(QueueError):
    """A write was cancelled at the caller's request before anything was published: withdrawn
    while still queued, or stopped by its worker (``worker.indexes.cancel``). The previous index stands."""


class CancelUnconfirmed(QueueError):
    """The caller asked a worker to cancel a write but no word came back within
    :data:`CANCEL_CONFIRM_S` (or the caller stopped waiting): the build may still publish."""


class Stop:
    """A caller's request to cancel the write it waits for (Ctrl-C of `syllabot index`).

    ``press()`` is safe in a signal handler: it only counts. The waiting client looks at the count
    between its waits (every :data:`PROGRESS_POLL_S` at most): the first press asks the worker to
    cancel (:meth:`QueueClient._request_cancel`) and waits up to :data:`CANCEL_CONFIRM_S` for its
    word; a second press stops that wait too (:class:`CancelUnconfirmed`)."""

    def __init__(self) -> None:
        self.presses = 0

    def press(self) -> None:
        self.presses += 1


class EmptyCollection(JobFailed):
    """A question to a collection with no indexed documents, or to a Redis with no Syllabot data:
    an error saying what to check, never an answer. Raised by the worker (``worker.runtime.jobs``) and by
    the in-process CLI alike; a subclass of :class:`JobFailed`, so every front-end's existing error
    path shows its message."""


ProgressCallback = Callable[[dict[str, Any]], Awaitable[None]]
#: Receives each partial answer while a streamed answer is written (see :meth:`QueueClient.ask_live`).
PartialCallback = Callable[[Partial], None]


class QueueClient:
    """Enqueue a job and await its result.

    ``progress`` callbacks receive dicts like ``{"stage": "embedding", "done": 120, "total": 300}``.
    One client serves any number of concurrent calls (each waits on its own result list); create it
    once per process and :meth:`close` it at shutdown. Methods connect lazily, and reconnect when
    called from a different event loop than the last call.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self._pool: ArqRedis | None = None
        self._url: str | None = None
        self._enqueue_script: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connect_lock = asyncio.Lock()
        self._clock_offset_ms = 0.0  # Redis's clock minus ours, measured on connect

    # --- connection ---------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the Redis pool; :class:`RedisUnreachable` (fast: one immediate retry) when it does not answer."""
        async with self._connect_lock:
            if self._pool is not None:
                return
            try:
                self._url = await asyncio.to_thread(resolve_redis_url, self.settings)
            except RedisUnavailable as exc:
                raise RedisUnreachable(str(exc)) from exc
            # socket_timeout: a stalled Redis raises instead of hanging the call. The single retry on
            # ConnectionError replaces a pooled connection the server closed (e.g. it restarted):
            # every command we send is safe to repeat (the enqueue script rewrites the same job).
            pool = async_client_at(self._url, ArqRedis, retry_closed=True)
            pool.default_queue_name = self.keys.queue
            try:
                await pool.ping()
                self._clock_offset_ms = await measure_offset_ms(pool)
            except (*REDIS_ERRORS, redis.exceptions.RedisError) as exc:
                with contextlib.suppress(Exception):
                    await pool.aclose()
                raise RedisUnreachable(self._unreachable(exc)) from exc
            self._pool = pool
            self._loop = asyncio.get_running_loop()

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            with contextlib.suppress(Exception):
                await pool.aclose()

    async def __aenter__(self) -> QueueClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _unreachable(self, exc: BaseException | str) -> str:
        return unreachable(self._url, exc)

    async def _redis(self) -> ArqRedis:
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._loop is not loop:
            # Connections belong to the loop that opened them (e.g. a caller using asyncio.run per
            # request): replace them rather than fail with "attached to a different loop".
            old, self._pool, self._enqueue_script = self._pool, None, None
            self._connect_lock = asyncio.Lock()
            _abandon(old, self._loop)
        if self._pool is None:
            await self.connect()
            self._loop = loop
        assert self._pool is not None
        return self._pool

    # --- liveness -----------------------------------------------------------------------------

    async def worker_count(self) -> int:
        """How many workers have a live heartbeat (0 means nothing would run a job)."""
        pool = await self._redis()
        try:
            count = int(await cast(Awaitable[Any], pool.eval(COUNT_LIVE, 1, self.keys.workers)))
        except REDIS_ERRORS as exc:
            raise RedisUnreachable(self._unreachable(exc)) from exc
        return count

    # --- jobs ---------------------------------------------------------------------------------

    async def ask(
        self, request: AskRequest, timeout: float | None = None, on_partial: PartialCallback | None = None
    ) -> Answer:
        """Ask a worker; the job carries this caller's deadline (``deadline_ms``, Redis clock), so a
        worker answers before it (falling back from a slow LLM) or not at all. ``on_partial``: the
        question is asked with ``stream`` and each partial answer is passed to it (most callers
        want :meth:`ask_live`)."""
        started = time.perf_counter()
        timeout = timeout or self.settings.ask_timeout_s
        await self._redis()  # connected, with the clock offset measured
        deadline_ms = int(redis_now_ms(self._clock_offset_ms) + timeout * 1000)
        request = request.model_copy(update={"deadline_ms": deadline_ms, "stream": on_partial is not None})
        result = await self._call(
            JOB_ASK, request.model_dump(mode="json"), timeout=timeout, on_partial=on_partial
        )
        if wire_version(result) != SCHEMA_VERSION:  # before validation: an old answer may even fit
            raise SchemaMismatch(bot=SCHEMA_VERSION, worker=wire_version(result))
        answer = _validate(Answer, result)
        round_trip = (time.perf_counter() - started) * 1000.0
        answer.timings.queue = max(0.0, round(round_trip - answer.timings.total, 3))
        return answer

    def ask_live(
        self, request: AskRequest, timeout: float | None = None
    ) -> AsyncGenerator[Partial | Answer, None]:
        """Ask a worker and iterate over what comes back: :class:`~shared.partials.Partial` texts
        while an LLM writes the answer (none from an extractive answerer), then the final
        :class:`Answer`, always last and the only authoritative one. Errors are those of :meth:`ask`,
        raised by the iteration."""
        return live(lambda on_partial: self.ask(request, timeout, on_partial=on_partial))

    async def ingest(
        self,
        collection: str,
        filename: str,
        data: bytes,
        who: str,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
        replace: bool = False,
        stop: Stop | None = None,
    ) -> IngestReport:
        return await self.ingest_many(collection, [(filename, data)], who, progress, timeout, replace, stop)

    async def ingest_many(
        self,
        collection: str,
        files: list[tuple[str, bytes]],
        who: str,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
        replace: bool = False,
        stop: Stop | None = None,
    ) -> IngestReport:
        """Several files in one job, so the collection's index is rebuilt once, not once per file.
        ``replace``: a file may replace a document of another file name with its id (see
        ``Engine.ingest``); without it, such a file is refused. ``stop``: pressed, the job is
        cancelled on the worker (:class:`JobCancelled`) unless it was already publishing (its
        report is then returned as usual)."""
        result = await self._call(
            JOB_INGEST,
            collection,
            [(name, bytes(data)) for name, data in files],
            who,
            replace,
            timeout=timeout or INGEST_TIMEOUT_S,
            progress=progress,
            collection=collection,
            stop=stop,
        )
        return _validate(IngestReport, result)

    async def reindex(
        self,
        collection: str,
        who: str,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
        stop: Stop | None = None,
    ) -> IngestReport:
        result = await self._call(
            JOB_REINDEX,
            collection,
            who,
            timeout=timeout or INGEST_TIMEOUT_S,
            progress=progress,
            collection=collection,
            stop=stop,
        )
        return _validate(IngestReport, result)

    async def sources(self, collection: str, timeout: float | None = None) -> list[SourceInfo]:
        result = await self._call(JOB_SOURCES, collection, timeout=timeout or self.settings.ask_timeout_s)
        return _validate_list(SourceInfo, result, "sources")

    async def conflicts(self, collection: str, timeout: float | None = None) -> list[ConflictInfo]:
        """The facts on which the collection's documents disagree (``Engine.conflicts``)."""
        result = await self._call(JOB_CONFLICTS, collection, timeout=timeout or self.settings.ask_timeout_s)
        return _validate_list(ConflictInfo, result, "conflicts")

    async def card(self, collection: str, timeout: float | None = None) -> list[str]:
        """The collection's course card as a teacher reads it (``card_lines`` of ``Engine.card``, as
        `syllabot card` prints it): each slot with its facts and where each is printed, the slots no
        document fills, the disagreements by slot."""
        result = await self._call(JOB_CARD, collection, timeout=timeout or self.settings.ask_timeout_s)
        return _validate_lines(result, "the course card")

    async def remove(
        self,
        collection: str,
        doc_id: str,
        who: str,
        timeout: float | None = None,
        stop: Stop | None = None,
    ) -> IngestReport:
        result = await self._call(
            JOB_REMOVE,
            collection,
            doc_id,
            who,
            timeout=timeout or INGEST_TIMEOUT_S,
            collection=collection,
            stop=stop,
        )
        return _validate(IngestReport, result)

    async def mark(
        self,
        collection: str,
        doc_id: str,
        status: str,
        who: str,
        by: str | None = None,
        timeout: float | None = None,
        seen: dict[str, str] | None = None,
        stop: Stop | None = None,
    ) -> IngestReport:
        """Mark a document superseded (optionally ``by`` another) or current: see ``Engine.mark``.
        ``seen``: doc_id -> sha256 of the versions the caller looked up
        (``source_names.seen_versions``); one replaced since is refused with :class:`VersionGone`."""
        result = await self._call(
            JOB_MARK,
            collection,
            doc_id,
            status,
            by,
            who,
            seen,
            timeout=timeout or INGEST_TIMEOUT_S,
            collection=collection,
            stop=stop,
        )
        return _validate(IngestReport, result)

    async def collections(self, timeout: float | None = None) -> list[CollectionInfo]:
        """Every collection, as `syllabot collections` lists them."""
        result = await self._call(JOB_COLLECTIONS, timeout=timeout or self.settings.ask_timeout_s)
        return _validate_list(CollectionInfo, result, "collections")

    async def drop(self, collection: str, who: str, timeout: float | None = None) -> DropReport:
        """Delete ``collection`` completely (an admin's, confirmed): see ``Engine.drop``."""
        result = await self._call(
            JOB_DROP, collection, who, timeout=timeout or INGEST_TIMEOUT_S, collection=collection
        )
        return _validate(DropReport, result)

    async def report(self, collection: str, days: int, timeout: float | None = None) -> GapReport:
        """The teacher's gap report of ``collection`` over the last ``days`` days (worker/ops/report.py)."""
        result = await self._call(
            JOB_REPORT, collection, days, timeout=timeout or self.settings.ask_timeout_s
        )
        return _validate(GapReport, result)

    # --- the round trip -----------------------------------------------------------------------

    async def _call(
        self,
        function: str,
        *args: Any,
        timeout: float,
        progress: ProgressCallback | None = None,
        collection: str | None = None,
        on_partial: PartialCallback | None = None,
        stop: Stop | None = None,
    ) -> Any:
        """Enqueue ``function(*args)``, wake the workers, and wait for the result envelope (passing
        the job's partial answers to ``on_partial`` meanwhile; ``stop``: see :class:`Stop`)."""
        pool = await self._redis()
        job_id = uuid.uuid4().hex
        partials = (self.keys.partials(job_id), on_partial) if on_partial is not None else None
        try:
            # The wait checks its deadline between BLPOP slices; this bounds a Redis that stalls
            # inside a command (the socket timeout would too, but only after SOCKET_TIMEOUT_S).
            async with asyncio.timeout(timeout + STALL_GRACE_S):
                await self._enqueue_through_failover(pool, job_id, function, args, timeout)
                progress_key = self.keys.progress(collection, job_id) if progress and collection else None
                raw = await self._wait(pool, job_id, timeout, progress, progress_key, partials, stop)
        except TimeoutError as exc:
            # Nothing to withdraw: the job's key expired at ``timeout``, so no worker will run it.
            raise RedisUnreachable(
                self._unreachable(f"no reply within {timeout + STALL_GRACE_S:g} s")
            ) from exc
        except REDIS_TROUBLE as exc:
            trouble = redis_trouble(exc)  # refusing (full, read-only; LOADING is a connection error)
            if trouble is not None:
                raise RedisRefused(trouble) from exc
            if not isinstance(exc, REDIS_ERRORS):
                raise  # a bug (a script error), not Redis being away
            raise RedisUnreachable(self._unreachable(exc)) from exc
        envelope = read_envelope(raw)
        if envelope.ok:
            return envelope.result
        if envelope.type == SchemaMismatch.__name__:
            raise SchemaMismatch(bot=SCHEMA_VERSION, worker=envelope.schema_version, message=envelope.error)
        if envelope.type == "Cancelled" and stop is not None and stop.presses:
            raise JobCancelled("the worker stopped the build; nothing was published")
        if envelope.type == VersionGone.__name__:
            raise VersionGone(envelope.error)
        error = EmptyCollection if envelope.type == EmptyCollection.__name__ else JobFailed
        raise error(envelope.error)

    async def _enqueue_through_failover(
        self, pool: ArqRedis, job_id: str, function: str, args: tuple[Any, ...], timeout: float
    ) -> None:
        """:meth:`_enqueue` through a Sentinel failover (``redis_conn.through_failover``, within the
        caller's timeout) instead of failing the question at once. The enqueue script rewrites the
        same job, so a retry cannot queue it twice. A single Redis keeps failing fast."""
        await through_failover(
            lambda: self._enqueue(pool, job_id, function, args, timeout),
            bool(self._url and is_sentinel(self._url)),
            timeout,
            on_lost=lambda exc: log.info(
                "Redis lost while queueing job %s (%s); waiting for the failover", job_id, exc
            ),
        )

    async def _enqueue(
        self, pool: ArqRedis, job_id: str, function: str, args: tuple[Any, ...], timeout: float
    ) -> None:
        """Check liveness, store the job as arq does, queue it and wake the workers: one round trip."""
        if self._enqueue_script is None:
            self._enqueue_script = pool.register_script(ENQUEUE)
        job = serialize_job(function, args, {}, None, int(time.time() * 1000))
        for attempt in range(2):
            score = await self._enqueue_script(
                keys=[self.keys.workers, job_key_prefix + job_id, self.keys.queue],
                args=[job, max(1, int(timeout * 1000)), job_id, self.keys.wake],
            )
            if score:
                return
            if await self._memory_full(pool):
                # A full Redis refuses the workers' heartbeats too: "no worker" would hide the cause.
                raise RedisRefused(DATABASE_FULL)
            if attempt or not await self._worker_after_grace(pool):
                raise NoWorker(_NO_WORKER)

    async def _memory_full(self, pool: ArqRedis) -> bool:
        """Whether Redis refuses writes for lack of memory, asked the way that cannot be wrong: a
        tiny write that expires at once (``used_memory`` hovers around ``maxmemory`` when full)."""
        try:
            await pool.set(self.keys.write_probe, b"1", px=1000)
        except redis.exceptions.OutOfMemoryError:
            return True
        except REDIS_TROUBLE:
            pass  # away or refusing for another reason: not "full"
        return False

    async def _worker_after_grace(self, pool: ArqRedis) -> bool:
        """No live heartbeat: on a Redis that has just (re)started, wait up to
        :data:`RECONNECT_GRACE_S` for workers to beat again; True when one did."""
        try:
            uptime = int((await pool.info("server")).get("uptime_in_seconds", FRESH_REDIS_S))
        except (*REDIS_ERRORS, redis.exceptions.RedisError):
            return False
        if uptime >= FRESH_REDIS_S:
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RECONNECT_GRACE_S
        while loop.time() < deadline:
            await asyncio.sleep(0.1)
            if await self.worker_count():
                log.info("a worker beat again on a Redis up for %d s; going ahead", uptime)
                return True
        return False

    async def _wait(
        self,
        pool: ArqRedis,
        job_id: str,
        timeout: float,
        progress: ProgressCallback | None,
        progress_key: str | None,
        partials: tuple[str, PartialCallback] | None = None,
        stop: Stop | None = None,
    ) -> bytes:
        """BLPOP the result list in slices; between slices report progress, check liveness and
        whether the caller pressed ``stop`` (then :meth:`_request_cancel`, and the wait goes on for
        the worker's word, up to :data:`CANCEL_CONFIRM_S`).

        Redis lost in the middle of the wait (a restart, a blip) is waited out until the deadline: the
        job is still queued or running there and carries that deadline, so a worker may answer it
        once Redis is back, and telling the asker "unreachable" now would leave that answer unread.
        Only at the deadline is the asker told, and by then a worker drops the job.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        result_key = self.keys.result_list(job_id)
        # Result first: BLPOP serves the first non-empty list, so the answer beats stale partials.
        wait_keys = [result_key] + ([partials[0]] if partials else [])
        slice_s = PROGRESS_POLL_S if progress_key or stop else 2.0
        last: dict[str, Any] | None = None
        outage: BaseException | None = None
        alive = True
        asked_cancel = 0  # presses of ``stop`` acted on
        while True:
            if stop is not None and stop.presses > asked_cancel:
                if asked_cancel:  # pressed again while waiting for the worker's word: stop waiting
                    raise CancelUnconfirmed(_cancel_unconfirmed(waited=False))
                asked_cancel = stop.presses
                if await self._request_cancel(pool, job_id, timeout):
                    raise JobCancelled("withdrawn before any worker started it; nothing was published")
                deadline = min(deadline, loop.time() + CANCEL_CONFIRM_S)
            remaining = deadline - loop.time()
            if remaining <= 0:
                if asked_cancel:
                    raise CancelUnconfirmed(_cancel_unconfirmed(waited=True))
                if outage is not None:
                    raise RedisUnreachable(self._unreachable(outage))
                withdrawn = await self._give_up(pool, job_id)
                if await self._memory_full(pool):
                    # The worker ran it but Redis refused its result: say why, not "too long".
                    raise RedisRefused(DATABASE_FULL)
                raise QueueTimeout(
                    _timeout_message(withdrawn, timeout), withdrawn=withdrawn, timeout_s=timeout
                )
            try:
                lost = outage is not None and not await self._job_exists(pool, job_id)
                if not lost:
                    outage = None
                    # Never 0: BLPOP 0 blocks forever. Sub-second timeouts need Redis >= 6.
                    item = await cast(
                        Awaitable[list[bytes] | None],
                        pool.blpop(wait_keys, timeout=max(0.01, min(slice_s, remaining))),  # type: ignore[arg-type]
                    )
                    if item is not None and partials is not None and item[0].decode() == partials[0]:
                        await self._pass_partials(pool, partials, item[1])
                        continue
                    if item is not None:
                        if partials is not None:
                            with contextlib.suppress(*REDIS_ERRORS):
                                await pool.delete(partials[0])  # partials left behind the answer
                        if progress_key and progress is not None:  # the final count, even for a quick job
                            await self._report_progress(pool, progress_key, progress, last)
                        return item[1]
                    if progress_key and progress is not None:
                        last = await self._report_progress(pool, progress_key, progress, last)
                    alive = bool(await self.worker_count()) or await self._worker_after_grace(pool)
            except (*REDIS_ERRORS, RedisUnreachable) as exc:
                if outage is None:
                    log.warning(
                        "Redis lost while waiting for job %s (%s); waiting for its return", job_id, exc
                    )
                outage = exc
                await asyncio.sleep(max(0.0, min(OUTAGE_RETRY_S, deadline - loop.time())))
                continue
            if lost:
                # Redis is back without the job (it restarted without persistence): nothing will
                # answer it, so say so now rather than at the deadline.
                raise RedisUnreachable(
                    f"Redis at {describe(self._url) if self._url else '(unresolved)'} restarted and lost "
                    "this request (is persistence, AOF, on?); please ask again"
                )
            if not alive:
                await self._give_up(pool, job_id)  # so a worker starting later does not run it
                raise NoWorker(_NO_WORKER)

    async def _pass_partials(
        self, pool: ArqRedis, partials: tuple[str, PartialCallback], first: bytes
    ) -> None:
        """Hand the newest of the queued partials to the callback (older ones are superseded)."""
        key, callback = partials
        more = await cast(Awaitable[list[bytes] | None], pool.lpop(key, DRAIN_MAX))
        partial = newest([first, *(more or [])])
        if partial is None:
            return
        try:
            callback(partial)
        except Exception:  # a broken display of partials must not lose the answer
            log.exception("partial callback failed")

    async def _job_exists(self, pool: ArqRedis, job_id: str) -> bool:
        """Whether Redis still holds the job: queued or claimed (its arq keys) or answered (its result)."""
        keys = (job_key_prefix + job_id, in_progress_key_prefix + job_id, self.keys.result_list(job_id))
        return bool(await pool.exists(*keys))

    async def _report_progress(
        self, pool: ArqRedis, key: str, progress: ProgressCallback, last: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        raw = await cast(Awaitable[dict[bytes, bytes]], pool.hgetall(key))
        if not raw:
            return last
        state = decode_progress(raw)
        if state != last:
            try:
                await progress(state)
            except Exception:  # a broken progress display must not lose the result
                log.exception("progress callback failed")
        return state

    async def _request_cancel(self, pool: ArqRedis, job_id: str, timeout: float) -> bool:
        """Ask for ``job_id`` to be cancelled: withdrawn if no worker has started it (True), else
        flagged at :meth:`Keys.cancel`, which the worker running it watches (``worker.indexes.cancel``) and
        answers with a ``Cancelled`` error, or with its result when it was already publishing."""
        if await self._give_up(pool, job_id):
            return True
        with contextlib.suppress(*REDIS_ERRORS):  # Redis away: the confirmation wait says so
            await pool.set(self.keys.cancel(job_id), b"1", ex=max(1, int(timeout)))
        return False

    async def _give_up(self, pool: ArqRedis, job_id: str) -> bool:
        """Withdraw a job nobody has started, so it does not run after the caller stopped waiting.

        True when the job was still waiting in the queue and is now withdrawn.
        """
        with contextlib.suppress(*REDIS_ERRORS):
            if not await pool.exists(in_progress_key_prefix + job_id):
                async with pool.pipeline(transaction=True) as pipe:
                    pipe.zrem(self.keys.queue, job_id)
                    pipe.delete(job_key_prefix + job_id)
                    removed, _ = await pipe.execute()
                return bool(removed)
        return False


def _cancel_unconfirmed(waited: bool) -> str:
    why = f"it did not confirm within {CANCEL_CONFIRM_S:g} s" if waited else "you stopped waiting for it"
    return f"asked the worker to cancel the build, but {why}: the build may still complete and publish"


def _timeout_message(withdrawn: bool, timeout: float) -> str:
    if withdrawn:
        return f"no worker picked the job up within {timeout:g} s (all busy?); it was withdrawn"
    return f"a worker took the job but no result came within {timeout:g} s"


def _abandon(pool: ArqRedis | None, loop: asyncio.AbstractEventLoop | None) -> None:
    """Release a pool opened on another event loop: closed there if that loop still runs, else
    its sockets are closed directly (a closed loop can no longer run ``aclose``)."""
    if pool is None or loop is None:
        return
    if loop.is_running():
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(pool.aclose(), loop)
        return
    if not loop.is_closed():
        return  # an idle loop may run again: leave its connections to it
    connection_pool = pool.connection_pool
    connections = [
        *getattr(connection_pool, "_available_connections", []),
        *getattr(connection_pool, "_in_use_connections", []),
    ]
    for connection in connections:
        transport = getattr(getattr(connection, "_writer", None), "transport", None)
        raw = getattr(transport, "_sock", None)
        if isinstance(raw, socket.socket):
            raw.close()
        connection._reader = connection._writer = None


def decode_progress(raw: dict[Any, Any]) -> dict[str, Any]:
    """A progress hash as ``{"stage": str, "done": int, "total": int}`` (plus any extra fields)."""
    state: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.decode() if isinstance(key, bytes) else str(key)
        text = value.decode() if isinstance(value, bytes) else str(value)
        state[name] = int(text) if name in ("done", "total") and text.lstrip("-").isdigit() else text
    return state


def _validate_list(model: type[_M], data: Any, what: str) -> list[_M]:
    """A worker's JSON list, each item validated as :func:`_validate` does."""
    if not isinstance(data, list):
        raise JobFailed(f"worker returned {type(data).__name__} for {what}, expected a list")
    return [_validate(model, item) for item in data]


def _validate_lines(data: Any, what: str) -> list[str]:
    """A worker's JSON list of text lines; anything else is reported as a failed job, not a crash."""
    if not isinstance(data, list) or not all(isinstance(line, str) for line in data):
        raise JobFailed(
            f"the worker's reply for {what} is not a list of lines; are the bot and the worker the same "
            "Syllabot version?"
        )
    return list(data)


def _validate(model: type[_M], data: Any) -> _M:
    """Validate a worker's JSON into our model; a mismatch is reported as a failed job, not a crash."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise JobFailed(
            f"the worker's reply does not match this version's {model.__name__} ({exc.error_count()} "
            "errors); are the bot and the worker the same Syllabot version?"
        ) from exc
