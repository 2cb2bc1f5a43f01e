"""`/syllabot-report` on Slack (the real Bolt app against the fake, real Redis, a real worker): admins
only, the table in a private reply, the CSV uploaded (files_upload_v2) to the admin's direct
messages; and the weekly post in SLACK_REPORT_CHANNEL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from syllabot.bots.slack_bot import SlackFrontEnd, make_web_client
from syllabot.shared.config import Settings
from syllabot.shared.gap_report import CSV_FIELDS
from syllabot.shared.queue import QueueClient
from syllabot.shared.redis_conn import async_client
from syllabot.shared.schema import AskRequest
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import running_worker
from tests.slack_fake import FakeSlack
from tests.test_gap_report import FIELD_TRIP, USER, csv_rows
from tests.test_slack_bot import (  # noqa: F401 - fixtures
    ADMIN,
    STUDENT,
    WAIT,
    Bot,
    _texts,
    bot,
    fake,
    queue,
    slack_settings,
)

pytestmark = pytest.mark.slow


async def test_report_is_admin_only_private_with_the_csv_in_a_direct_message(
    bot: Bot,  # noqa: F811
    fake: FakeSlack,  # noqa: F811
    settings: Settings,
) -> None:
    keeping = settings.model_copy(update={"keep_questions_days": 7})
    async with running_worker(keeping), QueueClient(keeping) as client:
        await client.ingest_many("default", sample_files(), who="admin")
        for question in FIELD_TRIP:
            await client.ask(AskRequest(question=question, collection="default", platform="slack", user=USER))

        await bot.command(fake, "/syllabot-report", "", STUDENT, "r1")
        refusal = await fake.wait_for("response", "r1", timeout=WAIT)
        assert refusal.args["response_type"] == "ephemeral" and "Only Syllabot admins" in refusal.args["text"]

        await bot.command(fake, "/syllabot-report", "many", ADMIN, "r2")
        usage = await fake.wait_for("response", "r2", timeout=WAIT)
        assert "Usage: /syllabot-report [days], with days from 1 to 365" in usage.args["text"]
        assert not fake.uploads  # nothing was sent to anyone refused

        await bot.command(fake, "/syllabot-report", "3", ADMIN, "r3")
        reply = await fake.wait_for(
            "response",
            "r3",
            predicate=lambda r: "Unanswered" in _texts(r.args.get("blocks") or []),
            timeout=WAIT,
        )
        assert reply.args["response_type"] == "ephemeral"
        text = _texts(reply.args["blocks"])
        assert "the last 3 days" in text and "4 of 4 questions" in text and "field trip" in text
        done = await fake.wait_for("api", "files.completeUploadExternal", timeout=WAIT)
        assert done.args["channel_id"] == f"D{ADMIN}"  # the admin's direct messages, nobody else's
        [upload] = fake.uploads.values()
        assert upload["complete"] and upload["filename"].endswith(".csv")
        rows = csv_rows(upload["content"])
        assert tuple(rows[0]) == CSV_FIELDS and rows[0]["count"] == "4"
        assert "424242" not in text and b"424242" not in upload["content"]
        assert [r.args["users"] for r in fake.find("api", "conversations.open")] == [ADMIN]


async def test_weekly_post_goes_to_the_report_channel_once_a_week(
    fake: FakeSlack,  # noqa: F811
    slack_settings: Settings,  # noqa: F811
) -> None:
    keeping = slack_settings.model_copy(update={"keep_questions_days": 7, "slack_report_channel": "CREPORTS"})
    redis_client = async_client(keeping)
    async with running_worker(keeping), QueueClient(keeping) as client:
        await client.ingest_many("default", sample_files(), who="admin")
        for question in FIELD_TRIP:
            await client.ask(AskRequest(question=question, collection="default", platform="slack", user=USER))
        fe = SlackFrontEnd(keeping, client, redis_client)
        web = make_web_client(keeping)
        now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
        try:
            assert await fe.post_weekly_report(web, now) is True
            assert await fe.post_weekly_report(web, now + timedelta(hours=1)) is False
        finally:
            await redis_client.aclose()
    [post] = fake.find("api", "chat.postMessage")
    assert post.args["channel"] == "CREPORTS" and "field trip" in str(post.args["blocks"])
    [upload] = fake.uploads.values()
    assert upload["channel"] == "CREPORTS" and csv_rows(upload["content"])[0]["count"] == "4"
