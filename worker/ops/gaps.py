"""Group the questions the materials did not answer into topics, and name each topic (pure).

The worker already embeds every question to search; the question log keeps that unit vector, so
grouping costs no model call. Grouping is average-linkage agglomerative clustering on cosine
similarity, stopped when no two groups are on average at least :data:`GAP_SIMILARITY` alike: no
number of topics to choose, paraphrases of one question fall together, and one odd question stays
on its own instead of being forced into a topic. A group is named by its most central question (the
member most like the others) and its most distinctive words (frequent in the group, rare in the
other gap questions).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from syllabot.shared.gap_report import GapTopic
from syllabot.worker.text.keyword import STOPWORDS, tokenize

#: Average cosine two groups need to be merged. Chosen before the gap benchmark was run (MiniLM puts
#: paraphrases of one question around 0.6-0.8 and unrelated questions of one course under 0.4);
#: docs/BENCHMARKS.md "gap report" shows what it gives.
GAP_SIMILARITY = 0.5
#: Most recent gap questions grouped in one report; the clustering is O(n²) in memory and time.
MAX_GROUPED = 3000
#: Other questions shown per topic besides its label.
EXAMPLES = 3
#: Distinctive words shown per topic.
WORDS = 4

_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
#: Words every gap question shares that name no topic.
_QUESTION_WORDS = frozenset(
    "there we our course class subject syllabus get need know tell please anyone someone like".split()
)


@dataclass(frozen=True)
class GapQuestion:
    """One question for the report: the materials did not answer it, or its answer was voted 👎."""

    text: str
    vector: NDArray[np.float32]
    status: str  # answered | uncertain | not_in_materials
    voted_down: bool = False
    closest: str = ""  # citation label of the passage found closest


def cluster(vectors: NDArray[np.float32], threshold: float = GAP_SIMILARITY) -> list[list[int]]:
    """Average-linkage groups of unit ``vectors`` (rows); each group's indices, in input order.

    The pairwise similarity matrix is updated in place with the Lance-Williams rule and each row's
    best partner is cached, so a merge costs O(n) except for the rows whose partner was merged.
    """
    n = len(vectors)
    if n == 0:
        return []
    sim = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    np.fill_diagonal(sim, -np.inf)
    size = np.ones(n)
    members: list[list[int]] = [[i] for i in range(n)]
    best = sim.argmax(axis=1)
    best_sim = sim[np.arange(n), best]
    while True:
        i = int(best_sim.argmax())
        if best_sim[i] < threshold:
            break
        j = int(best[i])
        merged = (size[i] * sim[i] + size[j] * sim[j]) / (size[i] + size[j])
        sim[i, :] = merged
        sim[:, i] = merged
        sim[j, :] = -np.inf
        sim[:, j] = -np.inf
        sim[i, i] = -np.inf
        size[i] += size[j]
        members[i].extend(members[j])
        members[j] = []
        best_sim[j] = -np.inf
        stale = np.flatnonzero((best == i) | (best == j))
        for row in {i, *stale.tolist()} - {j}:
            best[row] = int(sim[row].argmax())
            best_sim[row] = sim[row, best[row]]
        better = merged > best_sim
        better[j] = False
        best[better] = i
        best_sim[better] = merged[better]
    return [sorted(group) for group in members if group]


def central(vectors: NDArray[np.float32], group: Sequence[int]) -> list[int]:
    """The group's members, most central first (highest mean similarity to the others)."""
    sub = np.asarray(vectors[list(group)], dtype=np.float64)
    mean = (sub @ sub.T).mean(axis=1)
    order = np.argsort(-mean, kind="stable")
    return [group[int(k)] for k in order]


def _words(text: str) -> list[str]:
    return [
        w
        for w in (m.group(0).lower().strip("'-") for m in _WORD.finditer(text))
        if len(w) > 2 and w not in STOPWORDS and w not in _QUESTION_WORDS
    ]


def top_words(texts: Sequence[str], all_texts: Sequence[str], count: int = WORDS) -> list[str]:
    """Words frequent in ``texts`` and rare across ``all_texts`` (tf-idf over stems, printed as the
    form students used most)."""
    df: Counter[str] = Counter()
    for text in all_texts:
        df.update({stem for word in _words(text) for stem in tokenize(word)})
    tf: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = {}
    for text in texts:
        for word in _words(text):
            for stem in tokenize(word):
                tf[stem] += 1
                surface.setdefault(stem, Counter())[word] += 1
    total = max(1, len(all_texts))
    scored = sorted(
        (
            (freq * math.log(1 + total / max(1, df[stem])), stem)
            for stem, freq in tf.items()
            if freq > 1 or len(texts) == 1
        ),
        key=lambda pair: (-pair[0], pair[1]),
    )
    return [surface[stem].most_common(1)[0][0] for _, stem in scored[:count]]


def build_topics(
    questions: Sequence[GapQuestion], threshold: float = GAP_SIMILARITY, examples: int = EXAMPLES
) -> list[GapTopic]:
    """Topics, largest first (then the one with most "not in materials"), each named and counted."""
    if not questions:
        return []
    vectors = np.stack([np.asarray(q.vector, dtype=np.float32) for q in questions])
    all_texts = [q.text for q in questions]
    topics: list[GapTopic] = []
    for group in cluster(vectors, threshold):
        order = central(vectors, group)
        label = questions[order[0]].text
        shown: list[str] = []
        seen = {label.casefold()}
        for index in order[1:]:
            text = questions[index].text
            if text.casefold() not in seen and len(shown) < examples:
                shown.append(text)
                seen.add(text.casefold())
        members = [questions[k] for k in group]
        labels = Counter(q.closest for q in members if q.closest)
        topics.append(
            GapTopic(
                label=label,
                words=top_words([q.text for q in members], all_texts),
                count=len(members),
                not_in_materials=sum(q.status == "not_in_materials" for q in members),
                uncertain=sum(q.status == "uncertain" for q in members),
                voted_down=sum(q.voted_down for q in members),
                examples=shown,
                closest=labels.most_common(1)[0][0] if labels else "",
            )
        )
    topics.sort(key=lambda t: (-t.count, -t.not_in_materials, t.label))
    return topics
