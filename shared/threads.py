"""Conversations: the last few turns of each platform thread, kept in Redis so a follow-up can be
resolved against them ("and which textbook for that?" after a question on 21CS44's deadlocks).

Why in Redis, one key per thread (``Keys.thread``): any worker may answer any turn of a conversation,
and bots on several replicas see the same threads. A thread id names the platform's own thread
(``slack:C1:1712.5``, ``discord:thread-42``, ``cli:my-notes``); :func:`thread_id` builds them.

A turn records what the worker understood of a question (the courses it was answered from, the
module, the words it asked about), not the answer text: that is all resolving a follow-up needs, and
it keeps students' answers out of another store.

Expiry: a conversation idle for ``SYLLABOT_THREAD_TTL_HOURS`` starts fresh, and the answer says so
(:attr:`ThreadContext.expired`). Redis keeps the key for twice that long, so that within this
grace a late follow-up can still be told its conversation expired instead of silently losing it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import redis.asyncio as aioredis

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys

__all__ = ["ThreadContext", "ThreadStore", "Turn", "thread_id"]


def thread_id(platform: str, *parts: str) -> str:
    """The one spelling of a conversation's id: ``platform:part:part`` (e.g. ``slack:C1:1712.5``)."""
    return ":".join([platform, *(p.strip() for p in parts)])


@dataclass(frozen=True)
class Turn:
    """One question of a conversation as the worker understood it.

    ``courses``: the course keys (chunk subjects) it was answered from — named, inherited, or those of
    its best passage. ``modules``: module labels it named, else the best passage's ("Module 3").
    ``topic``: what it asked about, without course names. ``at``: unix seconds.
    """

    question: str
    courses: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    topic: str = ""
    at: float = field(default_factory=time.time)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | bytes) -> Turn:
        return cls.from_dict(json.loads(raw))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        return cls(
            question=str(data.get("question", "")),
            courses=tuple(data.get("courses") or ()),
            modules=tuple(data.get("modules") or ()),
            topic=str(data.get("topic", "")),
            at=float(data.get("at", 0.0)),
        )


@dataclass(frozen=True)
class ThreadContext:
    """The turns a follow-up is resolved against (oldest first); ``expired``: there were turns, but
    the conversation had been idle longer than the TTL, so it starts fresh."""

    turns: tuple[Turn, ...] = ()
    expired: bool = False


class ThreadStore:
    """Redis I/O for conversations: :meth:`load` before answering, :meth:`record` after."""

    def __init__(self, redis: aioredis.Redis, keys: Keys, ttl_s: float, max_turns: int = 4) -> None:
        self.redis = redis
        self.keys = keys
        self.ttl_s = ttl_s
        self.max_turns = max_turns

    @classmethod
    def from_settings(cls, redis: aioredis.Redis, settings: Settings) -> ThreadStore:
        return cls(
            redis, Keys(settings.key_prefix), settings.thread_ttl_hours * 3600.0, settings.thread_turns
        )

    async def load(self, thread: str, now: float | None = None) -> ThreadContext:
        raw = await cast(
            Awaitable[list[bytes]], self.redis.lrange(self.keys.thread(thread), -self.max_turns, -1)
        )
        turns = tuple(Turn.from_json(r) for r in raw)
        if not turns:
            return ThreadContext()
        now = time.time() if now is None else now
        if now - turns[-1].at > self.ttl_s:
            return ThreadContext((), expired=True)
        return ThreadContext(turns)

    async def exists(self, thread: str) -> bool:
        """Whether the thread has turns (live or within the expiry grace): a platform thread Syllabot
        has answered in, whose replies are follow-ups."""
        return bool(await self.redis.exists(self.keys.thread(thread)))

    async def record(self, thread: str, turn: Turn, *, restart: bool = False) -> None:
        """Append a turn, keep the last ``max_turns``, and keep the key twice the TTL (see the module
        docstring). ``restart``: drop the expired turns first."""
        key = self.keys.thread(thread)
        async with self.redis.pipeline(transaction=True) as pipe:
            if restart:
                pipe.delete(key)
            pipe.rpush(key, turn.to_json())
            pipe.ltrim(key, -self.max_turns, -1)
            pipe.expire(key, max(1, int(self.ttl_s * 2)))
            await pipe.execute()
