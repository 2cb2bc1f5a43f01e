"""MiniLM speed: padding, and texts per call.

* Padding: the shipped tokenizer.json pads every input to 128 tokens, which makes a ~10-token chat
  question cost as much as a full passage. The default mode shows what padding to the longest text
  saves: ``python -m bench.embed_speed [--threads N] [--repeats 3]``.
* Texts per call (``--batches``; writes the "embed_batches" section of docs/benchmarks/results.md):
  CPU and wall milliseconds per text for calls of 1..32 texts, length-sorted as the embedder sorts
  them, on the sample questions and on the shipped sample corpus's passages, with 1 thread and
  with the default threads; questions also two calls at a time, as a worker's two CPU threads run
  them. This is where ``DEFAULT_BATCH_SIZE`` (4) comes from:
  ``python -m bench.embed_speed --batches [--no-write]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from bench.common import machine_stamp, markdown_table, write_section
from syllabot.worker.indexes.embedders.minilm import MiniLMEmbedder

_WORDS = (
    "module unit course outcome syllabus textbook reference chapter lecture hours credits marks "
    "battery charge storage warranty frame size delivery refund returns policy recall derailleur "
    "students should be able to explain analyse design implement evaluate the and of in to with"
).split()

QUERY = "How long do I have to return a bike?"


def passages(count: int = 64, words: int = 80, seed: int = 7) -> list[str]:
    """Deterministic ~80-word passages (about 90-100 tokens each)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(words)) + "." for _ in range(count)]


def measure(embedder: MiniLMEmbedder, texts: list[str], repeats: int) -> tuple[float, float]:
    """(passages per second, best of ``repeats``; median single-query latency in ms over 50 runs)."""
    embedder.embed_documents(texts[:4])  # warm-up: first run allocates onnxruntime buffers
    best = min(_timed(lambda: embedder.embed_documents(texts)) for _ in range(repeats))
    for _ in range(5):
        embedder.embed_query(QUERY)
    latencies = [_timed(lambda: embedder.embed_query(QUERY)) for _ in range(50)]
    return len(texts) / best, statistics.median(latencies) * 1000


def _timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


BATCH_SIZES = (1, 2, 4, 8, 16, 32)


def per_text_ms(
    embedder: MiniLMEmbedder, texts: list[str], calls_at_once: int, repeats: int
) -> tuple[float, float]:
    """(CPU ms, wall ms) per text for embedding ``texts`` in calls of ``embedder.batch_size``,
    ``calls_at_once`` calls running together on threads; the best of ``repeats``."""
    groups = [texts[i : i + 64] for i in range(0, len(texts), 64)]  # as a worker's batches arrive
    best: tuple[float, float] | None = None
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        with ThreadPoolExecutor(calls_at_once) as pool:
            list(pool.map(embedder.embed_documents, groups))
        sample = (
            (time.process_time() - cpu) * 1000 / len(texts),
            (time.perf_counter() - wall) * 1000 / len(texts),
        )
        best = sample if best is None or sample[1] < best[1] else best
    assert best is not None
    return best


def batch_rows(repeats: int) -> list[list[object]]:
    from bench.queue_latency import sample_questions

    questions = sample_questions(400)
    random.Random(3).shuffle(questions)
    passages_ = sample_passages()
    rows: list[list[object]] = []
    for threads in (1, None):
        embedder = MiniLMEmbedder(threads=threads)
        embedder.embed_documents(questions[:8])
        for what, texts, at_once in (
            ("questions", questions, 1),
            ("questions, 2 calls at once", questions, 2),
            ("sample-corpus passages", passages_, 1),
        ):
            lengths = embedder.token_lengths(texts)
            cells: list[object] = [
                what,
                f"{statistics.mean(lengths):.0f}",
                threads or f"{embedder.threads} (default)",
            ]
            for size in BATCH_SIZES:
                embedder.batch_size = size
                cpu, wall = per_text_ms(embedder, texts, at_once, repeats)
                cells.append(f"{cpu:.2f} / {wall:.2f}")
            rows.append(cells)
            print(" | ".join(map(str, cells)), file=sys.stderr)
    return rows


def sample_passages() -> list[str]:
    """The shipped sample corpus's chunks, as a build embeds them."""
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import load_document
    from syllabot.worker.ops.sample import sample_files

    return [
        chunk.text
        for name, data in sample_files()
        for chunk in chunk_document(load_document(data, name, 50 * 1024 * 1024))
    ]


def batches(args: argparse.Namespace) -> None:
    rows = batch_rows(args.repeats)
    body = "\n".join(
        [
            "## Embedder: texts per call",
            "",
            "Command: `python -m bench.embed_speed --batches` (MiniLM int8 ONNX; texts length-sorted and "
            "cut into calls of *n*, as `MiniLMEmbedder` does; each cell is **CPU ms / wall ms per text**, "
            "best of "
            f"{args.repeats}; questions: `tests/data/sample_questions.jsonl` ×7 shuffled, in groups of 64 "
            "as a burst reaches a worker; passages: the shipped sample corpus's chunks).",
            "",
            machine_stamp(),
            "",
            markdown_table(
                ["texts", "mean tokens", "threads", *(f"n = {n}" for n in BATCH_SIZES)],
                rows,
            ),
            "",
            "Reading: per text, big calls cost more, not less -- past a few texts the activations of "
            "one call (batch × tokens × 1,536 for the feed-forward layers, × tokens² for attention) "
            "leave the cores' caches -- while calls of one text pay onnxruntime's fixed cost each. "
            "Hence `SYLLABOT_EMBED_BATCH_SIZE` unset = 4 for MiniLM, for builds and for the worker's "
            "question batches alike.",
        ]
    )
    print(body)
    if not args.no_write:
        write_section("embed_batches", body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", action="store_true", help="texts per call (docs section embed_batches)")
    parser.add_argument("--no-write", action="store_true", help="with --batches: print, leave docs/ alone")
    args = parser.parse_args()
    if args.batches:
        batches(args)
        return
    texts = passages()
    print(
        f"MiniLM int8 ONNX, 64 passages of 80 words, batch {MiniLMEmbedder().batch_size}, threads={args.threads or 'auto'}"
    )
    print(f"{'padding':<18}{'tokens (query/passage)':>24}{'passages/s':>14}{'query ms (p50)':>16}")
    for label, fixed in (("longest in batch", None), ("fixed 128", 128)):
        embedder = MiniLMEmbedder(fixed_padding=fixed, threads=args.threads)
        query_tokens = embedder.tokenize([QUERY])[0].shape[1]
        passage_tokens = embedder.tokenize(texts[:1])[0].shape[1]
        rate, latency = measure(embedder, texts, args.repeats)
        print(f"{label:<18}{f'{query_tokens}/{passage_tokens}':>24}{rate:>14.1f}{latency:>16.2f}")


if __name__ == "__main__":
    main()
