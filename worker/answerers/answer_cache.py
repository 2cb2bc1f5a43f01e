"""The same question twice is answered once: a computed answer is kept in Redis for a while.

Keyed by collection, index version, the question as the pipeline reads it
(:func:`~worker.query.question.clean_question`, so "hi, what's CO3??" and "what's CO3?" share an entry
only when they search and answer alike), ``k`` and the answerer. A follow-up (a question whose
conversation has turns) is never served nor stored: its answer depends on the turns before it, which
no key here holds. A conversation's *first* question reads nothing of it, so it is served like any
other, and the entry carries the turn to record for it (``CachedAnswer.turn``): on Discord every
``/ask`` starts a conversation, and without this none of them was ever served from the cache.
The version is part of the key name, so a re-index, an upload or a removal, each of which
publishes a new version, never serves an answer computed from the old index; old entries simply
expire.

A hit costs one script call (the current version, then the entry under it) and no thread: the
worker answers it on its event loop. Answers carrying an operator note (an LLM that fell back) are not stored, so a
passing outage is not repeated to everyone asking the same thing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from syllabot.shared.keys import Keys
from syllabot.shared.redis_conn import REDIS_TROUBLE, as_text, is_redis_outage
from syllabot.shared.schema import Answer, AskRequest, Timings
from syllabot.shared.threads import Turn
from syllabot.worker.query.question import clean_question

log = logging.getLogger("syllabot.worker")

#: What a cached answer leaves out: it is the asker's own question and its own timings.
_PER_ASK_FIELDS = {"question", "timings"}
#: Stands for the index version in the key template handed to the lookup script.
_VERSION_SLOT = "*"

# KEYS: the collection's current-version key. ARGV: the entry key before and after its version.
# Returns {version, entry or false}, or false when nothing is indexed.
_LOOKUP = """
local version = redis.call('GET', KEYS[1])
if not version then return false end
return {version, redis.call('GET', ARGV[1] .. version .. ARGV[2])}
"""


def cache_digest(request: AskRequest, answerer: str) -> str:
    """Everything besides the index version that decides the answer, hashed."""
    question = " ".join(clean_question(request.question).split())
    material = json.dumps([question, request.k, answerer], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def encode_vector(vector: np.ndarray | None) -> str | None:
    """A query vector as base64 float32 (what a question record stores too)."""
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def decode_vector(text: str | None) -> np.ndarray | None:
    if not text:
        return None
    return np.frombuffer(base64.b64decode(text), dtype=np.float32)


@dataclass(frozen=True)
class CachedAnswer:
    """A stored answer and what the question log needs about it (its query vector, closest passage),
    and what a conversation remembers of it (``turn``: its courses, module and topic, with no
    question or time; None in entries older than that field)."""

    answer: Answer
    vector: np.ndarray | None
    closest: str
    turn: Turn | None = None


class AnswerCache:
    """Get and put answers; Redis errors are logged and treated as a miss (the answer is computed)."""

    def __init__(self, redis: Any, keys: Keys, ttl_s: float, answerer: str) -> None:
        self.redis = redis
        self.keys = keys
        self.ttl_ms = max(1, int(ttl_s * 1000))
        self.answerer = answerer
        self._lookup = redis.register_script(_LOOKUP)

    async def get(self, request: AskRequest) -> CachedAnswer | None:
        digest = cache_digest(request, self.answerer)
        head, tail = self.keys.answer_cache(request.collection, _VERSION_SLOT, digest).rsplit(
            _VERSION_SLOT, 1
        )
        try:
            found = await self._lookup(keys=[self.keys.current(request.collection)], args=[head, tail])
        except REDIS_TROUBLE as exc:  # away, or refusing (full, read-only): best effort
            if not is_redis_outage(exc):
                raise
            log.warning("answer cache unavailable: %s", exc)
            return None
        if not found or len(found) < 2 or not found[1]:
            return None
        version = as_text(found[0])
        raw = found[1]
        try:
            stored = json.loads(raw)
            answer = Answer.model_validate(stored["answer"])
        except (ValueError, KeyError, TypeError) as exc:  # an entry of another version of the schema
            log.info("ignoring an unreadable cached answer: %s", exc)
            return None
        if answer.index_version != version:
            return None
        turn = stored.get("turn")
        return CachedAnswer(
            answer,
            decode_vector(stored.get("vector")),
            str(stored.get("closest") or ""),
            Turn.from_dict(turn) if isinstance(turn, dict) else None,
        )

    async def put(
        self,
        request: AskRequest,
        answer: Answer,
        vector: np.ndarray | None = None,
        closest: str = "",
        turn: Turn | None = None,
    ) -> None:
        if answer.index_version is None or answer.note:
            return
        digest = cache_digest(request, self.answerer)
        payload = {
            "answer": answer.model_dump(mode="json", exclude=_PER_ASK_FIELDS),
            "vector": encode_vector(vector),
            "closest": closest,
            "turn": None
            if turn is None
            else {"courses": list(turn.courses), "modules": list(turn.modules), "topic": turn.topic},
        }
        key = self.keys.answer_cache(request.collection, answer.index_version, digest)
        try:
            await self.redis.set(key, json.dumps(payload, ensure_ascii=False), px=self.ttl_ms)
        except REDIS_TROUBLE as exc:  # away, or refusing (full, read-only): best effort
            if not is_redis_outage(exc):
                raise
            log.warning("answer not cached: %s", exc)


def served_from_cache(
    cached: CachedAnswer, request: AskRequest, total_ms: float, queue_ms: float | None
) -> Answer:
    """The cached answer as this asker's answer: their question, timings saying it was cached."""
    return cached.answer.model_copy(
        update={
            "question": request.question,
            "collection": request.collection,
            "timings": Timings(
                total=round(total_ms, 3),
                queue=None if queue_ms is None else round(queue_ms, 3),
                cached=True,
            ),
        }
    )
