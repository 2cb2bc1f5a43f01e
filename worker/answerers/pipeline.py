"""The answering pipeline, the worker's and the in-process CLI's alike: one ``/ask`` end to end.

``answer_question`` searches (the question read once, ``worker.query.reading``), hands the result to the
answerer (which gathers the evidence, takes ``decision.decide``'s verdict and composes the text),
records the conversation's turn, the cache entry and the question for the gap report, and logs one
structured line with the timings. The arq job (``worker.runtime.jobs.ask``) and ``syllabot ask`` without a
worker both call it, so a question is answered the same way wherever it runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from syllabot.shared.deadline import llm_deadline
from syllabot.shared.queue import EmptyCollection
from syllabot.shared.redis_conn import REDIS_ERRORS, describe
from syllabot.shared.schema import Answer, AskRequest, Timings
from syllabot.shared.threads import ThreadContext, ThreadStore, Turn
from syllabot.worker.answerers.answer_cache import AnswerCache, served_from_cache
from syllabot.worker.answerers.decision import Reading, decide
from syllabot.worker.query.conversation import EXPIRED_NOTE, turn_for
from syllabot.worker.query.question import social_kind

if TYPE_CHECKING:
    from syllabot.worker.answerers.base import Answerer
    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.indexes.retrieval import SearchResult
    from syllabot.worker.ops.question_log import QuestionLog
    from syllabot.worker.runtime.cpu_pool import CpuPool

log = logging.getLogger("syllabot.worker")
answer_log = logging.getLogger("syllabot.answers")


async def answer_question(
    engine: Engine,
    answerer: Answerer,
    request: AskRequest,
    seconds_left: float | None = None,
    margin_s: float = 2.0,
    queue_ms: float | None = None,
    cache: AnswerCache | None = None,
    questions: QuestionLog | None = None,
    threads: ThreadStore | None = None,
    cpu: CpuPool | None = None,
) -> Answer:
    """Search, answer, time each stage and log one structured line for the question.

    ``seconds_left``: until the asker's deadline; an LLM gets that, less ``margin_s``, so its
    extractive fallback is delivered in time whatever the LLM does (None: the LLM's own timeout).
    ``queue_ms``: how long the job waited before a worker started it (the worker knows; the
    in-process CLI has no queue), recorded in the timings and so in the log line. The client
    replaces it with its own round-trip view on arrival (``QueueClient.ask``).
    ``cache``: answers already computed for this question and index version (worker/answerers/answer_cache.py);
    a follow-up (its conversation has turns) is always computed, since it is read against them; a
    conversation's first question may be served, and its turn is then recorded from the entry.
    ``questions``: where the question is kept for the gap report, when keeping is on.
    ``threads``: where a question with ``request.thread`` finds its conversation so far (a
    follow-up is searched with it) and where its own turn is recorded afterwards.
    ``cpu``: the worker's CPU pool (query batching, one thread per core); without it (the
    in-process CLI) the search runs on asyncio's default threads.
    """
    started = time.perf_counter()
    social = social_kind(request.question)
    if social is not None:
        return _hello(request, social, started, queue_ms, questions)
    conversation = ThreadContext()
    if request.thread and threads is not None:
        conversation = await threads.load(request.thread)
    # Nothing of the conversation is read before its first turn: such a question is any question.
    standalone = not conversation.turns and not conversation.expired
    if cache is not None and standalone:
        hit = await _from_cache(cache, questions, threads, request, started, queue_ms)
        if hit is not None:
            return hit
    if cpu is not None:
        result = await cpu.search(request.collection, request.question, request.k, conversation.turns)
    else:
        search = functools.partial(engine.search, turns=conversation.turns)
        result = await asyncio.to_thread(search, request.collection, request.question, request.k)
    if not result.hits:  # a collection with content always returns hits
        empty = await asyncio.to_thread(describe_empty, engine, request.collection)
        if empty is not None:  # nothing indexed: an error saying what to check, not an answer
            raise EmptyCollection(empty)
    searched = time.perf_counter()
    budget = None
    if seconds_left is not None:
        budget = seconds_left - (searched - started) - margin_s
    answer_sync: Callable[[str, SearchResult, str], Answer] | None = getattr(answerer, "answer_sync", None)
    if cpu is not None and answer_sync is not None:  # CPU work (extractive): on the pool's threads
        answer = await cpu.run(answer_sync, request.question, result, request.collection)
    else:  # an LLM: a wait, which holds no CPU thread
        with llm_deadline(budget):
            answer = await answerer.answer(request.question, result, request.collection)
    finished = time.perf_counter()
    turn = turn_for(request.question, result.query, result.courses, result.topic, result.hits, time.time())
    if request.thread and threads is not None:
        await _remember(threads, request.thread, turn, conversation.expired)
    answer = answer.model_copy(
        update={
            "note": _with_expiry(answer.note, conversation),
            "question": request.question,
            "collection": request.collection,
            "index_version": result.index_version,
            "timings": Timings(
                embed=round(result.embed_ms, 3),
                search=round(result.search_ms, 3),
                answer=round((finished - searched) * 1000.0, 3),
                total=round((finished - started) * 1000.0, 3),
                queue=None if queue_ms is None else round(queue_ms, 3),
            ),
        }
    )
    await _keep_answer(cache if standalone else None, questions, request, answer, result, turn)
    log_answer(request, answer)
    return answer


#: The reply to a message that only greets or thanks (``question.social_kind``), by its kind.
HELLO = {
    "greeting": "Hi! Ask me anything about your course materials, e.g. “when is the final exam?” "
    "or “which lecture covers regression?”.",
    "thanks": "You're welcome! Ask again any time.",
}
#: The outcome a greeting is kept under for the gap report: counted apart, never a gap.
SOCIAL_STATUS = "social"


def _hello(
    request: AskRequest, social: str, started: float, queue_ms: float | None, questions: QuestionLog | None
) -> Answer:
    """A short hello for a greeting or thanks: nothing is searched (it asks nothing), the status
    is the verdict's, and the gap report counts it apart from the questions."""
    verdict = decide(Reading(fallback=False, social=True))
    total = round((time.perf_counter() - started) * 1000.0, 3)
    answer = Answer(
        text=HELLO[social],
        status=verdict.status,
        question=request.question,
        collection=request.collection,
        timings=Timings(embed=0.0, search=0.0, answer=total, total=total, queue=queue_ms),
    )
    if questions is not None:
        questions.record_soon(request.collection, request.question, SOCIAL_STATUS, None, "", None)
    log_answer(request, answer)
    return answer


