"""MiniLM speed: passage throughput and single-query latency, pad-to-longest against fixed 128.

Why: the shipped tokenizer.json pads every input to 128 tokens, which makes a ~10-token chat
question cost as much as a full passage. This shows what padding to the longest text saves.

    python bench/embed_speed.py [--threads N] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from syllabot.worker.embedders.minilm import MiniLMEmbedder

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    texts = passages()
    print(f"MiniLM int8 ONNX, 64 passages of 80 words, batch 32, threads={args.threads or 'auto'}")
    print(f"{'padding':<18}{'tokens (query/passage)':>24}{'passages/s':>14}{'query ms (p50)':>16}")
    for label, fixed in (("longest in batch", None), ("fixed 128", 128)):
        embedder = MiniLMEmbedder(fixed_padding=fixed, threads=args.threads)
        query_tokens = embedder.tokenize([QUERY])[0].shape[1]
        passage_tokens = embedder.tokenize(texts[:1])[0].shape[1]
        rate, latency = measure(embedder, texts, args.repeats)
        print(f"{label:<18}{f'{query_tokens}/{passage_tokens}':>24}{rate:>14.1f}{latency:>16.2f}")


if __name__ == "__main__":
    main()
