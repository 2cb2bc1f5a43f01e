"""The questions students asked, kept for the teacher's gap report — only if the deployment says so.

Off unless ``SYLLABOT_KEEP_QUESTIONS_DAYS`` > 0. Then each answered question appends one entry to its
collection's capped Redis stream (``Keys.questions``): the question as cleaned for search (greetings,
emoji and @mentions removed), its outcome, the index version, the label of the passage found
closest and the normalised query vector the search computed. Who asked is never stored. Every
append trims entries older than the retention (``XTRIM MINID``, stream ids are their time on the
Redis server's clock) and gives the stream that lifetime, so a collection nobody asks any more
vanishes after it too; reading for a report trims first as well.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from syllabot.shared.keys import Keys
from syllabot.shared.redis_conn import REDIS_TROUBLE, as_text, is_redis_outage
from syllabot.worker.answerers.answer_cache import decode_vector, encode_vector
from syllabot.worker.query.question import clean_question

log = logging.getLogger("syllabot.worker")

DAY_MS = 24 * 3600 * 1000
#: Approximate cap on one collection's stream (about 2 KB an entry with a 384-dim vector).
QUESTIONS_MAXLEN = 20_000

# KEYS: the stream. ARGV: maxlen, retention ms, then field/value pairs.
# The cut-off uses the server's clock, the one stream ids are made of.
_RECORD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(fields))
redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d', now - tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# KEYS: the stream. ARGV: retention ms. Returns the server's time in ms.
_TRIM = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d', now - tonumber(ARGV[1])))
return now
"""


@dataclass(frozen=True)
class QuestionRecord:
    at_ms: int
    text: str
    status: str
    vector: np.ndarray | None
    closest: str
    index_version: str


class QuestionLog:
    def __init__(self, redis: Any, keys: Keys, keep_days: int) -> None:
        self.redis = redis
        self.keys = keys
        self.keep_days = keep_days
        self._record = redis.register_script(_RECORD)
        self._trim = redis.register_script(_TRIM)
        self._pending: set[asyncio.Task[None]] = set()

    @property
    def enabled(self) -> bool:
        return self.keep_days > 0

    @property
    def retention_ms(self) -> int:
        return self.keep_days * DAY_MS

    async def record(
        self,
        collection: str,
        question: str,
        status: str,
        vector: np.ndarray | None,
        closest: str,
        index_version: str | None,
    ) -> None:
        """Append one question (no-op when keeping is off); a failure is logged, never raised."""
        if not self.enabled:
            return
        fields = {
            "q": clean_question(question),
            "status": status,
            "closest": closest,
            "version": index_version or "",
            "v": encode_vector(vector) or "",
        }
        flat = [item for pair in fields.items() for item in pair]
        try:
            await self._record(
                keys=[self.keys.questions(collection)], args=[QUESTIONS_MAXLEN, self.retention_ms, *flat]
            )
        except REDIS_TROUBLE as exc:  # away, or refusing (full, read-only): best effort
            if not is_redis_outage(exc):
                raise
            log.warning("question not kept for the gap report: %s", exc)

    def record_soon(
        self,
        collection: str,
        question: str,
        status: str,
        vector: np.ndarray | None,
        closest: str,
        index_version: str | None,
    ) -> None:
        """:meth:`record` in a task of its own, so the asker never waits for the append."""
        if not self.enabled:
            return
        task = asyncio.create_task(self.record(collection, question, status, vector, closest, index_version))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def flush(self) -> None:
        """Wait for the appends still running (tests, and a worker shutting down)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def read(self, collection: str, days: int) -> tuple[int, list[QuestionRecord]]:
        """(the server's time in ms, the questions of the last ``days`` days, oldest first), after
        trimming what is past the retention. With keeping off nothing is read: what an earlier
        setting kept expires on its own (the stream's lifetime is the retention it was written with)."""
        key = self.keys.questions(collection)
        await self.flush()
        if not self.enabled:
            now = await self.redis.time()
            return int(now[0]) * 1000 + int(now[1]) // 1000, []
        now_ms = int(await self._trim(keys=[key], args=[self.retention_ms]))
        since = now_ms - days * DAY_MS
        rows = await cast(Awaitable[list[Any]], self.redis.xrange(key, min=f"{since}-0", max="+"))
        records = []
        for entry_id, raw in rows:
            fields = {as_text(k): v for k, v in raw.items()}
            records.append(
                QuestionRecord(
                    at_ms=int(as_text(entry_id).split("-")[0]),
                    text=as_text(fields.get("q")),
                    status=as_text(fields.get("status")),
                    vector=decode_vector(as_text(fields.get("v"))),
                    closest=as_text(fields.get("closest")),
                    index_version=as_text(fields.get("version")),
                )
            )
        return now_ms, records
