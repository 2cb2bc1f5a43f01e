"""Partial answers: the text of an answer while an LLM is still writing it, from worker to bot.

Why a second list next to the result list: the final :class:`~shared.schema.Answer` stays the one
authoritative message (status, citations, notes are settled only there), while a front-end can show
the answer growing. The worker ``RPUSH``es each partial onto ``Keys.partials(job_id)`` (with the
result list's expiry) and the client ``BLPOP``s *both* lists, result first, so the answer always
wins over a partial that is still queued, and a partial costs no polling.

A partial holds the whole visible text so far, not a delta: a front-end that skipped some (it edits
at most once a second) shows the latest and loses nothing. What a partial may contain is decided
by the worker (``worker/answerers/llm.py::visible_text``): only the body of an answer whose outcome
is settled as ``answered``, with its citations already checked and renumbered, so a partial never
shows a "Not in your materials" reply's general knowledge as an answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from syllabot.shared.redis_conn import REDIS_ERRORS

log = logging.getLogger("syllabot.partials")

_T = TypeVar("_T")

#: Shortest gap between two partials a worker publishes (front-ends edit less often still).
PUBLISH_EVERY_S = 0.2
#: How many queued partials a client takes at once (it shows only the newest).
DRAIN_MAX = 1000


@dataclass(frozen=True)
class Partial:
    """The visible text of an answer being written; ``seq`` grows with each partial of a question."""

    seq: int
    text: str

    def encode(self) -> bytes:
        return json.dumps({"seq": self.seq, "text": self.text}, ensure_ascii=False).encode()

    @classmethod
    def decode(cls, raw: bytes | str) -> Partial:
        data = json.loads(raw)
        return cls(seq=int(data["seq"]), text=str(data["text"]))


class PartialPublisher:
    """The worker's side: publish a question's visible text, at most every ``every_s`` seconds.

    The first text goes out at once (time to first visible text is what the asker notices); later
    ones are coalesced. Redis failing costs the partials, never the answer: errors are logged once.
    """

    def __init__(self, redis_client: Any, key: str, ttl_s: int, every_s: float = PUBLISH_EVERY_S) -> None:
        self.redis = redis_client
        self.key = key
        self.ttl_s = ttl_s
        self.every_s = every_s
        self.seq = 0
        self._last_at = float("-inf")
        self._last_text = ""
        self._failed = False

    async def publish(self, text: str) -> None:
        now = time.monotonic()
        if self._failed or text == self._last_text or now - self._last_at < self.every_s:
            return
        self._last_at, self._last_text = now, text
        self.seq += 1
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.rpush(self.key, Partial(self.seq, text).encode())
                pipe.expire(self.key, self.ttl_s)
                await pipe.execute()
        except REDIS_ERRORS as exc:
            self._failed = True
            log.warning("could not publish a partial answer (%s); the final answer still goes out", exc)


def newest(raw_items: list[bytes]) -> Partial | None:
    """The newest decodable partial of a batch popped from the list (older ones are superseded)."""
    for raw in reversed(raw_items):
        try:
            return Partial.decode(raw)
        except (ValueError, KeyError, TypeError):
            log.warning("ignoring a partial answer that does not decode")
    return None


async def live(
    call: Callable[[Callable[[Partial], None]], Awaitable[_T]],
) -> AsyncGenerator[Partial | _T, None]:
    """Run ``call(on_partial)`` and yield each partial it reports, then its result, last.

    The call runs in its own task, so a consumer that is slow (an edit in flight) does not hold up
    the wait for the answer; partials that pile up meanwhile are collapsed to the newest. Leaving
    the loop early cancels the call.
    """
    latest: Partial | None = None
    arrived = asyncio.Event()

    def on_partial(partial: Partial) -> None:
        nonlocal latest
        if latest is None or partial.seq > latest.seq:
            latest = partial
            arrived.set()

    task = asyncio.ensure_future(call(on_partial))
    try:
        while True:
            waiter = asyncio.ensure_future(arrived.wait())
            try:
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
            if task.done():
                break
            arrived.clear()
            if latest is not None:
                yield latest
        yield task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
