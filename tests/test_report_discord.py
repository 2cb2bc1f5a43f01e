"""`/report` on Discord (real discord.py against the fake, real Redis, a real worker): admins only,
a private table with the CSV attached to the follow-up; and the weekly post in the report channel."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from syllabot.bots.discord_bot import SyllabotBot
from syllabot.shared.config import Settings
from syllabot.shared.gap_report import CSV_FIELDS
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import AskRequest
from syllabot.worker.ops.sample import sample_files
from tests.discord_fake import MANAGE_GUILD, MEMBER_PERMISSIONS, DiscordFake
from tests.queue_helpers import running_worker
from tests.test_discord_bot import TIMEOUT, bot, discord_settings, fake, text_of  # noqa: F401 - fixtures
from tests.test_gap_report import FIELD_TRIP, USER, csv_rows

pytestmark = pytest.mark.slow


@pytest.fixture
def bot_settings(settings: Settings, fake: DiscordFake) -> Settings:  # noqa: F811 - used by `bot`
    return discord_settings(settings, fake, discord_report_channel_id=fake.channel_id)


async def test_report_is_admin_only_private_with_a_csv_and_posted_weekly(
    fake: DiscordFake,  # noqa: F811
    bot: SyllabotBot,  # noqa: F811
    settings: Settings,
) -> None:
    registered = {c["name"]: c for c in fake.commands[str(fake.guild_id)]}
    assert int(registered["report"]["default_member_permissions"]) == MANAGE_GUILD  # hidden from members
    keeping = settings.model_copy(update={"keep_questions_days": 7})
    async with running_worker(keeping), QueueClient(keeping) as client:
        await client.ingest_many("default", sample_files(), who="admin")
        for question in FIELD_TRIP:
            await client.ask(
                AskRequest(question=question, collection="default", platform="discord", user=USER)
            )

        ix = await fake.command("report", permissions=MEMBER_PERMISSIONS, roles=[fake.student_role_id])
        refusal = await ix.callback(TIMEOUT)
        assert refusal.json["type"] == 4 and refusal.json["data"]["flags"] & 64
        assert "Admins only" in text_of(refusal)
        assert not [r for r in ix.requests() if r.files]

        ix = await fake.command("report", days=3, permissions=MANAGE_GUILD | MEMBER_PERMISSIONS)
        deferred = await ix.callback(TIMEOUT)
        assert deferred.json["type"] == 5 and deferred.json["data"]["flags"] & 64  # private
        reply = await ix.followup(TIMEOUT)
        assert reply.json["flags"] & 64
        text = text_of(reply)
        assert "Unanswered questions — default" in text and "the last 3 days" in text
        assert "field trip" in text and "4 of 4 questions" in text
        [(name, data)] = reply.files.items()
        assert name.startswith("syllabot-gaps-default-") and name.endswith(".csv")
        rows = csv_rows(data)
        assert tuple(rows[0]) == CSV_FIELDS and rows[0]["count"] == "4"
        assert "424242" not in text and b"424242" not in data

        # The weekly post: once per ISO week, whichever replica or restart asks first.
        now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
        assert await bot.post_weekly_report(now) is True
        assert await bot.post_weekly_report(now + timedelta(hours=3)) is False
        posted = [r for r in fake.requests if r.kind == "channel_message"]
        assert len(posted) == 1 and posted[0].path.endswith(f"/channels/{fake.channel_id}/messages")
        assert "field trip" in text_of(posted[0]) and "the last 7 days" in text_of(posted[0])
        assert csv_rows(next(iter(posted[0].files.values())))[0]["count"] == "4"
        assert await bot.post_weekly_report(now + timedelta(days=7)) is True  # the next week
