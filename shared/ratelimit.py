"""Per-user rate limit kept in Redis, so it holds across bot replicas and platforms alike.

A sliding window over a sorted set: each allowed question adds one member scored by its time;
members older than the window are trimmed. One MULTI round trip per check.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import redis.asyncio as aioredis

from shared.keys import Keys


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after_s: float  # 0 when allowed
    remaining: int


class RateLimiter:
    """``limit`` questions per ``window_s`` seconds per (platform, user)."""

    def __init__(self, redis: aioredis.Redis, keys: Keys, limit: int, window_s: float = 60.0) -> None:
        self.redis = redis
        self.keys = keys
        self.limit = limit
        self.window_s = window_s

    async def check(self, platform: str, user: str, now: float | None = None) -> RateDecision:
        """Count this question if the user is under the limit; otherwise say when to retry."""
        if self.limit <= 0:
            return RateDecision(True, 0.0, 0)
        now = time.time() if now is None else now
        key = self.keys.rate(platform, user)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, 0, now - self.window_s)
            pipe.zcard(key)
            pipe.zrange(key, 0, 0, withscores=True)
            _, count, oldest = await pipe.execute()
        if count >= self.limit:
            oldest_ts = oldest[0][1] if oldest else now
            return RateDecision(False, max(0.0, oldest_ts + self.window_s - now), 0)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {f"{now:.6f}:{uuid.uuid4().hex[:8]}": now})
            pipe.expire(key, int(self.window_s) + 1)
            await pipe.execute()
        return RateDecision(True, 0.0, self.limit - count - 1)
