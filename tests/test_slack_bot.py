"""The real Bolt app, served over HTTP (and Socket Mode), against a fake Slack, real Redis and a real worker.

Requests are signed exactly as Slack signs them (HMAC-SHA256 over ``v0:<timestamp>:<body>``), so
the app's own signature verification is exercised. Assertions are on what the fake Slack receives:
the ``response_url`` posts, Web API calls and file downloads. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import io
import json
import logging
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
import redis.asyncio as aioredis
from aiohttp import web
from slack_sdk.errors import SlackApiError

from syllabot.bots import slack_bot
from syllabot.bots import slack_render as render
from syllabot.bots.slack_bot import ADD_SHORTCUT_ID, build_app, describe_error, run_slack, serve, web_app
from syllabot.shared.bindings import Bindings
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.pseudonyms import pseudonym, pseudonym_key
from syllabot.shared.queue import (
    EmptyCollection,
    JobFailed,
    NoWorker,
    QueueClient,
    QueueTimeout,
    RedisUnreachable,
)
from syllabot.shared.queue_protocol import INGEST_TIMEOUT_S
from syllabot.shared.schema import Answer, AskRequest, Citation, FileReport, IngestReport
from tests.slack_fake import APP_TOKEN, BOT_TOKEN, BOT_USER_ID, TEAM_ID, FakeSlack, slash_command_payload

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
ADMIN = "UADMIN"
STUDENT = "USTUDENT"
CHANNEL = "C0001"
WAIT = 20.0  # upper bound for any single wait; a healthy run takes well under a second each

OS_NOTES = """# 21CS44 Operating Systems

## Module 2: Memory Management

Paging divides physical memory into fixed-size frames <!channel> and logical memory into pages of the
same size @here & the page table maps each page number to a frame number.

A translation lookaside buffer caches recent page table entries so most address translations
avoid a memory access.

## Module 3: CPU Scheduling

Round robin scheduling gives every ready process a fixed time quantum in turn. Shortest job first
minimises the average waiting time when burst lengths are known in advance.
"""


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    slack = FakeSlack()
    await slack.start()
    slack.add_user(ADMIN, admin=True)
    slack.add_user(STUDENT)
    yield slack
    await slack.stop()


@pytest.fixture
def slack_settings(settings: Settings, fake: FakeSlack) -> Settings:
    return settings.model_copy(
        update={
            "slack_bot_token": BOT_TOKEN,
            "slack_signing_secret": SECRET,
            "slack_api_url": fake.api_url,
            "slack_admin_user_ids": [],  # admins come from users.info unless a test sets ids
            "ask_timeout_s": 15.0,
        }
    )


@pytest.fixture
async def queue(settings: Settings) -> AsyncIterator[QueueClient]:
    client = QueueClient(settings)
    yield client
    await client.close()


@pytest.fixture
async def corpus(worker: None, queue: QueueClient) -> None:
    report = await queue.ingest("default", "os-notes.md", OS_NOTES.encode(), "test", timeout=WAIT * 3)
    assert report.changed, report


@dataclass
class Bot:
    url: str
    settings: Settings
    http: aiohttp.ClientSession
    app: Any = None

    async def post(
        self,
        body: str,
        content_type: str,
        *,
        timestamp: int | None = None,
        secret: str = SECRET,
        extra_headers: dict[str, str] | None = None,
    ) -> aiohttp.ClientResponse:
        ts = int(time.time()) if timestamp is None else timestamp
        signature = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": str(ts),
            "X-Slack-Signature": signature,
            **(extra_headers or {}),
        }
        resp = await self.http.post(self.url, data=body.encode(), headers=headers)
        await resp.read()
        return resp

    async def command(
        self, fake: FakeSlack, command: str, text: str, user: str, key: str, channel: str = CHANNEL
    ) -> aiohttp.ClientResponse:
        form = slash_command_payload(
            command, text, user=user, channel=channel, response_url=fake.response_url(key)
        )
        return await self.post(urlencode(form), "application/x-www-form-urlencoded")

    async def interactive(self, payload: dict[str, Any]) -> aiohttp.ClientResponse:
        return await self.post(
            urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
        )

    async def event(
        self, event: dict[str, Any], event_id: str = "Ev1", retry_num: int | None = None
    ) -> aiohttp.ClientResponse:
        headers = (
            {}
            if retry_num is None
            else {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "timeout"}
        )
        return await self.post(
            json.dumps(_event_body(event, event_id)), "application/json", extra_headers=headers
        )


def _event_body(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    """The Events API envelope Slack posts (HTTP) or sends as a Socket Mode payload."""
    return {
        "token": "deprecated",
        "team_id": TEAM_ID,
        "api_app_id": "AFAKE",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "event": event,
        "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
    }


async def _serve_bot(settings: Settings, queue: QueueClient) -> AsyncIterator[Bot]:
    app = build_app(settings, queue)
    runner = web.AppRunner(web_app(app), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
        yield Bot(f"http://127.0.0.1:{port}/slack/events", settings, http, app)
    await runner.cleanup()
    await app._syllabot.redis.aclose()  # type: ignore[attr-defined]


@pytest.fixture
async def bot(slack_settings: Settings, queue: QueueClient) -> AsyncIterator[Bot]:
    async for b in _serve_bot(slack_settings, queue):
        yield b


@pytest.fixture
async def redis_client(settings: Settings) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(settings.redis_url or "")
    yield client
    await client.aclose()


def _texts(blocks: list[dict]) -> str:
    """All visible text of a message's blocks, joined."""
    out = []
    for b in blocks:
        if isinstance(b.get("text"), dict):
            out.append(b["text"]["text"])
        for e in b.get("elements", []):
            if isinstance(e.get("text"), str):
                out.append(e["text"])
            elif isinstance(e.get("text"), dict):
                out.append(e["text"]["text"])
    return "\n".join(out)


def _answer_id(blocks: list[dict]) -> str:
    actions = [b for b in blocks if b["type"] == "actions"]
    assert actions, "answer has no feedback buttons"
    return actions[0]["elements"][0]["value"]


def _pdf(pages: list[list[str]]) -> bytes:
    """A real text PDF (fpdf2), one list of lines per page."""
    from fpdf import FPDF

    pdf = FPDF()
    for lines in pages:
        pdf.add_page()
        pdf.set_font("Helvetica", size=12)
        for line in lines:
            pdf.multi_cell(0, 8, line)
            pdf.ln(2)
    buf = io.BytesIO()
    pdf.output(buf)
    return buf.getvalue()


