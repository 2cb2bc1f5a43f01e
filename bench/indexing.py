"""Indexing throughput (chunks/s) and where the time goes: extraction, chunking, embedding, storing.

Why: an admin who uploads a syllabus in chat waits for this, and knowing which stage dominates says
what is worth optimising. Two measurements per document set, both with the product's own code:

1. **Stages**, timed one by one: ``load_document`` (text extraction), ``chunk_document``, the
   default embedder's ``embed_documents`` on all the chunks, in its own calls (no cache: the real cost),
   ``build_snapshot`` (unit check + keyword index), snapshot serialisation, and
   ``CollectionStore.publish`` into a real Redis.
2. **End to end**: ``Engine.ingest`` on a fresh collection, the path ``syllabot index`` runs.

Redis is the one at ``SYLLABOT_BENCH_REDIS`` (default ``redis://127.0.0.1:6379/0``); every key is
written under a unique ``syllabot-bench-<random>:`` prefix and deleted afterwards (never FLUSHDB).

    python -m bench.indexing [--quick]    # quick: sample corpus + VTU syllabi; full adds SyllabusQA's 13
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import DATA, PLOTS, ROOT, bench_settings, default_embedder, machine_stamp, markdown_table
from bench.common import write_section as _write_section

REDIS_URL = os.environ.get("SYLLABOT_BENCH_REDIS", "redis://127.0.0.1:6379/0")
SUFFIXES = (".pdf", ".md", ".markdown", ".txt", ".docx")


@dataclass
class StageTimes:
    label: str
    files: int = 0
    pages: int = 0
    chunks: int = 0
    failed: list[str] = field(default_factory=list)
    extract: float = 0.0
    chunk: float = 0.0
    embed: float = 0.0
    build: float = 0.0
    serialise: float = 0.0
    store: float = 0.0
    ingest_total: float = 0.0
    ingest_chunks: int = 0

    @property
    def total(self) -> float:
        return self.extract + self.chunk + self.embed + self.build + self.serialise + self.store


def document_sets(quick: bool) -> list[tuple[str, list[Path]]]:
    sets = [
        (
            "sample corpus (`corpus/`)",
            sorted(p for p in (ROOT / "corpus").iterdir() if p.suffix in SUFFIXES and p.name != "README.md"),
        )
    ]
    if (DATA / "syllabi").exists():
        sets.append(("real VTU syllabi (7 PDFs, 1 scanned)", sorted((DATA / "syllabi").glob("*.pdf"))))
    pdfs = DATA / "syllabusqa" / "test_syllabi_pdf"
    if not quick and pdfs.exists():
        sets.append(("SyllabusQA test syllabi (13 PDFs)", sorted(pdfs.glob("*.pdf"))))
    return sets


def measure_stages(label: str, paths: list[Path], embedder, client, prefix: str) -> StageTimes:
    from syllabot.shared.keys import Keys
    from syllabot.worker.indexes.index import build_snapshot
    from syllabot.worker.indexes.store import CollectionStore
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import load_document

    settings = bench_settings()
    out = StageTimes(label)
    documents = []
    for path in paths:
        data = path.read_bytes()
        t0 = time.perf_counter()
        try:
            documents.append(load_document(data, path.name, settings.max_document_bytes))
        except Exception as exc:  # reported per file by the product too
            out.failed.append(f"{path.name}: {type(exc).__name__}")
        out.extract += time.perf_counter() - t0
    out.files = len(paths)
    out.pages = sum(len(d.pages) for d in documents)

    t0 = time.perf_counter()
    chunks = [c for d in documents for c in chunk_document(d)]
    out.chunk = time.perf_counter() - t0
    out.chunks = len(chunks)

    t0 = time.perf_counter()
    texts = [c.text for c in chunks]
    matrix = embedder.embed_documents(texts)
    out.embed = time.perf_counter() - t0

    t0 = time.perf_counter()
    snapshot = build_snapshot("v-bench", "stages", embedder.id, embedder.dim, chunks, matrix, "bench")
    out.build = time.perf_counter() - t0

    t0 = time.perf_counter()
    snapshot.to_fields()
    out.serialise = time.perf_counter() - t0

    store = CollectionStore(client, Keys(prefix))
    t0 = time.perf_counter()
    store.publish(snapshot, None)  # serialises again inside: subtract the serialise figure
    out.store = max(0.0, time.perf_counter() - t0 - out.serialise)
    return out


def measure_ingest(out: StageTimes, paths: list[Path], prefix: str, collection: str) -> None:
    from syllabot.worker.indexes.engine import Engine

    settings = bench_settings(redis_url=REDIS_URL, key_prefix=prefix)
    engine = Engine(settings)
    files = [(p.name, p.read_bytes()) for p in paths]
    t0 = time.perf_counter()
    report = engine.ingest(collection, files, who="bench")  # a fresh collection per set
    out.ingest_total = time.perf_counter() - t0
    out.ingest_chunks = report.total_chunks


def cleanup(client, prefix: str) -> int:
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
    return len(keys)


def plot(results: list[StageTimes], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = ["extract", "chunk", "embed", "build", "serialise", "store"]
    labels = [r.label.split(" (")[0] for r in results]
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.8 * len(results)))
    left = [0.0] * len(results)
    for stage in stages:
        values = [getattr(r, stage) / r.chunks * 1000 if r.chunks else 0 for r in results]
        ax.barh(labels, values, left=left, label=stage)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlabel("ms per chunk")
    ax.set_title("Indexing: where the time goes (per chunk)")
    ax.legend(fontsize=8, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.25 - 0.05 * len(results)))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sample corpus and VTU syllabi only")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    import redis

    started = time.perf_counter()
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        print(f"no Redis at {REDIS_URL} ({exc}); skipping the indexing benchmark")
        return 0
    t0 = time.perf_counter()
    embedder = default_embedder()
    embedder.embed_documents(["warm-up"])
    load_s = time.perf_counter() - t0

    prefix = f"syllabot-bench-{uuid.uuid4().hex[:10]}:"
    results = []
    try:
        for number, (label, paths) in enumerate(document_sets(args.quick)):
            out = measure_stages(label, paths, embedder, client, prefix)
            measure_ingest(out, paths, prefix, f"ingest-{number}")
            results.append(out)
            print(
                f"  {label}: {out.chunks} chunks, stages {out.total:.1f} s ({out.chunks / out.total:.1f} chunks/s), "
                f"ingest {out.ingest_total:.1f} s",
                flush=True,
            )
    finally:
        removed = cleanup(client, prefix)
        print(f"  removed {removed} bench keys under {prefix}")

    def pct(r: StageTimes, value: float) -> str:
        return f"{value:.2f} s ({value / r.total:.0%})"

    rows = [
        (
            r.label,
            f"{r.files} / {r.pages} / {r.chunks}",
            pct(r, r.extract),
            pct(r, r.chunk),
            pct(r, r.embed),
            pct(r, r.build + r.serialise),
            pct(r, r.store),
            f"{r.chunks / r.total:.1f}",
            f"{r.ingest_total:.2f} s",
            f"{r.ingest_chunks / r.ingest_total:.1f}" if r.ingest_total else "—",
        )
        for r in results
    ]
    failed = sorted({f for r in results for f in r.failed})
    elapsed = time.perf_counter() - started
    lines = [
        "## Indexing throughput",
        "",
        f"`python -m bench.indexing{' --quick' if args.quick else ''}` — {machine_stamp()} "
        f"Default embedder `{embedder.id}` (loaded once beforehand in {load_s:.1f} s, not counted), "
        f"{getattr(embedder, 'batch_size', '?')} texts per call, length-sorted; Redis {REDIS_URL.split('@')[-1]} under a throw-away key prefix. "
        f"Run took {elapsed:.0f} s.",
        "",
        markdown_table(
            [
                "documents",
                "files / pages / chunks",
                "extraction",
                "chunking",
                "embedding",
                "snapshot build + serialise",
                "storing (Redis)",
                "chunks/s (stages)",
                "`Engine.ingest` end to end",
                "chunks/s (ingest)",
            ],
            rows,
        ),
        "",
        "![indexing stages](plots/indexing_stages.png)",
    ]
    if failed:
        lines.append(f"\n- Files refused with a typed error (as intended): {', '.join(failed)}.")
    body = "\n".join(lines)
    print()
    print(body)
    if not args.no_write:
        plot(results, PLOTS / "indexing_stages.png")
        _write_section("indexing", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
