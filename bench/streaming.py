"""Streamed LLM answers: time to first visible text, from the slash command, on Discord and Slack.

    python -m bench.streaming                 # writes the "streaming" section of docs/benchmarks/results.md
    python -m bench.streaming --questions 5 --no-write

What runs (about a minute): a fake OpenAI-compatible LLM on loopback (``tests/fake_openai.py``) that
streams its reply at ``--tokens-per-s`` (40) after ``--first-token-ms`` (300); a worker *process*
(``python -m syllabot.worker.main``, the default MiniLM embedder) on the Redis at ``REDIS_URL``
(default redis://127.0.0.1:6379/0) under a throw-away key prefix, with a small OS syllabus indexed;
the real discord.py bot and the real Bolt app in this process against the Discord and Slack fakes
(``tests/discord_fake.py``, ``tests/slack_fake.py``), with the product's default edit pace
(``SYLLABOT_STREAM_EDIT_EVERY_S`` = 1 s).

Measured per question, on the fakes' own record of each request: from the moment the slash
command is dispatched (Discord: the INTERACTION_CREATE sent on the gateway; Slack: the signed
``/ask`` POST) to the first edit that shows answer text ("first text"), and to the final edit
("answer"). The reply is 44 tokens whose first citation is its 21st token: nothing is shown before
a citation settles the reply as an answer (``worker/answerers/llm.py::visible_text``), so about
0.5 s of the first-text time is the model writing its first cited sentence.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import redis

from bench.common import machine_stamp, mark, markdown_table, publish
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue import QueueClient
from tests.discord_fake import FakeInteraction
from tests.fake_openai import StreamingLLM, tokens
from tests.queue_helpers import start_worker_process, stop_process, wait_for_workers
from tests.streaming_helpers import (
    NOTES,
    REPLY,
    discord_bot,
    discord_edits,
    is_partial_edit,
    is_partial_message,
    slack_bot,
)
from tests.test_slack_bot import STUDENT

TARGET_S = 1.5
WAIT_S = 30.0


def question(i: int) -> str:
    """A different wording each time, so no answer cache could serve a repeat."""
    return f"What is a semaphore, in question number {i}?"


async def discord_run(settings: Settings, n: int) -> list[dict]:
    rows = []
    async with discord_bot(settings) as fake:
        for i in range(n + 1):  # the first one warms up the bot's connections; not counted
            started = time.monotonic()
            ix = await fake.command("ask", question=question(i))
            await ix.wait_for(lambda r: r.kind == "edit" and not is_partial_edit(r), WAIT_S)
            edits = discord_edits(ix)
            first = next(e for e in edits if FakeInteraction.body(e).get("embeds"))
            rows.append(_row(started, first.at, [e.at for e in edits], is_partial_edit(first)))
    return rows[1:]


async def slack_run(settings: Settings, n: int) -> list[dict]:
    rows = []
    async with slack_bot(settings) as (fake, bot):
        for i in range(n + 1):
            key = f"ask{i}"
            started = time.monotonic()
            await bot.command(fake, "/ask", question(i), STUDENT, key)
            await fake.wait_for(
                "response", key, predicate=lambda r: not is_partial_message(r), timeout=WAIT_S
            )
            posts = fake.find("response", key)
            rows.append(_row(started, posts[0].at, [p.at for p in posts], is_partial_message(posts[0])))
    return rows[1:]


def _row(started: float, first_at: float, edit_times: list[float], streamed: bool) -> dict:
    gaps = [b - a for a, b in itertools.pairwise(edit_times)]
    return {
        "first": first_at - started,
        "final": edit_times[-1] - started,
        "edits": len(edit_times),
        "min_gap": min(gaps) if gaps else None,
        "streamed": streamed,
    }


def summarise(platform: str, rows: list[dict]) -> list[object]:
    first = sorted(r["first"] for r in rows)
    final = sorted(r["final"] for r in rows)
    gaps = [r["min_gap"] for r in rows if r["min_gap"] is not None]
    p50 = statistics.median(first)
    return [
        platform,
        len(rows),
        f"{p50:.2f}",
        f"{first[-1]:.2f}",
        mark(p50, TARGET_S, higher_is_better=False),
        f"{statistics.median(final):.2f}",
        f"{statistics.median(r['edits'] for r in rows):.0f}",
        f"{min(gaps):.2f}" if gaps else "—",
        f"{sum(r['streamed'] for r in rows)}/{len(rows)}",
    ]


async def run(args: argparse.Namespace) -> list[list[object]]:
    llm = await StreamingLLM(
        reply=REPLY, first_token_s=args.first_token_ms / 1000.0, tokens_per_s=args.tokens_per_s
    ).start()
    prefix = f"bench-stream:{uuid.uuid4().hex[:8]}:"
    data = Path(tempfile.mkdtemp(prefix="syllabot-bench-stream-"))
    settings = Settings(
        redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        key_prefix=prefix,
        data_dir=data,
        embedder=args.embedder,
        answerer="openai",
        llm_base_url=llm.url,
        llm_model="fake-model",
        rate_limit_per_minute=1000,
        _env_file=None,
    )
    rows: list[list[object]] = []
    try:
        for stream in (True, False):
            worker = start_worker_process(
                settings,
                data / f"worker-{stream}.log",
                SYLLABOT_LLM_BASE_URL=llm.url,
                SYLLABOT_LLM_MODEL="fake-model",
                SYLLABOT_LLM_API_KEY="sk-bench",
                SYLLABOT_LLM_STREAM=str(stream).lower(),
            )
            try:
                await wait_for_workers(settings, 1, timeout=120)
                if not rows:
                    async with QueueClient(settings) as queue:
                        report = await queue.ingest("default", "os-notes.md", NOTES, "bench", timeout=120)
                        assert report.changed, report
                how = "" if stream else ", `SYLLABOT_LLM_STREAM=false`"
                rows.append(summarise(f"Discord `/ask`{how}", await discord_run(settings, args.questions)))
                rows.append(summarise(f"Slack `/ask`{how}", await slack_run(settings, args.questions)))
            finally:
                stop_process(worker)
                await wait_for_workers_gone(settings)
    finally:
        await llm.stop()
        client = redis.Redis.from_url(settings.redis_url or "")
        keys = list(client.scan_iter(match=f"{Keys(prefix).prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
    return rows


async def wait_for_workers_gone(settings: Settings) -> None:
    """Until the stopped worker's heartbeat is gone (it removes it on a clean stop)."""
    async with QueueClient(settings) as queue:
        for _ in range(200):
            if not await queue.worker_count():
                return
            await asyncio.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=10, help="questions per platform")
    parser.add_argument("--tokens-per-s", type=float, default=40.0)
    parser.add_argument("--first-token-ms", type=float, default=300.0)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--no-write", action="store_true", help="print the section, do not write the docs")
    args = parser.parse_args()
    rows = asyncio.run(run(args))
    reply_tokens = len(tokens(REPLY))
    lines = [
        "## Streamed answers",
        "",
        f"`python -m bench.streaming` — {machine_stamp()} A fake LLM streams a {reply_tokens}-token "
        f"reply at {args.tokens_per_s:g} tokens/s after {args.first_token_ms:g} ms; one worker process "
        f"({args.embedder}), the real bots against the Discord and Slack fakes, {args.questions} questions "
        "per platform after one warm-up, one at a time, edits at most once a second (the default). "
        "Seconds from the slash command to the first edit showing answer text (target ≤ "
        f"{TARGET_S:g} s) and to the final answer; the smallest gap between two edits of one answer, "
        "as the fake platform received them; how many answers were shown growing.",
        "",
        markdown_table(
            (
                "platform",
                "questions",
                "first text p50 (s)",
                "first text max (s)",
                "target",
                "answer p50 (s)",
                "edits p50",
                "smallest gap (s)",
                "streamed",
            ),
            rows,
        ),
        "",
        "With streaming off the first text is the answer itself, once the reply's last token is in "
        f"(about {args.first_token_ms / 1000 + reply_tokens / args.tokens_per_s:.1f} s after the request). "
        "Streamed, the final edit keeps the edit pace too (never sooner than 1 s after the last partial), "
        "which can hold the complete answer back by up to a second. A Slack `/ask` is answered through "
        "its response_url, which takes five posts: at most three partials, then the answer (replies in "
        "a thread are updated without a cap).",
    ]
    publish("streaming", lines, write=not args.no_write)


if __name__ == "__main__":
    main()