# --- signatures ----------------------------------------------------------------------------------


async def test_bad_signature_and_stale_timestamp_are_rejected(bot: Bot, fake: FakeSlack) -> None:
    form = urlencode(
        slash_command_payload("/ask", "what is paging", user=STUDENT, response_url=fake.response_url("x"))
    )
    wrong = await bot.post(form, "application/x-www-form-urlencoded", secret="not-the-secret")
    assert wrong.status == 401
    stale = await bot.post(form, "application/x-www-form-urlencoded", timestamp=int(time.time()) - 600)
    assert stale.status == 401
    await asyncio.sleep(0.3)
    assert fake.find("response") == []  # nothing was processed


# --- /ask ----------------------------------------------------------------------------------------


async def test_ask_posts_cited_escaped_answer_to_response_url(
    bot: Bot, fake: FakeSlack, corpus: None
) -> None:
    started = time.monotonic()
    resp = await bot.command(
        fake, "/ask", "How does paging divide physical memory into frames?", STUDENT, "ask1"
    )
    assert resp.status == 200
    assert time.monotonic() - started < 3.0  # acked within Slack's 3 s
    ack = json.loads(await resp.text())
    assert ack["response_type"] == "ephemeral" and "Looking it up" in ack["text"]

    rec = await fake.wait_for("response", "ask1", timeout=WAIT)
    body = rec.args
    assert body["response_type"] == "in_channel"
    text = _texts(body["blocks"])
    assert render.MARKER_MRKDWN not in text
    assert "Paging divides physical memory" in text
    assert "os-notes.md" in text and "*[1]*" in text  # numbered source with file name
    dumped = json.dumps(body)
    assert "<!channel>" not in dumped and "&lt;!channel&gt;" in text
    assert "@here" not in dumped  # defused (word joiner), cannot ping
    assert "&amp;" in text
    assert all(
        t.get("verbatim") is True
        for b in body["blocks"]
        for t in [b.get("text")]
        if isinstance(t, dict) and t.get("type") == "mrkdwn"
    )
    assert _answer_id(body["blocks"])


async def test_unanswerable_question_starts_with_marker(bot: Bot, fake: FakeSlack, corpus: None) -> None:
    await bot.command(fake, "/ask", "Who won the 1998 football world cup final in Paris?", STUDENT, "ask2")
    rec = await fake.wait_for("response", "ask2", timeout=WAIT)
    blocks = rec.args["blocks"]
    assert blocks[0]["text"]["text"] == render.MARKER_MRKDWN
    assert rec.args["text"].startswith("Not in your materials")


async def test_empty_and_too_long_questions_get_usage_without_queueing(bot: Bot, fake: FakeSlack) -> None:
    resp = await bot.command(fake, "/ask", "   ", STUDENT, "empty")
    body = json.loads(await resp.text())
    assert body["response_type"] == "ephemeral" and "/ask" in body["text"]
    resp = await bot.command(fake, "/ask", "why " * 600, STUDENT, "long")
    body = json.loads(await resp.text())
    assert "2000" in body["text"]
    await asyncio.sleep(0.3)
    assert fake.find("response") == []


async def test_sixth_question_in_a_minute_is_rate_limited(bot: Bot, fake: FakeSlack, corpus: None) -> None:
    for i in range(5):
        await bot.command(fake, "/ask", f"What is round robin scheduling? ({i})", STUDENT, f"r{i}")
    for i in range(5):
        rec = await fake.wait_for("response", f"r{i}", timeout=WAIT)
        assert rec.args["response_type"] == "in_channel"
    await bot.command(fake, "/ask", "And shortest job first?", STUDENT, "r5")
    rec = await fake.wait_for("response", "r5", timeout=WAIT)
    assert rec.args["response_type"] == "ephemeral"
    assert "limit" in rec.args["text"] and "try again in" in rec.args["text"]
    # another user is not affected
    await bot.command(fake, "/ask", "What is paging?", ADMIN, "other")
    assert (await fake.wait_for("response", "other", timeout=WAIT)).args["response_type"] == "in_channel"


async def test_no_worker_gives_a_clear_message(bot: Bot, fake: FakeSlack) -> None:
    await bot.command(fake, "/ask", "What is paging?", STUDENT, "nw")
    rec = await fake.wait_for("response", "nw", timeout=WAIT)
    assert rec.args["response_type"] == "ephemeral"
    assert "No Syllabot worker is running" in rec.args["text"]


async def test_redis_unreachable_gives_a_clear_message(slack_settings: Settings, fake: FakeSlack) -> None:
    dead = slack_settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    queue = QueueClient(dead)
    try:
        async for b in _serve_bot(dead, queue):
            await b.command(fake, "/ask", "What is paging?", STUDENT, "dead")
            rec = await fake.wait_for("response", "dead", timeout=WAIT)
            assert "can't reach its database (Redis)" in rec.args["text"]
    finally:
        await queue.close()


async def test_serving_leaves_the_syllabot_loggers_levels_alone(
    bot: Bot, fake: FakeSlack, corpus: None
) -> None:
    """Bolt configures the logger named after its app from the root logger when a listener runs;
    named "syllabot", it set our namespace to the root's level (WARNING unless configured), silencing
    every syllabot.* INFO line of the process -- the per-question answer log among them."""
    ours = logging.getLogger("syllabot")
    ours.setLevel(logging.NOTSET)
    await bot.command(fake, "/ask", "How many days do I have to return a new bike?", STUDENT, "levels")
    await fake.wait_for("response", "levels", timeout=WAIT)
    assert ours.level == logging.NOTSET and not ours.disabled


def test_every_queue_failure_has_words(settings: Settings) -> None:
    assert "took too long" in describe_error(QueueTimeout("x"), settings)
    assert "worker" in describe_error(NoWorker("x"), settings)
    assert "Redis" in describe_error(RedisUnreachable("x"), settings)
    assert "&lt;!here&gt;" in describe_error(JobFailed("bad <!here>"), settings)
    assert "unexpected" in describe_error(KeyError("x"), settings)


# --- feedback ------------------------------------------------------------------------------------


