"""The embedder contract and the one `normalise()`.

The failure this product guards against: truncated (Matryoshka) embeddings are not unit length, so
cosine over them came out small, every score fell under the threshold and every question got
nothing. Every vector that leaves any embedder goes through :func:`normalise`, on the indexing
path and on the query path alike; :meth:`Embedder.embed_documents` / :meth:`Embedder.embed_query`
are the only public entry points and both apply it, so a subclass cannot forget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

_EPS = 1e-12


class EmbedderError(RuntimeError):
    """The embedder could not produce vectors (bad model file, endpoint down, wrong shape...)."""


class EmbedderMismatch(EmbedderError):
    """An index built with one embedder was queried with another."""


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 length, as float32. Zero rows stay zero instead of becoming NaN."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2:
        raise EmbedderError(f"expected a 2-d array of vectors, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise EmbedderError("embedder returned NaN or infinite values")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return (array / np.maximum(norms, _EPS)).astype(np.float32, copy=False)


class Embedder(ABC):
    """Turns text into unit vectors. Implementations override the two ``_raw`` methods only."""

    #: Stable identifier recorded in every index; two embedders with the same id must agree.
    id: str
    #: Output dimension (after any truncation).
    dim: int
    #: Texts per model call (``SYLLABOT_EMBED_BATCH_SIZE``); a build cuts its batches to this size.
    batch_size: int = 32

    @abstractmethod
    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unnormalised vectors for passages, shape (len(texts), dim)."""

    def _raw_query(self, text: str) -> np.ndarray:
        """Unnormalised vector for one query; models with query prefixes override this."""
        return self._raw_documents([text])

    def _raw_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unnormalised vectors for several queries, each exactly as :meth:`_raw_query` gives it.

        One call per query here; an embedder whose batched output equals its one-by-one output
        (bit for bit, tested) overrides this with one batched call.
        """
        return np.vstack([self._raw_query(text) for text in texts])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = normalise(self._raw_documents(list(texts)))
        self._check_shape(out, len(texts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One unit vector of shape (dim,)."""
        out = normalise(self._raw_query(text))
        self._check_shape(out, 1)
        return out[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of shape (len(texts), dim): row i is ``embed_query(texts[i])``, bit for bit,
        so a question's ranking does not depend on which others shared its call (the worker's
        micro-batching, :mod:`worker.indexes.batching`)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = normalise(self._raw_queries(list(texts)))
        self._check_shape(out, len(texts))
        return out

    def _check_shape(self, out: np.ndarray, rows: int) -> None:
        if out.shape != (rows, self.dim):
            raise EmbedderError(
                f"embedder {self.id} returned shape {out.shape}, expected ({rows}, {self.dim})"
            )
