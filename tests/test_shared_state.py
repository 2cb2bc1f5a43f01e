"""Rate limit and feedback under concurrency, on the real Redis (what bot replicas share)."""

from __future__ import annotations

import asyncio
import itertools

import redis.asyncio as aioredis

from syllabot.shared.config import Settings
from syllabot.shared.feedback import Feedback
from syllabot.shared.keys import Keys
from syllabot.shared.ratelimit import RateLimiter
from syllabot.shared.schema import Answer


async def test_concurrent_questions_cannot_slip_past_the_rate_limit(settings: Settings) -> None:
    client = aioredis.Redis.from_url(settings.redis_url)
    try:
        limiter = RateLimiter(client, Keys(settings.key_prefix), limit=5)
        decisions = await asyncio.gather(*(limiter.check("discord", "u1") for _ in range(30)))
        assert sum(d.allowed for d in decisions) == 5
        refused = [d for d in decisions if not d.allowed]
        assert all(55 <= d.retry_after_s <= 60 for d in refused)
        assert (await limiter.check("discord", "u2")).allowed  # other users are not affected
    finally:
        await client.aclose()


async def test_rate_window_slides(settings: Settings) -> None:
    client = aioredis.Redis.from_url(settings.redis_url)
    try:
        limiter = RateLimiter(client, Keys(settings.key_prefix), limit=2, window_s=60)
        assert (await limiter.check("slack", "u", now=1000.0)).allowed
        assert (await limiter.check("slack", "u", now=1010.0)).allowed
        blocked = await limiter.check("slack", "u", now=1020.0)
        assert not blocked.allowed and abs(blocked.retry_after_s - 40.0) < 0.01
        assert (await limiter.check("slack", "u", now=1061.0)).allowed  # the first one left the window
    finally:
        await client.aclose()


async def test_concurrent_clicks_log_one_entry_per_real_change(settings: Settings) -> None:
    client = aioredis.Redis.from_url(settings.redis_url)
    keys = Keys(settings.key_prefix)
    try:
        feedback = Feedback(client, keys)
        answer = Answer(text="Module 3 [1]", in_materials=True, collection="c", question="q?")
        answer_id = await feedback.record_answer(answer, "discord", "asker")
        await asyncio.gather(*(feedback.vote(answer_id, "u1", v) for v in ("up", "up", "down", "up", "down")))
        entries = [fields for _, fields in await client.xrange(keys.feedback_stream)]
        votes = [f[b"vote"].decode() for f in entries]
        changed = [f[b"changed"].decode() for f in entries]
        assert changed[0] == "0" and all(c == "1" for c in changed[1:])
        assert all(a != b for a, b in itertools.pairwise(votes))  # every entry is a real change
        assert (await feedback.votes(answer_id)) == {"u1": votes[-1]}
        assert entries[0][b"question"] == b"q?" and entries[0][b"collection"] == b"c"
    finally:
        await client.aclose()
