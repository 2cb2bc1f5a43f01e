"""The real discord.py client against the Discord fake, with a real Redis and a real worker.

Each test gets its own key prefix (``settings`` fixture), its own fake Discord and its own bot; the
worker runs in the test's event loop. Assertions are on the JSON the fake received from discord.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis.asyncio as aioredis
from fpdf import FPDF

from syllabot.bots import discord_bot, discord_render
from syllabot.bots.discord_bot import (
    SyllabotBot,
    apply_endpoint_overrides,
    restore_endpoints,
    run_discord,
    vote_view,
)
from syllabot.shared.bindings import Bindings
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.pseudonyms import pseudonym
from syllabot.shared.queue import QueueClient
from syllabot.shared.queue_protocol import beat
from syllabot.shared.schema import NOT_IN_MATERIALS, Answer, AskRequest, SourceInfo
from tests.discord_fake import MANAGE_GUILD, MEMBER_PERMISSIONS, DiscordFake, FakeInteraction, Recorded

pytestmark = pytest.mark.slow

OS_NOTES = b"""# 21CS44 Operating Systems

## Module 2: Process Synchronisation

A semaphore is an integer variable that, apart from initialisation, is accessed only through two
standard atomic operations: wait() and signal(). Semaphores solve the critical-section problem and
let processes synchronise access to shared resources.

A monitor is a high-level synchronisation construct in which only one process is active at a time.

## Module 3: Deadlocks

A deadlock occurs when every process in a set waits for a resource held by another process of the
set. The four necessary conditions are mutual exclusion, hold and wait, no preemption and circular wait.
"""

NOTICE = b"""# Lab notice

## Module 5: Compiler lab

Announcement for @everyone and <@&123456789012345678>: the compiler lab viva is held on Friday in
lab room 101. Bring your record book to the compiler lab viva.
"""

TIMEOUT = 30.0


# --- fixtures ----------------------------------------------------------------------------------
@pytest.fixture
async def fake() -> AsyncIterator[DiscordFake]:
    fake = DiscordFake()
    await fake.start()
    yield fake
    await fake.stop()


def discord_settings(settings: Settings, fake: DiscordFake, **extra: Any) -> Settings:
    """The test's settings pointed at the Discord fake, its admin role an admin role."""
    return settings.model_copy(
        update={
            "discord_token": "fake-token",
            "discord_guild_ids": [fake.guild_id],
            "discord_admin_role_ids": [fake.admin_role_id],
            "discord_api_base": fake.api_base,
            "discord_gateway_url": fake.gateway_url,
            "ask_timeout_s": 20.0,
            "rate_limit_per_minute": 5,
            **extra,
        }
    )


@pytest.fixture
def bot_settings(settings: Settings, fake: DiscordFake) -> Settings:
    return discord_settings(settings, fake)


@contextlib.asynccontextmanager
async def running_bot(
    settings: Settings, fake: DiscordFake, timeout: float = TIMEOUT
) -> AsyncIterator[SyllabotBot]:
    """The real discord.py bot connected to ``fake`` until the block ends (the one way tests run it)."""
    previous = apply_endpoint_overrides(settings)
    client = SyllabotBot(settings, guild_ready_timeout=0.1)  # one guild: no need to wait 2 s
    task = asyncio.create_task(client.start("fake-token"))
    try:
        await asyncio.wait_for(fake.commands_synced.wait(), timeout)
        await asyncio.wait_for(client.wait_until_ready(), timeout)
        yield client
    finally:
        await asyncio.wait_for(client.close(), timeout)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(task, timeout)
        restore_endpoints(previous)


@pytest.fixture
async def bot(bot_settings: Settings, fake: DiscordFake) -> AsyncIterator[SyllabotBot]:
    async with running_bot(bot_settings, fake) as client:
        yield client


async def index(settings: Settings, collection: str, *files: tuple[str, bytes]) -> None:
    async with QueueClient(settings) as queue:
        for name, data in files:
            report = await queue.ingest(collection, name, data, "test", timeout=TIMEOUT)
            assert report.files and report.files[0].ok, report


@pytest.fixture
async def redis_client(settings: Settings) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(settings.redis_url)
    yield client
    await client.aclose()


def embeds_of(rec: Recorded) -> list[dict]:
    return FakeInteraction.body(rec).get("embeds") or []


def text_of(rec: Recorded) -> str:
    """Everything a user would read in a response: content, titles, descriptions, fields, footer."""
    body = FakeInteraction.body(rec)
    parts = [body.get("content") or ""]
    for e in body.get("embeds") or []:
        parts += [e.get("title", ""), e.get("description", ""), (e.get("author") or {}).get("name", "")]
        parts += [f"{f['name']}\n{f['value']}" for f in e.get("fields", [])]
        parts.append((e.get("footer") or {}).get("text", ""))
    return "\n".join(parts)


def assert_pings_nobody(rec: Recorded) -> None:
    assert FakeInteraction.body(rec).get("allowed_mentions") == {"parse": []}