async def _from_cache(
    cache: AnswerCache,
    questions: QuestionLog | None,
    threads: ThreadStore | None,
    request: AskRequest,
    started: float,
    queue_ms: float | None,
) -> Answer | None:
    """The answer computed before for this question on the current index, as this asker's; None on a
    miss. A conversation's first question records its turn from the entry (an entry without one is a
    miss for it)."""
    cached = await cache.get(request)
    if cached is None:
        return None
    if request.thread and threads is not None:
        if cached.turn is None:
            return None
        turn = dataclasses.replace(cached.turn, question=request.question, at=time.time())
        await _remember(threads, request.thread, turn, False)
    answer = served_from_cache(cached, request, (time.perf_counter() - started) * 1000.0, queue_ms)
    if questions is not None:
        questions.record_soon(
            request.collection,
            request.question,
            answer.status,
            cached.vector,
            cached.closest,
            answer.index_version,
        )
    log_answer(request, answer)
    return answer


async def _keep_answer(
    cache: AnswerCache | None,
    questions: QuestionLog | None,
    request: AskRequest,
    answer: Answer,
    result: SearchResult,
    turn: Turn,
) -> None:
    """Store a computed answer for the next asker (``cache`` is None for a follow-up: no cache key
    holds the turns it was read against), and the question for the gap report (in a task)."""
    closest = result.hits[0].label if result.hits else ""
    vector = result.vector
    if cache is not None:
        await cache.put(request, answer, vector, closest, turn)
    if questions is not None:
        questions.record_soon(
            request.collection, request.question, answer.status, vector, closest, answer.index_version
        )


async def _remember(threads: ThreadStore, thread: str, turn: Turn, restart: bool) -> None:
    """Record the question's turn; a conversation store that fails costs the follow-up, not the answer."""
    try:
        await threads.record(thread, turn, restart=restart)
    except REDIS_ERRORS as exc:
        log.warning("could not record a turn of thread %s: %s", thread, exc)


def _with_expiry(note: str | None, conversation: ThreadContext) -> str | None:
    """The answer's note, saying so when its conversation had expired (every front-end shows notes)."""
    if not conversation.expired:
        return note
    return f"{EXPIRED_NOTE} {note}" if note else EXPIRED_NOTE


def describe_empty(engine: Engine, collection: str) -> str | None:
    """Why there is nothing to answer from, and what to check; None when the collection has documents."""

    if engine.store.documents(collection):
        return None
    settings = engine.settings
    where = describe(settings.redis_url) if settings.redis_url else "the embedded Redis"
    collections = engine.store.collections()
    if not collections:
        return (
            f"Redis at {where} holds no Syllabot data (no collection under the key prefix "
            f"'{settings.key_prefix}'). Check that REDIS_URL names the server your materials were "
            "indexed on, that SYLLABOT_KEY_PREFIX is the one used then, and that the server loaded its "
            "data (a server that could not read its AOF/RDB starts empty: see `redis-cli INFO "
            "persistence`, and `redis-server --version` of the server actually running; Redis 7 is "
            "expected). "
            f"Then index with `syllabot index PATH --collection {collection}`."
        )
    return (
        f"the collection '{collection}' has no indexed documents (collections on {where}: "
        f"{', '.join(collections)}). Index some with `syllabot index PATH --collection {collection}`, "
        "or check the collection name (the channel's binding, or --collection)."
    )


def log_answer(request: AskRequest, answer: Answer) -> None:
    """One JSON line per question: enough to audit quality and latency, without the question text.

    ``status`` is the outcome (answered / uncertain / not_in_materials); ``in_materials`` stays for
    log readers written before there were three.
    """
    answer_log.info(
        json.dumps(
            {
                "event": "answer",
                "pid": os.getpid(),
                "collection": request.collection,
                "platform": request.platform,
                "question_chars": len(request.question),
                "thread": request.thread is not None,
                "status": answer.status,
                "in_materials": answer.in_materials,
                "citations": len(answer.citations),
                "note": answer.note,
                "index_version": answer.index_version,
                "timings_ms": answer.timings.model_dump(exclude_none=True),
            },
            ensure_ascii=False,
        )
    )
