"""Test doubles shared by several test modules.

:class:`SlowEmbedder` is the hashing embedder at the speed of a large model on a slow, shared
machine: a fixed time per passage, every call recorded (its size, and whether a build's cancel had
been asked for when it started and when it ended).

:class:`TruncatedEmbedder` reproduces the incident this product exists for: a Matryoshka model
asked for fewer dimensions returns the first 768 components of its unit 3072-d vectors *without*
renormalising them. Each such vector has length ~0.5, so a raw dot product between two of them is
~1/4 of their true cosine and a relevant passage falls under the 0.15 threshold. Only the one
``normalise()`` in :class:`~worker.indexes.embedders.base.Embedder` stands between that and the index.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from syllabot.worker.indexes.embedders.base import Embedder
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder

_WORD = re.compile(r"\w+", re.UNICODE)


class TruncatedEmbedder(Embedder):
    """Bag-of-words random projection to unit 3072-d vectors, then truncated to the first 768.

    Deterministic: every lower-cased word maps to a Gaussian vector seeded by its crc32, so texts
    that share words have a high full-length cosine (about shared / sqrt(n1 * n2)) on every machine.
    :meth:`full` gives the untruncated unit vectors for "what the cosine should have been".
    """

    FULL_DIM = 3072

    def __init__(self, dim: int = 768) -> None:
        self.dim = dim
        self.id = f"fake-matryoshka-{self.FULL_DIM}-truncated-{dim}"
        self._word_vectors: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vector = self._word_vectors.get(word)
        if vector is None:
            rng = np.random.default_rng(zlib.crc32(word.encode("utf-8")))
            vector = self._word_vectors[word] = rng.standard_normal(self.FULL_DIM)
        return vector

    def full(self, texts: Sequence[str]) -> np.ndarray:
        """Unit 3072-d vectors, float64: the model's untruncated output."""
        out = np.zeros((len(texts), self.FULL_DIM))
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower()) or ["<empty>"]
            for word in words:
                out[row] += self._word(word)
            out[row] /= np.linalg.norm(out[row])
        return out

    def truncated(self, texts: Sequence[str]) -> np.ndarray:
        """What the server sends back: the first ``dim`` components, *not* unit length."""
        return self.full(texts)[:, : self.dim].astype(np.float32)

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.truncated(texts)


@dataclass(frozen=True)
class EmbedCall:
    """One call of :class:`SlowEmbedder`: how many passages, how long it slept, and whether the
    build had been cancelled when it started and when it ended."""

    size: int
    seconds: float
    cancelled_before: bool
    cancelled_after: bool


class SlowEmbedder(HashingEmbedder):
    """The hashing embedder at the speed of a large model on a slow machine: a call sleeps
    ``seconds_per_char`` for every character of its passages padded to its longest (a model pads
    a call to its longest passage; the build measures passages in characters when the embedder has
    no ``token_lengths``), never less (``time.sleep``). ``cancelled``: whether the build was
    cancelled (a ``CancelToken``'s ``cancelled``), noted for each call; ``on_call``: called with the
    call's number (1, 2, ...) as each starts, e.g. to cancel the build mid-call."""

    def __init__(
        self,
        seconds_per_char: float,
        cancelled: Callable[[], bool] = lambda: False,
        on_call: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__(256)
        self.seconds_per_char = seconds_per_char
        self.cancelled = cancelled
        self.on_call = on_call
        self.calls: list[EmbedCall] = []
        self._lock = threading.Lock()

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        before = self.cancelled()
        with self._lock:
            number = len(self.calls) + 1
        if self.on_call is not None:
            self.on_call(number)
        seconds = self.seconds_per_char * len(texts) * max((len(t) for t in texts), default=0)
        time.sleep(seconds)
        with self._lock:
            self.calls.append(EmbedCall(len(texts), seconds, before, self.cancelled()))
        return super()._raw_documents(texts)


def pdf_of(objects: list[bytes]) -> bytes:
    """A PDF file of ``objects`` (numbered from 1; the first is the catalog) with its cross-reference
    table: for pages written by hand, with fonts or forms no PDF library here writes."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
