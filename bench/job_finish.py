"""A job's end in one round trip: the worker's Redis calls and CPU per question, merged vs not.

    python -m bench.job_finish [--rounds 5] [--questions 200] [--no-write]

Why: stock arq ends a job with a MULTI/EXEC of its own after the job pushed its result in another
call; ``FastWorker.finish_job`` now makes both one script call (``FINISH_AND_PUSH``). This measures
what that saves, in one run, against the same worker with the merge off (a subclass whose
``_hold_result`` declines, so each job pushes its own result as before).

What runs: the shipped sample corpus indexed with the default embedder on the Redis at
``REDIS_URL`` under a throw-away key prefix (deleted at the end); a real ``FastWorker`` with the
real engine and extractive answerer (answer cache off: every question is computed) in this
process, and the queue client beside it, sending bursts of 20 questions at once. Per variant:

* *worker round trips per question*: every command the worker's connections sent for 20
  questions, read with MONITOR (a MULTI/EXEC or a script call is one round trip), by kind;
* *CPU ms per question*: this process's CPU time (worker and client together: the client's share
  is the same in both) over ``--questions`` questions, the median of ``--rounds`` rounds, the two
  variants interleaved so that the machine's other load falls on both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from collections import Counter

from bench.common import machine_stamp, markdown_table, publish
from bench.queue_latency import delete_prefix, sample_questions
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import AskRequest
from syllabot.worker.main import FastWorker
from tests.queue_helpers import end_watch, monitored, running_worker

SECTION = "job_finish"
COLLECTION = "bench-finish"
BURST = 20


class UnmergedWorker(FastWorker):
    """The worker as it was: each job pushes its own result, then arq ends it in its own call."""

    def _hold_result(self, job_id: str, payload: bytes, retry_s: float) -> bool:
        return False


async def _ask_all(client: QueueClient, questions: list[str]) -> None:
    for start in range(0, len(questions), BURST):
        answers = await asyncio.gather(
            *(
                client.ask(AskRequest(question=q, collection=COLLECTION, platform="cli"))
                for q in questions[start : start + BURST]
            )
        )
        assert all(a.text for a in answers)


def _enqueues(words: list[str], workers_key: str) -> bool:
    """The client's enqueue script call: EVALSHA sha 3 <workers> arq:job:<id> <queue> ..."""
    return len(words) > 4 and words[3] == workers_key and words[4].startswith("arq:job:")


def round_trips(seen: list[dict], client_addresses: set[str]) -> Counter[str]:
    """The worker's round trips by kind: commands not sent from a script nor by the asking client;
    a MULTI ... EXEC block counts once (as MULTI/EXEC)."""
    trips: Counter[str] = Counter()
    open_multi: set[str] = set()
    for c in seen:
        address = c.get("client_address", "") + ":" + str(c.get("client_port", ""))
        if c.get("client_type") == "lua" or address in client_addresses:
            continue
        name = c["command"].split()[0].upper()
        if name == "MULTI":
            open_multi.add(address)
            trips["MULTI/EXEC"] += 1
        elif name == "EXEC":
            open_multi.discard(address)
        elif address not in open_multi:
            trips[name] += 1
    return trips


async def _trips(kind: type[FastWorker], settings: Settings, client: QueueClient, url: str) -> Counter[str]:
    questions = sample_questions(BURST)
    async with running_worker(settings, kind=kind):
        await _ask_all(client, questions)  # warm: connections, scripts, snapshot
        await asyncio.sleep(0.6)
        seen: list[dict] = []
        watcher = monitored(url, seen)
        await _ask_all(client, questions)
        await asyncio.sleep(0.3)
        end_watch(url, watcher)
    # The client's own connections: those that BLPOP, or send the enqueue script (its first key is
    # the workers set, then the job's key).
    workers_key = Keys(settings.key_prefix).workers
    clients = {
        c.get("client_address", "") + ":" + str(c.get("client_port", ""))
        for c in seen
        if c.get("client_type") != "lua"
        and (c["command"].split()[0].upper() == "BLPOP" or _enqueues(c["command"].split(), workers_key))
    }
    return round_trips(seen, clients)


