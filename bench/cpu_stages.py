"""Where a question's CPU goes, stage by stage, before and after the int8 embedder and the one-call
job end: a table and a stacked bar plot.

    python -m bench.cpu_stages [--rounds 3] [--questions 200] [--no-write]

Why: "5 ms of worker CPU per question" says nothing about what to make faster. This splits it into
the stages a question passes through, measured in one run for both set-ups:

* *before*: the fp32-arithmetic MiniLM (``SYLLABOT_EMBEDDER=minilm-fp32``) and a worker whose jobs
  push their results and end in separate calls (``bench.job_finish.UnmergedWorker``);
* *after* (shipped): the int8 MiniLM and ``FastWorker``'s one-call end (``FINISH_AND_PUSH``).

Stages measured directly in this process (``time.process_time``: every thread's CPU, so ONNX's own
threads count), over the sample corpus's questions in bursts of 20 as the worker gets them:
**embedding** the burst's queries in one call, as the worker's query batching does, per question;
then one question at a time, **search** (the query cleaned, the hybrid search of the snapshot); **answer** (the extractive
answerer); **conflict check** (``conflict_of``, which the answer stage also runs: the verdict weighs it); **log line** (``log_answer``, to a
discarded stream through the worker's log format). **Reader**: none ships, so it costs nothing.
**Queue and the rest** is what is left of the whole process's CPU per question when a real worker
and the asking client share this process and answer the same questions in bursts of 20
(``bench.job_finish``'s measure): arq's job start and end, the result push, Redis I/O on both
sides, the event loop and (de)serialising. The asking client's share is in that remainder for both
set-ups alike. Medians over ``--rounds`` rounds, the set-ups interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench.common import PLOTS, machine_stamp, markdown_table, publish, pyplot, result_for, save_figure
from bench.job_finish import BURST, COLLECTION, UnmergedWorker, _cpu_ms, worker_bench_args
from bench.queue_latency import delete_prefix, sample_questions
from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.main import FastWorker

SECTION = "cpu_stages"
PLOT = PLOTS / "cpu_stages.png"
STAGES = ("embedding", "reader", "search", "answer", "conflict check", "log line", "queue and the rest")
SETUPS: dict[str, tuple[str, type[FastWorker]]] = {
    "before (fp32 MiniLM, two-call job end)": ("minilm-fp32", UnmergedWorker),
    "after (int8 MiniLM, one-call job end; shipped)": ("minilm", FastWorker),
}


def _cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    out = fn()
    return (time.process_time() - started) * 1000, out


def stage_ms(engine: Engine, questions: list[str]) -> dict[str, float]:
    """Mean CPU ms per question of each in-process stage, with ``engine``'s embedder and settings
    (its model loaded once for every round)."""
    from syllabot.shared.schema import AskRequest
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.answerers.pipeline import log_answer
    from syllabot.worker.indexes.conflicts import conflict_of
    from syllabot.worker.query.reading import read_question

    settings = engine.settings
    snapshot = engine.snapshot(COLLECTION)
    assert snapshot is not None, "the bench collection is not indexed"
    embedder = engine.embedder
    answerer = ExtractiveAnswerer(settings)
    sink = logging.StreamHandler(io.StringIO())
    sink.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    answers_log = logging.getLogger("syllabot.answers")
    answers_log.addHandler(sink)
    old_level, old_propagate = answers_log.level, answers_log.propagate
    answers_log.setLevel(logging.INFO)
    answers_log.propagate = False
    samples: dict[str, list[float]] = {s: [] for s in STAGES[:-1]}
    try:
        embedder.embed_query("warm up")
        for first in range(0, len(questions), BURST):
            burst = questions[first : first + BURST]
            prepare_ms, prepared = _cpu(lambda b=burst: [read_question(q, snapshot) for q in b])
            # As the worker embeds questions that arrive together: one call for the burst.
            embed_ms, vectors = _cpu(lambda p=prepared: embedder.embed_queries([x.text for x in p]))
            for question, query, vector in zip(burst, prepared, vectors, strict=True):
                search_ms, result = _cpu(
                    lambda q=question, p=query, v=vector: result_for(
                        snapshot, q, p, v, settings, settings.top_k
                    )
                )
                answer_ms, answer = _cpu(lambda q=question, r=result: answerer.answer_sync(q, r, COLLECTION))
                # the verdict weighs the conflict inside answer_sync; timed apart here as well
                note_ms, _ = _cpu(lambda r=result: conflict_of(r))
                request = AskRequest(question=question, collection=COLLECTION, platform="cli")
                log_ms, _ = _cpu(lambda r=request, a=answer: log_answer(r, a))
                measured = (
                    embed_ms / len(burst),
                    0.0,
                    prepare_ms / len(burst) + search_ms,
                    answer_ms,
                    note_ms,
                    log_ms,
                )
                for stage, ms in zip(STAGES[:-1], measured, strict=True):
                    samples[stage].append(ms)
    finally:
        answers_log.removeHandler(sink)
        answers_log.setLevel(old_level)
        answers_log.propagate = old_propagate
    return {stage: statistics.mean(values) for stage, values in samples.items()}


async def run(args: argparse.Namespace) -> list[str]:
    from syllabot.worker.ops.sample import sample_files

    started = time.perf_counter()
    prefix = f"bench-stages-{uuid.uuid4().hex[:8]}"
    settings_of = {
        name: Settings(  # type: ignore[call-arg]
            redis_url=args.redis_url,
            key_prefix=f"{prefix}-{i}",
            answer_cache_ttl_s=0,
            embedder=embedder,
            _env_file=None,
        )
        for i, (name, (embedder, _kind)) in enumerate(SETUPS.items())
    }
    questions = sample_questions(args.questions)
    stages: dict[str, list[dict[str, float]]] = {name: [] for name in SETUPS}
    whole: dict[str, list[float]] = {name: [] for name in SETUPS}
    engines = {name: Engine(settings) for name, settings in settings_of.items()}
    try:
        for engine in engines.values():
            engine.ingest(COLLECTION, sample_files(), who="bench")
        for _ in range(args.rounds):
            for name, (_embedder, kind) in SETUPS.items():
                settings = settings_of[name]
                stages[name].append(await asyncio.to_thread(stage_ms, engines[name], questions))
                async with QueueClient(settings) as client:
                    ms, _rate = await _cpu_ms(kind, settings, client, args.questions)
                whole[name].append(ms)
    finally:
        for settings in settings_of.values():
            delete_prefix(args.redis_url, settings.key_prefix)
    took = time.perf_counter() - started
    per_setup: dict[str, dict[str, float]] = {}
    for name in SETUPS:
        medians = {s: statistics.median(r[s] for r in stages[name]) for s in STAGES[:-1]}
        total = statistics.median(whole[name])
        medians["queue and the rest"] = max(0.0, total - sum(medians.values()))
        per_setup[name] = {**medians, "total": total}
    rows = [[name, *(f"{v[s]:.2f}" for s in STAGES), f"{v['total']:.2f}"] for name, v in per_setup.items()]
    before, after = (per_setup[name] for name in SETUPS)
    plotted = plot(per_setup) if not args.no_write else False
    lines = [
        "## Where a question's CPU goes",
        "",
        f"`python -m bench.cpu_stages` — {machine_stamp()} Run took {took:.0f} s.",
        "",
        f"CPU ms per question, {args.questions} sample-corpus questions, median of {args.rounds} rounds "
        f"(stages: each measured alone, the embedding in one call per burst of {BURST}, the rest one question at a time; *queue and the rest*: the process's CPU "
        "per question with a real worker and the asking client answering the same questions in bursts "
        "of 20, less the stages; the *total* is that whole). No reader ships, so it costs nothing. "
        f"Per question, after against before: **{after['total']:.2f} against {before['total']:.2f} ms** "
        f"in all; embedding {after['embedding']:.2f} against {before['embedding']:.2f} ms; queue and the "
        f"rest {after['queue and the rest']:.2f} against {before['queue and the rest']:.2f} ms.",
        "",
        markdown_table(["set-up", *STAGES, "total"], rows),
    ]
    if plotted:
        lines += ["", f"![CPU per question by stage, before and after](plots/{PLOT.name})"]
    return lines


def plot(per_setup: dict[str, dict[str, float]], path=PLOT) -> bool:
    """One stacked horizontal bar per set-up, a segment per stage; False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(10, 3.6))
    names = list(per_setup)
    left = [0.0] * len(names)
    for stage in STAGES:
        widths = [per_setup[n][stage] for n in names]
        if not any(widths):
            continue
        ax.barh(names, widths, left=left, label=stage)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlabel("CPU ms per question")
    ax.invert_yaxis()
    ax.legend(ncol=6, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    ax.set_title("Where a question's CPU goes (sample corpus, one worker)")
    fig.tight_layout()
    save_figure(fig, path)
    return True


def main(argv: list[str] | None = None) -> int:
    args = worker_bench_args(__doc__.splitlines()[0], rounds=3).parse_args(argv)
    publish(SECTION, asyncio.run(run(args)), not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