async def test_vote_is_stored_and_changeable(
    bot: Bot, fake: FakeSlack, corpus: None, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await bot.command(fake, "/ask", "What does a translation lookaside buffer cache?", STUDENT, "v")
    rec = await fake.wait_for("response", "v", timeout=WAIT)
    answer_id = _answer_id(rec.args["blocks"])

    def click(action_id: str) -> dict[str, Any]:
        return {
            "type": "block_actions",
            "user": {"id": STUDENT, "username": "student"},
            "team": {"id": TEAM_ID, "domain": "fake"},
            "api_app_id": "AFAKE",
            "trigger_id": "t",
            "container": {
                "type": "message",
                "message_ts": "1.1",
                "channel_id": CHANNEL,
                "is_ephemeral": False,
            },
            "channel": {"id": CHANNEL, "name": "general"},
            "message": {"ts": "1.1", "text": "answer"},
            "response_url": fake.response_url("vote"),
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": render.FEEDBACK_BLOCK_ID,
                    "value": answer_id,
                    "type": "button",
                    "action_ts": "1.2",
                }
            ],
        }

    keys = Keys(settings.key_prefix)
    resp = await bot.interactive(click(render.VOTE_UP_ACTION))
    assert resp.status == 200
    # confirmed through the click's own response_url: works where the bot is not a channel member
    up = await fake.wait_for("response", "vote", timeout=WAIT)
    assert up.args["response_type"] == "ephemeral" and up.args["replace_original"] is False
    assert "👍" in up.args["text"]
    assert fake.find("api", "chat.postEphemeral") == []
    entries = await redis_client.xrange(keys.feedback_stream)
    assert len(entries) == 1
    fields = {k.decode(): v.decode() for k, v in entries[0][1].items()}
    assert (
        fields["vote"] == "up"
        and fields["user"] == pseudonym(pseudonym_key(bot.settings, "slack"), "slack", STUDENT)
        and STUDENT not in fields["user"]
        and fields["answer_id"] == answer_id
    )
    assert fields["platform"] == "slack" and "translation lookaside" in fields["question"]

    n = len(fake.records)
    fake.fail_response("vote", 404, "expired_url", nth=2)  # the response_url is used up: fall back
    await bot.interactive(click(render.VOTE_DOWN_ACTION))
    down = await fake.wait_for("api", "chat.postEphemeral", after=n, timeout=WAIT)
    assert down.args["user"] == STUDENT and "changed" in down.args["text"]
    assert [r.status for r in fake.find("response", "vote")] == [200, 404]
    entries = await redis_client.xrange(keys.feedback_stream)
    assert [e[1][b"vote"] for e in entries] == [b"up", b"down"]
    assert entries[1][1][b"changed"] == b"1"
    votes = await redis_client.hgetall(keys.feedback_vote(answer_id))
    voter = pseudonym(pseudonym_key(bot.settings, "slack"), "slack", STUDENT)
    assert votes == {voter.encode(): b"down"}  # one vote per user, changed in place


# --- mentions ------------------------------------------------------------------------------------


async def test_mention_is_answered_in_a_thread(bot: Bot, fake: FakeSlack, corpus: None) -> None:
    event = {
        "type": "app_mention",
        "user": STUDENT,
        "text": f"<@{BOT_USER_ID}> what does round robin scheduling give each process?",
        "ts": "1700000000.000100",
        "channel": CHANNEL,
        "event_ts": "1700000000.000100",
        "team": TEAM_ID,
    }
    resp = await bot.event(event)
    assert resp.status == 200
    rec = await fake.wait_for("api", "chat.postMessage", timeout=WAIT)
    assert rec.args["channel"] == CHANNEL
    assert rec.args["thread_ts"] == "1700000000.000100"
    blocks = rec.args["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    assert "time quantum" in _texts(blocks)
    assert _answer_id(blocks)


# --- admin: re-index, collections ----------------------------------------------------------------


async def test_reindex_refused_for_non_admin_and_run_for_admin(
    bot: Bot, fake: FakeSlack, corpus: None
) -> None:
    await bot.command(fake, "/syllabot-reindex", "", STUDENT, "ri1")
    rec = await fake.wait_for("response", "ri1", timeout=WAIT)
    assert rec.args["response_type"] == "ephemeral"
    assert "Only Syllabot admins" in rec.args["text"]
    info = fake.find("api", "users.info")
    assert info and info[0].args["user"] == STUDENT  # decided by the workspace's admin flags

    await bot.command(fake, "/syllabot-reindex", "", ADMIN, "ri2")
    rec = await fake.wait_for(
        "response", "ri2", predicate=lambda r: "Re-indexed" in json.dumps(r.args), timeout=WAIT * 2
    )
    assert rec.args["response_type"] == "ephemeral"
    assert "os-notes.md" in _texts(rec.args["blocks"])


async def test_collection_binding(
    bot: Bot, fake: FakeSlack, settings: Settings, redis_client: aioredis.Redis
) -> None:
    await bot.command(fake, "/syllabot-collection", "cs-2026", STUDENT, "c1")
    assert "Only Syllabot admins" in (await fake.wait_for("response", "c1", timeout=WAIT)).args["text"]
    await bot.command(fake, "/syllabot-collection", "bad name!", ADMIN, "c2")
    assert "not a valid collection name" in (await fake.wait_for("response", "c2", timeout=WAIT)).args["text"]
    await bot.command(fake, "/syllabot-collection", "cs-2026", ADMIN, "c3")
    assert "cs-2026" in (await fake.wait_for("response", "c3", timeout=WAIT)).args["text"]
    bindings = Bindings(redis_client, Keys(settings.key_prefix), "slack")
    assert await bindings.resolve(f"channel:{CHANNEL}") == "cs-2026"
    assert await bindings.resolve("channel:COTHER") == "default"


# --- admin: adding documents ---------------------------------------------------------------------


def _file_mention(file_id: str, name: str, user: str, ts: str = "1700000001.000200") -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER_ID}> please add this",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
        "team": TEAM_ID,
        "files": [{"id": file_id, "name": name}],
    }


async def test_admin_adds_a_pdf_by_mention(
    bot: Bot, fake: FakeSlack, worker: None, queue: QueueClient
) -> None:
    pdf = _pdf(
        [
            [
                "21CS45 File Systems",
                "Module-4 Inodes",
                "An inode stores the metadata of a file: its size, owner, permissions and the pointers "
                "to its data blocks.",
            ],
            ["Module-5 Directories", "Directories map file names to inode numbers."],
        ]
    )
    fake.add_file("F1", "fs-notes.pdf", pdf)
    resp = await bot.event(_file_mention("F1", "fs-notes.pdf", ADMIN))
    assert resp.status == 200

    info = await fake.wait_for("api", "files.info", timeout=WAIT)
    assert info.args["file"] == "F1"
    download = await fake.wait_for("download", "F1", timeout=WAIT)
    assert download.headers["Authorization"] == f"Bearer {BOT_TOKEN}"
    assert fake.records.index(info) < fake.records.index(download)  # size known before download

    done = await fake.wait_for(
        "api",
        "chat.update",
        predicate=lambda r: "Added" in str(r.args.get("text", "")) or "Added" in json.dumps(r.args),
        timeout=WAIT * 3,
    )
    assert done.args["channel"] == CHANNEL
    summary = json.dumps(done.args)
    assert "fs-notes.pdf" in summary and "2 pages" in summary and "chunks" in summary
    assert "Module 4, Module 5" in summary  # modules found
    posted = fake.find("api", "chat.postMessage")
    assert posted and posted[0].args["thread_ts"] == "1700000001.000200"  # status line in the thread

    sources = await queue.sources("default", timeout=WAIT)
    assert [s.file for s in sources] == ["fs-notes.pdf"]


