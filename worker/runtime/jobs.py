"""The arq jobs a worker serves: thin adapters over the engine and the answering pipeline
(``worker.answerers.pipeline``, which the CLI also runs in-process).

Every job delivers its outcome the same way: a JSON envelope pushed onto
``Keys.result_list(job_id)`` (see :mod:`shared.queue_protocol`), which the waiting client pops with BLPOP.
The synchronous :class:`~worker.indexes.engine.Engine` runs in threads, so a long ingest or a slow search
never blocks the event loop that is serving other questions: questions on the CPU pool of
:mod:`worker.runtime.cpu_pool` (one thread per core, queries embedded in batches), writes
(ingest, reindex, remove) on a small pool of their own, one at a time per collection, so uploads
waiting for a collection's build lock never take the threads questions need, and a build of one
collection never holds up a write to another.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from syllabot.shared.config import Settings
from syllabot.shared.deadline import measure_offset_ms, redis_now_ms
from syllabot.shared.gap_report import GapReport
from syllabot.shared.keys import Keys
from syllabot.shared.metrics import MetricsEndpoint, start_endpoint
from syllabot.shared.partials import PartialPublisher
from syllabot.shared.queue import SchemaMismatch
from syllabot.shared.queue_protocol import (
    HEARTBEAT_INTERVAL_S,
    HEARTBEAT_TTL_S,
    RESULT_TTL_S,
    beat,
    error_envelope,
    ok_envelope,
    push_result,
)
from syllabot.shared.redis_conn import (
    REDIS_ERRORS,
    REDIS_TROUBLE,
    is_redis_outage,
    redis_trouble,
    retry_while_lost,
)
from syllabot.shared.schema import SCHEMA_VERSION, AskRequest, IngestReport, wire_version
from syllabot.shared.source_names import VersionGone
from syllabot.shared.threads import ThreadStore
from syllabot.worker.answerers import get_answerer
from syllabot.worker.answerers.answer_cache import AnswerCache
from syllabot.worker.answerers.pipeline import answer_question
from syllabot.worker.answerers.streaming import streaming_to
from syllabot.worker.indexes.cancel import Cancelled, cancel_requests, engine_with
from syllabot.worker.indexes.snapshot_cache import SnapshotCache, publish_stats
from syllabot.worker.ops.metrics import WorkerMetrics, ingest_failure_kind
from syllabot.worker.ops.question_log import QuestionLog
from syllabot.worker.ops.report import build_report
from syllabot.worker.query.card import card_lines
from syllabot.worker.runtime.cpu_pool import CpuPool
from syllabot.worker.runtime.hooks import hooks_of

if TYPE_CHECKING:
    from syllabot.worker.indexes.engine import Engine, Progress

log = logging.getLogger("syllabot.worker")
answer_log = logging.getLogger("syllabot.answers")

#: How long a progress hash outlives its job, so a bot can still show the final count.
PROGRESS_TTL_S = 3600
#: Minimum gap between two progress writes (the engine may report every chunk).
PROGRESS_EVERY_S = 0.2
#: arq's ``max_tries`` of every job: one retry, for a job whose worker died or was stopped mid-job.
JOB_MAX_TRIES = 2
#: Threads for writes (ingest, reindex, remove): builds of this many collections run at once; writes
#: to one collection queue on an asyncio lock (no thread) behind the build running there.
WRITE_THREADS = 4

_T = TypeVar("_T")


# --- worker lifecycle --------------------------------------------------------------------------


def load_engine(settings: Settings) -> Engine:
    """The engine with its embedder loaded now, and the course card's slot examples embedded with
    it, so the first question pays for neither."""
    from syllabot.worker.indexes.engine import Engine

    engine = Engine(settings)
    engine.slot_meanings(engine.embedder)
    return engine


async def startup(ctx: dict[str, Any]) -> None:
    """Load the engine (and with it the embedder) and the answerer once, then start beating.

    The first heartbeat is written only once the worker can actually answer, so a client never
    sees a live worker that is still loading its model.
    """
    settings: Settings = ctx["settings"]
    ctx["keys"] = Keys(settings.key_prefix)
    if ctx.get("engine") is None:  # tests and benchmarks may hand in their own
        ctx["engine"] = await asyncio.to_thread(load_engine, settings)
    if ctx.get("answerer") is None:
        ctx["answerer"] = get_answerer(settings)
    ctx["cpu"] = CpuPool(ctx["engine"], settings)
    ctx["writes"] = ThreadPoolExecutor(max_workers=WRITE_THREADS, thread_name_prefix="syllabot-write")
    ctx["write_locks"] = {}
    ctx["worker_id"] = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    ctx["clock_offset_ms"] = await measure_offset_ms(ctx["redis"])
    ctx["expired_asks"] = 0
    if settings.answer_cache_ttl_s > 0:
        ctx["answer_cache"] = AnswerCache(
            ctx["redis"], ctx["keys"], settings.answer_cache_ttl_s, settings.answerer
        )
    ctx["questions"] = QuestionLog(ctx["redis"], ctx["keys"], settings.keep_questions_days)
    ctx["threads"] = ThreadStore.from_settings(ctx["redis"], settings)
    if ctx.get("metrics") is None:  # tests may hand in their own
        ctx["metrics"] = WorkerMetrics()
    ctx["metrics"].watch_cache(ctx["engine"].cache.stats)
    ctx["metrics_endpoint"] = start_endpoint(settings, ctx["metrics"].registry, f"worker {ctx['worker_id']}")
    await _sample_queue_depth(ctx)
    try:
        await beat(ctx["redis"], ctx["keys"], ctx["worker_id"])
    except REDIS_TROUBLE as exc:  # a full or read-only Redis refuses it: the heartbeat retries
        if not is_redis_outage(exc):
            raise
        log.warning(
            "first heartbeat refused (%s); retrying every %g s",
            redis_trouble(exc) or exc,
            HEARTBEAT_INTERVAL_S,
        )
    await _publish_cache_stats(ctx)
    ctx["heartbeat"] = asyncio.create_task(_heartbeat(ctx), name="syllabot-heartbeat")
    log.info(
        "worker %s ready (embedder=%s, answerer=%s)", ctx["worker_id"], settings.embedder, settings.answerer
    )


async def shutdown(ctx: dict[str, Any]) -> None:
    await stop_heartbeat(ctx)
    questions: QuestionLog | None = ctx.get("questions")
    if questions is not None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2):
                await questions.flush()
    endpoint: MetricsEndpoint | None = ctx.pop("metrics_endpoint", None)
    if endpoint is not None:
        await asyncio.to_thread(endpoint.close)
    writes: ThreadPoolExecutor | None = ctx.pop("writes", None)
    if writes is not None:
        writes.shutdown(wait=False, cancel_futures=True)
    cpu: CpuPool | None = ctx.pop("cpu", None)
    if cpu is not None:
        cpu.close()
    answerer = ctx.get("answerer")
    close = getattr(answerer, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()


async def stop_heartbeat(ctx: dict[str, Any]) -> None:
    """Stop beating and leave the set of live workers (idempotent, never raises)."""
    task: asyncio.Task | None = ctx.pop("heartbeat", None)
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    await _leave(ctx)


async def _leave(ctx: dict[str, Any]) -> None:
    if "worker_id" in ctx and ctx.get("redis") is not None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2):
                await ctx["redis"].zrem(ctx["keys"].workers, ctx["worker_id"])


async def _heartbeat(ctx: dict[str, Any]) -> None:
    """Its own task, so a worker whose job slots are all busy still counts as alive.

    Under :class:`worker.main.FastWorker` it beats only while the claim loop turns (a worker whose
    loop died or hangs must not look alive) and renews the claims of the jobs still running.
    """
    hooks = hooks_of(ctx)
    advertised = True
    while True:
        await asyncio.sleep(HEARTBEAT_INTERVAL_S)
        if not hooks.claim_loop_alive():
            if advertised:
                log.warning("the claim loop stopped turning; no longer advertising this worker")
                advertised = False
            await _leave(ctx)
            continue
        try:
            job_ids = hooks.running_job_ids()
            await beat(ctx["redis"], ctx["keys"], ctx["worker_id"], HEARTBEAT_TTL_S, job_ids)
            advertised = True
            ctx["clock_offset_ms"] = await measure_offset_ms(ctx["redis"])
        except Exception as exc:  # nothing may kill the heartbeat; the next beat retries
            # A Redis blip is expected and needs no traceback; anything else does.
            log.warning("heartbeat failed: %s", exc, exc_info=not isinstance(exc, REDIS_ERRORS))
            continue
        await _sample_queue_depth(ctx)
        await _publish_cache_stats(ctx)


async def _publish_cache_stats(ctx: dict[str, Any]) -> None:
    """The snapshot cache's figures for ``syllabot doctor``, riding on the heartbeat (one SET)."""
    cache: SnapshotCache = ctx["engine"].cache
    try:
        await publish_stats(ctx["redis"], ctx["keys"].worker_cache(ctx["worker_id"]), cache.stats())
    except Exception as exc:  # noqa: BLE001 - a report is a nicety: logged, never raised
        log.debug("cache figures not published: %s", exc)


