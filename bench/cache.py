"""Answer cache: the round trip of a question asked again, through the queue, against a fresh one.

`python -m bench.cache` — one worker *process* (``python -m syllabot.worker.main``, the product's
defaults: MiniLM and the extractive answerer) on the Redis at ``--redis-url`` under a throw-away key
prefix (deleted at the end); the client in this process. The sample corpus is indexed through the
worker; each of the 58 distinct questions of ``tests/data/sample_questions.jsonl`` is asked once
(computed: a cache miss), then ``--repeats`` questions cycling through them are asked again (served
from the cache). Every cached answer is compared with the fresh one (text, status, citations, index
version): "differ" must be 0. ``--rounds`` rounds (3), each with question keeping off (the
default) and on (``SYLLABOT_KEEP_QUESTIONS_DAYS=7``: one stream append more per question, in a
task). About two minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path

import redis

from bench.common import machine_stamp, mark, markdown_table, percentiles, publish
from bench.queue_latency import (
    sample_questions,
    wait_for_no_workers,
    wait_for_workers,
    worker_env,
    workers,
)
from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import Answer, AskRequest
from syllabot.worker.ops.sample import sample_files

TARGET_MS = 5.0
DISTINCT = 58


def _same(a: Answer, b: Answer) -> bool:
    drop = {"question", "timings"}
    return a.model_dump(exclude=drop) == b.model_dump(exclude=drop)


async def one_run(
    settings: Settings, keep_days: int, repeats: int, log_dir: Path, round_no: int
) -> dict[str, list[float] | int]:
    collection = f"cache-{keep_days}-{round_no}"
    questions = sample_questions(DISTINCT)
    # the cache on at the shipped lifetime (worker_env turns it off for the other benches)
    env = worker_env(
        settings,
        SYLLABOT_KEEP_QUESTIONS_DAYS=str(keep_days),
        SYLLABOT_ANSWER_CACHE_TTL_S=str(int(Settings.model_fields["answer_cache_ttl_s"].default)),
    )
    async with QueueClient(settings) as client:
        await wait_for_no_workers(client)
        with workers(1, env, log_dir / f"keep-{keep_days}-{round_no}"):
            await wait_for_workers(client)
            await client.ingest_many(collection, sample_files(), who="bench", timeout=600)
            fresh: dict[str, Answer] = {}
            fresh_ms: list[float] = []
            for q in questions:
                t0 = time.perf_counter()
                answer = await client.ask(AskRequest(question=q, collection=collection, platform="test"))
                fresh_ms.append((time.perf_counter() - t0) * 1000)
                assert not answer.timings.cached, q
                fresh[q] = answer
            cached_ms: list[float] = []
            worker_ms: list[float] = []
            queue_ms: list[float] = []
            differ = not_cached = 0
            for i in range(repeats):
                q = questions[i % len(questions)]
                t0 = time.perf_counter()
                answer = await client.ask(AskRequest(question=q, collection=collection, platform="test"))
                cached_ms.append((time.perf_counter() - t0) * 1000)
                worker_ms.append(answer.timings.total)
                queue_ms.append(answer.timings.queue or 0.0)
                not_cached += not answer.timings.cached
                differ += not _same(answer, fresh[q])
            # As every Discord /ask and new Slack mention: each question opens a conversation.
            opened_ms: list[float] = []
            opened_missed = 0
            for i in range(repeats // 3):
                q = questions[i % len(questions)]
                request = AskRequest(
                    question=q, collection=collection, platform="test", thread=f"bench:{collection}:{i}"
                )
                t0 = time.perf_counter()
                answer = await client.ask(request)
                opened_ms.append((time.perf_counter() - t0) * 1000)
                opened_missed += not answer.timings.cached
                differ += not _same(answer, fresh[q])
    return {
        "fresh": fresh_ms,
        "cached": cached_ms,
        "worker": worker_ms,
        "queue": queue_ms,
        "differ": differ,
        "not_cached": not_cached,
        "opened": opened_ms,
        "opened_missed": opened_missed,
    }


def pooled(runs: list[dict[str, list[float] | int]]) -> dict[str, object]:
    """The rounds of one configuration together: percentiles over every sample, counts summed, and
    each round's own cached p50 (how much the machine's load moved it)."""
    out: dict[str, object] = {}
    for name in ("fresh", "cached", "worker", "queue", "opened"):
        out[name] = percentiles([x for r in runs for x in r[name]])  # type: ignore[union-attr]
    out["opened_missed"] = sum(int(r["opened_missed"]) for r in runs)  # type: ignore[arg-type]
    out["n_opened"] = sum(len(r["opened"]) for r in runs)  # type: ignore[arg-type]
    out["differ"] = sum(int(r["differ"]) for r in runs)  # type: ignore[arg-type]
    out["not_cached"] = sum(int(r["not_cached"]) for r in runs)  # type: ignore[arg-type]
    out["n_fresh"] = sum(len(r["fresh"]) for r in runs)  # type: ignore[arg-type]
    out["n"] = sum(len(r["cached"]) for r in runs)  # type: ignore[arg-type]
    out["rounds"] = [percentiles(r["cached"])[0] for r in runs]  # type: ignore[arg-type]
    return out


async def run(args: argparse.Namespace) -> list[str]:
    prefix = f"bench-cache:{uuid.uuid4().hex[:8]}:"
    settings = Settings(
        redis_url=args.redis_url, key_prefix=prefix, data_dir=Path(args.work) / "data", _env_file=None
    )
    settings = settings.model_copy(
        update={n: Settings.model_fields[n].default for n in ("embedder", "answerer")}
    )
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    runs: dict[int, list[dict[str, list[float] | int]]] = {0: [], 7: []}
    try:
        for round_no in range(args.rounds):  # alternating, so both meet the machine's load alike
            for keep in runs:
                log_dir = Path(args.work) / prefix.replace(":", "-")
                runs[keep].append(await one_run(settings, keep, args.repeats, log_dir, round_no))
    finally:
        client = redis.Redis.from_url(args.redis_url)
        left = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if left:
            client.delete(*left)
        client.close()
    wall = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    results = {keep: pooled(r) for keep, r in runs.items()}
    rows = []
    for keep, r in results.items():
        keeping = "off" if keep == 0 else f"on ({keep} days)"
        fresh, cached, worker, queue = r["fresh"], r["cached"], r["worker"], r["queue"]
        rows.append(
            [
                f"fresh (computed), keeping {keeping}",
                r["n_fresh"],
                f"{fresh[0]:.2f}",
                f"{fresh[1]:.2f}",
                "—",
                "—",
                "—",
                "—",
            ]  # type: ignore[index]
        )
        rows.append(
            [
                f"**cached**, keeping {keeping}",
                r["n"],
                f"**{cached[0]:.2f}**",  # type: ignore[index]
                f"{cached[1]:.2f}",  # type: ignore[index]
                f"{worker[0]:.2f}",  # type: ignore[index]
                f"{queue[0]:.2f}",  # type: ignore[index]
                f"{r['differ']} / {r['not_cached']}",
                ", ".join(f"{p:.2f}" for p in r["rounds"]),  # type: ignore[attr-defined]
            ]
        )
        opened = r["opened"]
        rows.append(
            [
                f"**cached**, each a conversation's first question, keeping {keeping}",
                r["n_opened"],
                f"**{opened[0]:.2f}**",  # type: ignore[index]
                f"{opened[1]:.2f}",  # type: ignore[index]
                "—",
                "—",
                f"— / {r['opened_missed']}",
                "—",
            ]
        )
    off = results[0]["cached"][0]  # type: ignore[index]
    return [
        "## Answer cache",
        "",
        f"`python -m bench.cache` — {machine_stamp()} One worker process with the product's defaults "
        "(MiniLM, extractive), the sample corpus; the 58 distinct sample questions asked once "
        f"(computed), then {args.repeats} asks cycling through them (served from the cache), sequentially "
        f"through the queue; {args.rounds} rounds alternating question keeping off and on (a fresh "
        "worker and collection each), percentiles over all rounds' samples. "
        f"Run took {wall:.0f} s; load average {load_before:.1f} at the start, {load_after:.1f} at the end "
        f"({os.cpu_count()} cores).",
        "",
        markdown_table(
            [
                "asks",
                "n",
                "round trip p50 ms",
                "p95 ms",
                "worker p50 ms",
                "queue p50 ms",
                "differ / not cached",
                "cached p50 per round ms",
            ],
            rows,
        ),
        "",
        f"**Target: a cached ask's round trip p50 ≤ {TARGET_MS:g} ms: {off:.2f} ms {mark(off, TARGET_MS, False)}** "
        '(question keeping off, the default). "worker" is the worker\'s own time for a cached answer '
        '(one script call, no thread, no model); "queue" is the rest of the round trip, which the queue '
        'section measures alone. "differ" counts cached answers whose text, status, citations or index '
        'version differ from the fresh one (must be 0); "not cached" the repeats that missed. With '
        "keeping on, each question is also appended to its collection's stream, in a task of its own "
        "after the answer is on its way. The machine is shared with other jobs: the per-round p50s "
        "show how much its load moved the figures. *Each a conversation's first question*: the same "
        "asks, each opening a conversation as every Discord `/ask` does (served from the cache, and "
        "the turn recorded from the entry; before 2026-12-01 these all missed).",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", default="/tmp/syllabot-bench-cache")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave docs/ alone")
    args = parser.parse_args()
    publish("cache", asyncio.run(run(args)), not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
