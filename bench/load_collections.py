"""A term's load on one worker: 1,000 collections of ~100 chunks each, memory and first questions.

Why: a department runs one deployment for every class, so one worker meets hundreds of collections;
its snapshot cache is bounded by ``SYLLABOT_SNAPSHOT_CACHE_MB`` (``worker/indexes/snapshot_cache.py``). This
measures what that costs and holds:

* **RSS** of a process holding the worker's engine (MiniLM loaded) after a question to every
  collection, against the budget (target: budget + 150 MB);
* **first question** to a collection (the worker has just started: nothing cached, the snapshot is
  loaded from Redis), as wall time minus the question's embedding (target: 50 ms);
* **warm question p50** with one collection loaded versus after all 1,000 passed through the cache
  (target: unchanged within noise).

The collections are synthetic, made fast: the sample corpus's chunks (``corpus/``) are embedded
once (cached), then each collection takes 100 of them in a rotated order, its own class tag in
every passage (so its keyword index differs) and its vectors jittered (seeded) and re-normalised,
and is published straight through ``CollectionStore.publish`` — no embedding per collection.
Each question is searched (``Engine.search``) and answered (the extractive answerer, as a worker
without an LLM answers, its conflict check included), as a worker's ask job does, in a fresh child
process, so its RSS is a worker's, not the generator's: the answerer's per-text caches weigh too. Redis is ``SYLLABOT_BENCH_REDIS``
(default ``redis://127.0.0.1:6379/0``) under a throw-away prefix, deleted afterwards.

    python -m bench.load_collections [--collections 1000] [--budgets 512,128] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import (
    PLOTS,
    ROOT,
    bench_settings,
    default_embedder,
    embed_cached,
    machine_stamp,
    markdown_table,
    pyplot,
    save_figure,
)
from bench.common import publish as _publish
from bench.indexing import REDIS_URL
from bench.indexing import cleanup as _cleanup

CHUNKS_PER_COLLECTION = 100
JITTER = 0.05
QUESTIONS = (
    "How many days do I have to return a new bike?",
    "What are the course outcomes of cloud computing?",
    "How do I book a service for my bike?",
    "How long is the battery warranty?",
    "Which textbooks does the machine learning course use?",
    "What does module 3 of cloud computing cover?",
)
WARM_REPEATS = 120
RSS_MARGIN_MB = 150
COLD_TARGET_MS = 50.0


# --- the collections ---------------------------------------------------------------------------------
def base_chunks() -> tuple[list, np.ndarray]:
    """The sample corpus's chunks and their MiniLM vectors (embedded once, then cached)."""
    from bench.common import parse_files

    paths = sorted(p for p in (ROOT / "corpus").iterdir() if p.suffix in (".md", ".pdf"))
    paths = [p for p in paths if p.name != "README.md"]
    chunks, _ = parse_files(paths)
    matrix = embed_cached(default_embedder(), [c.text for c in chunks], "load-collections", progress=False)
    return chunks, matrix


def collection_name(i: int) -> str:
    return f"class-{i:04d}"