async def _sample_queue_depth(ctx: dict[str, Any]) -> None:
    """Refresh ``syllabot_queue_depth`` (one script call), riding on the heartbeat's cadence so the
    gauge costs no timer of its own; a failed read keeps the last value rather than the heartbeat."""
    metrics: WorkerMetrics | None = ctx.get("metrics")
    if metrics is None:
        return
    try:
        await metrics.sample_queue_depth(ctx["redis"], ctx["keys"])
    except REDIS_ERRORS as exc:  # the heartbeat reports Redis being away
        log.debug("queue depth not sampled: %s", exc)
    except Exception:  # a gauge is a nicety: logged, never raised
        log.warning("queue depth not sampled", exc_info=True)


# --- delivery ----------------------------------------------------------------------------------


#: What a job may end with that is nobody's fault, for its asker to be told and the log to say in
#: one line: a build its client cancelled (Ctrl-C; logged by :func:`_build`), an admin's mark that
#: lost a race with another admin's upload. Not re-raised, so arq logs no traceback at ERROR.
EXPECTED_OUTCOMES: tuple[type[Exception], ...] = (Cancelled, VersionGone)


async def _deliver(ctx: dict[str, Any], work: Awaitable[Any]) -> None:
    """Run ``work`` and push its result (or its error) to the job's result list.

    Errors are re-raised after delivery so arq logs and counts them as failed jobs too, except the
    :data:`EXPECTED_OUTCOMES`, which are delivered the same way and logged in one line.
    """
    try:
        result = await work
    except EXPECTED_OUTCOMES as exc:
        await _push(ctx, error_envelope(exc))
        if isinstance(exc, VersionGone):
            log.warning("job %s refused, as its asker is told: %s", ctx["job_id"], exc)
        return
    except Exception as exc:
        await _push(ctx, error_envelope(exc))
        raise
    except asyncio.CancelledError:
        # arq's job timeout (or a shutdown) cancelled the job. On shutdown arq queues it again for
        # another worker, unless this was its last try; otherwise tell the client now rather than
        # let it wait out its own timeout.
        stopping = hooks_of(ctx).stopping()
        last_try = int(ctx.get("job_try") or 1) >= JOB_MAX_TRIES
        if not stopping or last_try:
            reason = "stopped" if stopping else "timed out"
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await asyncio.shield(
                        _push(
                            ctx, error_envelope(RuntimeError(f"the job {reason} on the worker")), hold=False
                        )
                    )
        raise
    await _push(ctx, ok_envelope(result))


