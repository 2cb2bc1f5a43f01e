"""Answer records and 👍/👎 votes, shared by every front-end.

When a bot shows an answer it calls :meth:`Feedback.record_answer` and puts the returned id in its
buttons. A vote stores (question, answer, its status, sources, collection, user, vote) in a Redis
stream for later review; a per-answer hash keeps one vote per user, so changing a vote overwrites it
and the stream says so (``changed``). The read-compare-write of a vote is one Lua script: a
double-click or two replicas handling the same user cannot both see "no previous vote" and log two
entries.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable
from typing import Literal, cast

import redis.asyncio as aioredis

from syllabot.shared.answer_text import answer_text
from syllabot.shared.keys import Keys
from syllabot.shared.redis_conn import NO_WAIT, Durability
from syllabot.shared.schema import Answer

Vote = Literal["up", "down"]
#: How long an answer stays votable.
ANSWER_TTL_S = 30 * 24 * 3600
#: Approximate cap on the feedback stream's length (oldest entries are trimmed).
STREAM_MAXLEN = 100_000

# KEYS: votes hash, stream. ARGV: user, vote, ttl s, maxlen, then stream field/value pairs.
# Returns {logged (0/1), changed (0/1)}.
_VOTE = """
local previous = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
if previous == ARGV[2] then return {0, 0} end
local changed = previous and 1 or 0
local fields = {'changed', tostring(changed)}
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', unpack(fields))
return {1, changed}
"""


class UnknownAnswer(LookupError):
    """The answer being voted on has expired or never existed."""


class Feedback:
    def __init__(self, redis: aioredis.Redis, keys: Keys, durability: Durability = NO_WAIT) -> None:
        self.redis = redis
        self.keys = keys
        self.durability = durability
        self._vote = redis.register_script(_VOTE)

    async def record_answer(self, answer: Answer, platform: str, asked_by: str) -> str:
        answer_id = uuid.uuid4().hex[:16]
        record = {
            "question": answer.question,
            "answer": answer_text(answer),  # as the user read it: the status's lead included
            "general_knowledge": answer.general_knowledge,
            "status": answer.status,
            "in_materials": answer.in_materials,
            "sources": [c.label or c.file for c in answer.citations],
            "collection": answer.collection,
            "index_version": answer.index_version,
            "platform": platform,
            "asked_by": asked_by,
        }
        await self.redis.set(self.keys.answer_record(answer_id), json.dumps(record), ex=ANSWER_TTL_S)
        return answer_id

    async def vote(self, answer_id: str, user: str, vote: Vote) -> bool:
        """Store the vote; return True when it replaced an earlier, different vote of this user."""
        if vote not in ("up", "down"):
            raise ValueError(f"vote must be 'up' or 'down', not {vote!r}")
        raw = await self.redis.get(self.keys.answer_record(answer_id))
        if raw is None:
            raise UnknownAnswer(f"answer {answer_id} is no longer available for feedback")
        record = json.loads(raw)
        entry = {
            "answer_id": answer_id,
            "user": user,
            "vote": vote,
            "at": f"{time.time():.3f}",
            "question": record["question"],
            "answer": record["answer"],
            "general_knowledge": record.get("general_knowledge") or "",
            # Which outcome was voted on: a 👎 on "I can't tell" means something else than on an answer.
            # Records stored before statuses existed have only the flag.
            "status": record.get("status")
            or ("answered" if record.get("in_materials", True) else "not_in_materials"),
            "sources": json.dumps(record["sources"]),
            "collection": record["collection"],
            "platform": record["platform"],
        }
        flat = [item for pair in entry.items() for item in pair]
        _, changed = await self._vote(
            keys=[self.keys.feedback_vote(answer_id), self.keys.feedback_stream],
            args=[user, vote, ANSWER_TTL_S, STREAM_MAXLEN, *flat],
        )
        await self.durability.confirm_async(self.redis, "Your vote")
        return bool(changed)

    async def votes(self, answer_id: str) -> dict[str, str]:
        raw = await cast(
            Awaitable[dict[bytes, bytes]], self.redis.hgetall(self.keys.feedback_vote(answer_id))
        )
        return {k.decode(): v.decode() for k, v in raw.items()}
