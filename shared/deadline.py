"""Deadlines that travel with a question, on the Redis server's clock.

A front-end's :class:`~shared.queue.QueueClient` stamps every ask job with ``deadline_ms``: the
moment its asker stops waiting, in milliseconds since the epoch *as Redis's ``TIME`` counts them*.
Bots, CLIs and workers may run on hosts whose clocks disagree; each process measures the offset
between its own clock and Redis's (:func:`measure_offset_ms`: on connect for a client, on every
heartbeat for a worker), so a deadline means the same instant everywhere that shares the Redis.

The worker drops a job whose deadline has passed (counted, logged, never answered) and gives its
LLM only what is left of the deadline minus ``SYLLABOT_ANSWER_MARGIN_S``, kept for the extractive
fallback and the delivery (see ``worker.runtime.jobs``).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from typing import Any


async def measure_offset_ms(redis_client: Any) -> float:
    """Redis's clock minus this host's (ms), measured with one ``TIME`` round trip (midpoint)."""
    before = time.time()
    seconds, micros = await redis_client.time()
    after = time.time()
    return (int(seconds) * 1000.0 + int(micros) / 1000.0) - (before + after) * 500.0


def redis_now_ms(offset_ms: float) -> float:
    """Now on the Redis server's clock, given this host's measured offset."""
    return time.time() * 1000.0 + offset_ms


#: time.monotonic() by which an LLM must have replied, for the question being answered (None: no
#: deadline but the LLM's own timeout). A context variable, so each job's task sees its own.
_LLM_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("llm_deadline", default=None)


@contextlib.contextmanager
def llm_deadline(seconds_left: float | None) -> Iterator[None]:
    """Within the block, an LLM call may take at most ``seconds_left`` (None: no limit set here)."""
    token = _LLM_DEADLINE.set(None if seconds_left is None else time.monotonic() + seconds_left)
    try:
        yield
    finally:
        _LLM_DEADLINE.reset(token)


def llm_budget(default_s: float) -> float:
    """Seconds an LLM call may take now: its own timeout, or less when the asker's deadline is nearer."""
    at = _LLM_DEADLINE.get()
    if at is None:
        return default_s
    return min(default_s, at - time.monotonic())