async def test_oversize_file_refused_before_download(
    bot: Bot, fake: FakeSlack, slack_settings: Settings
) -> None:
    fake.add_file("FBIG", "huge.pdf", b"%PDF-1.4 tiny", size=slack_settings.max_document_bytes + 1)
    await bot.event(_file_mention("FBIG", "huge.pdf", ADMIN))
    await fake.wait_for("api", "files.info", timeout=WAIT)
    refusal = await fake.wait_for(
        "api", "chat.update", predicate=lambda r: "limit" in json.dumps(r.args), timeout=WAIT
    )
    assert "huge.pdf" in json.dumps(refusal.args) and "not downloaded" in json.dumps(refusal.args)
    await asyncio.sleep(0.2)
    assert fake.find("download") == []


async def test_non_admin_cannot_add_files(bot: Bot, fake: FakeSlack) -> None:
    fake.add_file("F2", "notes.pdf", b"%PDF-1.4")
    await bot.event(_file_mention("F2", "notes.pdf", STUDENT))
    refusal = await fake.wait_for("api", "chat.postEphemeral", timeout=WAIT)
    assert refusal.args["user"] == STUDENT and "Only Syllabot admins" in refusal.args["text"]
    assert fake.find("api", "files.info") == [] and fake.find("download") == []


async def test_message_shortcut_adds_file_for_listed_admin(
    slack_settings: Settings, fake: FakeSlack, worker: None, queue: QueueClient
) -> None:
    settings = slack_settings.model_copy(update={"slack_admin_user_ids": ["UOPS"]})
    fake.add_file(
        "F3", "sched.md", b"# 21CS44 OS\n\n## Module 3: Scheduling\n\nRound robin uses a time quantum.\n"
    )

    def shortcut(user: str, key: str) -> dict[str, Any]:
        return {
            "type": "message_action",
            "callback_id": "add_to_course_materials",
            "trigger_id": "t",
            "user": {"id": user},
            "team": {"id": TEAM_ID},
            "channel": {"id": CHANNEL},
            "message": {
                "type": "message",
                "ts": "1.5",
                "user": user,
                "files": [{"id": "F3", "name": "sched.md"}],
            },
            "message_ts": "1.5",
            "response_url": fake.response_url(key),
            "action_ts": "1.6",
        }

    async for b in _serve_bot(settings, queue):
        await b.interactive(shortcut(ADMIN, "s1"))  # workspace admin, but not in SLACK_ADMIN_USER_IDS
        assert "Only Syllabot admins" in (await fake.wait_for("response", "s1", timeout=WAIT)).args["text"]
        assert fake.find("api", "users.info") == []  # the explicit list decides alone

        await b.interactive(shortcut("UOPS", "s2"))
        rec = await fake.wait_for(
            "response", "s2", predicate=lambda r: "Added" in json.dumps(r.args), timeout=WAIT * 3
        )
        assert rec.args["response_type"] == "ephemeral" and "sched.md" in json.dumps(rec.args)
        assert fake.find("download", "F3")[0].headers["Authorization"] == f"Bearer {BOT_TOKEN}"


# --- Socket Mode and start-up --------------------------------------------------------------------


async def test_socket_mode_ask_is_acked_and_answered(
    slack_settings: Settings, fake: FakeSlack, corpus: None, queue: QueueClient
) -> None:
    settings = slack_settings.model_copy(update={"slack_app_token": APP_TOKEN, "slack_signing_secret": None})
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(serve(settings, queue=queue, stop=stop, ready=ready, host="127.0.0.1"))
    try:
        async with asyncio.timeout(WAIT):
            await ready.wait()
        opened = await fake.wait_for("api", "apps.connections.open", timeout=WAIT)
        assert (
            opened.args.get("token") == APP_TOKEN
            or opened.headers.get("Authorization") == f"Bearer {APP_TOKEN}"
        )
        payload = slash_command_payload(
            "/ask", "What is paging?", user=STUDENT, response_url=fake.response_url("sock")
        )
        await fake.send_envelope(
            {
                "envelope_id": "env-1",
                "type": "slash_commands",
                "accepts_response_payload": True,
                "payload": payload,
            }
        )
        ack = await fake.wait_for("socket_ack", "env-1", timeout=WAIT)
        assert "Looking it up" in json.dumps(ack.args.get("payload", {}))
        rec = await fake.wait_for("response", "sock", timeout=WAIT)
        assert rec.args["response_type"] == "in_channel"
        assert "*[1]*" in _texts(rec.args["blocks"])
    finally:
        stop.set()
        assert await asyncio.wait_for(task, WAIT) == 0


def test_missing_tokens_exit_2(capsys: pytest.CaptureFixture[str], settings: Settings) -> None:
    assert run_slack(settings.model_copy(update={"slack_bot_token": None})) == 2
    assert "SLACK_BOT_TOKEN" in capsys.readouterr().err
    no_secret = settings.model_copy(
        update={"slack_bot_token": BOT_TOKEN, "slack_signing_secret": None, "slack_app_token": None}
    )
    assert run_slack(no_secret) == 2
    assert "SLACK_SIGNING_SECRET" in capsys.readouterr().err