#: How long a worker keeps trying to deliver a finished job's result through a Redis outage (a
#: Sentinel failover takes a few seconds), and how often: the push is once-only (``push_result``),
#: so a retry can never deliver twice.
DELIVERY_RETRY_S = 15.0
DELIVERY_RETRY_EVERY_S = 0.25
#: Retries stop this long before the asker's deadline: the asker gives up at the deadline, on its
#: own host's view of Redis's clock, and a push landing just after it would be read by nobody.
DELIVERY_DEADLINE_MARGIN_S = 1.0


def _asker_left_s(ctx: dict[str, Any]) -> float | None:
    """Seconds until this job's asker stops waiting (``asker_deadline_ms``, set by ``ask``; Redis
    clock; negative once passed); None without a deadline."""
    deadline_ms = ctx.get("asker_deadline_ms")
    if deadline_ms is None:
        return None
    return float(deadline_ms - redis_now_ms(ctx.get("clock_offset_ms", 0.0))) / 1000.0


def _retry_window(ctx: dict[str, Any]) -> float:
    """How long a job may keep trying through an outage: :data:`DELIVERY_RETRY_S`, and never up to
    its asker's deadline: an answer delivered after the asker was told Redis is unreachable would be
    read by nobody."""
    left = _asker_left_s(ctx)
    if left is None:
        return DELIVERY_RETRY_S
    return max(0.0, min(DELIVERY_RETRY_S, left - DELIVERY_DEADLINE_MARGIN_S))


