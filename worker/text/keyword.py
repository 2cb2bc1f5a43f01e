"""The keyword leg of hybrid search: tokenising, BM25 and plain overlap, as pure functions.

Both scorers return values in [0, 1] on an *absolute* scale, so a hybrid score means the same thing
in every collection and the threshold can be calibrated once:

* BM25 is divided by the best score the query could reach (every query term matched, at term-
  frequency saturation). A question whose rare words appear nowhere scores low, rather than being
  stretched up to 1.0 by per-query max-normalisation.
* Overlap is the idf-weighted fraction of the query's distinct terms found in the chunk.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)

# Function words that carry no topic; kept short on purpose (a long list starts eating content words).
STOPWORDS = frozenset(
    """a an and are as at be been but by can could do does did for from had has have how i if in into is
    it its me my no not of on or our so such than that the their them then there these they this to
    too us was we were what when where which while who whom why will with would you your yours i'm
    am any all also about after before more most other some only own same very just should may might
    must shall""".split()
)

BM25_K1 = 1.2
BM25_B = 0.75


def keyword_stem(token: str) -> str:
    """A deliberately light English stemmer: plurals, a few verb endings and a final "e".

    Enough to make "modules"/"module", "covered"/"covers"/"cover" and "charging"/"charge" meet;
    anything heavier mangles course codes and names. Non-ASCII tokens (Bangla...) stay as they are.
    """
    if not token.isascii() or len(token) <= 3 or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        token = token[:-3] + "y"
    elif token.endswith(("sses", "shes", "ches", "xes", "zes")):
        token = token[:-2]
    elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    elif token.endswith("ing") and len(token) >= 6:
        token = token[:-3]
    elif token.endswith("ed") and len(token) >= 5:
        token = token[:-2]
    if token.endswith("e") and len(token) >= 4:
        token = token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    """Lower-cased, stop-worded, lightly stemmed word tokens."""
    return [keyword_stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and not t.isspace()]


@dataclass
class KeywordIndex:
    """Inverted index over a collection's chunks: term -> (chunk rows, term frequencies).

    Held as one CSR block (every term's rows and frequencies end to end in two arrays, a term's
    slice found by its number) rather than two small arrays per term. Why: a worker caches hundreds
    of collections, and a course's ~1,500 terms as ~3,000 tiny arrays cost ~450 bytes a term in
    object headers and allocator overhead (most of a 100-chunk snapshot, and mostly invisible to a
    byte count of the data); one block costs ~100 (``bench.load_collections``).
    """

    n_docs: int
    doc_len: np.ndarray  # (N,) float32 token counts
    terms: dict[str, int] = field(default_factory=dict)  # term -> its number
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int32))  # (T+1,)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    tfs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))

    @classmethod
    def from_postings(
        cls, n_docs: int, doc_len: np.ndarray, postings: Mapping[str, tuple[Sequence[int], Sequence[float]]]
    ) -> KeywordIndex:
        """The index of ``postings`` (term -> its rows and their term frequencies), in its order."""
        lengths = np.fromiter(
            (len(rows) for rows, _ in postings.values()), dtype=np.int32, count=len(postings)
        )
        offsets = np.zeros(len(postings) + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        total = int(offsets[-1])
        return cls(
            n_docs,
            doc_len,
            {term: number for number, term in enumerate(postings)},
            offsets,
            np.fromiter(chain.from_iterable(r for r, _ in postings.values()), dtype=np.int32, count=total),
            np.fromiter(chain.from_iterable(t for _, t in postings.values()), dtype=np.float32, count=total),
        )

    def __contains__(self, term: object) -> bool:
        return term in self.terms

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """The chunk rows holding ``term`` and its frequency in each (views; empty when unseen)."""
        number = self.terms.get(term)
        if number is None:
            return self.rows[:0], self.tfs[:0]
        start, end = int(self.offsets[number]), int(self.offsets[number + 1])
        return self.rows[start:end], self.tfs[start:end]

    def df(self, term: str) -> int:
        """How many chunks hold ``term``."""
        number = self.terms.get(term)
        return 0 if number is None else int(self.offsets[number + 1] - self.offsets[number])

    @property
    def avgdl(self) -> float:
        return float(self.doc_len.mean()) if self.n_docs else 0.0

    def idf(self, term: str) -> float:
        """BM25+ style idf (never negative); an unseen term gets the idf of df = 0."""
        return _idf(self.n_docs, self.df(term))

    def to_json(self) -> dict[str, Any]:
        """The stored form (term -> [rows, tfs]), unchanged by the in-memory layout."""
        bounds = self.offsets.tolist()
        rows, tfs = self.rows.tolist(), self.tfs.astype(int).tolist()
        return {
            "n_docs": self.n_docs,
            "doc_len": self.doc_len.astype(int).tolist(),
            "postings": {
                t: [rows[bounds[i] : bounds[i + 1]], tfs[bounds[i] : bounds[i + 1]]]
                for t, i in self.terms.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KeywordIndex:
        return cls.from_postings(
            int(data["n_docs"]), np.asarray(data["doc_len"], dtype=np.float32), data["postings"]
        )


def _idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def build_keyword_index(texts: Sequence[str]) -> KeywordIndex:
    postings: dict[str, tuple[list[int], list[int]]] = {}
    lengths = np.zeros(len(texts), dtype=np.float32)
    for row, text in enumerate(texts):
        tokens = tokenize(text)
        lengths[row] = len(tokens)
        for term, tf in Counter(tokens).items():
            rows, tfs = postings.setdefault(term, ([], []))
            rows.append(row)
            tfs.append(tf)
    return KeywordIndex.from_postings(len(texts), lengths, postings)


def bm25_scores(query: str, index: KeywordIndex) -> np.ndarray:
    """BM25 of every chunk for the query, divided by the query's best reachable score (see module doc)."""
    scores = np.zeros(index.n_docs, dtype=np.float32)
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or index.n_docs == 0:
        return scores
    avgdl = index.avgdl or 1.0
    ceiling = 0.0
    for term in terms:
        rows, tfs = index.postings(term)  # one lookup: empty views for an unseen term (df 0)
        idf = _idf(index.n_docs, len(rows))
        ceiling += idf * (BM25_K1 + 1.0)
        if not len(rows):
            continue
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * index.doc_len[rows] / avgdl)
        scores[rows] += idf * tfs * (BM25_K1 + 1.0) / (tfs + norm)
    if ceiling > 0:
        scores /= ceiling
    return np.clip(scores, 0.0, 1.0)


def overlap_scores(query: str, index: KeywordIndex) -> np.ndarray:
    """Idf-weighted share of the query's distinct terms that occur in each chunk."""
    scores = np.zeros(index.n_docs, dtype=np.float32)
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or index.n_docs == 0:
        return scores
    total = 0.0
    for term in terms:
        rows, _ = index.postings(term)
        idf = _idf(index.n_docs, len(rows))
        total += idf
        scores[rows] += idf
    return np.clip(scores / total, 0.0, 1.0) if total > 0 else scores


def keyword_scores(query: str, index: KeywordIndex, method: str) -> np.ndarray:
    if method == "bm25":
        return bm25_scores(query, index)
    if method == "overlap":
        return overlap_scores(query, index)
    raise ValueError(f"unknown keyword method {method!r}; use 'bm25' or 'overlap'")