async def test_rejected_bot_token_exits_2(
    slack_settings: Settings, fake: FakeSlack, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = slack_settings.model_copy(update={"slack_bot_token": "xoxb-wrong"})
    code = await asyncio.wait_for(serve(bad, stop=asyncio.Event(), host="127.0.0.1"), WAIT)
    assert code == 2
    assert "invalid_auth" in capsys.readouterr().err


async def test_http_mode_serves_signed_requests(
    slack_settings: Settings, fake: FakeSlack, queue: QueueClient
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = slack_settings.model_copy(update={"slack_port": port})
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(serve(settings, queue=queue, stop=stop, ready=ready, host="127.0.0.1"))
    try:
        async with asyncio.timeout(WAIT):
            await ready.wait()
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as http:
            health = await http.get(f"http://127.0.0.1:{port}/healthz")
            assert health.status == 200
            b = Bot(f"http://127.0.0.1:{port}/slack/events", settings, http)
            resp = await b.command(fake, "/ask", "", STUDENT, "h")
            assert resp.status == 200 and "/ask" in json.loads(await resp.text())["text"]
            unsigned = await http.post(b.url, data=b"command=%2Fask&text=hi")
            assert unsigned.status == 401
    finally:
        stop.set()
        assert await asyncio.wait_for(task, WAIT) == 0


def test_manifest_matches_the_app() -> None:
    yaml = pytest.importorskip("yaml")
    manifest = yaml.safe_load(
        (Path(__file__).resolve().parent.parent / "deploy" / "slack-manifest.yml").read_text()
    )
    assert manifest["display_information"]["name"] == "Syllabot"
    commands = {c["command"] for c in manifest["features"]["slash_commands"]}
    assert commands == {
        "/ask",
        "/syllabot-reindex",
        "/syllabot-collection",
        "/syllabot-collections",
        "/syllabot-privacy",
        "/syllabot-report",
        "/syllabot-supersede",
        "/syllabot-current",
        "/syllabot-conflicts",
        "/syllabot-card",
    }
    (shortcut,) = manifest["features"]["shortcuts"]
    assert shortcut["type"] == "message" and shortcut["callback_id"] == ADD_SHORTCUT_ID
    assert shortcut["name"] == "Add to course materials"
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {"commands", "chat:write", "app_mentions:read", "files:read", "users:read"} <= scopes
    assert {"channels:history", "groups:history"} <= scopes  # thread replies (follow-ups)
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert events == ["app_mention", "message.channels", "message.groups"]
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["settings"]["socket_mode_enabled"] is True


class _FailingQueue(QueueClient):
    """A queue whose every call raises ``exc``: the bot must turn each into words, never silence."""

    def __init__(self, settings: Settings, exc: BaseException) -> None:
        super().__init__(settings)
        self.exc = exc

    async def ask(self, request: Any, timeout: float | None = None, on_partial: Any = None) -> Any:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (QueueTimeout("slow"), "took too long"),
        (JobFailed("index built with another embedder <!channel>"), "another embedder &lt;!channel&gt;"),
        (EmptyCollection("the collection 'os' has no indexed documents"), "has no indexed documents"),
        (RuntimeError("boom"), "Something unexpected went wrong"),
    ],
)
async def test_mention_failures_are_reported_privately(
    slack_settings: Settings, fake: FakeSlack, exc: BaseException, words: str
) -> None:
    queue = _FailingQueue(slack_settings, exc)
    try:
        async for b in _serve_bot(slack_settings, queue):
            event = {
                "type": "app_mention",
                "user": STUDENT,
                "text": f"<@{BOT_USER_ID}> what is paging?",
                "ts": "1700000002.000300",
                "channel": CHANNEL,
                "team": TEAM_ID,
            }
            await b.event(event)
            rec = await fake.wait_for("api", "chat.postEphemeral", timeout=WAIT)
            assert rec.args["user"] == STUDENT and rec.args["thread_ts"] == "1700000002.000300"
            assert words in rec.args["text"]
            assert fake.find("api", "chat.postMessage") == []
    finally:
        await queue.close()


# --- delivery, redelivery, bounded admin waits, file types ----------------------------------------


class _CannedQueue(QueueClient):
    """Answers at once (no worker needed); admin jobs wait as long as they are allowed, then time out."""

    def __init__(
        self, settings: Settings, *, job_result: IngestReport | None = None, withdrawn: bool = False
    ):
        super().__init__(settings)
        self.asked: list[str] = []
        self.job_timeouts: list[float] = []
        self.job_result = job_result
        self.withdrawn = withdrawn

    async def ask(self, request: Any, timeout: float | None = None, on_partial: Any = None) -> Answer:
        self.asked.append(request.question)
        citation = Citation(
            n=1, doc_id="d1", file="os-notes.md", title="OS", score=0.9, snippet="…", label="OS — Module 2"
        )
        return Answer(
            text="Paging divides memory into frames [1].",
            in_materials=True,
            citations=[citation],
            collection=request.collection,
            question=request.question,
        )

    async def _job(self, collection: str, timeout: float | None) -> IngestReport:
        waited = INGEST_TIMEOUT_S if timeout is None else timeout
        self.job_timeouts.append(waited)
        if self.job_result is not None:
            return self.job_result
        await asyncio.sleep(min(waited, 0.2))  # stands in for the whole wait; keeps the test short
        if self.withdrawn:
            raise QueueTimeout(
                f"no worker picked the job up within {waited:g} s (all busy?); it was withdrawn",
                withdrawn=True,
                timeout_s=waited,
            )
        raise QueueTimeout(f"a worker took the job but no result came within {waited:g} s")

    async def reindex(
        self, collection: str, who: str, progress: Any = None, timeout: float | None = None
    ) -> Any:
        return await self._job(collection, timeout)

    async def ingest_many(
        self,
        collection: str,
        files: Any,
        who: str,
        progress: Any = None,
        timeout: float | None = None,
        replace: bool = False,
    ) -> Any:
        return await self._job(collection, timeout)


@pytest.fixture
async def canned(slack_settings: Settings) -> AsyncIterator[_CannedQueue]:
    queue = _CannedQueue(slack_settings)
    yield queue
    await queue.close()


def _mention(text: str, ts: str = "1700000005.000100") -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": STUDENT,
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
        "team": TEAM_ID,
    }


async def test_socket_mode_first_delivery_is_answered_and_redelivery_is_not(
    slack_settings: Settings, fake: FakeSlack, canned: _CannedQueue
) -> None:
    settings = slack_settings.model_copy(update={"slack_app_token": APP_TOKEN, "slack_signing_secret": None})
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(serve(settings, queue=canned, stop=stop, ready=ready, host="127.0.0.1"))

    def envelope(envelope_id: str, retry_attempt: int, reason: str) -> dict[str, Any]:
        return {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,  # Slack sends 0 (and reason "") on the first delivery
            "retry_reason": reason,
            "payload": _event_body(_mention("what is paging?"), "EvSock1"),
        }

    try:
        async with asyncio.timeout(WAIT):
            await ready.wait()
        await fake.send_envelope(envelope("env-m1", 0, ""))
        posted = await fake.wait_for("api", "chat.postMessage", timeout=WAIT)
        assert posted.args["thread_ts"] == "1700000005.000100"
        assert "Paging divides memory" in json.dumps(posted.args)

        await fake.send_envelope(envelope("env-m2", 1, "timeout"))  # same event id, redelivered
        await fake.wait_for("socket_ack", "env-m2", timeout=WAIT)
        await asyncio.sleep(0.5)
        assert len(fake.find("api", "chat.postMessage")) == 1
        assert canned.asked == ["what is paging?"]
    finally:
        stop.set()
        assert await asyncio.wait_for(task, WAIT) == 0