async def _through_outage(
    ctx: dict[str, Any], attempt: Callable[[], Awaitable[_T]], doing: str = "answering"
) -> _T:
    """``attempt()``, made again while Redis is lost in the middle of it, within
    :func:`_retry_window`. Only for what may be done twice: answering only reads (the index
    pointer, the conversation) and writes what may be written twice, and a result push is
    once-only, so a question caught in a failover is answered once the new primary answers, not
    failed with a socket error."""
    return await retry_through_outage(
        attempt, _retry_window(ctx), hooks_of(ctx).stopping, ctx["job_id"], doing
    )


async def retry_through_outage(
    attempt: Callable[[], Awaitable[_T]],
    window_s: float,
    stopping: Callable[[], bool],
    job_id: str,
    doing: str,
) -> _T:
    """``attempt()`` through a Redis outage (``retry_while_lost``) every
    :data:`DELIVERY_RETRY_EVERY_S` for up to ``window_s``, never once the worker is ``stopping``,
    each loss logged: a job's own Redis work (:func:`_through_outage`) and the worker's end of a
    job (``FastWorker.finish_job``)."""
    return await retry_while_lost(
        attempt,
        window_s,
        DELIVERY_RETRY_EVERY_S,
        stopping,
        lambda exc: log.warning("job %s: Redis lost while %s (%s); trying again", job_id, doing, exc),
    )


async def _push(ctx: dict[str, Any], payload: bytes, hold: bool = True) -> None:
    """Deliver ``payload``, waiting out a Redis outage for up to :data:`DELIVERY_RETRY_S`; or, with
    ``hold``, hand it to the worker to push with arq's end of the job (``FastWorker.finish_job``),
    one round trip for both. A cancelled job pushes at once (``hold=False``): arq may not end it.

    Why: the answer is computed; dropping it because the primary died a moment ago would leave the
    asker to wait for the job's claim to lapse and another worker to compute it again (10 s and
    more, measured in the failover drill), when the new primary takes the push seconds later.
    """
    left = _asker_left_s(ctx)
    if left is not None and left <= 0:
        # Its asker has stopped waiting (a retry after an outage ran past the deadline): a result
        # pushed now would be read by nobody, and would look like an answer to a question that left.
        log.warning("job %s finished after its asker's deadline; its result is not delivered", ctx["job_id"])
        return
    if hold and hooks_of(ctx).hold_result(ctx["job_id"], payload, _retry_window(ctx)):
        return  # the worker pushes it with arq's end of the job, in one round trip
    await _through_outage(
        ctx, lambda: push_result(ctx["redis"], ctx["keys"], ctx["job_id"], payload), "delivering its result"
    )


def _progress_writer(ctx: dict[str, Any], collection: str) -> Progress:
    """A thread-safe ``progress(stage, done, total)`` that writes the job's progress hash.

    The engine calls it from its worker thread; the write is scheduled on the event loop and
    throttled, with the final count (done == total) always written.
    """
    loop = asyncio.get_running_loop()
    key = ctx["keys"].progress(collection, ctx["job_id"])
    pool = ctx["redis"]
    last = [0.0]

    async def write(mapping: dict[str, Any]) -> None:
        async with pool.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=mapping)
            pipe.expire(key, PROGRESS_TTL_S)
            await pipe.execute()

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < PROGRESS_EVERY_S:
            return
        last[0] = now
        mapping = {"stage": stage, "done": int(done), "total": int(total)}
        asyncio.run_coroutine_threadsafe(write(mapping), loop)

    return progress


