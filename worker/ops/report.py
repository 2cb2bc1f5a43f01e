"""The teacher's gap report of one collection over a period: read, select, group (worker/ops/gaps.py).

What goes in: kept questions (worker/ops/question_log.py) whose outcome was ``not_in_materials`` or
``uncertain``, and answers voted 👎 in the period (the feedback stream, shared/feedback.py: the last
vote of each user counts). A 👎 on a kept question marks that question; a 👎 on a question not kept
(keeping off, or past the retention) is embedded here, so votes show up either way. Who asked or
voted is read only to keep one vote per user and is never part of the report.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, cast

import numpy as np

from syllabot.shared.gap_report import GapReport
from syllabot.shared.keys import Keys
from syllabot.shared.redis_conn import as_text
from syllabot.shared.schema import ConflictInfo
from syllabot.worker.answerers.pipeline import SOCIAL_STATUS
from syllabot.worker.ops.gaps import MAX_GROUPED, GapQuestion, build_topics
from syllabot.worker.ops.question_log import DAY_MS, QuestionLog, QuestionRecord
from syllabot.worker.query.question import clean_question

GAP_STATUSES = frozenset({"not_in_materials", "uncertain"})

#: Embeds questions in one call, a row each (the worker's embedder's ``embed_queries``, off the
#: event loop).
EmbedQueries = Callable[[list[str]], np.ndarray]


async def voted_down(redis: Any, keys: Keys, collection: str, since_ms: int) -> list[dict[str, str]]:
    """Answers of ``collection`` whose last vote by some user in the period is 👎: question, status,
    closest source; one entry per answer."""
    rows = await cast(Awaitable[list[Any]], redis.xrange(keys.feedback_stream, min=f"{since_ms}-0", max="+"))
    last: dict[tuple[str, str], dict[str, str]] = {}
    for _, raw in rows:
        entry = {as_text(k): as_text(v) for k, v in raw.items()}
        if entry.get("collection") != collection:
            continue
        last[(entry.get("answer_id", ""), entry.get("user", ""))] = entry
    down: dict[str, dict[str, str]] = {}
    for (answer_id, _), entry in last.items():
        if entry.get("vote") == "down" and answer_id not in down:
            try:
                sources = json.loads(entry.get("sources") or "[]")
            except ValueError:
                sources = []
            down[answer_id] = {
                "question": clean_question(entry.get("question", "")),
                "status": entry.get("status", "answered"),
                "closest": str(sources[0]) if sources else "",
            }
    return list(down.values())


def select(
    records: list[QuestionRecord], downs: list[dict[str, str]]
) -> list[tuple[GapQuestion | None, dict[str, str] | None]]:
    """The gap questions: kept ones with a gap outcome or a 👎 (matched by text), and 👎s not kept,
    which still need a vector (returned as ``(None, vote)``)."""
    by_text: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        by_text.setdefault(record.text.casefold(), []).append(index)
    down_at: set[int] = set()
    unmatched: list[dict[str, str]] = []
    for vote in downs:
        candidates = [i for i in by_text.get(vote["question"].casefold(), []) if i not in down_at]
        if candidates:
            down_at.add(candidates[-1])
        else:
            unmatched.append(vote)
    chosen: list[tuple[GapQuestion | None, dict[str, str] | None]] = []
    for index, record in enumerate(records):
        if record.vector is None or (record.status not in GAP_STATUSES and index not in down_at):
            if index in down_at and record.vector is None:
                unmatched.append(
                    {"question": record.text, "status": record.status, "closest": record.closest}
                )
            continue
        chosen.append(
            (GapQuestion(record.text, record.vector, record.status, index in down_at, record.closest), None)
        )
    chosen.extend((None, vote) for vote in unmatched)
    return chosen


def same_dimension(questions: list[GapQuestion]) -> list[GapQuestion]:
    """Only the questions whose vectors have the most common dimension: after the embedder changed
    (and the collection was re-indexed), older vectors cannot be compared with newer ones."""
    dims = Counter(len(q.vector) for q in questions)
    if len(dims) <= 1:
        return questions
    keep = dims.most_common(1)[0][0]
    return [q for q in questions if len(q.vector) == keep]


#: The facts a collection's documents disagree on (``Engine.conflicts``, off the event loop).
Conflicts = Callable[[], list[ConflictInfo]]


async def build_report(
    redis: Any,
    keys: Keys,
    log: QuestionLog,
    collection: str,
    days: int,
    embed: EmbedQueries,
    conflicts: Conflicts | None = None,
) -> GapReport:
    """The gap report of ``collection`` over ``days``, with the facts its documents disagree on
    (``conflicts``; none for a collection without an index): the weekly post is where a teacher
    hears of both."""
    now_ms, records = await log.read(collection, days)
    since_ms = now_ms - days * DAY_MS
    downs = await voted_down(redis, keys, collection, since_ms)
    picked = select(records, downs)[-MAX_GROUPED:]
    # Voted-down questions that were not kept have no vector yet: all of them in one embedder call.
    unkept = [vote for question, vote in picked if question is None and vote is not None and vote["question"]]
    vectors = iter(await asyncio.to_thread(embed, [vote["question"] for vote in unkept]) if unkept else ())
    questions: list[GapQuestion] = []
    for question, vote in picked:
        if question is not None:
            questions.append(question)
        elif vote is not None and vote["question"]:
            questions.append(
                GapQuestion(vote["question"], next(vectors), vote["status"], True, vote["closest"])
            )
    questions = same_dimension(questions)
    topics = await asyncio.to_thread(build_topics, questions)
    disagree: list[ConflictInfo] = []
    if conflicts is not None:
        from syllabot.worker.indexes.engine import (
            NothingToIndex,  # the engine is loaded wherever reports are built
        )

        try:
            disagree = await asyncio.to_thread(conflicts)
        except NothingToIndex:  # nothing indexed yet: nothing to disagree
            disagree = []
    stamp = lambda ms: datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds")  # noqa: E731
    return GapReport(
        collection=collection,
        days=days,
        since=stamp(since_ms),
        until=stamp(now_ms),
        keep_days=log.keep_days,
        questions=len(records),
        gaps=len(questions),
        social=sum(r.status == SOCIAL_STATUS for r in records),
        topics=topics,
        conflicts=disagree,
    )
