"""Per-user rate limit kept in Redis, so it holds across bot replicas and platforms alike.

A sliding window over a sorted set, checked and counted in one Lua script: concurrent questions
from one user (several replicas, a double-click) cannot all slip through between a count and an
add, and the window runs on the Redis server's clock, so replicas with skewed clocks agree.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import redis.asyncio as aioredis

from syllabot.shared.keys import Keys

# KEYS: the user's window. ARGV: limit, window ms, member suffix, optional "now" in ms (tests).
# Returns {allowed (0/1), retry after ms, remaining}.
_CHECK = """
local now
if ARGV[4] and ARGV[4] ~= '' then
  now = tonumber(ARGV[4])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local retry = window
  if oldest[2] then retry = tonumber(oldest[2]) + window - now end
  return {0, retry, 0}
end
redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], window + 1000)
return {1, 0, limit - count - 1}
"""


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
        self._script = redis.register_script(_CHECK)

    async def check(self, platform: str, user: str, now: float | None = None) -> RateDecision:
        """Count this question if the user is under the limit; otherwise say when to retry.

        ``now`` (seconds) replaces the Redis server's clock, for tests.
        """
        if self.limit <= 0:
            return RateDecision(True, 0.0, 0)
        allowed, retry_ms, remaining = await self._script(
            keys=[self.keys.rate(platform, user)],
            args=[
                self.limit,
                int(self.window_s * 1000),
                uuid.uuid4().hex[:8],
                "" if now is None else int(now * 1000),
            ],
        )
        return RateDecision(bool(allowed), max(0.0, float(retry_ms) / 1000.0), int(remaining))
