"""Hybrid scoring, threshold with guaranteed fallback, and de-duplication: pure functions.

The rules (docs/ARCHITECTURE.md, retrieval 3-5): score = alpha x cosine + (1 - alpha) x keyword; keep what clears the
threshold; if nothing does, return the best chunks anyway (a collection with content never yields
an empty result); collapse overlapping windows and near-identical chunks; drop superseded versions
of a document when its current version is indexed.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from syllabot.worker.text.documents import Chunk
from syllabot.worker.text.text_caches import PER_TEXT

_WORD = re.compile(r"\w+", re.UNICODE)
_VERSION_SUFFIX = re.compile(r"[-_.]?v\d+(?=$|[-_.])", re.IGNORECASE)

#: How many candidates beyond k we look at, so de-duplication can still fill k.
CANDIDATE_FACTOR = 4


@dataclass(frozen=True)
class ScoredRow:
    row: int
    score: float
    cosine: float
    keyword: float


@dataclass(frozen=True)
class Selection:
    rows: list[ScoredRow]
    fallback: bool  # nothing cleared the threshold; these are the best chunks anyway


def hybrid_scores(cosine: np.ndarray, keyword: np.ndarray, alpha: float) -> np.ndarray:
    return (alpha * cosine + (1.0 - alpha) * keyword).astype(np.float32, copy=False)


def document_family(doc_id: str, lang: str | None) -> str:
    """Versions of one document share a family: ``kc-returns-v2`` and ``kc-returns-v3`` -> ``kc-returns``."""
    return f"{_VERSION_SUFFIX.sub('', doc_id.lower())}|{lang or ''}"


def superseded_mask(chunks: Sequence[Chunk]) -> np.ndarray:
    """True for chunks of a superseded document that something current replaces: a document an
    admin marked superseded (``Chunk.superseded_by`` set) while any current document is indexed, or
    one superseded by its front matter whose family also has a current document indexed."""
    current = {document_family(c.doc_id, c.lang) for c in chunks if (c.status or "current") != "superseded"}
    return np.asarray(
        [
            c.status == "superseded"
            and (
                (c.superseded_by is not None and bool(current))
                or document_family(c.doc_id, c.lang) in current
            )
            for c in chunks
        ],
        dtype=bool,
    )


@lru_cache(maxsize=PER_TEXT)
def _tokens(text: str) -> frozenset[str]:
    """A chunk's word set, for de-duplication. Cached: the same chunks come back question after
    question, and tokenising them was a twentieth of a worker's CPU in a burst (py-spy). The words
    are interned: the sets share one string per word instead of each holding its own copies (1,024
    sets of ~70 words had held 7.9 MB of strings)."""
    return frozenset(sys.intern(t.lower()) for t in _WORD.findall(text))


def overlap_coefficient(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def is_duplicate(
    a: Chunk,
    b: Chunk,
    cosine: float,
    near_cosine: float,
    tokens: Callable[[], tuple[frozenset[str], frozenset[str]]],
) -> bool:
    """Overlapping windows of one document, or near-identical chunks of any two documents.

    Same document: most of the smaller chunk's words are in the other (windows sharing sentences,
    a section re-chunked). Different documents: the vectors are near-identical *and* the words are,
    so two courses that merely share a topic both survive. ``tokens()`` returns both chunks' word
    sets; it is called only when the cheap tests leave the question open, because tokenising is
    most of the cost of de-duplication.
    """
    if a.doc_id != b.doc_id and cosine < near_cosine:
        return False
    a_tokens, b_tokens = tokens()
    if a.doc_id != b.doc_id and _numbers(a_tokens) != _numbers(b_tokens):
        # The same passage with other numbers in another document is a version that disagrees
        # ("within 14 days" / "within 7 days"): both must reach the answer, which says so.
        return False
    overlap = overlap_coefficient(a_tokens, b_tokens)
    return overlap >= (0.8 if a.doc_id == b.doc_id else 0.9)


def _numbers(tokens: frozenset[str]) -> frozenset[str]:
    return frozenset(t for t in tokens if t.isdigit())


def top_candidates(scores: np.ndarray, m: int) -> np.ndarray:
    """Indices of the ``m`` highest scores, best first (ties keep index order)."""
    n = len(scores)
    top = np.argpartition(scores, n - m)[n - m :] if m < n else np.arange(n)
    return top[np.argsort(-scores[top], kind="stable")]


def select(
    scores: np.ndarray,
    cosine: np.ndarray,
    keyword: np.ndarray,
    chunks: Sequence[Chunk],
    matrix: np.ndarray,
    k: int,
    threshold: float,
    near_cosine: float,
    excluded: np.ndarray | None = None,
) -> Selection:
    """Top-k de-duplicated rows above the threshold, or the best rows when none clears it."""
    n = len(scores)
    if n == 0 or k <= 0:
        return Selection([], False)
    masked, available = scores, n
    if excluded is not None and excluded.any():
        available = n - int(excluded.sum())
        if available > 0:  # everything excluded (only superseded documents?): fall back to all
            masked = np.where(excluded, -np.inf, scores)
        else:
            available = n
    m = min(available, max(k * CANDIDATE_FACTOR, k + 8))
    order = [int(r) for r in top_candidates(masked, m)]

    above = [r for r in order if masked[r] >= threshold]
    fallback = not above
    pool = order if fallback else above

    token_cache: dict[int, frozenset[str]] = {}

    def tokens_of(row: int) -> frozenset[str]:
        if row not in token_cache:
            token_cache[row] = _tokens(chunks[row].text)
        return token_cache[row]

    def token_pair(row: int, other: int) -> tuple[frozenset[str], frozenset[str]]:
        return tokens_of(row), tokens_of(other)

    kept: list[int] = []
    for row in pool:
        duplicate_of = next(
            (
                position
                for position, other in enumerate(kept)
                if is_duplicate(
                    chunks[row],
                    chunks[other],
                    float(matrix[row] @ matrix[other]),
                    near_cosine,
                    partial(token_pair, row, other),
                )
            ),
            None,
        )
        if duplicate_of is not None:
            other = kept[duplicate_of]
            if chunks[other].foreign and not chunks[row].foreign:
                kept[duplicate_of] = row  # cite the course's own copy of a passage printed twice
            continue
        kept.append(row)
        if len(kept) == k:
            break
    kept.sort(key=lambda r: -scores[r])  # a swapped-in copy may score a hair lower
    rows = [ScoredRow(r, float(scores[r]), float(cosine[r]), float(keyword[r])) for r in kept]
    return Selection(rows, fallback)