async def test_http_mention_is_answered_once_per_event_id(
    slack_settings: Settings, fake: FakeSlack, canned: _CannedQueue, redis_client: aioredis.Redis
) -> None:
    async for b in _serve_bot(slack_settings, canned):
        await b.event(_mention("what is paging?"), "EvHttp1", retry_num=0)
        await fake.wait_for("api", "chat.postMessage", timeout=WAIT)
        await b.event(_mention("what is paging?"), "EvHttp1", retry_num=1)
        # an event whose first delivery never reached us is answered on its retry
        await b.event(_mention("what is a TLB?", ts="1700000006.000100"), "EvLost", retry_num=2)
        await fake.wait_for(
            "api",
            "chat.postMessage",
            predicate=lambda r: r.args["thread_ts"] == "1700000006.000100",
            timeout=WAIT,
        )
        await asyncio.sleep(0.3)
        assert sorted(canned.asked) == ["what is a TLB?", "what is paging?"]
        assert len(fake.find("api", "chat.postMessage")) == 2
    key = f"{slack_settings.key_prefix}event:EvHttp1"
    assert await redis_client.get(key) == b"1" and 0 < await redis_client.ttl(key) <= 600


@pytest.mark.parametrize(("status", "error"), [(404, "expired_url"), (400, "invalid_blocks")])
async def test_refused_response_url_is_logged_and_answered_in_plain_text(
    slack_settings: Settings,
    fake: FakeSlack,
    canned: _CannedQueue,
    caplog: pytest.LogCaptureFixture,
    status: int,
    error: str,
) -> None:
    caplog.set_level(logging.INFO, logger="syllabot.slack")
    fake.fail_response("refused", status, error)
    async for b in _serve_bot(slack_settings, canned):
        await b.command(fake, "/ask", "What is paging?", STUDENT, "refused")
        first = await fake.wait_for("response", "refused", timeout=WAIT)
        assert first.status == status and first.args["blocks"]
        fallback = await fake.wait_for(
            "response", "refused", after=fake.records.index(first) + 1, timeout=WAIT
        )
        assert "blocks" not in fallback.args  # text only
        assert fallback.args["response_type"] == "ephemeral"
        assert error in fallback.args["text"] and "Paging divides memory" in fallback.args["text"]
    errors = [r for r in caplog.records if r.name == "syllabot.slack" and r.levelno >= logging.ERROR]
    assert any(str(status) in r.getMessage() and error in r.getMessage() for r in errors)


async def test_refused_thread_post_falls_back_to_plain_text(
    slack_settings: Settings, fake: FakeSlack, canned: _CannedQueue, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="syllabot.slack")
    fake.fail_api("chat.postMessage", "msg_blocks_too_long")
    async for b in _serve_bot(slack_settings, canned):
        await b.event(_mention("what is paging?"), "EvLong")
        first = await fake.wait_for("api", "chat.postMessage", timeout=WAIT)
        assert first.error == "msg_blocks_too_long"
        fallback = await fake.wait_for(
            "api", "chat.postMessage", after=fake.records.index(first) + 1, timeout=WAIT
        )
        assert fallback.error is None and "blocks" not in fallback.args
        assert fallback.args["thread_ts"] == "1700000005.000100"
        assert (
            "msg_blocks_too_long" in fallback.args["text"]
            and "Paging divides memory" in fallback.args["text"]
        )
    assert any(
        r.levelno >= logging.ERROR and "msg_blocks_too_long" in r.getMessage()
        for r in caplog.records
        if r.name == "syllabot.slack"
    )


