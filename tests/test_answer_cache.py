"""The answer cache (worker/answerers/answer_cache.py) on a real Redis with a real worker and engine: a repeat
is served from the cache and says the same; a new index version never serves an old answer."""

from __future__ import annotations

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import Answer, AskRequest
from syllabot.shared.threads import Turn
from syllabot.worker.answerers.answer_cache import cache_digest
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import NEW_DOC, NEW_QUESTION, running_worker

QUESTION = "How many days do I have to return a new bike?"


async def _ask(client: QueueClient, question: str) -> Answer:
    return await client.ask(AskRequest(question=question, collection="shop", platform="test"))


def _same(a: Answer, b: Answer) -> None:
    fields = {"question", "timings"}
    assert a.model_dump(exclude=fields) == b.model_dump(exclude=fields)


async def test_a_repeat_is_served_from_the_cache_and_says_the_same(settings: Settings) -> None:
    async with running_worker(settings), QueueClient(settings) as client:
        await client.ingest_many("shop", sample_files(), who="admin")
        fresh = await _ask(client, QUESTION)
        again = await _ask(client, QUESTION)
        # The same question as a student types it: greeting and emoji are cleaned away first.
        typed = await _ask(client, f"hi 👋 {QUESTION}")
    assert not fresh.timings.cached and fresh.timings.embed > 0
    assert again.timings.cached and again.timings.embed == 0 and again.timings.queue is not None
    assert typed.timings.cached and typed.question == f"hi 👋 {QUESTION}"
    _same(fresh, again)
    _same(fresh, typed)
    assert "30 days" in again.text and again.citations


async def test_a_new_index_version_never_serves_an_old_answer(settings: Settings) -> None:
    async with running_worker(settings), QueueClient(settings) as client:
        await client.ingest_many("shop", sample_files(), who="admin")
        before = await _ask(client, NEW_QUESTION)
        assert (await _ask(client, NEW_QUESTION)).timings.cached
        await client.ingest("shop", *NEW_DOC, who="admin")
        after_upload = await _ask(client, NEW_QUESTION)
        report = await client.reindex("shop", who="admin")
        after_reindex = await _ask(client, NEW_QUESTION)
        repeat = await _ask(client, NEW_QUESTION)
    assert before.status != "answered" or "moonlight" not in before.text.lower()
    assert not after_upload.timings.cached and after_upload.index_version != before.index_version
    assert any(c.file == NEW_DOC[0] for c in after_upload.citations), after_upload.text
    assert not after_reindex.timings.cached and after_reindex.index_version == report.index_version
    assert repeat.timings.cached and repeat.index_version == report.index_version


async def test_the_cache_is_off_with_a_zero_ttl_and_keyed_by_what_decides_the_answer(
    settings: Settings,
) -> None:
    off = settings.model_copy(update={"answer_cache_ttl_s": 0.0})
    async with running_worker(off), QueueClient(off) as client:
        await client.ingest_many("shop", sample_files(), who="admin")
        await _ask(client, QUESTION)
        assert not (await _ask(client, QUESTION)).timings.cached
    keys = Keys(settings.key_prefix)
    import redis

    client_sync = redis.Redis.from_url(settings.redis_url or "")
    assert not list(client_sync.scan_iter(match=keys.answer_cache("shop", "*", "*")))
    base = AskRequest(question="what is CO3?", collection="shop")
    assert cache_digest(base, "extractive") == cache_digest(
        base.model_copy(update={"question": "hey, what is CO3? 🙏"}), "extractive"
    )
    assert cache_digest(base, "extractive") != cache_digest(base.model_copy(update={"k": 3}), "extractive")
    assert cache_digest(base, "extractive") != cache_digest(base, "openai")


async def test_a_conversations_first_question_is_served_from_the_cache_and_a_follow_up_never_is(
    settings: Settings,
) -> None:
    """Every Discord /ask starts a conversation: its first question reads nothing of it, so it is
    served like any other, and records the turn the search would have recorded. A follow-up is read
    against its conversation's turns, which no key holds: it is computed, and not stored."""

    def in_thread(question: str, thread: str) -> AskRequest:
        return AskRequest(question=question, collection="shop", platform="test", thread=thread)

    keys = Keys(settings.key_prefix)
    async with running_worker(settings), QueueClient(settings) as client:
        await client.ingest_many("shop", sample_files(), who="admin")
        computed = await client.ask(in_thread(QUESTION, "test:c1:t0"))  # stored, with its turn
        served = await client.ask(in_thread(QUESTION, "test:c1:t1"))
        follow_up = await client.ask(in_thread(QUESTION, "test:c1:t1"))
        alone = await _ask(client, QUESTION)
        redis = await client._redis()
        t0 = [Turn.from_json(t) for t in await redis.lrange(keys.thread("test:c1:t0"), 0, -1)]
        t1 = [Turn.from_json(t) for t in await redis.lrange(keys.thread("test:c1:t1"), 0, -1)]
    assert not computed.timings.cached and served.timings.cached
    assert not follow_up.timings.cached and alone.timings.cached
    _same(computed, served)
    assert [t.question for t in t1] == [QUESTION, QUESTION]  # the served question's turn is recorded
    assert t0[0].topic and (t1[0].courses, t1[0].modules, t1[0].topic) == (
        t0[0].courses,
        t0[0].modules,
        t0[0].topic,
    )


async def test_a_streamed_ask_can_be_served_from_the_cache(settings: Settings) -> None:
    """An asker showing partials gets a cached answer as its one final message (no partials)."""
    async with running_worker(settings), QueueClient(settings) as client:
        await client.ingest_many("shop", sample_files(), who="admin")
        fresh = await _ask(client, QUESTION)
        request = AskRequest(question=QUESTION, collection="shop", platform="test")
        updates = [u async for u in client.ask_live(request)]
    [final] = updates
    assert isinstance(final, Answer) and final.timings.cached
    _same(fresh, final)
