"""Cancelling a build: a token the terminal sets on Ctrl-C or SIGTERM, and the build checks.

A build (index, re-index, remove) checks its token between files, pages and embedder calls (each
cut to at most ``pipeline.CHECK_EVERY_S`` at the speed measured so far), so it stops within a
second on any machine, and once more at the one point that matters: just before
it publishes. :meth:`CancelToken.commit` and :meth:`CancelToken.cancel` decide, under one lock,
which of the two happened first, so the terminal never says "nothing was published" about a
build that was already publishing (it then waits for the publish and says so instead).

A build a worker runs for the terminal has a token of its own per job (:func:`engine_with`),
cancelled when the terminal asks (:func:`cancel_requests`, watching ``Keys.cancel(job_id)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any, TypeVar

log = logging.getLogger("syllabot.worker")
E = TypeVar("E")


class Cancelled(Exception):
    """The build was cancelled before it published anything: the previous index is unchanged."""


class CancelToken:
    """Set once by whoever cancels; checked by the build."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._committed = False
        #: Set when a build in this process uses the token: only then does a signal cancel through
        #: it (work a worker does for the terminal is not stopped by the terminal's token).
        self.armed = False

    def cancel(self) -> bool:
        """Cancel the build; False when it had already started publishing (it then completes)."""
        with self._lock:
            if self._committed:
                return False
            self._cancelled = True
            return True

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def check(self) -> None:
        """Raise :class:`Cancelled` once the build was cancelled."""
        if self._cancelled:
            raise Cancelled("cancelled before anything was published")

    def commit(self) -> None:
        """Called just before publishing: raise :class:`Cancelled`, or from now on refuse to cancel."""
        with self._lock:
            self.check()
            self._committed = True


#: How often a worker's write job looks for its client's cancel request (``Keys.cancel``): one
#: EXISTS per job per tick, and the build stops within this plus its own next check.
CANCEL_POLL_S = 0.2


@contextlib.asynccontextmanager
async def cancel_requests(redis: Any, key: str, poll_s: float = CANCEL_POLL_S) -> AsyncIterator[CancelToken]:
    """A token that a client's cancel request (``key`` set, see ``QueueClient._request_cancel``)
    cancels while the block runs: a worker's build for a terminal whose user pressed Ctrl-C stops
    before it publishes, as a build in the terminal's own process does. A build already publishing
    completes (:meth:`CancelToken.cancel` returns False) and the client is told so by its result."""
    from syllabot.shared.redis_conn import REDIS_ERRORS  # here: the CLI imports this module at start

    token = CancelToken()

    async def watch() -> None:
        while not token.cancelled:
            await asyncio.sleep(poll_s)
            try:
                requested = await redis.exists(key)
            except REDIS_ERRORS:
                continue  # Redis away: the client's own wait reports that
            if requested:
                if not token.cancel():
                    log.info("cancel request %s came once the build was publishing; it completes", key)
                return

    task = asyncio.create_task(watch(), name="syllabot-cancel-watch")
    try:
        yield token
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def engine_with(engine: E, token: CancelToken) -> E:
    """``engine`` for one job, its builds checking ``token``: the worker's one engine is shared by
    concurrent jobs (its Redis client, embedder and snapshot cache included), so each write gets a
    shallow copy whose ``cancel`` is its own instead of cancelling every build of the worker."""
    if hasattr(engine, "client"):
        _ = engine.client  # opened once, on the shared engine, not once per copy
    view = copy.copy(engine)
    view.cancel = token  # type: ignore[attr-defined]
    return view
