"""Streamed answers end to end: a real worker answering with a fake streaming LLM, and the real
Discord and Slack front-ends against their fakes (``tests/test_streaming.py``, ``bench/streaming.py``)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient
from tests.discord_fake import DiscordFake, FakeInteraction, Recorded
from tests.fake_openai import StreamingLLM
from tests.queue_helpers import running_worker
from tests.slack_fake import BOT_TOKEN, FakeSlack
from tests.slack_fake import Recorded as SlackRecorded
from tests.test_discord_bot import running_bot
from tests.test_slack_bot import SECRET, STUDENT, Bot, _serve_bot

WAIT = 30.0

NOTES = b"""# 21CS44 Operating Systems

## Module 2: Process Synchronisation

A semaphore is an integer variable that, apart from initialisation, is accessed only through two
standard atomic operations: wait() and signal(). Semaphores solve the critical-section problem.

## Module 3: Deadlocks

A deadlock occurs when every process in a set waits for a resource held by another process of the
set. The four necessary conditions are mutual exclusion, hold and wait, no preemption and circular wait.
"""

QUESTION = "What is a semaphore?"
#: About 40 tokens, citing both retrieved passages and one that does not exist ([9]).
REPLY = (
    "A semaphore is an integer variable that, apart from initialisation, is touched only through two "
    "atomic operations, wait() and signal() [1]. Semaphores solve the critical-section problem [1], "
    "and a wrong order of waits can end in a deadlock [2]. Nothing more is said [9]."
)


def stream_settings(settings: Settings, llm: StreamingLLM, **extra: Any) -> Settings:
    """The test's settings answering with the fake LLM, streamed."""
    return settings.model_copy(
        update={
            "answerer": "openai",
            "llm_base_url": llm.url,
            "llm_model": "fake-model",
            "llm_api_key": "sk-test",
            "llm_timeout_s": 20.0,
            "llm_stall_s": 1.0,
            "stream_edit_every_s": 0.4,
            "ask_timeout_s": 30.0,
            **extra,
        }
    )


@contextlib.asynccontextmanager
async def worker_with_notes(settings: Settings) -> AsyncIterator[None]:
    """A real worker in this event loop, with :data:`NOTES` indexed in the default collection."""
    async with running_worker(settings), QueueClient(settings) as queue:
        report = await queue.ingest("default", "os-notes.md", NOTES, "test", timeout=WAIT)
        assert report.changed, report
        yield


@contextlib.asynccontextmanager
async def discord_bot(settings: Settings) -> AsyncIterator[DiscordFake]:
    """The real discord.py bot connected to a fresh Discord fake; yields the fake."""
    fake = DiscordFake()
    await fake.start()
    settings = settings.model_copy(
        update={
            "discord_token": "fake-token",
            "discord_guild_ids": [fake.guild_id],
            "discord_api_base": fake.api_base,
            "discord_gateway_url": fake.gateway_url,
        }
    )
    try:
        async with running_bot(settings, fake, WAIT):
            yield fake
    finally:
        await fake.stop()


@contextlib.asynccontextmanager
async def slack_bot(settings: Settings) -> AsyncIterator[tuple[FakeSlack, Bot]]:
    """The real Bolt app over HTTP, talking to a fresh Slack fake; yields both."""
    fake = await FakeSlack().start()
    fake.add_user(STUDENT)
    settings = settings.model_copy(
        update={"slack_bot_token": BOT_TOKEN, "slack_signing_secret": SECRET, "slack_api_url": fake.api_url}
    )
    try:
        async with QueueClient(settings) as queue:
            async for bot in _serve_bot(settings, queue):
                yield fake, bot
    finally:
        await fake.stop()


# --- reading what the fakes received --------------------------------------------------------------
def discord_edits(ix: FakeInteraction) -> list[Recorded]:
    """The ``@original`` edits of one interaction, in order."""
    return [r for r in ix.requests() if r.kind == "edit"]


def is_partial_edit(rec: Recorded) -> bool:
    from syllabot.bots.discord_render import WRITING_FOOTER

    embeds = FakeInteraction.body(rec).get("embeds") or []
    return any((e.get("footer") or {}).get("text") == WRITING_FOOTER for e in embeds)


def slack_blocks(rec: SlackRecorded) -> list[dict]:
    blocks = rec.args.get("blocks") or []
    return json.loads(blocks) if isinstance(blocks, str) else blocks


def is_partial_message(rec: SlackRecorded) -> bool:
    from syllabot.bots.slack_render import WRITING_CONTEXT

    return WRITING_CONTEXT in json.dumps(slack_blocks(rec), ensure_ascii=False)
