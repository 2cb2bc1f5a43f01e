# ruff: noqa: F811  (fixtures imported from the platform test module, used as arguments)
"""Discord follow-ups and private questions: the real discord.py client against the Discord fake,
with a real Redis and a real worker (fixtures shared with tests/test_discord_bot.py)."""

from __future__ import annotations

import json

import pytest
import redis.asyncio as aioredis

from syllabot.bots.discord_bot import SyllabotBot
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.pseudonyms import pseudonym
from syllabot.worker.ops.sample import sample_files
from tests.discord_fake import DiscordFake, FakeInteraction, Recorded
from tests.test_discord_bot import (  # noqa: F401  (fixtures; `worker` is conftest's)
    TIMEOUT,
    bot,
    bot_settings,
    fake,
    index,
    redis_client,
    text_of,
)

pytestmark = pytest.mark.slow

SYLLABI = [(name, data) for name, data in sample_files() if name.endswith(".pdf")]


def buttons(rec: Recorded) -> list[str]:
    body = FakeInteraction.body(rec)
    return [c["custom_id"] for row in body.get("components") or [] for c in row["components"]]


def sources_field(rec: Recorded) -> str:
    [embed, *_] = FakeInteraction.body(rec).get("embeds") or [{}]
    return next((f["value"] for f in embed.get("fields", []) if f["name"] == "Sources"), "")


async def test_a_follow_up_from_the_button_is_answered_in_the_conversations_course(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await index(settings, "default", *SYLLABI)
    ix = await fake.command("ask", question="which unit of ML has SVM?", user_id=501)
    final = await ix.final(TIMEOUT)
    follow = next(b for b in buttons(final) if b.startswith("syllabot:followup:"))
    assert follow == f"syllabot:followup:o:{ix.id}"  # public answer, conversation named after it

    click = await fake.click(ix.original, follow, user_id=501)
    modal = await click.callback(TIMEOUT)
    assert modal.json["type"] == 9  # MODAL: the follow-up is typed in a form

    submitted = await fake.submit_modal(modal, ["and the textbooks for that?"], user_id=501)
    answer = await submitted.final(TIMEOUT)
    first = submitted.requests()[0]
    assert first.kind == "callback" and first.json["type"] == 5
    assert [r.kind for r in submitted.requests()].count("callback") == 1  # answered once
    sources = sources_field(answer)
    assert sources and "KCAI205-machine-learning.pdf" in sources
    assert "KC21CS47" not in sources  # the follow-up names no course: the conversation's is kept
    assert f"syllabot:followup:o:{ix.id}" in buttons(answer)  # the conversation goes on

    turns = await redis_client.lrange(Keys(settings.key_prefix).thread(f"discord:{ix.id}"), 0, -1)
    assert [json.loads(t)["question"] for t in turns] == [
        "which unit of ML has SVM?",
        "and the textbooks for that?",
    ]
    assert json.loads(turns[1])["courses"] == ["22AI205 Machine Learning"]


async def test_a_follow_up_modal_opened_before_a_restart_is_still_answered(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    """discord.py hands a modal's submission only to the process that opened it; a student who
    opened the form before the bot restarted (or on another replica) must still get an answer."""
    await index(settings, "default", *SYLLABI)
    ix = await fake.command("ask", question="which unit of ML has SVM?", user_id=502)
    await ix.final(TIMEOUT)
    # The form as another process opened it: this one never saw it.
    opened_elsewhere = Recorded(
        "callback",
        "POST",
        "",
        {
            "type": 9,
            "data": {
                "custom_id": f"syllabot:followup-modal:o:{ix.id}",
                "components": [{"type": 1, "components": [{"type": 4, "custom_id": "a1b2c3"}]}],
            },
        },
    )
    submitted = await fake.submit_modal(opened_elsewhere, ["and the textbooks for that?"], user_id=502)
    answer = await submitted.final(TIMEOUT)
    assert "KCAI205-machine-learning.pdf" in sources_field(answer)
    turns = await redis_client.lrange(Keys(settings.key_prefix).thread(f"discord:{ix.id}"), 0, -1)
    assert [json.loads(t)["question"] for t in turns][-1] == "and the textbooks for that?"


async def test_ask_in_a_discord_thread_continues_that_threads_conversation(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await index(settings, "default", *SYLLABI)
    first = await fake.command("ask", question="cloud computing course outcomes", channel_id=fake.thread_id)
    await first.final(TIMEOUT)
    second = await fake.command("ask", question="and the reference books?", channel_id=fake.thread_id)
    answer = await second.final(TIMEOUT)
    assert "KC21CS47-cloud-computing.pdf" in sources_field(answer)
    assert "KCAI205" not in sources_field(answer)
    key = Keys(settings.key_prefix).thread(f"discord:thread-{fake.thread_id}")
    assert await redis_client.llen(key) == 2


async def test_a_private_question_is_ephemeral_from_the_deferral_on_and_takes_votes(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await index(settings, "default", *SYLLABI)
    ix = await fake.command("ask", question="how many credits is 22AI205?", private=True, user_id=610)
    final = await ix.final(TIMEOUT)
    deferral = ix.requests()[0]
    assert deferral.kind == "callback" and deferral.json["type"] == 5
    assert deferral.json["data"]["flags"] & 64  # ephemeral: nobody else sees the question or the answer
    assert ix.original["flags"] & 64
    assert all(r.json.get("flags", 64) & 64 for r in ix.requests() if r.kind == "followup")
    assert "22AI205" in text_of(final) or "04" in text_of(final)

    up = next(b for b in buttons(final) if b.startswith("syllabot:vote:up:"))
    click = await fake.click(ix.original, up, user_id=610)
    reply = await click.followup(TIMEOUT)
    assert reply.json["flags"] & 64 and "Thanks" in text_of(reply)
    answer_id = up.rsplit(":", 1)[1]
    voter = pseudonym(bot._pseudonym_key, "discord", 610)
    vote = await redis_client.hget(Keys(settings.key_prefix).feedback_vote(answer_id), voter)
    assert vote == b"up"

    # Its follow-up stays private too.
    follow = next(b for b in buttons(final) if b.startswith("syllabot:followup:"))
    assert follow.startswith("syllabot:followup:p:")
    modal = await (await fake.click(ix.original, follow, user_id=610)).callback(TIMEOUT)
    submitted = await fake.submit_modal(modal, ["and how many CIE marks?"], user_id=610)
    await submitted.final(TIMEOUT)
    assert submitted.requests()[0].json["data"]["flags"] & 64
