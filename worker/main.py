"""`syllabot worker`: the arq worker, woken by Redis pub/sub instead of arq's 0.5 s poll.

Run it with ``syllabot worker`` or ``python -m worker.main`` (settings from the environment).
``arq worker.main.WorkerSettings`` also works, with arq's stock polling worker (slower round trip,
same jobs); the key prefix and Redis URL come from the environment either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from arq.connections import ArqRedis, RedisSettings
from arq.worker import Worker, func

from syllabot.shared.config import Settings, get_settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue_protocol import (
    CLAIM,
    FINISH_AND_PUSH,
    HEARTBEAT_TTL_S,
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
    beat,
    claim,
    finish_and_push,
    push_result,
)
from syllabot.shared.redis_conn import (
    REDIS_ERRORS,
    REDIS_TROUBLE,
    async_client_at,
    describe,
    is_redis_outage,
    is_sentinel,
    parse_sentinel_url,
    redis_trouble,
    resolve_redis_url,
    wait_for_redis,
)
from syllabot.worker.indexes import heap
from syllabot.worker.runtime import jobs
from syllabot.worker.runtime.hooks import WorkerHooks, install_hooks

log = logging.getLogger("syllabot.worker")

#: Safety-net poll when no wake-up arrives (delayed/retried jobs, a missed message).
IDLE_POLL_S = 0.5


class FastWorker(Worker):
    """An arq worker that is woken by pub/sub and claims jobs with one Lua call.

    Stock arq sleeps ``poll_delay`` (0.5 s) between polls, then spends ZRANGEBYSCORE plus three
    round trips per queued job (WATCH, EXISTS/ZSCORE, MULTI/EXEC) to claim it -- including jobs
    already running, which stay in the queue's sorted set until they finish. Here:

    * the worker sleeps on ``Keys.wake``, which clients publish to right after enqueueing; every
      worker on the channel wakes and the atomic claim decides which one runs each job;
    * one script (``shared/queue_protocol.py``) reads the due jobs and claims as many as there are
      free slots (setting arq's own
      ``arq:in-progress:<id>`` key, so everything downstream -- ``run_job``, retries, timeouts --
      is arq's unchanged code);
    * a finished job's result push and arq's end of the job are one script call
      (:meth:`finish_job`), not two round trips;
    * when all slots are busy and jobs are waiting, it waits for one of its own jobs to finish and
      claims again at once instead of sleeping a poll interval;
    * a claim lasts :data:`~shared.queue_protocol.IN_PROGRESS_TTL_S` (not arq's longest job timeout + 10 s)
      and the heartbeat (``worker.runtime.jobs``) renews it for the jobs still running, so the job of a
      worker that died is claimed again, and retried by arq, within seconds;
    * a lost Redis connection is logged and retried every poll interval instead of ending the
      worker, and the heartbeat stops as soon as this claim loop stops turning, so clients never
      see a live worker that no longer takes jobs.

    The 0.5 s poll remains only as a safety net (a missed wake-up, a deferred or retried job).
    """

    def __init__(
        self,
        *args: Any,
        wake_channel: str,
        idle_poll_s: float = IDLE_POLL_S,
        redis_url: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs["poll_delay"] = 0  # the wait happens in _wait_for_work instead
        super().__init__(*args, **kwargs)
        self.redis_url = redis_url
        self.wake_channel = wake_channel
        self.idle_poll_s = idle_poll_s
        self._pubsub: Any = None
        self._claim: Any = None
        self._finish: Any = None
        self._held: dict[str, tuple[bytes, float]] = {}  # job id -> (envelope, retry window s)
        self._backlog = False
        self._slot_free = asyncio.Event()
        self._last_turn = self.loop.time()
        self._redis_down = False
        self._beat_on_reconnect = False  # Redis was lost: beat as soon as it answers again
        # For the heartbeat and the jobs of worker.runtime.jobs (they also run under stock arq, without them).
        install_hooks(
            self.ctx,
            WorkerHooks(
                claim_loop_alive=self.claim_loop_alive,
                running_job_ids=self.running_job_ids,
                stopping=self.stopping,
                hold_result=self._hold_result,
            ),
        )

    async def main(self) -> None:
        """arq's main, once Redis answers: started before its Redis, the worker waits for it
        (saying so every few seconds) instead of exiting after arq's five connection retries."""
        if self._pool is None and self.redis_url:
            await wait_for_redis(self.redis_url, log=log)
            self._pool = self._open_pool(self.redis_url)
        await super().main()

    def _open_pool(self, url: str) -> ArqRedis:
        """The worker's pool from the product's one client factory (so a Sentinel URL follows the
        primary, and the socket timeouts are the bots' and the queue client's), set up as arq's
        ``create_pool`` would."""
        pool = async_client_at(url, ArqRedis)
        pool.job_serializer = self.job_serializer
        pool.job_deserializer = self.job_deserializer
        pool.default_queue_name = self.queue_name
        pool.expires_extra_ms = self.expires_extra_ms
        return pool

    def claim_loop_alive(self) -> bool:
        """Whether the claim loop still turns (it does at least every ``idle_poll_s`` when healthy)."""
        main = self.main_task
        if main is None or main.done():
            return False
        return self.loop.time() - self._last_turn < HEARTBEAT_TTL_S

    def running_job_ids(self) -> list[str]:
        return [job_id for job_id, task in self.tasks.items() if not task.done()]

    def stopping(self) -> bool:
        """Shutting down (SIGTERM/SIGINT, close()): a cancelled job will be run again elsewhere."""
        main = self.main_task
        return not self.allow_pick_jobs or main is None or main.done() or main.cancelling() > 0

    def _hold_result(self, job_id: str, payload: bytes, retry_s: float) -> bool:
        """Keep a finished job's envelope for :meth:`finish_job` (only for a job this worker's
        ``run_job`` runs: anything else would never reach it)."""
        if job_id not in self.tasks:
            return False
        self._held[job_id] = (payload, retry_s)
        return True

    async def finish_job(
        self,
        job_id: str,
        finish: bool,
        result_data: bytes | None,
        result_timeout_s: float | None,
        keep_result_forever: bool,
        incr_score: int | None,
        keep_in_progress: float | None,
    ) -> None:
        """arq's end of a job, with the job's held envelope pushed in the same round trip.

        Stock arq ends a job in a MULTI/EXEC of its own, after the job pushed its result in
        another; one script (``FINISH_AND_PUSH``) now does both, through an outage as the job's
        own push did. arq's other ends (a retry, a result kept, a cron job's progress) push first
        and leave the rest to arq. A full or read-only Redis refuses the script before it writes;
        arq's end, which only deletes, is then still tried."""
        held = self._held.pop(job_id, None)
        if held is not None:
            payload, retry_s = held
            if finish and result_data is None and keep_in_progress is None:
                if await self._deliver(job_id, retry_s, self._finish_and_push(job_id, payload)):
                    return  # pushed and ended in one call
            else:
                await self._deliver(
                    job_id, retry_s, lambda: push_result(self.pool, self.ctx["keys"], job_id, payload)
                )
        await super().finish_job(
            job_id, finish, result_data, result_timeout_s, keep_result_forever, incr_score, keep_in_progress
        )

    def _finish_and_push(self, job_id: str, payload: bytes) -> Callable[[], Awaitable[bool]]:
        if self._finish is None:
            self._finish = self.pool.register_script(FINISH_AND_PUSH)
        script, keys = self._finish, self.ctx["keys"]
        return lambda: finish_and_push(script, keys, self.queue_name, job_id, payload)

    async def _deliver(self, job_id: str, retry_s: float, push: Callable[[], Awaitable[bool]]) -> bool:
        """``push()`` through an outage as a job's own push would be; False when Redis refused it
        for its own state (full, read-only), which is logged: nothing was written."""
        try:
            await jobs.retry_through_outage(push, retry_s, self.stopping, job_id, "delivering its result")
        except REDIS_TROUBLE as exc:
            cause = redis_trouble(exc)
            if cause is None:
                raise
            log.warning("job %s: its result could not be delivered: %s", job_id, cause)
            return False
        return True

    def _release_sem_dec_counter_on_complete(self) -> None:
        super()._release_sem_dec_counter_on_complete()
        self._slot_free.set()

    async def _poll_iteration(self) -> None:
        self._last_turn = self.loop.time()
        if self.burst or self.allow_abort_jobs:  # modes this class does not speed up: stock arq
            await super()._poll_iteration()
            return
        for job_id, task in list(self.tasks.items()):
            if task.done():
                del self.tasks[job_id]
                try:
                    task.result()  # as arq does: surface errors of run_job itself
                except REDIS_TROUBLE as exc:  # its bookkeeping lost Redis: not the worker's end
                    if not is_redis_outage(exc):
                        raise
                    log.warning("job %s could not record its end in Redis: %s", job_id, exc)
        try:
            if self.allow_pick_jobs and self.job_counter < self.max_jobs:
                await self._claim_and_start(self.max_jobs - self.job_counter)
            await self.heart_beat()  # arq's health check: a full Redis refuses it (OOM)
        except REDIS_TROUBLE as exc:
            if not is_redis_outage(exc):
                raise
            if not self._redis_down:
                cause = redis_trouble(exc) or f"unreachable: {exc}"
                log.warning("Redis unavailable (%s); retrying every %.1f s", cause, self.idle_poll_s)
            self._redis_down = True
            self._beat_on_reconnect = True
            self._backlog = False
            await self._drop_pubsub()
            await asyncio.sleep(self.idle_poll_s)
            return
        if self._redis_down:
            log.info("Redis is back; taking jobs again")
            self._redis_down = False
        if self._beat_on_reconnect:
            await self._beat_now()
        await self._wait_for_work()

    async def _beat_now(self) -> None:
        """Re-advertise at once after Redis came back (a restarted Redis lost every heartbeat), rather
        than at the heartbeat task's next turn (up to 2 s): clients then see "no worker" only briefly,
        within the grace they give a freshly started Redis (``shared.queue.RECONNECT_GRACE_S``)."""
        self._beat_on_reconnect = False
        if "worker_id" in self.ctx and "keys" in self.ctx:
            with contextlib.suppress(*REDIS_ERRORS):
                await beat(
                    self.pool,
                    self.ctx["keys"],
                    self.ctx["worker_id"],
                    HEARTBEAT_TTL_S,
                    self.running_job_ids(),
                )

    async def _claim_and_start(self, free: int) -> None:
        if self._claim is None:
            self._claim = self.pool.register_script(CLAIM)
        claimed = await claim(self._claim, self.queue_name, free, self.queue_read_limit)
        self._backlog = claimed.backlog
        for job_id, score in claimed.jobs:
            await self.sem.acquire()  # never waits: we claimed no more than the free slots
            self.job_counter += 1
            task = self.loop.create_task(self.run_job(job_id, score))
            task.add_done_callback(lambda _: self._release_sem_dec_counter_on_complete())
            self.tasks[job_id] = task

    async def _wait_for_work(self) -> None:
        self._slot_free.clear()
        if self.job_counter >= self.max_jobs:
            # Full: a new job could not start anyway; claim again as soon as one of ours finishes.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._slot_free.wait(), self.idle_poll_s)
            return
        if self._backlog and self.allow_pick_jobs:  # due jobs were left for lack of slots; one is free
            return
        try:
            if self._pubsub is None:
                self._pubsub = self.pool.pubsub()
                await self._pubsub.subscribe(self.wake_channel)
            message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=self.idle_poll_s)
            if message is not None:
                # One poll serves every job published so far: drain what is already buffered.
                while await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=0.0):
                    pass
        except REDIS_TROUBLE as exc:
            if not is_redis_outage(exc):
                raise
            log.warning(
                "wake-up channel lost (%s); polling every %.1f s until it is back", exc, self.idle_poll_s
            )
            self._beat_on_reconnect = True
            await self._drop_pubsub()
            await asyncio.sleep(self.idle_poll_s)

    async def _drop_pubsub(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def close(self, grace_s: float = 10.0) -> None:
        """Stop taking jobs, let running ones finish (up to ``grace_s``), then close as arq does.

        arq's own ``close`` cancels whatever still runs, and a job cancelled in the middle of its
        bookkeeping would make ``close`` itself raise.
        """
        self.allow_pick_jobs = False
        running = [task for task in self.tasks.values() if not task.done()]
        if running:
            await asyncio.wait(running, timeout=grace_s)
        try:
            with warnings.catch_warnings():  # arq 0.28 calls redis-py's deprecated close()
                warnings.simplefilter("ignore", DeprecationWarning)
                await super().close()
        finally:
            # Even when arq's close failed (Redis gone, a job's bookkeeping raised): stop beating and
            # leave the heartbeat set, or clients would queue work for a worker that is gone.
            await jobs.stop_heartbeat(self.ctx)
            await self._drop_pubsub()


def arq_redis_settings(url: str) -> RedisSettings:
    """arq's own connection settings for ``url``, for the stock ``arq`` command line
    (``syllabot worker`` opens its pool with :func:`~shared.redis_conn.async_client_at` instead)."""
    if is_sentinel(url):
        target = parse_sentinel_url(url)
        return RedisSettings(
            host=list(target.sentinels),
            sentinel=True,
            sentinel_master=target.service,
            password=target.password,
            database=target.db,
        )
    return RedisSettings.from_dsn(url)


def worker_kwargs(settings: Settings) -> dict[str, Any]:
    """The arq ``Worker`` keyword arguments for these settings (also the body of ``WorkerSettings``)."""
    keys = Keys(settings.key_prefix)
    redis_settings = arq_redis_settings(resolve_redis_url(settings))
    ask_timeout = settings.ask_timeout_s + 5
    return {
        "functions": [
            func(jobs.ask, name=JOB_ASK, timeout=ask_timeout, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.ingest, name=JOB_INGEST, timeout=INGEST_TIMEOUT_S + 60, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.reindex, name=JOB_REINDEX, timeout=INGEST_TIMEOUT_S + 60, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.sources, name=JOB_SOURCES, timeout=ask_timeout, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.remove, name=JOB_REMOVE, timeout=INGEST_TIMEOUT_S + 60, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.mark, name=JOB_MARK, timeout=INGEST_TIMEOUT_S + 60, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.conflicts, name=JOB_CONFLICTS, timeout=ask_timeout, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.card, name=JOB_CARD, timeout=ask_timeout, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.gap_report, name=JOB_REPORT, timeout=ask_timeout, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.collections, name=JOB_COLLECTIONS, timeout=ask_timeout, max_tries=jobs.JOB_MAX_TRIES),
            func(jobs.drop, name=JOB_DROP, timeout=INGEST_TIMEOUT_S + 60, max_tries=jobs.JOB_MAX_TRIES),
        ],
        "queue_name": keys.queue,
        "redis_settings": redis_settings,
        "on_startup": jobs.startup,
        "on_shutdown": jobs.shutdown,
        "max_jobs": settings.worker_max_jobs,
        # Results travel on Keys.result_list; arq's pickled copy would be unread and outside the prefix.
        "keep_result": 0,
        "health_check_interval": 10,
        # On SIGTERM, let running jobs finish (up to 30 s) before cancelling them.
        "job_completion_wait": 30,
        "ctx": {"settings": settings},
    }


def build_worker(settings: Settings, kind: type[FastWorker] | None = None, **overrides: Any) -> FastWorker:
    """A ready-to-run worker (call ``run()``, or ``await async_run()`` inside a loop); ``kind``: a
    subclass to build instead (a benchmark's variant)."""
    kwargs = worker_kwargs(settings)
    kwargs.update(overrides)
    return (kind or FastWorker)(
        wake_channel=Keys(settings.key_prefix).wake, redis_url=resolve_redis_url(settings), **kwargs
    )


def configure_logging(level: int = logging.INFO) -> None:
    """Plain lines on stderr; the per-question ``syllabot.answers`` lines are JSON already.

    arq's per-job and httpx's per-request INFO lines are turned down to warnings: arq's repeat each
    question's text (which our JSON line deliberately leaves out), and both double the log volume
    under load.
    """
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    for noisy in ("arq.worker", "httpx"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


def run_worker(settings: Settings | None = None) -> None:
    """Run a worker in the foreground until SIGINT/SIGTERM (the ``syllabot worker`` command)."""
    settings = settings or get_settings()
    configure_logging()
    log.info(
        "starting worker on %s, queue %s, max_jobs=%d",
        describe(resolve_redis_url(settings)),
        Keys(settings.key_prefix).queue,
        settings.worker_max_jobs,
    )
    heap.enable()  # snapshots out of the garbage collector's way (worker/indexes/heap.py)
    # arq's Worker binds to the current event loop at construction; give it a fresh one.
    asyncio.set_event_loop(asyncio.new_event_loop())
    build_worker(settings).run()


def __getattr__(name: str) -> Any:
    """``WorkerSettings`` for the ``arq`` command line, built on first access from the environment."""
    if name == "WorkerSettings":
        return type("WorkerSettings", (), worker_kwargs(get_settings()))
    raise AttributeError(name)


if __name__ == "__main__":
    run_worker()
