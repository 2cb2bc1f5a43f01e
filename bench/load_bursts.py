"""Bursts: 10/50/100/200 questions sent at once through the real queue to 1 and 2 worker processes.

    python -m bench.load --section bursts            # writes the "load_bursts" section and its plot
    python -m bench.load --section bursts --sizes 100 --workers 1 --no-write   # one quick look

What runs: the shipped sample corpus indexed with the default embedder (MiniLM) on the Redis at
``REDIS_URL`` (default redis://127.0.0.1:6379/0) under a throw-away key prefix, deleted at the end;
worker *processes* (``python -m syllabot.worker.main``, as ``syllabot worker`` runs them) started
by the bench with the product's defaults unless a row says otherwise; the client
(``shared.queue.QueueClient``) in this process, sending each burst with one ``asyncio.gather``.

Setups:

* **default model**: MiniLM and the extractive answerer, query micro-batching on (the default) and
  off (``SYLLABOT_QUERY_BATCHING=false``): every question is CPU work, so this is the worker's
  throughput.
* **1 s LLM**: ``SYLLABOT_ANSWERER=openai`` against a loopback OpenAI-compatible fake that sleeps
  1 s per request (``bench.queue_latency.fake_llm``, in a process of its own so that its CPU is not
  the client's): a question is a little CPU and a long wait.

Each setup starts its workers, warms them (10 sequential questions, then one untimed burst of the
largest size, so connection pools exist), then sends each burst size once. Latency is each
question's round trip as its asker sees it; throughput is burst size / wall time of the burst;
*worker CPU ms/q* is the CPU time the worker processes used during the burst (all their threads,
from ``/proc``) per question, which other jobs on the machine disturb far less than wall times.
The 1-minute load average is printed with each row: the machine is shared, and other jobs' CPU
shows up as slower rows. Takes about 4 minutes on two cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import (
    PLOTS,
    RAW,
    machine_stamp,
    mark,
    markdown_table,
    percentiles,
    pyplot,
    save_figure,
    write_section,
)
from bench.queue_latency import (
    answers_logged,
    delete_prefix,
    fake_llm,
    process,
    sample_questions,
    wait_for_no_workers,
    wait_for_workers,
    worker_env,
    worker_processes,
)
from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import AskRequest

SECTION = "load_bursts"
COLLECTION = "bench-load"
#: The same corpus indexed with the earlier default embedder (MiniLM computing in fp32).
COLLECTION_FP32 = "bench-load-fp32"
PLOT = PLOTS / "load_bursts.png"
#: The issue's targets (one run on this machine).
TARGET_SPEEDUP = 2.0  # 100 default-model questions, one worker: batching on vs off, throughput
TARGET_P95_S = 1.0  # ... and their p95 round trip with batching on
TARGET_LLM_WALL_S = 1.5  # 200 questions with a 1 s LLM, one worker, default settings
TARGET_INT8_SPEEDUP = 1.3  # 100 default-model questions, one worker: int8 vs the fp32 model, throughput
TARGET_CPU_MS = 3.0  # worker CPU per default-model question (5 ms before the int8 model, less 2)


@dataclass
class Setup:
    """One way of running the workers: a label, how many processes, the environment they get."""

    key: str
    label: str
    workers: int
    env: dict[str, str] = field(default_factory=dict)
    llm: bool = False
    collection: str = COLLECTION


@dataclass
class Burst:
    """What one burst measured."""

    setup: str
    label: str
    workers: int
    size: int
    wall_s: float
    round_trips_s: list[float]
    embed_ms: list[float]
    from_llm: int
    per_worker: list[int]
    load: float
    worker_cpu_s: float

    @property
    def throughput(self) -> float:
        return self.size / self.wall_s

    @property
    def p50_p95(self) -> tuple[float, float]:
        return percentiles(self.round_trips_s)


def setups(worker_counts: list[int], batching_off: bool, llm: bool, earlier: bool = True) -> list[Setup]:
    out: list[Setup] = []
    if earlier:  # the fp32 model the int8 one replaced, same run: the ratio is this run's
        fp32 = {"SYLLABOT_EMBEDDER": "minilm-fp32"}
        out.append(
            Setup("fp32-on-w1", "earlier fp32 model, batching on", 1, fp32, collection=COLLECTION_FP32)
        )
        if llm:
            out.append(
                Setup(
                    "llm-fp32-w1",
                    "1 s LLM, earlier fp32 model",
                    1,
                    fp32,
                    llm=True,
                    collection=COLLECTION_FP32,
                )
            )
    for n in worker_counts:
        out.append(Setup(f"default-on-w{n}", "default model, batching on", n))
        if batching_off:
            out.append(
                Setup(
                    f"default-off-w{n}",
                    "default model, batching off",
                    n,
                    {"SYLLABOT_QUERY_BATCHING": "false"},
                )
            )
    if llm:
        for n in worker_counts:
            out.append(Setup(f"llm-w{n}", "1 s LLM, default settings", n, llm=True))
        if batching_off:
            out.append(
                Setup(
                    "llm-off-w1", "1 s LLM, batching off", 1, {"SYLLABOT_QUERY_BATCHING": "false"}, llm=True
                )
            )
    return out


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by these processes, all threads (Linux ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def serve_fake_llm(delay_s: float, port: int) -> None:
    """The fake LLM on ``port`` until killed (``--serve-fake-llm``, run by :func:`fake_llm_process`)."""

    async def serve() -> None:
        async with fake_llm(delay_s, port) as url:
            print(url, flush=True)
            await asyncio.Event().wait()

    asyncio.run(serve())


@contextlib.contextmanager
def fake_llm_process(delay_s: float, log_dir: Path):
    """The fake LLM in a process of its own; yields its base URL."""
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [sys.executable, "-m", "bench.load_bursts", "--serve-fake-llm", str(delay_s), str(port)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    with process(args, env, log_dir / "fake-llm.log"):
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the fake LLM did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1"


async def burst(
    client: QueueClient, questions: list[str], timeout_s: float, collection: str = COLLECTION
) -> tuple[float, list[tuple]]:
    """Send every question at once; (wall seconds, [(round trip s, answer), ...])."""

    async def one(question: str) -> tuple:
        t0 = time.perf_counter()
        answer = await client.ask(
            AskRequest(question=question, collection=collection, platform="test"), timeout=timeout_s
        )
        return time.perf_counter() - t0, answer

    started = time.perf_counter()
    results = await asyncio.gather(*(one(q) for q in questions))
    return time.perf_counter() - started, list(results)


async def run_setup(
    settings: Settings, setup: Setup, sizes: list[int], llm_url: str | None, log_dir: Path
) -> list[Burst]:
    env = worker_env(settings, **setup.env)
    if setup.llm:
        assert llm_url is not None
        env.update(SYLLABOT_ANSWERER="openai", SYLLABOT_LLM_BASE_URL=llm_url, SYLLABOT_LLM_API_KEY="fake")
    out: list[Burst] = []
    async with QueueClient(settings) as client:
        await wait_for_no_workers(client)
        with worker_processes(setup.workers, env, log_dir / setup.key) as started:
            logs = [log for log, _ in started]
            pids = [proc.pid for _, proc in started]
            await wait_for_workers(client, setup.workers)
            for question in sample_questions(10):
                await client.ask(AskRequest(question=question, collection=setup.collection, platform="test"))
            await burst(client, sample_questions(max(sizes)), 120, setup.collection)  # pools, caches
            for size in sizes:
                await asyncio.sleep(0.5)
                before = [answers_logged(log) for log in logs]
                load = os.getloadavg()[0]
                cpu_before = cpu_seconds(pids)
                wall, results = await burst(client, sample_questions(size), 120, setup.collection)
                worker_cpu = cpu_seconds(pids) - cpu_before
                out.append(
                    Burst(
                        setup=setup.key,
                        label=setup.label,
                        workers=setup.workers,
                        size=size,
                        wall_s=wall,
                        round_trips_s=[rt for rt, _ in results],
                        embed_ms=[a.timings.embed for _, a in results],
                        from_llm=sum(a.note is None for _, a in results) if setup.llm else 0,
                        per_worker=[answers_logged(log) - b for log, b in zip(logs, before, strict=True)],
                        load=load,
                        worker_cpu_s=worker_cpu,
                    )
                )
                b = out[-1]
                print(
                    f"{setup.key:16} n={size:4} wall {wall:6.2f} s  {b.throughput:7.1f} q/s  "
                    f"p50 {b.p50_p95[0]:.3f} s  p95 {b.p50_p95[1]:.3f} s  load {load:.2f}",
                    file=sys.stderr,
                )
    return out


def table(bursts: list[Burst]) -> str:
    rows = []
    for b in bursts:
        p50, p95 = b.p50_p95
        rows.append(
            [
                b.label,
                b.workers,
                b.size,
                f"{b.throughput:.1f}",
                f"{p50:.2f}",
                f"{p95:.2f}",
                f"{b.wall_s:.2f}",
                f"{statistics.median(b.embed_ms):.1f}",
                f"{b.worker_cpu_s * 1000 / b.size:.1f}",
                " / ".join(map(str, b.per_worker)),
                f"{b.from_llm}/{b.size}" if "LLM" in b.label else "—",
                f"{b.load:.1f}",
            ]
        )
    return markdown_table(
        [
            "setup",
            "workers",
            "burst",
            "q/s",
            "p50 s",
            "p95 s",
            "wall s",
            "embed p50 ms",
            "worker CPU ms/q",
            "jobs per worker",
            "LLM answered",
            "load (1 min)",
        ],
        rows,
    )


def find(bursts: list[Burst], setup: str, size: int) -> Burst | None:
    return next((b for b in bursts if b.setup == setup and b.size == size), None)


def targets(bursts: list[Burst]) -> list[str]:
    lines = []
    on, off = find(bursts, "default-on-w1", 100), find(bursts, "default-off-w1", 100)
    if on is not None and off is not None:
        speedup = on.throughput / off.throughput
        lines.append(
            f"- 100 default-model questions at once, one worker: batching on {on.throughput:.1f} q/s "
            f"against {off.throughput:.1f} q/s off, **{speedup:.2f}×** (target ≥ {TARGET_SPEEDUP:g}×) "
            f"{mark(speedup, TARGET_SPEEDUP)}; p95 **{on.p50_p95[1]:.2f} s** (target ≤ {TARGET_P95_S:g} s) "
            f"{mark(on.p50_p95[1], TARGET_P95_S, higher_is_better=False)}."
        )
    fp32 = find(bursts, "fp32-on-w1", 100)
    if on is not None and fp32 is not None:
        gain = on.throughput / fp32.throughput
        cpu = {b.setup: 1000 * b.worker_cpu_s / b.size for b in (on, fp32)}
        lines.append(
            f"- 100 default-model questions at once, one worker: the int8 model {on.throughput:.1f} q/s against "
            f"{fp32.throughput:.1f} q/s with the earlier fp32 one, **{gain:.2f}×** (target ≥ "
            f"{TARGET_INT8_SPEEDUP:g}×) {mark(gain, TARGET_INT8_SPEEDUP)}; worker CPU per question "
            f"**{cpu[on.setup]:.1f} ms** against {cpu[fp32.setup]:.1f} ms (target ≤ {TARGET_CPU_MS:g} ms) "
            f"{mark(cpu[on.setup], TARGET_CPU_MS, higher_is_better=False)}."
        )
    llm = find(bursts, "llm-w1", 200)
    if llm is not None:
        lines.append(
            f"- 200 questions at once with a 1 s LLM, one worker, default settings: **{llm.wall_s:.2f} s** "
            f"wall (target ≤ {TARGET_LLM_WALL_S:g} s) {mark(llm.wall_s, TARGET_LLM_WALL_S, higher_is_better=False)}; "
            f"{llm.from_llm}/200 answered by the LLM."
        )
    return lines


def plot(bursts: list[Burst], path: Path = PLOT) -> bool:
    """Throughput and p95 against burst size, one line per setup; False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key in dict.fromkeys(b.setup for b in bursts):
        rows = sorted((b for b in bursts if b.setup == key), key=lambda b: b.size)
        name = f"{rows[0].label}, {rows[0].workers} worker{'s' if rows[0].workers > 1 else ''}"
        style = "--" if "off" in key else "-"
        sizes = [b.size for b in rows]
        left.plot(sizes, [b.throughput for b in rows], style, marker="o", label=name)
        right.plot(sizes, [b.p50_p95[1] for b in rows], style, marker="o", label=name)
    left.set(xlabel="questions sent at once", ylabel="questions / s", title="Throughput")
    right.set(xlabel="questions sent at once", ylabel="p95 round trip (s)", title="p95 latency")
    for axis in (left, right):
        axis.grid(alpha=0.3)
    right.legend(fontsize=7)
    save_figure(fig, path)
    return True


