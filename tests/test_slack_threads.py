# ruff: noqa: F811  (fixtures imported from the platform test module, used as arguments)
"""Slack follow-ups in threads and private ``/ask``: the real Bolt app against the Slack fake, with a
real Redis and a real worker (fixtures shared with tests/test_slack_bot.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio as aioredis

from syllabot.shared.bindings import Privacy
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.pseudonyms import pseudonym, pseudonym_key
from syllabot.shared.queue import QueueClient
from syllabot.worker.ops.sample import sample_files
from tests.slack_fake import BOT_USER_ID, TEAM_ID, FakeSlack
from tests.test_slack_bot import (  # noqa: F401  (fixtures; `worker` is conftest's)
    ADMIN,
    CHANNEL,
    STUDENT,
    WAIT,
    Bot,
    _answer_id,
    _texts,
    bot,
    fake,
    queue,
    redis_client,
    slack_settings,
)

pytestmark = pytest.mark.slow

MENTION_TS = "1700000100.000100"


@pytest.fixture
async def syllabi(worker: None, queue: QueueClient) -> None:
    files = [(name, data) for name, data in sample_files() if name.endswith(".pdf")]
    report = await queue.ingest_many("default", files, "test", timeout=WAIT * 3)
    assert report.changed, report


def _blocks(rec: Any) -> list[dict]:
    blocks = rec.args["blocks"]
    return json.loads(blocks) if isinstance(blocks, str) else blocks


def _message(text: str, ts: str, *, thread_ts: str | None = None, **extra: Any) -> dict[str, Any]:
    event = {"type": "message", "user": STUDENT, "text": text, "ts": ts, "channel": CHANNEL, "team": TEAM_ID}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return {**event, **extra}


async def test_a_reply_in_a_mentions_thread_is_a_follow_up(
    bot: Bot, fake: FakeSlack, syllabi: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    mention = {
        **_message(f"<@{BOT_USER_ID}> which unit of machine learning covers SVM?", MENTION_TS),
        "type": "app_mention",
    }
    await bot.event(mention, event_id="EvM")
    first = await fake.wait_for("api", "chat.postMessage", timeout=WAIT)
    assert first.args["thread_ts"] == MENTION_TS
    # Slack sends every channel message to the app too; the mention's own message is not a reply.
    await bot.event(_message(mention["text"], MENTION_TS), event_id="EvM2")

    # A reply in that thread, no mention: a follow-up naming no course.
    await bot.event(
        _message("and which textbook chapters for that?", "1700000101.000100", thread_ts=MENTION_TS),
        event_id="EvR",
    )
    after = len(fake.records)
    second = await fake.wait_for(
        "api", "chat.postMessage", predicate=lambda r: r is not first and "blocks" in r.args, timeout=WAIT
    )
    assert second.args["thread_ts"] == MENTION_TS
    text = _texts(_blocks(second))
    assert "KCAI205-machine-learning.pdf" in text and "KC21CS47" not in text
    key = Keys(settings.key_prefix).thread(f"slack:{CHANNEL}:{MENTION_TS}")
    questions = [json.loads(t)["question"] for t in await redis_client.lrange(key, 0, -1)]
    assert questions == [
        "which unit of machine learning covers SVM?",
        "and which textbook chapters for that?",
    ]

    # Our own answer (a bot message) and a reply in somebody else's thread are not questions.
    await bot.event(
        _message("answer text", "1700000102.000100", thread_ts=MENTION_TS, bot_id="BBOT"), event_id="EvB"
    )
    await bot.event(
        _message("what about unit 2?", "1700000103.000100", thread_ts="1600000000.1"), event_id="EvO"
    )
    await bot.event(  # a marker event after them: once it is answered, the two above were seen
        _message("and the reference books?", "1700000104.000100", thread_ts=MENTION_TS), event_id="EvZ"
    )
    await fake.wait_for(
        "api", "chat.postMessage", after=after, predicate=lambda r: "blocks" in r.args, timeout=WAIT
    )
    third = await fake.wait_for(
        "api",
        "chat.postMessage",
        after=after,
        predicate=lambda r: "reference" in _texts(_blocks(r)).lower() if "blocks" in r.args else False,
        timeout=WAIT,
    )
    assert third.args["thread_ts"] == MENTION_TS
    posted = [r for r in fake.find("api", "chat.postMessage")[2:] if "blocks" in r.args]
    assert [r.args["thread_ts"] for r in posted] == [MENTION_TS]  # only the marker was answered
    assert await redis_client.llen(key) == 3


async def test_a_reply_under_an_ask_answer_is_a_follow_up(
    bot: Bot, fake: FakeSlack, syllabi: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    """A /ask answer comes through a response_url, which returns no ts: the reply's thread is found
    from the answer itself (the conversation in its footer's block_id, read back with
    conversations.replies)."""
    await bot.command(fake, "/ask", "which unit of machine learning covers SVM?", STUDENT, "f1")
    answer = await fake.wait_for("response", "f1", timeout=WAIT)
    assert answer.args["response_type"] == "in_channel"
    answer_ts = fake.response_messages["f1"]
    conversation = next(
        b["block_id"].removeprefix("syllabot-conversation:")
        for b in answer.args["blocks"]
        if str(b.get("block_id", "")).startswith("syllabot-conversation:")
    )
    assert conversation.startswith(f"slack:{CHANNEL}:ask-")

    reply = _message(
        "and which textbook chapters for that?", "1700000201.000100", thread_ts=answer_ts,
        parent_user_id=BOT_USER_ID,
    )  # fmt: skip
    await bot.event(reply, event_id="EvA1")
    second = await fake.wait_for(
        "api", "chat.postMessage", predicate=lambda r: "blocks" in r.args, timeout=WAIT
    )
    assert second.args["thread_ts"] == answer_ts  # answered in the thread under the answer
    text = _texts(_blocks(second))
    assert "KCAI205-machine-learning.pdf" in text and "KC21CS47" not in text
    turns = await redis_client.lrange(Keys(settings.key_prefix).thread(conversation), 0, -1)
    assert [json.loads(t)["question"] for t in turns] == [
        "which unit of machine learning covers SVM?",
        "and which textbook chapters for that?",
    ]
    replies = fake.find("api", "conversations.replies")
    assert replies and replies[-1].args["ts"] == answer_ts

    # A reply under somebody else's message costs no lookup and no answer.
    before = len(fake.find("api", "conversations.replies"))
    await bot.event(
        _message("and unit 2?", "1700000202.000100", thread_ts="1600000000.2", parent_user_id="UOTHER"),
        event_id="EvA2",
    )
    await bot.event(  # a marker after it: once it is answered, the one above was seen
        _message("and the reference books?", "1700000203.000100", thread_ts=answer_ts,
                 parent_user_id=BOT_USER_ID),
        event_id="EvA3",
    )  # fmt: skip
    await fake.wait_for(
        "api",
        "chat.postMessage",
        predicate=lambda r: "blocks" in r.args and "reference" in _texts(_blocks(r)).lower(),
        timeout=WAIT,
    )
    assert len(fake.find("api", "conversations.replies")) == before + 1  # the marker's, not the other's
    posted = [r for r in fake.find("api", "chat.postMessage") if "blocks" in r.args]
    assert {r.args["thread_ts"] for r in posted} == {answer_ts}


async def test_ask_is_in_channel_by_default_and_private_where_set_and_votes_still_work(
    bot: Bot, fake: FakeSlack, syllabi: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await bot.command(fake, "/ask", "how many credits is 22AI205?", STUDENT, "p1")
    assert (await fake.wait_for("response", "p1", timeout=WAIT)).args["response_type"] == "in_channel"

    await bot.command(fake, "/syllabot-privacy", "private", STUDENT, "p2")
    assert "Only Syllabot admins" in (await fake.wait_for("response", "p2", timeout=WAIT)).args["text"]
    await bot.command(fake, "/syllabot-privacy", "private", ADMIN, "p3")
    assert "privately" in (await fake.wait_for("response", "p3", timeout=WAIT)).args["text"]
    privacy = Privacy(redis_client, Keys(settings.key_prefix), "slack")
    assert await privacy.resolve(f"channel:{CHANNEL}", f"team:{TEAM_ID}") is True

    await bot.command(fake, "/ask", "how many credits is 22AI205?", STUDENT, "p4")
    private = await fake.wait_for("response", "p4", timeout=WAIT)
    assert private.args["response_type"] == "ephemeral"  # never shown to the channel
    answer_id = _answer_id(private.args["blocks"])

    click = {
        "type": "block_actions",
        "user": {"id": STUDENT},
        "team": {"id": TEAM_ID},
        "channel": {"id": CHANNEL},
        "container": {"type": "message", "channel_id": CHANNEL, "is_ephemeral": True},
        "response_url": fake.response_url("v1"),
        "actions": [{"action_id": "syllabot_vote_up", "value": answer_id, "type": "button"}],
        "trigger_id": "t",
        "api_app_id": "AFAKE",
        "token": "deprecated",
    }
    from syllabot.bots import slack_render as render

    click["actions"][0]["action_id"] = render.VOTE_UP_ACTION
    await bot.interactive(click)
    await fake.wait_for("response", "v1", timeout=WAIT)
    votes = await redis_client.hgetall(Keys(settings.key_prefix).feedback_vote(answer_id))
    voter = pseudonym(pseudonym_key(bot.settings, "slack"), "slack", STUDENT)
    assert votes == {voter.encode(): b"up"}

    # A workspace setting applies where the channel has none; the channel's own wins.
    await bot.command(fake, "/syllabot-privacy", "public workspace", ADMIN, "p5")
    await fake.wait_for("response", "p5", timeout=WAIT)
    await bot.command(fake, "/ask", "how many credits is 22AI205?", STUDENT, "p6")
    assert (await fake.wait_for("response", "p6", timeout=WAIT)).args["response_type"] == "ephemeral"
    await bot.command(fake, "/ask", "how many credits is 22AI205?", STUDENT, "p7", channel="COTHER")
    assert (await fake.wait_for("response", "p7", timeout=WAIT)).args["response_type"] == "in_channel"
    await bot.command(fake, "/syllabot-privacy", "", STUDENT, "p8")
    assert "privately" in (await fake.wait_for("response", "p8", timeout=WAIT)).args["text"]