async def _write(
    ctx: dict[str, Any],
    collection: str,
    fn: Callable[..., _T],
    *args: Any,
    progress: Progress | None = None,
) -> _T:
    """Run an engine write on the worker's write pool (the default pool without one), after the
    writes to the same collection that this worker is already running; other collections do not wait."""
    locks: dict[str, asyncio.Lock] = ctx.setdefault("write_locks", {})
    lock = locks.setdefault(collection, asyncio.Lock())
    if lock.locked():
        log.info("a write to %s waits for the one this worker is running there", collection)
        if progress is not None:
            progress(f"waiting for another build of '{collection}' on this worker", 0, 0)
    async with lock:
        writes: ThreadPoolExecutor | None = ctx.get("writes")
        if writes is None:
            return await asyncio.to_thread(fn, *args)
        return await asyncio.get_running_loop().run_in_executor(writes, functools.partial(fn, *args))


async def _build(
    ctx: dict[str, Any],
    collection: str,
    method: str,
    *args: Any,
    progress: Progress | None = None,
) -> Any:
    """``engine.<method>(*args)`` through :func:`_write`, cancellable by the client that asked for
    it (Ctrl-C of `syllabot index`): the job's own token, set when ``Keys.cancel(job_id)`` appears,
    stops the build before it publishes, and the client is told ``Cancelled``."""
    async with cancel_requests(ctx["redis"], ctx["keys"].cancel(ctx["job_id"])) as token:
        engine = engine_with(ctx["engine"], token)
        try:
            return await _write(ctx, collection, getattr(engine, method), *args, progress=progress)
        except Cancelled:
            log.info(
                "job %s (%s of %s) cancelled by its client; nothing published",
                ctx["job_id"],
                method,
                collection,
            )
            raise


# --- the jobs (arq functions: first argument is the context) -----------------------------------


async def _drop_expired(ctx: dict[str, Any], request: AskRequest, late_s: float) -> None:
    """Count and log a question whose asker stopped waiting; it is not answered."""
    ctx["expired_asks"] = int(ctx.get("expired_asks", 0)) + 1
    metrics: WorkerMetrics | None = ctx.get("metrics")
    if metrics is not None:
        metrics.expired(request)
    answer_log.warning(
        json.dumps(
            {
                "event": "expired",
                "pid": os.getpid(),
                "collection": request.collection,
                "platform": request.platform,
                "late_s": round(late_s, 3),
                "job_try": ctx.get("job_try"),
            }
        )
    )
    with contextlib.suppress(Exception):
        await ctx["redis"].incr(ctx["keys"].expired_asks)