READING = (
    "Reading the figures: with the default model every question is CPU work (embedding ~2.5 ms of "
    "MiniLM compute in calls of four, ~3.6 ms alone; the search, the extractive answer, and the "
    "queue's own bookkeeping in Python), so a burst's wall time is one worker's throughput. With "
    "batching on, the questions that arrive while the embedder is busy (or within "
    "`SYLLABOT_QUERY_BATCH_WAIT_MS`) share onnxruntime calls, cut into length-sorted runs of four "
    "(`bench.embed_speed --batches`), two calls at a time on a pool of as many threads as there are "
    "cores (`SYLLABOT_WORKER_CPU_THREADS`); off, each question is its own call. Batching can save "
    "only embedding CPU (~1.1 ms of a question's ~6.5), so its ratio is bounded near 1.3x here. "
    "With the 1 s LLM a question is mostly a wait: the LLM calls (up to "
    "`SYLLABOT_LLM_MAX_CONCURRENCY`) hold no CPU thread and `SYLLABOT_WORKER_MAX_JOBS` (256) lets a "
    "worker hold that many waiting questions, so a 200-question burst takes one LLM round plus the "
    "CPU work of 200 questions before their calls (~1.2 core-seconds for worker, client, Redis and "
    "fake LLM together: ~0.6 s on two cores). A second worker process on the same two cores adds "
    "CPU only when one process's Python (the event loop and arq's bookkeeping) is the limit; "
    "client, fake LLM and workers share the machine."
)