async def test_refused_admin_report_falls_back_to_plain_text(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    report = IngestReport(
        collection="default",
        files=[FileReport(file="os-notes.md", ok=True, pages=1, chunks=3, modules=["Module 2"])],
        total_chunks=3,
        changed=True,
    )
    queue = _CannedQueue(slack_settings, job_result=report)
    fake.fail_response("ri-bad", 400, "invalid_blocks", nth=2)  # 1: "Re-indexing…", 2: the report
    try:
        async for b in _serve_bot(slack_settings, queue):
            await b.command(fake, "/syllabot-reindex", "", ADMIN, "ri-bad")
            fallback = await fake.wait_for(
                "response", "ri-bad", predicate=lambda r: "blocks" not in r.args, timeout=WAIT
            )
            assert "invalid_blocks" in fallback.args["text"] and "1 file indexed" in fallback.args["text"]
            assert [r.status for r in fake.find("response", "ri-bad")] == [200, 400, 200]
    finally:
        await queue.close()


@pytest.mark.parametrize("withdrawn", [False, True])
async def test_admin_job_wait_is_bounded_by_the_response_url(
    slack_settings: Settings, fake: FakeSlack, monkeypatch: pytest.MonkeyPatch, withdrawn: bool
) -> None:
    monkeypatch.setattr(slack_bot, "RESPONSE_URL_BUDGET_S", 3.0, raising=False)
    queue = _CannedQueue(slack_settings, withdrawn=withdrawn)
    try:
        async for b in _serve_bot(slack_settings, queue):
            await b.command(fake, "/syllabot-reindex", "", ADMIN, "slow")
            rec = await fake.wait_for(
                "response", "slow", predicate=lambda r: "Re-indexing" not in r.args["text"], timeout=WAIT
            )
    finally:
        await queue.close()
    (waited,) = queue.job_timeouts
    assert 2.0 < waited <= 3.0  # what is left of the budget, not INGEST_TIMEOUT_S
    text = rec.args["text"]
    assert f"within {waited:.0f} s" in text if withdrawn else f"after {waited:.0f} s" in text
    assert "took too long" not in text and f"{slack_settings.ask_timeout_s:.0f} s" not in text
    if withdrawn:
        assert "No worker started" in text and "nothing was changed" in text
    else:
        assert "Still indexing" in text and "/syllabot-collection" in text and "keeps going" in text


async def test_shortcut_ingest_wait_is_bounded_too(
    slack_settings: Settings, fake: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slack_bot, "RESPONSE_URL_BUDGET_S", 3.0, raising=False)
    fake.add_file("FMD", "sched.md", b"# OS\n\nRound robin uses a time quantum.\n")
    queue = _CannedQueue(slack_settings)
    shortcut = {
        "type": "message_action",
        "callback_id": ADD_SHORTCUT_ID,
        "trigger_id": "t",
        "user": {"id": ADMIN},
        "team": {"id": TEAM_ID},
        "channel": {"id": CHANNEL},
        "message": {"type": "message", "ts": "1.5", "files": [{"id": "FMD", "name": "sched.md"}]},
        "message_ts": "1.5",
        "response_url": fake.response_url("sc-slow"),
        "action_ts": "1.6",
    }
    try:
        async for b in _serve_bot(slack_settings, queue):
            await b.interactive(shortcut)
            rec = await fake.wait_for(
                "response", "sc-slow", predicate=lambda r: "Still indexing" in r.args["text"], timeout=WAIT
            )
    finally:
        await queue.close()
    (waited,) = queue.job_timeouts
    assert waited <= 3.0
    assert "sched.md" in rec.args["text"] and "/syllabot-collection" in rec.args["text"]


async def test_unsupported_file_type_refused_before_download(bot: Bot, fake: FakeSlack) -> None:
    fake.add_file("FPNG", "diagram.png", b"\x89PNG\r\n\x1a\nnot really", mimetype="image/png")
    await bot.event(_file_mention("FPNG", "diagram.png", ADMIN), "EvPng")
    await fake.wait_for("api", "files.info", timeout=WAIT)
    refusal = await fake.wait_for(
        "api", "chat.update", predicate=lambda r: "cannot index" in json.dumps(r.args), timeout=WAIT
    )
    assert "diagram.png" in json.dumps(refusal.args) and "not downloaded" in json.dumps(refusal.args)
    await asyncio.sleep(0.2)
    assert fake.find("download") == []

    # Slack says it is a PDF although the name has no extension: the worker sniffs PDFs, so fetch it
    fake.add_file("FSCAN", "scan", b"%PDF-1.4 tiny", filetype="pdf")
    await bot.event(_file_mention("FSCAN", "scan", ADMIN, ts="1700000009.000100"), "EvScan")
    await fake.wait_for("download", "FSCAN", timeout=WAIT)


async def test_collections_list_and_drop_for_admins_only(
    bot: Bot, fake: FakeSlack, settings: Settings, redis_client: aioredis.Redis, corpus: None
) -> None:
    await bot.command(fake, "/syllabot-collections", "", STUDENT, "k1")
    assert "Only Syllabot admins" in (await fake.wait_for("response", "k1", timeout=WAIT)).args["text"]

    await bot.command(fake, "/syllabot-collections", "", ADMIN, "k2")
    rec = await fake.wait_for("response", "k2", timeout=WAIT * 2)
    assert "default: 1 documents" in rec.args["text"] and rec.args["response_type"] == "ephemeral"

    await bot.command(fake, "/syllabot-collections", "drop default", ADMIN, "k3")
    assert "confirm" in (await fake.wait_for("response", "k3", timeout=WAIT * 2)).args["text"]
    assert await redis_client.sismember(Keys(settings.key_prefix).collections, "default")

    await bot.command(fake, "/syllabot-collections", "drop default confirm", ADMIN, "k4")
    assert "Dropped “default”" in (await fake.wait_for("response", "k4", timeout=WAIT * 2)).args["text"]
    assert not await redis_client.sismember(Keys(settings.key_prefix).collections, "default")

    await bot.command(fake, "/syllabot-collections", "remove everything", ADMIN, "k5")
    assert (
        "/syllabot-collections drop NAME"
        in (await fake.wait_for("response", "k5", timeout=WAIT)).args["text"]
    )


async def test_admins_mark_which_version_counts_and_answers_follow(
    bot: Bot, fake: FakeSlack, queue: QueueClient, corpus: None
) -> None:
    """/syllabot-supersede OLD by NEW leaves the old notes out of answers; /syllabot-current undoes it."""
    revised = "# OS notes, revised\n\nThe scheduler of this course is round robin with a 20 ms quantum.\n"
    await queue.ingest("default", "os-notes-2026.md", revised.encode(), "test", timeout=WAIT * 3)
    await bot.command(fake, "/syllabot-supersede", "os-notes.md by os-notes-2026.md", STUDENT, "v1")
    assert "Only Syllabot admins" in (await fake.wait_for("response", "v1", timeout=WAIT)).args["text"]

    await bot.command(fake, "/syllabot-supersede", "os-notes.md by os-notes-2026.md", ADMIN, "v2")
    said = (await fake.wait_for("response", "v2", timeout=WAIT * 2)).args["text"]
    assert "os-notes.md is marked superseded by os-notes-2026.md" in said, said
    sources = {s.file: s for s in await queue.sources("default")}
    assert sources["os-notes.md"].status == "superseded"
    assert sources["os-notes.md"].superseded_by == sources["os-notes-2026.md"].doc_id
    answer = await queue.ask(AskRequest(question="what is paging", collection="default"), timeout=WAIT * 2)
    assert {c.file for c in answer.citations} <= {"os-notes-2026.md"}, answer.citations

    await bot.command(fake, "/syllabot-current", "os-notes.md", ADMIN, "v3")
    assert "marked current" in (await fake.wait_for("response", "v3", timeout=WAIT * 2)).args["text"]
    assert {s.file: s.status for s in await queue.sources("default")}["os-notes.md"] == "current"

    await bot.command(fake, "/syllabot-supersede", "nope.md", ADMIN, "v4")
    assert "no document 'nope.md'" in (await fake.wait_for("response", "v4", timeout=WAIT * 2)).args["text"]
    await bot.command(fake, "/syllabot-supersede", "a b c d", ADMIN, "v5")
    assert (
        "/syllabot-supersede OLD [by NEW]"
        in (await fake.wait_for("response", "v5", timeout=WAIT)).args["text"]
    )


async def test_admins_list_where_the_documents_disagree(
    bot: Bot, fake: FakeSlack, queue: QueueClient, corpus: None
) -> None:
    await queue.ingest(
        "default",
        "quiz.md",
        b"# Weekly quiz\n\nThe weekly quiz is due on Monday.\n",
        "test",
        timeout=WAIT * 3,
    )
    await queue.ingest(
        "default",
        "quiz-spring.md",
        b"# Weekly quiz\n\nThe weekly quiz is due on Friday.\n",
        "test",
        timeout=WAIT * 3,
    )
    await bot.command(fake, "/syllabot-conflicts", "", STUDENT, "c1")
    assert "Only Syllabot admins" in (await fake.wait_for("response", "c1", timeout=WAIT)).args["text"]
    await bot.command(fake, "/syllabot-conflicts", "", ADMIN, "c2")
    said = (await fake.wait_for("response", "c2", timeout=WAIT * 2)).args["text"]
    assert "disagree" in said and "due on Monday" in said and "due on Friday" in said, said


async def test_admins_see_the_course_card_with_its_sources(
    bot: Bot, fake: FakeSlack, queue: QueueClient, worker: None
) -> None:
    syllabus = (
        b"# AST 105: Night Sky Navigation\n\n"
        b"Instructor: Dr. Corin Halvey; Email: corin.halvey@starfield.example; "
        b"Office Hours: Thu 4:00 - 5:30PM\n\n"
        b"We learn to find north by the stars and to read a planisphere on the observatory roof.\n"
    )
    await queue.ingest("default", "stars-syllabus.md", syllabus, "test", timeout=WAIT * 3)
    await bot.command(fake, "/syllabot-card", "", STUDENT, "k1")
    assert "Only Syllabot admins" in (await fake.wait_for("response", "k1", timeout=WAIT)).args["text"]
    await bot.command(fake, "/syllabot-card", "", ADMIN, "k2")
    said = (await fake.wait_for("response", "k2", timeout=WAIT * 2)).args["text"]
    assert "course card" in said, said
    (hours,) = [line for line in said.splitlines() if "office hours" in line.lower() and "Thu" in line]
    assert "4:00" in hours and "stars-syllabus.md" in hours, said


async def test_no_log_line_metric_or_stored_value_carries_a_user_id(
    bot: Bot,
    fake: FakeSlack,
    corpus: None,
    settings: Settings,
    redis_client: aioredis.Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A question, a vote and an admin re-index at DEBUG for our loggers: the users' ids appear
    in no log line (the worker's included), no metric, no Redis key or value."""
    from prometheus_client import generate_latest

    from tests.queue_helpers import redis_texts

    caplog.set_level(logging.DEBUG, logger="syllabot")
    await bot.command(fake, "/ask", "What does a translation lookaside buffer cache?", STUDENT, "p1")
    rec = await fake.wait_for("response", "p1", timeout=WAIT)
    answer_id = _answer_id(rec.args["blocks"])
    vote = {
        "type": "block_actions",
        "user": {"id": STUDENT, "username": "student"},
        "team": {"id": TEAM_ID, "domain": "fake"},
        "api_app_id": "AFAKE",
        "trigger_id": "t",
        "container": {"type": "message", "message_ts": "1.1", "channel_id": CHANNEL, "is_ephemeral": False},
        "channel": {"id": CHANNEL, "name": "general"},
        "message": {"ts": "1.1", "text": "answer"},
        "response_url": fake.response_url("p2"),
        "actions": [
            {
                "action_id": render.VOTE_UP_ACTION,
                "block_id": render.FEEDBACK_BLOCK_ID,
                "value": answer_id,
                "type": "button",
                "action_ts": "1.2",
            }
        ],
    }
    assert (await bot.interactive(vote)).status == 200
    await fake.wait_for("response", "p2", timeout=WAIT)
    await bot.command(fake, "/syllabot-reindex", "", ADMIN, "p3")
    await fake.wait_for(
        "response", "p3", predicate=lambda r: "Re-indexed" in json.dumps(r.args), timeout=WAIT * 2
    )

    lines = [record.getMessage() for record in caplog.records]
    assert any('"event": "answer"' in line for line in lines)
    stored = await redis_texts(redis_client, settings.key_prefix)
    metrics = generate_latest(bot.app._syllabot.metrics.registry).decode()
    for raw in (STUDENT, ADMIN):
        assert not [line for line in lines if raw in line]
        assert not [text for text in stored if raw in text]
        assert raw not in metrics
    assert any(text.startswith("slack:u") for text in stored)


async def test_a_slack_error_body_that_is_not_json_still_reaches_the_admin(bot: Bot, fake: FakeSlack) -> None:
    """files.info answered 503 text/plain: describe_error used to crash on the body ('str' has no
    .get) and the admin's "Downloading …" line never changed."""
    fake.add_file("F503", "notes.pdf", b"%PDF-1.4")
    fake.fail_api_plain("files.info", 503, "Service Unavailable")
    await bot.event(_file_mention("F503", "notes.pdf", ADMIN))
    update = await fake.wait_for(
        "api", "chat.update", predicate=lambda r: "HTTP 503" in json.dumps(r.args), timeout=WAIT
    )
    assert "Slack refused a request" in json.dumps(update.args)
    assert fake.find("download") == []


def test_slack_error_codes_of_any_shape() -> None:
    from slack_sdk.web.async_slack_response import AsyncSlackResponse

    def error(data: Any, status: int) -> SlackApiError:
        response = AsyncSlackResponse(
            client=None, http_verb="POST", api_url="u", req_args={}, data=data, headers={}, status_code=status
        )
        return SlackApiError("failed", response)

    assert slack_bot.slack_error_code(error({"ok": False, "error": "missing_scope"}, 200)) == "missing_scope"
    assert slack_bot.slack_error_code(error("Bad Gateway", 502)) == "HTTP 502"
    assert slack_bot.slack_error_code(error("", 500)) == "HTTP 500"


async def test_a_request_for_another_workspace_is_refused_when_the_team_is_pinned(
    slack_settings: Settings, queue: QueueClient, fake: FakeSlack
) -> None:
    pinned = slack_settings.model_copy(update={"slack_team_id": "TOTHERTEAM"})
    async for bot in _serve_bot(pinned, queue):
        resp = await bot.command(fake, "/ask", "what is a semaphore?", STUDENT, "pin")
        assert resp.status == 403
        await asyncio.sleep(0.3)
        assert fake.find("response", "pin") == []  # nothing answered
    right = slack_settings.model_copy(update={"slack_team_id": TEAM_ID})
    async for bot in _serve_bot(right, queue):
        resp = await bot.command(fake, "/syllabot-collection", "", STUDENT, "pin2")
        assert resp.status == 200
        await fake.wait_for("response", "pin2", timeout=WAIT)