async def ask(ctx: dict[str, Any], request: dict[str, Any]) -> None:
    if wire_version(request) != SCHEMA_VERSION:  # a bot of another version: say which to upgrade

        async def refuse() -> None:
            raise SchemaMismatch(bot=wire_version(request), worker=SCHEMA_VERSION)

        await _deliver(ctx, refuse())
        return
    question = AskRequest.model_validate(request)
    ctx["asker_deadline_ms"] = question.deadline_ms  # ctx is this job's own (arq copies it per job)
    left = _asker_left_s(ctx)
    if left is not None and left <= 0:
        # Nobody waits for this answer any more (a queue backlog, a Redis outage, a retry): computing
        # it would take a slot from a question someone still waits for. Nothing is pushed.
        await _drop_expired(ctx, question, -left)
        return

    metrics: WorkerMetrics | None = ctx.get("metrics")
    queue_ms = queued_ms(ctx)
    versions: list[str | None] = []

    async def work() -> dict:
        margin = ctx["settings"].answer_margin_s
        # The asker shows the answer while it is written: partials go to Keys.partials (shared/partials.py).
        publish = None
        if question.stream:
            publish = PartialPublisher(
                ctx["redis"], ctx["keys"].partials(ctx["job_id"]), RESULT_TTL_S
            ).publish
        try:
            with streaming_to(publish):
                answer = await _through_outage(
                    ctx,
                    lambda: answer_question(
                        ctx["engine"],
                        ctx["answerer"],
                        question,
                        _asker_left_s(ctx),
                        margin,
                        queue_ms=queue_ms,
                        threads=ctx.get("threads"),
                        cpu=ctx.get("cpu"),
                        cache=ctx.get("answer_cache"),
                        questions=ctx.get("questions"),
                    ),
                )
        except Exception:
            if metrics is not None:
                metrics.failed(question)
            raise
        except asyncio.CancelledError:
            # arq's timeout gives up on the question; a shutdown hands it to another worker, which
            # counts it there.
            if metrics is not None and not hooks_of(ctx).stopping():
                metrics.failed(question)
            raise
        if metrics is not None:
            metrics.answered(question, answer)
        versions.append(answer.index_version)
        return answer.model_dump(mode="json")

    await _deliver(ctx, work())
    if metrics is not None and versions and versions[0] != metrics.index_version(question.collection):
        await _record_index_size(ctx, metrics, question.collection)


def queued_ms(ctx: dict[str, Any]) -> float | None:
    """Milliseconds from enqueueing to the start of this run, on the Redis server's clock (the
    enqueue script stamps the job with it; ``clock_offset_ms`` maps this host's clock onto it).
    A retry counts from the first enqueue: that is how long the asker has been waiting."""
    enqueued = ctx.get("enqueue_time")
    if enqueued is None:
        return None
    return max(0.0, redis_now_ms(ctx.get("clock_offset_ms", 0.0)) - enqueued.timestamp() * 1000.0)


async def _record_index_size(ctx: dict[str, Any], metrics: WorkerMetrics, collection: str) -> None:
    """Set ``syllabot_index_chunks`` for the snapshot this worker has just loaded to answer.

    Called after the answer is delivered, and only when the answer's index version is not the one
    last measured, so a question costs nothing extra unless the index moved on (then one GET, and
    the snapshot the search has just cached)."""
    try:
        snapshot = await asyncio.to_thread(ctx["engine"].snapshot, collection)
    except REDIS_ERRORS as exc:  # the heartbeat reports Redis being away
        log.debug("index size of %s not read: %s", collection, exc)
        return
    except Exception:  # a gauge is a nicety: logged with its traceback (a bug), never raised
        log.warning("index size of %s not read", collection, exc_info=True)
        return
    if snapshot is not None and snapshot.version != metrics.index_version(collection):
        metrics.index_loaded(collection, snapshot.version, len(snapshot))


def _record_build(ctx: dict[str, Any], report: IngestReport) -> None:
    """A published build sets its collection's ``syllabot_index_chunks``."""
    metrics: WorkerMetrics | None = ctx.get("metrics")
    if metrics is not None and report.changed:
        metrics.index_loaded(report.collection, report.index_version, report.total_chunks)


async def _count_ingest_failures(
    ctx: dict[str, Any], report: IngestReport, files: list[tuple[str, bytes]]
) -> None:
    """Count each refused upload in ``syllabot_ingest_failures_total{kind}``."""
    metrics: WorkerMetrics | None = ctx.get("metrics")
    refused = [f.file for f in report.files if not f.ok]
    if metrics is None or not refused:
        return
    by_name = dict(files)
    max_bytes = ctx["settings"].max_document_bytes
    for name in refused:
        data = by_name.get(name)
        if data is None:
            continue
        try:
            kind = await asyncio.to_thread(ingest_failure_kind, name, data, max_bytes)
        except Exception:  # a counter is a nicety: logged with its traceback (a bug), never raised
            log.warning("could not classify the refusal of %s", name, exc_info=True)
            continue
        metrics.ingest_failed(kind)


