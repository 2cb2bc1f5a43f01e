"""Answer records and 👍/👎 votes, shared by every front-end.

When a bot shows an answer it calls :meth:`Feedback.record_answer` and puts the returned id in its
buttons. A vote stores (question, answer, sources, collection, user, vote) in a Redis stream for
later review; a per-answer hash keeps one vote per user, so changing a vote overwrites it and the
stream says so (``changed``).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Literal

import redis.asyncio as aioredis

from shared.keys import Keys
from shared.schema import Answer

Vote = Literal["up", "down"]
#: How long an answer stays votable.
ANSWER_TTL_S = 30 * 24 * 3600


class UnknownAnswer(LookupError):
    """The answer being voted on has expired or never existed."""


class Feedback:
    def __init__(self, redis: aioredis.Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys

    async def record_answer(self, answer: Answer, platform: str, asked_by: str) -> str:
        answer_id = uuid.uuid4().hex[:16]
        record = {
            "question": answer.question,
            "answer": answer.text,
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
        previous = await self.redis.hget(self.keys.feedback_vote(answer_id), user)
        previous_vote = previous.decode() if isinstance(previous, bytes) else previous
        changed = previous_vote is not None and previous_vote != vote
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.keys.feedback_vote(answer_id), user, vote)
            pipe.expire(self.keys.feedback_vote(answer_id), ANSWER_TTL_S)
            if previous_vote != vote:
                pipe.xadd(
                    self.keys.feedback_stream,
                    {
                        "answer_id": answer_id,
                        "user": user,
                        "vote": vote,
                        "changed": "1" if changed else "0",
                        "at": f"{time.time():.3f}",
                        "question": record["question"],
                        "answer": record["answer"],
                        "sources": json.dumps(record["sources"]),
                        "collection": record["collection"],
                        "platform": record["platform"],
                    },
                )
            await pipe.execute()
        return changed

    async def votes(self, answer_id: str) -> dict[str, str]:
        raw = await self.redis.hgetall(self.keys.feedback_vote(answer_id))
        return {k.decode(): v.decode() for k, v in raw.items()}
