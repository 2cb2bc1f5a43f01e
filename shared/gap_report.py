"""The teacher's gap report: what students asked that the materials did not answer, by topic.

A worker computes it (``report`` job, worker/ops/gaps.py); the bots and the CLI receive it as this model
and print it with the pure functions below, so a table or a CSV looks the same wherever it is asked
for. The report never holds who asked: only question texts, counts and passage labels. The bots'
weekly post claims its week here, once for all replicas.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from syllabot.shared.keys import Keys
from syllabot.shared.schema import ConflictInfo
from syllabot.shared.wording import clip, plural

log = logging.getLogger("syllabot.report")

#: Longest period a report may cover (the questions kept can be no older than the retention anyway).
MAX_REPORT_DAYS = 365
#: Period of the weekly post and of a report asked for without a period.
DEFAULT_REPORT_DAYS = 7


class GapTopic(BaseModel):
    """A group of similar questions the materials did not answer (or answered to a 👎)."""

    label: str = Field(description="The group's most central question.")
    words: list[str] = Field(default_factory=list, description="Its most distinctive words.")
    count: int = Field(description="Questions in the group.")
    not_in_materials: int = 0
    uncertain: int = 0
    voted_down: int = Field(default=0, description="Answers in the group voted 👎.")
    examples: list[str] = Field(default_factory=list, description="Up to three other questions of the group.")
    closest: str = Field(default="", description="Citation label of the passage found closest most often.")


class GapReport(BaseModel):
    collection: str
    days: int
    since: str = Field(description="Start of the period, ISO 8601 UTC.")
    until: str = Field(description="End of the period, ISO 8601 UTC.")
    keep_days: int = Field(
        description="SYLLABOT_KEEP_QUESTIONS_DAYS of the worker: 0 means questions are not kept."
    )
    questions: int = Field(description="Questions kept for the period (every outcome).")
    gaps: int = Field(description="Of those, not in the materials or uncertain, plus answers voted 👎.")
    social: int = Field(
        default=0, description="Of those, greetings and thanks alone (answered with a hello; never a gap)."
    )
    topics: list[GapTopic] = Field(default_factory=list)
    conflicts: list[ConflictInfo] = Field(
        default_factory=list,
        description="Facts on which the collection's documents disagree (`syllabot conflicts`): for the "
        "teacher to fix before students ask.",
    )


#: The CSV's columns, in order (a contract for spreadsheets; tests/test_gap_report.py reads it).
CSV_FIELDS = (
    "rank", "topic", "count", "not_in_materials", "uncertain", "voted_down", "words", "examples", "closest",
)  # fmt: skip


def to_csv(report: GapReport) -> str:
    """One row per topic, largest first; examples joined with " | "."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for rank, topic in enumerate(report.topics, 1):
        writer.writerow(
            [
                rank,
                topic.label,
                topic.count,
                topic.not_in_materials,
                topic.uncertain,
                topic.voted_down,
                " ".join(topic.words),
                " | ".join(topic.examples),
                topic.closest,
            ]
        )
    return out.getvalue()


def csv_filename(report: GapReport) -> str:
    return f"syllabot-gaps-{report.collection}-{report.until[:10]}.csv"


def summary_line(report: GapReport) -> str:
    """One sentence: what the report covers, or why it is empty."""
    period = f"the last {plural(report.days, 'day')}"
    if report.keep_days <= 0 and report.questions == 0:
        return (
            f"Collection '{report.collection}', {period}: questions are not kept "
            "(SYLLABOT_KEEP_QUESTIONS_DAYS is 0), so only answers voted 👎 can show up"
            + (f": {report.gaps}." if report.gaps else "; there were none.")
        )
    return (
        f"Collection '{report.collection}', {period}: {report.gaps} of {plural(report.questions, 'question')} "
        f"{'was' if report.gaps == 1 else 'were'} not answered by the materials or voted 👎, in "
        f"{plural(len(report.topics), 'topic')}"
        + (f" ({report.social} more were only greetings or thanks)." if report.social else ".")
    )


def conflict_lines(entries: list[ConflictInfo], width: int = 220) -> list[str]:
    """One line per fact the documents disagree on: both citations and both passages (the
    ``conflicts`` command and the gap report, on every front-end)."""

    return [
        f"{e.kind} ({e.topic}): {e.first}{f' (current: {e.current})' if e.current else ''} says "
        f"“{clip(e.first_text, width)}”; {e.second} says “{clip(e.second_text, width)}”"
        for e in entries
    ]


def disagreements(report: GapReport, limit: int = 5, width: int = 160) -> list[str]:
    """The report's part on conflicting materials: a heading and the first ``limit`` facts (none
    when the documents agree), so that the teacher sees each week what students would be told two
    ways."""
    if not report.conflicts:
        return []
    n = len(report.conflicts)
    lines = [f"Your materials disagree on {plural(n, 'fact')} (fix them before students ask):"]
    lines += [f"- {line}" for line in conflict_lines(report.conflicts[:limit], width)]
    if n > limit:
        lines.append(f"… and {n - limit} more: syllabot conflicts -c {report.collection}")
    return lines


def _clip(text: str, width: int) -> str:
    """One line, no backticks (the table goes in code blocks), at most ``width`` characters, cut
    between words (``wording.clip``)."""
    return clip(text.replace("`", "'"), width)


def table(report: GapReport, limit: int = 10, width: int = 44) -> str:
    """A short fixed-width table of the largest topics, for a code block or a terminal."""
    if not report.topics:
        return "(no unanswered questions in this period)"
    rows = [("#", "n", "not/unc/👎", "topic", "closest passage")]
    for rank, topic in enumerate(report.topics[:limit], 1):
        split = f"{topic.not_in_materials}/{topic.uncertain}/{topic.voted_down}"
        rows.append((str(rank), str(topic.count), split, _clip(topic.label, width), _clip(topic.closest, 32)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    more = len(report.topics) - limit
    if more > 0:
        lines.append(f"… and {plural(more, 'more topic')} in the CSV")
    return "\n".join(lines)


# --- the weekly post (both bots) ---------------------------------------------------------------

#: How often a bot checks whether this week's report is still to be posted.
WEEKLY_CHECK_S = 600.0


def report_week(now: datetime) -> str:
    """The ISO week a weekly report belongs to, e.g. ``2026-W49`` (UTC)."""
    year, week, _ = now.astimezone(UTC).isocalendar()
    return f"{year}-W{week:02d}"


async def post_weekly(
    redis: Any, keys: Keys, platform: str, channel: str, now: datetime, post: Callable[[], Awaitable[str]]
) -> bool:
    """Post this week's report in ``channel`` unless it has been (first claim in Redis wins, so bot
    replicas and restarts post once a week); True when this call posted it. ``post`` sends it and
    returns the collection reported on; if it fails the claim is released, so the next check retries."""
    week = report_week(now)
    key = keys.report_posted(platform, channel, week)
    if not await redis.set(key, "1", nx=True, ex=8 * 24 * 3600):
        return False
    try:
        collection = await post()
    except BaseException:
        await redis.delete(key)
        raise
    log.info("posted the gap report of %s for %s in channel %s", collection, week, channel)
    return True