async def ingest(
    ctx: dict[str, Any], collection: str, files: list[tuple[str, bytes]], who: str, replace: bool = False
) -> None:
    reports: list[IngestReport] = []

    async def work() -> dict:
        progress = _progress_writer(ctx, collection)
        report = await _build(
            ctx,
            collection,
            "ingest",
            collection,
            list(files),
            who,
            progress,
            replace,
            progress=progress,
        )
        reports.append(report)
        _record_build(ctx, report)
        return report.model_dump(mode="json")

    await _deliver(ctx, work())
    for report in reports:  # after delivery: the uploader does not wait for the counting
        await _count_ingest_failures(ctx, report, files)


async def reindex(ctx: dict[str, Any], collection: str, who: str = "") -> None:
    async def work() -> dict:
        progress = _progress_writer(ctx, collection)
        report = await _build(ctx, collection, "reindex", collection, progress, progress=progress)
        _record_build(ctx, report)
        log.info("reindex of %s by %s -> %s", collection, who or "?", report.index_version)
        return report.model_dump(mode="json")

    await _deliver(ctx, work())


async def sources(ctx: dict[str, Any], collection: str) -> None:
    async def work() -> list:
        infos = await asyncio.to_thread(ctx["engine"].sources, collection)
        return [info.model_dump(mode="json") for info in infos]

    await _deliver(ctx, work())


async def conflicts(ctx: dict[str, Any], collection: str) -> None:
    async def work() -> list:
        found = await asyncio.to_thread(ctx["engine"].conflicts, collection)
        return [entry.model_dump(mode="json") for entry in found]

    await _deliver(ctx, work())


async def card(ctx: dict[str, Any], collection: str) -> None:
    """The collection's course card as the teacher reads it (``card_lines``, as `syllabot card`)."""

    async def work() -> list[str]:
        engine: Engine = ctx["engine"]
        return await asyncio.to_thread(lambda: card_lines(engine.card(collection)))

    await _deliver(ctx, work())


async def remove(ctx: dict[str, Any], collection: str, doc_id: str, who: str = "") -> None:
    async def work() -> dict:
        report = await _build(ctx, collection, "remove", collection, doc_id)
        _record_build(ctx, report)
        log.info("removed %s from %s by %s -> %s", doc_id, collection, who or "?", report.index_version)
        return report.model_dump(mode="json")

    await _deliver(ctx, work())


async def mark(
    ctx: dict[str, Any],
    collection: str,
    doc_id: str,
    status: str,
    by: str | None = None,
    who: str = "",
    seen: dict[str, str] | None = None,
) -> None:
    """An admin marks a document superseded (optionally by another) or current (``Engine.mark``);
    ``seen``: the versions the admin looked up, refused once replaced (``VersionGone``)."""

    async def work() -> dict:
        report = await _build(ctx, collection, "mark", collection, doc_id, status, by, seen)
        _record_build(ctx, report)
        log.info(
            "marked %s %s in %s by %s -> %s", doc_id, status, collection, who or "?", report.index_version
        )
        return report.model_dump(mode="json")

    await _deliver(ctx, work())


async def collections(ctx: dict[str, Any]) -> None:
    async def work() -> list:
        infos = await asyncio.to_thread(ctx["engine"].collections)
        return [info.model_dump(mode="json") for info in infos]

    await _deliver(ctx, work())


async def drop(ctx: dict[str, Any], collection: str, who: str = "") -> None:
    async def work() -> dict:
        report = await _write(ctx, collection, ctx["engine"].drop, collection)
        log.info("dropped collection %s by %s: %d keys", collection, who or "?", report.keys)
        return report.model_dump(mode="json")

    await _deliver(ctx, work())


async def gap_report(ctx: dict[str, Any], collection: str, days: int) -> None:
    """The teacher's gap report of ``collection`` over the last ``days`` days (worker/ops/report.py)."""

    async def work() -> dict:
        questions: QuestionLog = ctx["questions"]
        engine = ctx["engine"]
        report: GapReport = await build_report(
            ctx["redis"],
            ctx["keys"],
            questions,
            collection,
            days,
            lambda texts: engine.embedder.embed_queries(texts),
            lambda: engine.conflicts(collection),
        )
        log.info("gap report of %s over %d days: %d topics", collection, days, len(report.topics))
        return report.model_dump(mode="json")

    await _deliver(ctx, work())