async def run(args: argparse.Namespace) -> tuple[str, list[Burst]]:
    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.ops.sample import sample_files

    prefix = f"bench-load:{uuid.uuid4().hex[:8]}:"
    settings = Settings(
        redis_url=args.redis_url,
        key_prefix=prefix,
        data_dir=Path(args.work) / "data",
        embedder="minilm",
        answerer="extractive",
        _env_file=None,
    )
    log_dir = Path(args.work) / prefix.replace(":", "-")
    bursts: list[Burst] = []
    try:
        report = await asyncio.to_thread(Engine(settings).ingest, COLLECTION, sample_files(), "bench")
        print(f"index ({settings.embedder}): {report.total_chunks} chunks", file=sys.stderr)
        if not args.no_earlier:
            fp32 = Engine(settings.model_copy(update={"embedder": "minilm-fp32"}))
            await asyncio.to_thread(fp32.ingest, COLLECTION_FP32, sample_files(), "bench")
        with fake_llm_process(args.llm_delay, log_dir) as llm_url:
            for setup in setups(args.workers, not args.no_off, not args.no_llm, not args.no_earlier):
                bursts += await run_setup(settings, setup, args.sizes, llm_url, log_dir)
    finally:
        delete_prefix(args.redis_url, prefix)

    plotted = plot(bursts) if not args.no_write else False
    body = [
        "## Load: bursts of questions",
        "",
        "Command: `python -m bench.load --section bursts` (see `bench/load_bursts.py`: real Redis, "
        "worker processes started as `syllabot worker` runs them, the client in the bench process; "
        "index: the shipped sample corpus with MiniLM; questions: `tests/data/sample_questions.jsonl` "
        "in turn). *q/s* = burst size / wall time; p50/p95: each question's round trip as its asker "
        "sees it; *embed p50 ms*: the worker's embedding stage per question (with batching: the wait "
        "for its batch included); *load*: the machine's 1-minute load average when the burst started.",
        "",
        machine_stamp(),
        "",
        table(bursts),
        "",
        *targets(bursts),
        "",
    ]
    if plotted:
        body += [f"![throughput and p95 against burst size](plots/{PLOT.name})", ""]
    body.append(READING)
    return "\n".join(body), bursts


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--serve-fake-llm"]:
        serve_fake_llm(float(argv[1]), int(argv[2]))
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m bench.load --section bursts", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 200])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker processes")
    parser.add_argument("--llm-delay", type=float, default=1.0, help="seconds the fake LLM takes")
    parser.add_argument("--no-off", action="store_true", help="skip the batching-off rows")
    parser.add_argument("--no-llm", action="store_true", help="skip the fake-LLM rows")
    parser.add_argument("--no-earlier", action="store_true", help="skip the rows of the earlier fp32 model")
    parser.add_argument("--work", default="/tmp/syllabot-bench-load")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/ alone")
    args = parser.parse_args(argv)
    body, bursts = asyncio.run(run(args))
    print(body)
    RAW.mkdir(parents=True, exist_ok=True)
    (RAW / f"{SECTION}.json").write_text(json.dumps([b.__dict__ for b in bursts], indent=1), encoding="utf-8")
    if not args.no_write:
        write_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
