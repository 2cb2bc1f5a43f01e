"""A deterministic character-trigram embedder for tests: no model, same vectors on every machine."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

from syllabot.worker.indexes.embedders.base import Embedder

_WORD = re.compile(r"\w+", re.UNICODE)
#: The dimension ``SYLLABOT_EMBEDDER=hashing`` builds (its id, ``hashing-trigram-256``, keys its thresholds).
DEFAULT_DIM = 256


class HashingEmbedder(Embedder):
    """Bag of crc32-hashed character trigrams (per lower-cased word, with boundary marks)."""

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        self.dim = dim
        self.id = f"hashing-trigram-{dim}"

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                padded = f"#{word}#"
                for i in range(max(1, len(padded) - 2)):
                    h = zlib.crc32(padded[i : i + 3].encode("utf-8"))
                    out[row, h % self.dim] += 1.0 if (h >> 31) & 1 == 0 else -1.0
        return out
