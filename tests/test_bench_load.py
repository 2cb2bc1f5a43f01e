"""The load benchmarks' own code on tiny inputs: synthetic collections and their report sections
(no model: the hashing embedder's vectors stand in for MiniLM's)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("bench.common")

from bench import load_collections, load_ingest
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder


def test_synthetic_collections_differ_and_hold_unit_vectors() -> None:
    from bench.common import parse_files

    chunks, _ = parse_files(
        sorted(p for p in (load_collections.ROOT / "corpus").iterdir() if p.suffix == ".md")
    )
    embedder = HashingEmbedder(64)
    matrix = embedder.embed_documents([c.text for c in chunks])
    a = load_collections.make_snapshot(3, chunks, matrix, embedder.id, embedder.dim)
    b = load_collections.make_snapshot(4, chunks, matrix, embedder.id, embedder.dim)
    assert len(a) == min(load_collections.CHUNKS_PER_COLLECTION, len(chunks))
    assert a.collection == "class-0003" and "Class 0003" in a.chunks[0].text
    assert a.chunks[0].text != b.chunks[0].text and not np.allclose(a.matrix[0], b.matrix[0])
    np.testing.assert_allclose(np.linalg.norm(a.matrix, axis=1), 1.0, atol=1e-5)


def test_report_sections_render_targets() -> None:
    result = {
        "budget_mb": 128.0, "rss_start_mb": 250.0, "rss_end_mb": 380.0, "rss_peak_mb": 400.0,
        "cache_mb": 127.0, "entries": 120, "misses": 1000, "evictions": 880, "snapshot_kb_mean": 1000.0,
        "cold_wall_p50": 30.0, "cold_over_p50": 15.0, "cold_over_p95": 60.0, "cold_load_p50": 12.0,
        "cold_load_p95": 40.0, "warm_before": 14.0, "warm_after": 14.5, "warm_search_before": 2.0,
        "warm_search_after": 2.1, "cold_over": [10.0] * 98 + [70.0, 80.0],
    }  # fmt: skip
    lines = "\n".join(load_collections.section([result], 1000, 20.0, 2**28, 90.0))
    # 400 MB is over 128 + 200 in all, its 150 MB growth is not; 60 ms p95 misses 50 ms.
    assert "250 → 380 (peak 400) ✗ | 150 ✓" in lines and "15.0 / 60.0 ✗ / 70.1 / 80.0" in lines
    ingest = {
        "threads": 2, "chunks": 200, "raw_s": 10.0, "read_s": 2.0, "ingest_s": 10.5, "raw_rate": 20.0,
        "ingest_rate": 19.0, "share": 0.95, "sequential_share": 0.83,
    }  # fmt: skip
    text = "\n".join(load_ingest.section([dict(ingest, threads=1), ingest], 21, 2, 60.0))
    assert "**95%** ✓" in text and "2 threads against 1" in text