def make_snapshot(i: int, chunks: list, matrix: np.ndarray, embedder_id: str, dim: int) -> Any:
    """Collection ``i``: 100 base chunks rotated by ``i``, tagged with the class, vectors jittered."""
    from syllabot.worker.indexes.index import build_snapshot
    from syllabot.worker.ingest.chunking import chunk_body

    rng = np.random.default_rng(i)
    n = len(chunks)
    rows = [(i + k) % n for k in range(min(CHUNKS_PER_COLLECTION, n))]
    tag = f"Class {i:04d}"
    picked = []
    for k, row in enumerate(rows):
        chunk = chunks[row]
        head = chunk.text.split("\n", 1)[0]
        text = f"{head} ({tag})\n{chunk_body(chunk.text)}\nTaught to {tag}, group {k % 7}, room R{i % 53}."
        picked.append(
            replace(chunk, text=text, doc_id=f"{chunk.doc_id}-{i}", chunk_id=f"{chunk.chunk_id}-{i}")
        )
    vectors = matrix[rows] + JITTER * rng.standard_normal((len(rows), dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return build_snapshot(f"v{i}", collection_name(i), embedder_id, dim, picked, vectors, "bench")


def generate(prefix: str, count: int) -> tuple[float, int]:
    """Publish ``count`` collections under ``prefix``; returns (seconds, bytes Redis holds for them)."""
    import redis

    from syllabot.shared.keys import Keys
    from syllabot.worker.indexes.store import CollectionStore

    started = time.perf_counter()
    chunks, matrix = base_chunks()
    embedder = default_embedder()
    client = redis.Redis.from_url(REDIS_URL)
    store = CollectionStore(client, Keys(prefix))
    stored = 0
    for i in range(count):
        snapshot = make_snapshot(i, chunks, matrix, embedder.id, embedder.dim)
        stored += sum(len(v) for v in snapshot.to_fields().values())
        store.publish(snapshot, None)
        if (i + 1) % 200 == 0:
            print(f"  generated {i + 1}/{count} collections", flush=True)
    client.close()
    return time.perf_counter() - started, stored


def scratch_redis(what: str) -> Any:
    """A client of the benchmark Redis, or None (and a line saying ``what`` is skipped)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        print(f"no Redis at {REDIS_URL} ({exc}); skipping {what}")
        return None
    return client


# --- the worker's side (child process) ---------------------------------------------------------------
def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _ask(engine: Any, answerer: Any, collection: str, question: str) -> Any:
    """What a worker's ask job does with one question: search, then answer (``answerer``, the
    extractive one a worker without an LLM holds, with the conflict check); returns the search
    result (its ``embed_ms`` and hits)."""

    result = engine.search(collection, question)
    answerer.answer_sync(question, result, collection)
    return result


def _warm_p50(engine: Any, answerer: Any, collections: Sequence[str], repeats: int) -> tuple[float, float]:
    """(p50 wall ms of a question, p50 of it less its embedding) over collections already in memory."""
    walls, searches = [], []
    for k in range(repeats):
        collection = collections[k % len(collections)]
        t0 = time.perf_counter()
        result = _ask(engine, answerer, collection, QUESTIONS[k % len(QUESTIONS)])
        walls.append((time.perf_counter() - t0) * 1000)
        searches.append(walls[-1] - result.embed_ms)
    return statistics.median(walls), statistics.median(searches)


def measure(prefix: str, count: int, budget_mb: float) -> dict[str, Any]:
    """What one freshly started worker process sees: RSS, cold first questions, warm questions."""
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.indexes import heap
    from syllabot.worker.indexes.engine import Engine

    settings = bench_settings(redis_url=REDIS_URL, key_prefix=prefix, snapshot_cache_mb=budget_mb)
    heap.enable()  # as `syllabot worker` does at its start (worker/main.py)
    engine = Engine(settings)
    answerer = ExtractiveAnswerer(settings)
    engine.embedder.embed_query("warm-up")
    rss_start = _status_mb("VmRSS")

    first = collection_name(0)
    _ask(engine, answerer, first, QUESTIONS[0])
    warm_before, warm_search_before = _warm_p50(engine, answerer, [first], WARM_REPEATS)

    order = list(range(count))
    random.Random(7).shuffle(order)
    cold_wall, cold_over, cold_load = [], [], []
    rss_trace = [(0, rss_start)]
    for n, i in enumerate(order):
        before = engine.cache.stats()
        t0 = time.perf_counter()
        result = _ask(engine, answerer, collection_name(i), QUESTIONS[n % len(QUESTIONS)])
        wall = (time.perf_counter() - t0) * 1000
        after = engine.cache.stats()
        assert result.hits, f"no hits in {collection_name(i)}"
        cold_wall.append(wall)
        cold_over.append(wall - result.embed_ms)
        cold_load.append((after.load_seconds - before.load_seconds) * 1000)
        if (n + 1) % RSS_EVERY == 0:
            rss_trace.append((n + 1, _status_mb("VmRSS")))
    recent = engine.cache.collections()[-20:]
    warm_after, warm_search_after = _warm_p50(engine, answerer, recent, WARM_REPEATS)
    stats = engine.cache.stats()
    return {
        "budget_mb": budget_mb,
        "rss_start_mb": rss_start,
        "rss_end_mb": _status_mb("VmRSS"),
        "rss_peak_mb": _status_mb("VmHWM"),
        "cache_mb": stats.bytes / 2**20,
        "entries": stats.entries,
        "misses": stats.misses,
        "evictions": stats.evictions,
        "snapshot_kb_mean": stats.bytes / max(1, stats.entries) / 1024,
        "cold_wall_p50": statistics.median(cold_wall),
        "cold_over_p50": statistics.median(cold_over),
        "cold_over_p95": float(np.percentile(cold_over, 95)),
        "cold_load_p50": statistics.median(cold_load),
        "cold_load_p95": float(np.percentile(cold_load, 95)),
        "warm_before": warm_before,
        "warm_after": warm_after,
        "warm_search_before": warm_search_before,
        "warm_search_after": warm_search_after,
        "rss_trace": rss_trace,
        "cold_over": cold_over,
    }


def run_child(prefix: str, count: int, budget_mb: float) -> dict[str, Any]:
    """``measure`` in a fresh interpreter: a worker just (re)started, its RSS not the generator's."""
    command = [sys.executable, "-m", "bench.load_collections", "--child", prefix, str(count), str(budget_mb)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"measuring child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- report --------------------------------------------------------------------------------------------
def section(results: list[dict[str, Any]], count: int, gen_s: float, stored: int, took: float) -> list[str]:
    rows = []
    for r in results:
        rss_ok = r["rss_peak_mb"] <= r["budget_mb"] + RSS_MARGIN_MB
        growth_ok = r["rss_peak_mb"] - r["rss_start_mb"] <= r["budget_mb"] + RSS_MARGIN_MB
        cold_ok = r["cold_over_p95"] <= COLD_TARGET_MS
        rows.append(
            [
                f"{r['budget_mb']:.0f} MB",
                f"{r['rss_start_mb']:.0f} → {r['rss_end_mb']:.0f} (peak {r['rss_peak_mb']:.0f}) "
                f"{'✓' if rss_ok else '✗'}",
                f"{r['rss_peak_mb'] - r['rss_start_mb']:.0f} {'✓' if growth_ok else '✗'}",
                f"{r['cache_mb']:.0f} MB, {r['entries']} ({r['snapshot_kb_mean']:.0f} KB each)",
                f"{r['misses']} / {r['evictions']}",
                f"{r['cold_load_p50']:.1f} / {r['cold_load_p95']:.1f}",
                f"{r['cold_over_p50']:.1f} / {r['cold_over_p95']:.1f} {'✓' if cold_ok else '✗'} / "
                f"{float(np.percentile(r['cold_over'], 99)):.1f} / {max(r['cold_over']):.1f}",
                f"{r['cold_wall_p50']:.1f}",
                f"{r['warm_before']:.1f} → {r['warm_after']:.1f}",
                f"{r['warm_search_before']:.1f} → {r['warm_search_after']:.1f}",
            ]
        )
    header = [
        "cache budget",
        "worker RSS, MB: started → after all (peak)",
        "peak − started, MB",
        "cache after all",
        "misses / evictions",
        "snapshot load ms p50 / p95",
        "first question minus embedding, ms p50 / p95 / p99 / max",
        "first question ms p50",
        "warm question p50 ms: 1 collection → after all",
        "of which search and answer (no embedding)",
    ]
    return [
        "## A term on one worker: 1,000 collections",
        "",
        f"`python -m bench.load_collections` — {machine_stamp()} Run took {took:.0f} s.",
        "",
        f"{count} synthetic collections of {CHUNKS_PER_COLLECTION} chunks (the sample corpus's chunks, "
        f"rotated, tagged per class, MiniLM vectors jittered by {JITTER} and re-normalised), published "
        f"in {gen_s:.0f} s; Redis holds {stored / 2**20:.0f} MB of snapshots for them. Each row is a "
        "fresh process holding the worker's `Engine` (MiniLM loaded) with that "
        "`SYLLABOT_SNAPSHOT_CACHE_MB`, each question searched and answered (extractive) as a worker does: one question to collection 0 and "
        f"{WARM_REPEATS} warm ones, then one question to every collection in a shuffled order (each a "
        "first question: the snapshot is loaded from Redis, as after a worker restart), then "
        f"{WARM_REPEATS} warm questions over the 20 most recent. *Started*: the process with MiniLM "
        "loaded and one query embedded, before any collection is read. Targets: RSS ≤ budget + "
        f"{RSS_MARGIN_MB} MB (marked on the peak, and on the peak's growth over *started*); first question ≤ {COLD_TARGET_MS:.0f} ms plus its embedding (judged on p95); "
        "warm p50 unchanged within noise. The process freezes its heap after each snapshot load as "
        "`syllabot worker` does (`worker/indexes/heap.py`): without it, full garbage collections over the "
        "cached snapshots put ~4% of first questions at 20–60 ms.",
        "",
        markdown_table(header, rows),
    ]


PLOT = PLOTS / "load_collections.png"
#: The worker's RSS is read after every this many first questions (the plot's left panel).
RSS_EVERY = 25


def plot(results: list[dict[str, Any]], path: Path = PLOT) -> bool:
    """RSS as collections are first asked, and the first questions' cost; False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for r in results:
        asked, rss = zip(*r["rss_trace"], strict=True)
        line = left.plot(asked, rss, label=f"budget {r['budget_mb']:.0f} MB")[0]
        left.axhline(r["budget_mb"] + RSS_MARGIN_MB, color=line.get_color(), linestyle=":", linewidth=1)
        over = np.sort(np.asarray(r["cold_over"]))
        right.plot(over, np.arange(1, len(over) + 1) / len(over), label=f"budget {r['budget_mb']:.0f} MB")
    right.axvline(COLD_TARGET_MS, color="grey", linestyle=":", linewidth=1)
    left.set(
        xlabel="collections asked (each a first question)",
        ylabel="worker RSS (MB)",
        title=f"RSS (dotted: budget + {RSS_MARGIN_MB} MB)",
    )
    right.set(
        xlabel="first question minus its embedding (ms)",
        ylabel="share of first questions",
        title=f"First questions (dotted: {COLD_TARGET_MS:.0f} ms)",
    )
    for axis in (left, right):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    save_figure(fig, path)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=1000)
    parser.add_argument("--budgets", default="512,128", help="cache budgets in MB, one child process each")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("PREFIX", "COUNT", "BUDGET_MB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        prefix, count, budget = args.child
        print(json.dumps(measure(prefix, int(count), float(budget))))
        return 0
    client = scratch_redis("the collections benchmark")
    if client is None:
        return 0
    started = time.perf_counter()
    prefix = f"syllabot-bench-{uuid.uuid4().hex[:10]}:"
    try:
        gen_s, stored = generate(prefix, args.collections)
        print(f"  {args.collections} collections published in {gen_s:.1f} s", flush=True)
        results = []
        for budget in (float(b) for b in args.budgets.split(",")):
            results.append(run_child(prefix, args.collections, budget))
            print(f"  budget {budget:.0f} MB: {json.dumps(results[-1])}", flush=True)
    finally:
        _cleanup(client, prefix)
        client.close()
    lines = section(results, args.collections, gen_s, stored, time.perf_counter() - started)
    if not args.no_write and plot(results):
        lines += ["", f"![worker RSS and first questions across 1,000 collections](plots/{PLOT.name})"]
    _publish("load_collections", lines, not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
