"""Indexing throughput as a share of the raw embedder's, measured in the same run, by thread count.

Why: indexing is embedding-bound, so the embedder's own speed is the ceiling; what a build adds on
top (extraction, chunking, keyword index, Redis) should hide behind it. ``Engine.ingest`` overlaps
extraction and chunking with embedding (``worker/indexes/pipeline.py``) and groups passages by token length;
this measures how close that comes to the ceiling (target: ≥ 90%), for ``SYLLABOT_EMBED_THREADS``
1 and 2 (onnxruntime intra-op threads).

Per thread count, interleaved ``--repeats`` times (the machine is shared; the best of each is kept):

* **raw embedder**: the build's own final chunk texts (the same loader and chunker) embedded by
  ``embed_documents`` in one call (MiniLM orders the whole list by token length: the least padding);
* **extract + chunk**: ``load_document`` + ``chunk_document`` alone (what a sequential build adds);
* **ingest**: ``Engine.ingest`` of the files into a fresh collection on Redis (reading, embedding,
  snapshot, publish), through the engine a worker runs.

Documents: the sample corpus (``corpus/``) plus the real VTU syllabi when ``../shared/data`` has them.
Redis is ``SYLLABOT_BENCH_REDIS`` (default ``redis://127.0.0.1:6379/0``) under a throw-away prefix.

    python -m bench.load_ingest [--threads 1,2] [--repeats 2] [--no-write]
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import DATA, PLOTS, ROOT, bench_settings, machine_stamp, markdown_table, pyplot, save_figure
from bench.common import publish as _publish
from bench.indexing import REDIS_URL, cleanup
from bench.load_collections import scratch_redis

TARGET = 0.90


def document_files() -> list[tuple[str, bytes]]:
    paths = sorted(
        p for p in (ROOT / "corpus").iterdir() if p.suffix in (".md", ".pdf") and p.name != "README.md"
    )
    syllabi = DATA / "syllabi"
    if syllabi.exists():
        paths += sorted(p for p in syllabi.glob("*.pdf") if "scanned" not in p.name)
    return [(p.name, p.read_bytes()) for p in paths]


def final_texts(files: list[tuple[str, bytes]]) -> tuple[list[str], float]:
    """The texts a build embeds (loader, chunker, course-tail linking) and the seconds it took."""
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.families import relink
    from syllabot.worker.ingest.loaders import load_document

    t0 = time.perf_counter()
    chunks = [c for name, data in files for c in chunk_document(load_document(data, name, 10**9))]
    chunks = relink(chunks)
    return [c.text for c in chunks], time.perf_counter() - t0


def measure(threads: int, files: list[tuple[str, bytes]], repeats: int) -> dict[str, Any]:
    from syllabot.worker.indexes.embedders.minilm import MiniLMEmbedder
    from syllabot.worker.indexes.engine import Engine

    embedder = MiniLMEmbedder(threads=threads)
    texts, _ = final_texts(files)
    # Warm up on the longest batch: onnxruntime's arena grows to its peak once, not inside a timing.
    embedder.embed_documents(sorted(texts, key=len)[-embedder.batch_size :])
    raw, read, ingest = [], [], []
    timelines: list[list[tuple[float, str, int, int]]] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        embedder.embed_documents(texts)
        raw.append(time.perf_counter() - t0)
        read.append(final_texts(files)[1])
        prefix = f"syllabot-bench-{uuid.uuid4().hex[:10]}:"
        settings = bench_settings(redis_url=REDIS_URL, key_prefix=prefix)
        engine = Engine(settings, embedder=embedder)
        timeline: list[tuple[float, str, int, int]] = []
        t0 = time.perf_counter()

        def progress(stage: str, done: int, total: int, timeline: list = timeline, t0: float = t0) -> None:
            timeline.append((time.perf_counter() - t0, stage, done, total))

        try:
            report = engine.ingest("term", files, "bench", progress)
            ingest.append(time.perf_counter() - t0)
            timelines.append(timeline)
            assert report.total_chunks == len(texts), (report.total_chunks, len(texts))
        finally:
            cleanup(engine.client, prefix)
            engine.client.close()
    n = len(texts)
    raw_rate, ingest_rate = n / min(raw), n / min(ingest)
    return {
        "threads": threads,
        "chunks": n,
        "raw_s": min(raw),
        "read_s": min(read),
        "ingest_s": min(ingest),
        "raw_rate": raw_rate,
        "ingest_rate": ingest_rate,
        "share": ingest_rate / raw_rate,
        "sequential_share": min(raw) / (min(raw) + min(read)),
        # The fastest ingest's progress reports, for the plot: (seconds, stage, done, total).
        "timeline": timelines[ingest.index(min(ingest))],
    }


def section(results: list[dict[str, Any]], files: int, repeats: int, took: float) -> list[str]:
    rows = [
        [
            r["threads"],
            f"{r['raw_rate']:.1f} ({r['raw_s']:.1f} s)",
            f"{r['read_s']:.2f} s",
            f"{r['ingest_rate']:.1f} ({r['ingest_s']:.1f} s)",
            f"**{100 * r['share']:.0f}%** {'✓' if r['share'] >= TARGET else '✗'}",
            f"{100 * r['sequential_share']:.0f}%",
        ]
        for r in results
    ]
    first = results[0]
    header = [
        "embedder threads",
        "raw embedder, chunks/s",
        "extract + chunk",
        "`Engine.ingest`, chunks/s",
        "ingest / raw",
        "a sequential build at best (raw ÷ (raw + extract))",
    ]
    lines = [
        "## Ingest pipeline: indexing against the raw embedder",
        "",
        f"`python -m bench.load_ingest` — {machine_stamp()} Run took {took:.0f} s.",
        "",
        f"{files} files ({first['chunks']} chunks: the sample corpus and the real VTU syllabi), MiniLM "
        f"int8, best of {repeats} interleaved runs per figure. *Raw embedder*: the build's own chunk "
        "texts in one `embed_documents` call (ordered by token length: least padding). *Ingest*: "
        "`Engine.ingest` into a fresh collection on Redis, extraction and chunking overlapping the "
        f"embedding. Target: ingest ≥ {100 * TARGET:.0f}% of the raw embedder in the same run.",
        "",
        markdown_table(header, rows),
    ]
    if len(results) > 1:
        one, two = results[0], results[-1]
        lines += [
            "",
            f"- {two['threads']} threads against {one['threads']}: raw embedder "
            f"×{two['raw_rate'] / one['raw_rate']:.2f}, ingest ×{two['ingest_rate'] / one['ingest_rate']:.2f} "
            "(`SYLLABOT_EMBED_THREADS`; unset = the usable cores, at most 4).",
        ]
    return lines


PLOT = PLOTS / "load_ingest.png"


def plot(results: list[dict[str, Any]], path: Path = PLOT) -> bool:
    """Chunks embedded against time in the fastest ingest, beside the raw embedder's pace, per thread
    count; the end of reading marked. False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    fig, axis = plt.subplots(figsize=(8, 4.2))
    for r in results:
        embedded = [(t, done) for t, stage, done, _ in r["timeline"] if stage == "embedding"]
        read_end = max((t for t, stage, _, _ in r["timeline"] if stage == "reading"), default=0.0)
        line = axis.plot(*zip(*embedded, strict=True), marker=".", label=f"ingest, {r['threads']} thread(s)")[
            0
        ]
        color = line.get_color()
        axis.plot(
            [0, r["raw_s"]],
            [0, r["chunks"]],
            linestyle="--",
            color=color,
            label=f"raw embedder, {r['threads']}",
        )
        axis.axvline(read_end, color=color, linestyle=":", linewidth=1)
    axis.set(
        xlabel="seconds since the upload started (dotted: reading done)",
        ylabel="chunks embedded",
        title="Ingest against the raw embedder",
    )
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    save_figure(fig, path)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="onnxruntime intra-op thread counts to compare")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    client = scratch_redis("the ingest benchmark")
    if client is None:
        return 0
    client.close()
    started = time.perf_counter()
    files = document_files()
    results = []
    for threads in (int(t) for t in args.threads.split(",")):
        results.append(measure(threads, files, args.repeats))
        r = results[-1]
        print(
            f"  {threads} threads: raw {r['raw_rate']:.1f}/s, ingest {r['ingest_rate']:.1f}/s "
            f"({100 * r['share']:.0f}%), extract {r['read_s']:.2f} s",
            flush=True,
        )
    lines = section(results, len(files), args.repeats, time.perf_counter() - started)
    if not args.no_write and plot(results):
        lines += ["", f"![chunks embedded against time, ingest and raw embedder](plots/{PLOT.name})"]
    _publish("load_ingest", lines, not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