async def _cpu_ms(
    kind: type[FastWorker], settings: Settings, client: QueueClient, n: int
) -> tuple[float, float]:
    questions = sample_questions(n)
    async with running_worker(settings, kind=kind):
        await _ask_all(client, questions[:BURST])
        cpu, wall = time.process_time(), time.perf_counter()
        await _ask_all(client, questions)
        return (time.process_time() - cpu) * 1000 / n, n / (time.perf_counter() - wall)


async def run(args: argparse.Namespace) -> list[str]:
    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.ops.sample import sample_files

    prefix = f"bench-finish-{uuid.uuid4().hex[:8]}"
    settings = Settings(redis_url=args.redis_url, key_prefix=prefix, answer_cache_ttl_s=0, _env_file=None)  # type: ignore[call-arg]
    started = time.perf_counter()
    try:
        Engine(settings).ingest(COLLECTION, sample_files(), who="bench")
        variants = {"merged (shipped)": FastWorker, "unmerged (before)": UnmergedWorker}
        async with QueueClient(settings) as client:
            trips = {
                name: await _trips(kind, settings, client, args.redis_url) for name, kind in variants.items()
            }
            cpu: dict[str, list[float]] = {name: [] for name in variants}
            qps: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(args.rounds):
                for name, kind in variants.items():
                    ms, rate = await _cpu_ms(kind, settings, client, args.questions)
                    cpu[name].append(ms)
                    qps[name].append(rate)
    finally:
        delete_prefix(args.redis_url, prefix)
    took = time.perf_counter() - started
    kinds = sorted({k for t in trips.values() for k in t})
    rows = []
    for name in variants:
        per_q = {k: trips[name][k] / BURST for k in kinds}
        rows.append(
            [
                name,
                f"{sum(per_q.values()):.2f}",
                ", ".join(f"{k} {v:.2f}" for k, v in per_q.items() if v),
                f"{statistics.median(cpu[name]):.2f}",
                f"{min(cpu[name]):.2f}–{max(cpu[name]):.2f}",
                f"{statistics.median(qps[name]):.0f}",
            ]
        )
    saved = statistics.median(cpu["unmerged (before)"]) - statistics.median(cpu["merged (shipped)"])
    overlap = min(cpu["unmerged (before)"]) <= max(cpu["merged (shipped)"])
    noise = (
        " The two variants' ranges overlap: that saving is within this machine's noise; the round trips are exact."
        if overlap
        else ""
    )
    return [
        "## A job's end in one round trip",
        "",
        f"`python -m bench.job_finish` — {machine_stamp()} Run took {took:.0f} s.",
        "",
        f"The sample corpus, default embedder, extractive answerer, answer cache off; a real `FastWorker` "
        f"and the queue client in one process, bursts of {BURST}. Round trips: what the worker's "
        f"connections sent for {BURST} questions (MONITOR; a MULTI/EXEC or a script call is one). CPU: "
        f"this process (worker and client) per question over {args.questions} questions, median of "
        f"{args.rounds} interleaved rounds. The merge saves **{saved:.2f} ms of CPU per question** "
        f"(median against median).{noise}",
        "",
        markdown_table(
            [
                "worker",
                "worker round trips per question",
                "by kind",
                "CPU ms per question (process), median",
                "range",
                "q/s, median",
            ],
            rows,
        ),
    ]


def worker_bench_args(description: str, rounds: int) -> argparse.ArgumentParser:
    """The options of the benches that run a real worker in this process (this one and
    ``bench.cpu_stages``): Redis, rounds, questions per round, and whether to write the docs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--no-write", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = worker_bench_args(__doc__.splitlines()[0], rounds=5).parse_args(argv)
    lines = asyncio.run(run(args))
    publish(SECTION, lines, not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