def assert_vote_acknowledged_first(click: FakeInteraction) -> None:
    """A button click is acked with DEFERRED_UPDATE_MESSAGE before anything else, and the message the
    button sits on (``@original`` of a component interaction) is never edited."""
    sent = click.requests()
    assert sent[0].kind == "callback" and sent[0].json["type"] == 6, sent[0]
    assert not sent[0].json.get("data")  # nothing to show: no loading state, no message change
    assert all(r.kind in ("callback", "followup") for r in sent), [r.kind for r in sent]


def make_pdf() -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pages = [
        "21CS51 Compiler Design. Module 1: Lexical analysis. A lexer groups characters into tokens "
        "using regular expressions and finite automata.",
        "Module 2: Syntax analysis. A parser checks the token stream against a context-free grammar "
        "and builds a parse tree; LR parsers are bottom-up.",
    ]
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


# --- /ask ----------------------------------------------------------------------------------------
async def test_ask_defers_first_then_edits_with_cited_embed_and_votes_are_stored(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await index(settings, "default", ("os-notes.md", OS_NOTES))
    ix = await fake.command("ask", question="What is a semaphore?", user_id=777)

    final = await ix.final(TIMEOUT)
    first = ix.requests()[0]
    assert first.kind == "callback" and first.json["type"] == 5  # deferred before anything else
    assert not (first.json.get("data") or {}).get("flags", 0) & 64  # public: the class sees the answer

    assert final.kind == "edit"
    assert_pings_nobody(final)
    [embed] = embeds_of(final)
    assert embed["title"] == "What is a semaphore?"
    assert "semaphore" in embed["description"].lower()
    assert NOT_IN_MATERIALS not in embed["description"]
    sources = next(f for f in embed["fields"] if f["name"] == "Sources")
    assert sources["value"].startswith("**1.** ")
    assert "(os-notes.md)" in sources["value"]
    assert embed["footer"]["text"].startswith("Collection: default")

    buttons = [c for row in final.json["components"] for c in row["components"]]
    up, down = (b["custom_id"] for b in buttons if b["custom_id"].startswith("syllabot:vote:"))
    assert up.startswith("syllabot:vote:up:") and down.startswith("syllabot:vote:down:")
    answer_id = up.rsplit(":", 1)[1]

    # 👍 then 👎 by the same user: one vote, changed; both land in the stream.
    keys = Keys(settings.key_prefix)
    answer_before = json.dumps(ix.original, sort_keys=True)
    click = await fake.click(ix.original, up, user_id=777)
    reply = await click.followup(TIMEOUT)
    assert_vote_acknowledged_first(click)
    assert reply.json["flags"] & 64  # only the voter sees the thanks
    assert_pings_nobody(reply)
    assert "Thanks" in text_of(reply)
    voter = pseudonym(bot._pseudonym_key, "discord", 777)  # never the raw member id
    assert voter.startswith("discord:u") and "777" not in voter
    assert await redis_client.hget(keys.feedback_vote(answer_id), voter) == b"up"

    click = await fake.click(ix.original, down, user_id=777)
    reply = await click.followup(TIMEOUT)
    assert_vote_acknowledged_first(click)
    assert "changed" in text_of(reply).lower()
    assert json.dumps(ix.original, sort_keys=True) == answer_before  # the answer itself is untouched
    assert await redis_client.hgetall(keys.feedback_vote(answer_id)) == {voter.encode(): b"down"}
    entries = await redis_client.xrange(keys.feedback_stream)
    assert [(e[b"vote"], e[b"changed"]) for _, e in entries] == [(b"up", b"0"), (b"down", b"1")]
    assert entries[0][1][b"question"] == b"What is a semaphore?"
    assert entries[0][1][b"collection"] == b"default"


async def test_unanswerable_question_starts_with_the_marker(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings
) -> None:
    await index(settings, "default", ("os-notes.md", OS_NOTES))
    ix = await fake.command("ask", question="Can I pay the tuition fees in instalments?")
    final = await ix.final(TIMEOUT)
    assert_pings_nobody(final)
    first = embeds_of(final)[0]
    assert first["description"].split("\n")[0] == f"**{NOT_IN_MATERIALS}**"
    assert first["color"] == 0xE67E22
    assert first["author"]["name"].startswith("You asked: Can I pay")


async def test_mentions_from_documents_are_neutralised(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings
) -> None:
    await index(settings, "default", ("os-notes.md", OS_NOTES), ("lab-notice.md", NOTICE))
    ix = await fake.command("ask", question="When is the compiler lab viva held?")
    final = await ix.final(TIMEOUT)
    assert_pings_nobody(final)
    text = text_of(final)
    assert "viva" in text
    assert "everyone" in text  # the words stay readable …
    assert "@everyone" not in text  # … but cannot ping or look like a ping
    assert "<@&123456789012345678>" not in text


async def test_no_worker_gives_a_clear_message_in_the_same_interaction(
    fake: DiscordFake, bot: SyllabotBot
) -> None:
    ix = await fake.command("ask", question="What is a semaphore?")
    final = await ix.final(TIMEOUT)
    assert ix.requests()[0].json["type"] == 5
    assert final.kind == "edit"
    assert_pings_nobody(final)
    assert "No Syllabot worker is running" in text_of(final)
    assert "syllabot worker" in text_of(final)


async def test_sixth_question_in_a_minute_is_rate_limited(fake: DiscordFake, bot: SyllabotBot) -> None:
    for _ in range(5):  # no worker: each gets its (deferred) "no worker" reply, and still counts
        ix = await fake.command("ask", question="What is a deadlock?", user_id=555)
        assert (await ix.callback(TIMEOUT)).json["type"] == 5
    ix = await fake.command("ask", question="What is a deadlock?", user_id=555)
    reply = await ix.callback(TIMEOUT)
    assert reply.json["type"] == 4 and reply.json["data"]["flags"] & 64  # ephemeral, not deferred
    assert_pings_nobody(reply)
    assert "5 questions a minute" in text_of(reply)
    assert "Try again in" in text_of(reply)
    other = await fake.command("ask", question="What is a deadlock?", user_id=556)  # per user
    assert (await other.callback(TIMEOUT)).json["type"] == 5


async def test_empty_question_is_refused_clearly(fake: DiscordFake, bot: SyllabotBot) -> None:
    ix = await fake.command("ask", question="   ")
    reply = await ix.callback(TIMEOUT)
    assert reply.json["type"] == 4 and reply.json["data"]["flags"] & 64
    assert "Empty question" in text_of(reply)


# --- admin commands ------------------------------------------------------------------------------
async def test_admin_commands_are_registered_hidden_from_members(fake: DiscordFake, bot: SyllabotBot) -> None:
    registered = {c["name"]: c for c in fake.commands[str(fake.guild_id)]}
    assert set(registered) >= {
        "ask",
        "sources",
        "upload",
        "reindex",
        "remove",
        "collection",
        "supersede",
        "current",
    }
    for name in ("upload", "reindex", "remove", "collection", "supersede", "current"):
        assert int(registered[name]["default_member_permissions"]) == MANAGE_GUILD
    assert registered["ask"]["default_member_permissions"] is None
    commands_put = [r for r in fake.requests if r.kind == "commands"]
    assert commands_put[0].path.endswith(f"/guilds/{fake.guild_id}/commands")  # instant guild sync


async def test_non_admin_upload_is_refused(fake: DiscordFake, bot: SyllabotBot) -> None:
    attachment = fake.add_attachment("notes.pdf", make_pdf())
    ix = await fake.command(
        "upload", file=attachment, permissions=MEMBER_PERMISSIONS, roles=[fake.student_role_id]
    )
    reply = await ix.callback(TIMEOUT)
    assert reply.json["type"] == 4 and reply.json["data"]["flags"] & 64
    assert_pings_nobody(reply)
    assert "Admins only" in text_of(reply) and "Manage Server" in text_of(reply)
    assert fake.downloads == []


async def test_oversize_attachment_is_refused_before_download(
    fake: DiscordFake, bot: SyllabotBot, bot_settings: Settings
) -> None:
    attachment = fake.add_attachment("huge.pdf", b"%PDF-1.4 tiny", size=bot_settings.max_document_bytes + 1)
    ix = await fake.command("upload", file=attachment, permissions=MANAGE_GUILD | MEMBER_PERMISSIONS)
    reply = await ix.callback(TIMEOUT)
    assert reply.json["type"] == 4 and reply.json["data"]["flags"] & 64
    assert "File too large" in text_of(reply)
    await asyncio.sleep(0.2)
    assert fake.downloads == []


async def test_admin_upload_indexes_pdf_then_sources_autocomplete_and_remove(
    fake: DiscordFake, bot: SyllabotBot, worker: None
) -> None:
    admin = {"permissions": MANAGE_GUILD | MEMBER_PERMISSIONS}
    attachment = fake.add_attachment("compilers.pdf", make_pdf())
    ix = await fake.command("upload", file=attachment, **admin)
    final = await ix.final(TIMEOUT)
    first = ix.requests()[0]
    assert first.json["type"] == 5 and first.json["data"]["flags"] & 64  # deferred, admin-only
    assert fake.downloads == [attachment["id"]]
    assert_pings_nobody(final)
    text = text_of(final)
    assert "Uploaded into “default”" in text
    assert "**2** pages" in text
    assert "compilers.pdf" in text
    chunks = [e for e in ix.requests() if e.kind == "edit"]
    assert chunks[-1] is final

    # /sources (anyone) lists it with pages and chunks.
    ix = await fake.command("sources")
    final = await ix.final(TIMEOUT)
    assert "compilers.pdf" in text_of(final) and "2 pages" in text_of(final)

    # /remove autocomplete offers it; members get nothing.
    ac = await fake.autocomplete("remove", "document", document="comp", **admin)
    reply = await ac.callback(TIMEOUT)
    assert reply.json["type"] == 8
    [choice] = reply.json["data"]["choices"]
    assert choice["name"].startswith("compilers.pdf")
    ac = await fake.autocomplete("remove", "document", document="comp")
    assert (await ac.callback(TIMEOUT)).json["data"]["choices"] == []

    ix = await fake.command("remove", document=choice["value"], **admin)
    final = await ix.final(TIMEOUT)
    assert "Removed from “default”" in text_of(final) and "with warnings" not in text_of(final)
    assert embeds_of(final)[0]["color"] == discord_render.COLOUR_ANSWERED.value  # a success, not a warning
    ix = await fake.command("sources")
    assert "No documents" in text_of(await ix.final(TIMEOUT))


async def test_collection_set_binds_the_channel_and_ask_uses_it(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await index(settings, "os-2026", ("os-notes.md", OS_NOTES))
    # An admin by role (no Manage Server permission) binds the second channel.
    ix = await fake.command(
        "collection set",
        name="os-2026",
        scope="channel",
        channel_id=fake.other_channel_id,
        roles=[fake.admin_role_id],
    )
    reply = await ix.callback(TIMEOUT)
    assert reply.json["type"] == 4 and reply.json["data"]["flags"] & 64
    assert "os-2026" in text_of(reply)
    bindings = Bindings(redis_client, Keys(settings.key_prefix), "discord")
    assert await bindings.resolve(f"channel:{fake.other_channel_id}", f"guild:{fake.guild_id}") == "os-2026"
    assert await bindings.resolve(f"channel:{fake.channel_id}", f"guild:{fake.guild_id}") == "default"

    ix = await fake.command("ask", question="What is a deadlock?", channel_id=fake.other_channel_id)
    final = await ix.final(TIMEOUT)
    embeds = embeds_of(final)
    assert embeds[-1]["footer"]["text"].startswith("Collection: os-2026")
    assert "deadlock" in text_of(final).lower()

    # A bad name is refused clearly; a plain member is refused.
    ix = await fake.command("collection set", name="no spaces!", roles=[fake.admin_role_id])
    assert "Invalid collection name" in text_of(await ix.callback(TIMEOUT))
    ix = await fake.command("collection set", name="x")
    assert "Admins only" in text_of(await ix.callback(TIMEOUT))


async def echo_collection(bot: SyllabotBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """Answer every /ask at once, naming the collection it was asked in (no worker needed)."""

    async def fake_ask(
        request: AskRequest, timeout: float | None = None, on_partial: object = None
    ) -> Answer:
        return Answer(
            text=f"Answered from {request.collection}.",
            in_materials=True,
            collection=request.collection,
            question=request.question,
        )

    monkeypatch.setattr(bot.queue, "ask", fake_ask)


async def test_ask_in_a_thread_uses_the_parent_channels_collection(
    fake: DiscordFake,
    bot: SyllabotBot,
    settings: Settings,
    redis_client: aioredis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await echo_collection(bot, monkeypatch)
    bindings = Bindings(redis_client, Keys(settings.key_prefix), "discord")
    await bindings.bind(f"guild:{fake.guild_id}", "whole-server")
    await bindings.bind(f"channel:{fake.other_channel_id}", "os-2026")

    ix = await fake.command("ask", question="What is a deadlock?", channel_id=fake.thread_id)
    assert ix.payload["channel"]["type"] == 11  # a public thread, whose parent is other_channel_id
    final = await ix.final(TIMEOUT)
    assert embeds_of(final)[-1]["footer"]["text"].startswith("Collection: os-2026")

    # A binding of the thread itself is more specific than its parent's.
    await bindings.bind(f"channel:{fake.thread_id}", "thread-only")
    ix = await fake.command("ask", question="What is a deadlock?", channel_id=fake.thread_id)
    assert embeds_of(await ix.final(TIMEOUT))[-1]["footer"]["text"].startswith("Collection: thread-only")


async def test_collection_set_channel_in_a_thread_binds_the_parent_and_says_so(
    fake: DiscordFake,
    bot: SyllabotBot,
    settings: Settings,
    redis_client: aioredis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await echo_collection(bot, monkeypatch)
    admin = {"roles": [fake.admin_role_id], "channel_id": fake.thread_id}
    ix = await fake.command("collection set", name="os-2026", scope="channel", **admin)
    reply = await ix.callback(TIMEOUT)
    assert reply.json["type"] == 4 and reply.json["data"]["flags"] & 64
    text = text_of(reply)
    assert "The parent channel now uses “os-2026”" in text
    assert "This is a thread, so the binding is on its parent channel, #os-class" in text

    keys = Keys(settings.key_prefix)
    assert await redis_client.get(keys.binding("discord", f"channel:{fake.other_channel_id}")) == b"os-2026"
    assert await redis_client.get(keys.binding("discord", f"channel:{fake.thread_id}")) is None

    # The parent channel itself and the thread now both answer from it.
    for channel_id in (fake.other_channel_id, fake.thread_id):
        ix = await fake.command("ask", question="What is a deadlock?", channel_id=channel_id)
        assert embeds_of(await ix.final(TIMEOUT))[-1]["footer"]["text"].startswith("Collection: os-2026")
    ix = await fake.command("collection show", **admin)
    assert "This thread uses “os-2026”" in text_of(await ix.callback(TIMEOUT))


async def test_slow_autocomplete_gives_up_within_one_deadline(
    fake: DiscordFake, bot: SyllabotBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each step alone fits the deadline, both together do not: one bound must cover both.
    monkeypatch.setattr(discord_bot, "AUTOCOMPLETE_TIMEOUT_S", 0.6)
    delay = 0.05

    async def slow_collection(interaction: object) -> str:
        await asyncio.sleep(delay)
        return "default"

    async def slow_sources(collection: str) -> list[SourceInfo]:
        await asyncio.sleep(delay)
        return [
            SourceInfo(doc_id="d1", file="compilers.pdf", title="Compilers", pages=2, chunks=4, indexed_at="")
        ]

    monkeypatch.setattr(bot, "collection_for", slow_collection)
    monkeypatch.setattr(bot, "sources_cached", slow_sources)
    admin = {"permissions": MANAGE_GUILD | MEMBER_PERMISSIONS}
    ac = await fake.autocomplete("remove", "document", document="comp", **admin)
    [choice] = (await ac.callback(TIMEOUT)).json["data"]["choices"]  # fast enough: suggested
    assert choice["value"] == "d1"

    delay = 0.4
    ac = await fake.autocomplete("remove", "document", document="comp", **admin)
    reply = await ac.callback(TIMEOUT)
    assert reply.json["type"] == 8 and reply.json["data"]["choices"] == []


def test_autocomplete_deadline_leaves_room_in_discords_3_seconds() -> None:
    assert discord_bot.AUTOCOMPLETE_TIMEOUT_S <= 2.5


# --- process entry -------------------------------------------------------------------------------
def test_missing_token_exits_2(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_discord(settings.model_copy(update={"discord_token": None})) == 2
    assert "DISCORD_TOKEN" in capsys.readouterr().err


def test_an_unreachable_discord_is_one_line_and_a_nonzero_exit(settings: Settings, tmp_path: Path) -> None:
    """Issue 49: without network `syllabot discord` printed a 73-line traceback. A real process, its
    API base and gateway on a port nothing listens on: one line on stderr, exit 1."""
    import os
    import subprocess
    import sys

    from tests.queue_helpers import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYLLABOT_", "DISCORD_", "REDIS_"))}
    env.update(
        {
            "DISCORD_TOKEN": "fake-token",
            "DISCORD_API_BASE": f"http://127.0.0.1:{port}/api/v10",
            "DISCORD_GATEWAY_URL": f"ws://127.0.0.1:{port}/",
            "REDIS_URL": settings.redis_url or "",
            "SYLLABOT_KEY_PREFIX": settings.key_prefix,
            "SYLLABOT_DATA_DIR": str(tmp_path / "data"),
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "syllabot", "discord"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: cannot reach Discord at 127.0.0.1:{port} ("), line
    assert line.endswith("check this host's network and proxy, and DISCORD_API_BASE / DISCORD_GATEWAY_URL")


def test_endpoint_overrides_point_discord_py_at_the_fake(settings: Settings) -> None:
    import discord
    from discord.gateway import DiscordWebSocket

    custom = settings.model_copy(
        update={
            "discord_api_base": "http://127.0.0.1:1/api/v10/",
            "discord_gateway_url": "ws://127.0.0.1:1/gw",
        }
    )
    previous = apply_endpoint_overrides(custom)
    try:
        assert discord.http.Route("GET", "/users/@me").url == "http://127.0.0.1:1/api/v10/users/@me"
        assert str(DiscordWebSocket.DEFAULT_GATEWAY) == "ws://127.0.0.1:1/gw"
    finally:
        restore_endpoints(previous)
    assert discord.http.Route.BASE == "https://discord.com/api/v10"
    assert json.dumps(discord_bot.NO_PINGS.to_dict()) == '{"parse": []}'


# --- never silent --------------------------------------------------------------------------------
async def test_timeout_gives_a_clear_message(
    fake: DiscordFake, bot: SyllabotBot, settings: Settings, redis_client: aioredis.Redis
) -> None:
    # A worker that looks alive (heartbeat) but never takes the job.
    await beat(redis_client, Keys(settings.key_prefix), "ghost-worker", ttl_s=60)
    bot.settings = bot.settings.model_copy(update={"ask_timeout_s": 1.0})
    ix = await fake.command("ask", question="What is a semaphore?")
    final = await ix.final(TIMEOUT)
    assert ix.requests()[0].json["type"] == 5
    assert_pings_nobody(final)
    assert "did not answer within 1 s" in text_of(final)


async def test_redis_unreachable_gives_a_clear_message(
    fake: DiscordFake, bot: SyllabotBot, settings: Settings
) -> None:
    dead = settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    await bot.redis.aclose()
    await bot.queue.close()
    bot.redis = aioredis.Redis.from_url(dead.redis_url, socket_connect_timeout=0.5)
    bot.queue = QueueClient(dead)
    ix = await fake.command("ask", question="What is a semaphore?")
    reply = await ix.final(TIMEOUT)
    assert_pings_nobody(reply)
    assert "can't reach its database" in text_of(reply)
    ix = await fake.command("sources")
    assert "can't reach its database" in text_of(await ix.final(TIMEOUT))


async def test_empty_collection_still_gets_a_reply(fake: DiscordFake, bot: SyllabotBot, worker: None) -> None:
    """Nothing indexed is an error saying what to check (issue 14), shown through the JobFailed path."""
    ix = await fake.command("ask", question="What is a semaphore?")
    final = await ix.final(TIMEOUT)
    assert_pings_nobody(final)
    assert "no Syllabot data" in text_of(final) or "no indexed documents" in text_of(final)


async def test_vote_on_an_unknown_answer_is_answered(fake: DiscordFake, bot: SyllabotBot) -> None:
    custom_id = "syllabot:vote:up:0123456789abcdef"
    message = fake._message("none", {"components": vote_view("0123456789abcdef").to_components()})
    click = await fake.click(message, custom_id)
    reply = await click.followup(TIMEOUT)
    assert_vote_acknowledged_first(click)
    assert reply.json["flags"] & 64
    assert "Too late to vote" in text_of(reply)


@contextlib.asynccontextmanager
async def black_hole_redis() -> AsyncIterator[str]:
    """A TCP server that accepts connections and never answers: a Redis too slow to be useful."""
    held: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        with contextlib.suppress(Exception):
            while await reader.read(65536):
                pass

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    try:
        yield f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_vote_is_acknowledged_before_a_slow_redis_and_says_it_was_not_saved(
    fake: DiscordFake, bot: SyllabotBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(discord_bot, "VOTE_REDIS_S", 1.0)
    async with black_hole_redis() as url:
        await bot.redis.aclose()
        bot.redis = aioredis.Redis.from_url(url)  # no socket timeout: only the bot's bound applies
        custom_id = "syllabot:vote:down:0123456789abcdef"
        message = fake._message("none", {"components": vote_view("0123456789abcdef").to_components()})
        click = await fake.click(message, custom_id)
        ack = await click.callback(5.0)  # Discord needs this within 3 s, whatever Redis does
        reply = await click.followup(TIMEOUT)
        assert_vote_acknowledged_first(click)
        assert reply.at - ack.at >= 0.9  # the ack did not wait for the (bounded) Redis work
        assert reply.json["flags"] & 64
        assert_pings_nobody(reply)
        assert "Vote not saved" in text_of(reply) and "did not answer within 1 s" in text_of(reply)


# --- pure helpers of the bot ---------------------------------------------------------------------
def test_budget_respects_the_15_minute_token() -> None:
    fresh = SimpleNamespace(created_at=datetime.now(UTC))
    assert SyllabotBot.budget(fresh, 60) == pytest.approx(60)
    assert SyllabotBot.budget(fresh, None) == pytest.approx(15 * 60 - discord_bot.TOKEN_SAFETY_S, abs=2)
    old = SimpleNamespace(created_at=datetime.now(UTC) - timedelta(minutes=14))
    assert SyllabotBot.budget(old, 60) == pytest.approx(60 - discord_bot.TOKEN_SAFETY_S, abs=2)
    expired = SimpleNamespace(created_at=datetime.now(UTC) - timedelta(minutes=20))
    assert SyllabotBot.budget(expired, 60) == 1.0


async def test_progress_edits_are_throttled(settings: Settings) -> None:
    edits: list[str] = []

    class Stub:
        async def edit_original_response(self, *, content: str, allowed_mentions: object) -> None:
            assert allowed_mentions is discord_bot.NO_PINGS
            edits.append(content)

    bot = SyllabotBot(settings)
    on_progress = bot.progress_editor(Stub(), "notes.pdf")  # type: ignore[arg-type]
    for done in range(0, 300, 10):
        await on_progress({"stage": "embedding", "done": done, "total": 300})
    await on_progress({"stage": "embedding", "done": 300, "total": 300})
    assert edits == ["⏳ notes.pdf: Embedding 0/300 chunks…", "⏳ notes.pdf: Embedding 300/300 chunks…"]
    await bot.queue.close()


async def test_an_unexpected_error_still_ends_in_a_message(
    fake: DiscordFake, bot: SyllabotBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def boom(interaction: object) -> None:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(bot, "handle_sources", boom)
    ix = await fake.command("sources")
    reply = await ix.final(TIMEOUT)
    assert reply.json["data"]["flags"] & 64
    assert "Something unexpected went wrong (ZeroDivisionError)" in text_of(reply)  # frontend.classify


async def test_a_very_long_answer_continues_in_follow_ups(
    fake: DiscordFake, bot: SyllabotBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    paragraph = "Scheduling decides which ready process runs next on the CPU. " * 25
    long_text = "\n\n".join(f"{i}. {paragraph.strip()}" for i in range(12))  # ~19,000 characters

    async def fake_ask(
        request: AskRequest, timeout: float | None = None, on_partial: object = None
    ) -> Answer:
        return Answer(
            text=long_text, in_materials=True, collection=request.collection, question=request.question
        )

    monkeypatch.setattr(bot.queue, "ask", fake_ask)
    ix = await fake.command("ask", question="Explain CPU scheduling in detail")
    await ix.final(TIMEOUT)
    followup = await ix.wait_for(lambda r: r.kind == "followup" and bool(r.json.get("components")), TIMEOUT)
    edits = [r for r in ix.requests() if r.kind == "edit"]
    followups = [r for r in ix.requests() if r.kind == "followup"]
    assert followups[-1] is followup  # the vote buttons sit under the very last part
    assert not edits[-1].json.get("components")
    shown = ""
    for rec in [edits[-1], *followups]:
        assert_pings_nobody(rec)
        assert sum(len(json.dumps(e)) for e in rec.json["embeds"]) < 8000
        assert len(rec.json["embeds"]) <= 10
        shown += "".join(e.get("description", "") for e in rec.json["embeds"])
    assert shown.replace("\n", "").replace(" ", "") == long_text.replace("\n", "").replace(" ", "")


async def test_admin_upload_of_a_scan_or_a_corrupt_pdf_says_what_is_wrong_and_loses_nothing(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, tmp_path
) -> None:
    from tests.test_loaders import make_scanned_pdf

    await index(settings, "default", ("os-notes.md", OS_NOTES))
    admin = {"permissions": MANAGE_GUILD | MEMBER_PERMISSIONS}
    for name, data, expected in (
        ("week1-scan.pdf", make_scanned_pdf(tmp_path), "no extractable text (scanned PDF?)"),
        ("broken.pdf", b"%PDF-1.7\n" + b"\x00garbage" * 50, "broken.pdf"),
    ):
        ix = await fake.command("upload", file=fake.add_attachment(name, data), **admin)
        text = text_of(await ix.final(TIMEOUT))
        assert expected in text, text
    ix = await fake.command("sources")
    listed = text_of(await ix.final(TIMEOUT))
    assert "os-notes.md" in listed  # the earlier document is still there...
    assert "week1-scan.pdf" not in listed and "broken.pdf" not in listed  # ...and nothing half-added


async def test_supersede_and_current_say_which_version_counts(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings
) -> None:
    revised = b"# OS notes, revised\n\nThe scheduler of this course is round robin with a 20 ms quantum.\n"
    await index(settings, "default", ("os-notes.md", OS_NOTES), ("os-notes-2026.md", revised))
    admin = {"roles": [fake.admin_role_id]}
    ix = await fake.command("supersede", document="os-notes.md", by="os-notes-2026.md")  # a plain member
    assert "Admins only" in text_of(await ix.callback(TIMEOUT))

    ac = await fake.autocomplete("supersede", "by", document="os-notes.md", by="2026", **admin)
    reply = await ac.callback(TIMEOUT)
    assert [c["value"] for c in reply.json["data"]["choices"]] == ["os-notes-2026"]  # a doc_id
    ix = await fake.command("supersede", document="os-notes.md", by="os-notes-2026", **admin)
    text = text_of(await ix.final(TIMEOUT))
    assert "os-notes.md is marked superseded by os-notes-2026.md" in text, text
    async with QueueClient(settings) as queue:
        answer = await queue.ask(AskRequest(question="what is paging", collection="default"), timeout=TIMEOUT)
        assert {c.file for c in answer.citations} <= {"os-notes-2026.md"}
        ix = await fake.command("current", document="os-notes.md", **admin)
        assert "marked current" in text_of(await ix.final(TIMEOUT))
        assert {s.file: s.status for s in await queue.sources("default")}["os-notes.md"] == "current"


async def test_conflicts_lists_where_the_documents_disagree(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings
) -> None:
    await index(
        settings,
        "default",
        ("quiz.md", b"# Weekly quiz\n\nThe weekly quiz is due on Monday.\n"),
        ("quiz-spring.md", b"# Weekly quiz\n\nThe weekly quiz is due on Friday.\n"),
    )
    ix = await fake.command("conflicts")
    assert "Admins only" in text_of(await ix.callback(TIMEOUT))
    ix = await fake.command("conflicts", roles=[fake.admin_role_id])
    text = text_of(await ix.final(TIMEOUT))
    assert "disagree" in text and "due on Monday" in text and "due on Friday" in text, text


#: A course header of our own (no course of the evaluation data): the card reads its people's facts.
STARS_SYLLABUS = (
    b"# AST 105: Night Sky Navigation\n\n"
    b"Instructor: Dr. Corin Halvey; Email: corin.halvey@starfield.example; "
    b"Office Hours: Thu 4:00 - 5:30PM\n\n"
    b"We learn to find north by the stars and to read a planisphere on the observatory roof.\n"
)


async def test_card_shows_the_course_facts_with_their_sources_to_admins_only(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings
) -> None:
    await index(settings, "default", ("stars-syllabus.md", STARS_SYLLABUS))
    ix = await fake.command("card")
    assert "Admins only" in text_of(await ix.callback(TIMEOUT))
    ix = await fake.command("card", roles=[fake.admin_role_id])
    text = text_of(await ix.final(TIMEOUT))
    assert "course card" in text and "default" in text, text
    (hours,) = [line for line in text.splitlines() if "office hours" in line.lower() and "Thu" in line]
    assert "4:00" in hours and "stars-syllabus.md" in hours, text
    assert "not stated in any document" in text, text  # the slots no document fills are named too


async def test_collection_list_and_drop_for_admins_only(
    fake: DiscordFake, bot: SyllabotBot, worker: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await index(settings, "os-2026", ("os-notes.md", OS_NOTES))
    bindings = Bindings(redis_client, Keys(settings.key_prefix), "discord")
    await bindings.bind(f"channel:{fake.other_channel_id}", "os-2026")
    admin = {"roles": [fake.admin_role_id]}

    ix = await fake.command("collection list")  # a plain member
    assert "Admins only" in text_of(await ix.callback(TIMEOUT))
    ix = await fake.command("collection drop", name="os-2026", confirm=True)
    assert "Admins only" in text_of(await ix.callback(TIMEOUT))

    ix = await fake.command("collection list", **admin)
    text = text_of(await ix.final(TIMEOUT))
    assert "os-2026: 1 documents" in text and "chunks" in text

    ix = await fake.command("collection drop", name="os-2026", **admin)  # no confirm: nothing deleted
    text = text_of(await ix.final(TIMEOUT))
    assert "Drop “os-2026”?" in text and "confirm" in text
    assert await redis_client.sismember(Keys(settings.key_prefix).collections, "os-2026")

    ix = await fake.command("collection drop", name="os-2026", confirm=True, **admin)
    text = text_of(await ix.final(TIMEOUT))
    assert "Dropped “os-2026”" in text and "1 channel or server bindings" in text
    assert not await redis_client.sismember(Keys(settings.key_prefix).collections, "os-2026")
    assert [k async for k in redis_client.scan_iter(match=f"{settings.key_prefix}c:os-2026:*")] == []
    assert await bindings.resolve(f"channel:{fake.other_channel_id}", f"guild:{fake.guild_id}") == "default"

    ix = await fake.command("collection drop", name="os-2026", confirm=True, **admin)
    assert "No collection “os-2026”" in text_of(await ix.final(TIMEOUT))


async def test_no_log_line_metric_or_stored_value_carries_a_member_id(
    fake: DiscordFake,
    bot: SyllabotBot,
    worker: None,
    settings: Settings,
    redis_client: aioredis.Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A full run -- a question, a vote, an admin upload and re-index -- at DEBUG for our loggers:
    the members' ids appear in no log line (the worker's included), no metric, no Redis key or
    value; a keyed hash stands in for them wherever a per-user key is needed."""
    from prometheus_client import generate_latest

    from tests.queue_helpers import redis_texts

    caplog.set_level(logging.DEBUG, logger="syllabot")
    student, admin = 918273645546372819, 918273645546372820
    await index(settings, "default", ("os-notes.md", OS_NOTES))
    ix = await fake.command("ask", question="What is a semaphore?", user_id=student)
    final = await ix.final(TIMEOUT)
    buttons = [c for row in final.json["components"] for c in row["components"]]
    up = next(b["custom_id"] for b in buttons if b["custom_id"].startswith("syllabot:vote:up"))
    click = await fake.click(ix.original, up, user_id=student)
    assert "Thanks" in text_of(await click.followup(TIMEOUT))
    attachment = fake.add_attachment("compilers.pdf", make_pdf())
    ix = await fake.command(
        "upload", file=attachment, user_id=admin, permissions=MANAGE_GUILD | MEMBER_PERMISSIONS
    )
    assert "Uploaded" in text_of(await ix.final(TIMEOUT))
    ix = await fake.command("reindex", user_id=admin, permissions=MANAGE_GUILD | MEMBER_PERMISSIONS)
    assert "Re-indexed" in text_of(await ix.final(TIMEOUT))

    lines = [record.getMessage() for record in caplog.records]
    assert any('"event": "answer"' in line for line in lines)  # the worker's line is among them
    stored = await redis_texts(redis_client, settings.key_prefix)
    metrics = generate_latest(bot.metrics.registry).decode()
    for raw in (str(student), str(admin)):
        assert not [line for line in lines if raw in line]
        assert not [text for text in stored if raw in text]
        assert raw not in metrics
    assert any(text.startswith("discord:u") for text in stored)  # the votes' and the upload's keyed hash


async def test_an_upload_that_would_replace_another_document_is_refused_unless_asked(
    fake: DiscordFake, bot: SyllabotBot, worker: None
) -> None:
    admin = {"permissions": MANAGE_GUILD | MEMBER_PERMISSIONS}
    ix = await fake.command("upload", file=fake.add_attachment("Compilers.pdf", make_pdf()), **admin)
    assert "Uploaded into “default”" in text_of(await ix.final(TIMEOUT))
    ix = await fake.command("upload", file=fake.add_attachment("compilers.pdf", make_pdf()), **admin)
    text = text_of(await ix.final(TIMEOUT))
    assert "nothing changed" in text and "Compilers.pdf" in text and "replace" in text
    ix = await fake.command(
        "upload", file=fake.add_attachment("compilers.pdf", make_pdf()), replace=True, **admin
    )
    text = text_of(await ix.final(TIMEOUT))
    assert "Uploaded into “default”" in text and "Replaced the earlier Compilers.pdf" in text
