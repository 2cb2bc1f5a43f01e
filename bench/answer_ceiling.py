"""Where the asked facts are: how far down the answer path a question's ``expect`` strings survive.

    python -m bench.answer_ceiling [--split dev|test]

Why: the answer targets for courses from elsewhere ask for answers that hold the asked facts
(≥ 80% of answerable questions) and almost no answers without them (≤ 5% of answers). A verdict
can only answer with the facts what the reply quotes, the reply quotes what the sentence ranking
puts first, and the ranking reads only what search returned. This bench counts, for every
answerable question with an ``expect`` (the corpus courses of the split and the VTU half), where
its facts are last seen whole:

* ``reply``: the shipped reply, whatever its status (what an ``answered`` could say at best today);
* ``unit 1st``: the unit the sentence ranking puts first (read whole, before a quote's clip);
* ``any unit``: some unit of the focus passages (a perfect choice among what the ranker reads);
* ``top 1 / 3 / 5 / k``: the concatenated text of the first 1, 3, 5 and all ``k`` hits.

It also measures the two learned parts that could move these numbers without a new model:

* ``facts AUC``: how well the shipped verdict's probability tells, among answerable questions, a
  reply holding the facts from one lacking them (0.5 is chance): the most a verdict over today's
  signals can do for "answered without the asked facts";
* (``dev`` only) a learned unit ranker: a logistic regression over the hand-set ranker's own
  features plus the unit's MiniLM cosine to the question, fitted leaving each tuning course out,
  against the hand-set order: how many first units hold the facts.

Nothing here is fitted on held-out data: ``--split test`` only counts.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bench import answers
from bench.common import bench_settings, default_embedder, embed_cached, embed_queries_cached, markdown_table
from syllabot.worker.answerers.decision import DEFAULT_THRESHOLDS, Signals
from syllabot.worker.answerers.extractive import read_sentences
from syllabot.worker.ops.evaluation import expect_met

#: The default embedder's thresholds and calibration: what the sentence reading and the facts AUC read with.
THRESHOLDS = DEFAULT_THRESHOLDS

#: The columns of the table, in the order the facts are lost.
STAGES = ("reply", "unit 1st", "any unit", "top 1", "top 3", "top 5", "top k")


@dataclass(frozen=True)
class Read:
    """One answerable question with an ``expect``, read once: its bench row and case, the ranked
    units of its focus passages (none for a fallback), which of them hold the facts, and the
    signals the verdict weighs (None for a fallback)."""

    row: answers.Row
    case: tuple
    units: list
    holds: list[bool]
    signals: Signals | None


def families(split: str, embedder, settings) -> dict[str, list[Read]]:
    """Each family's answerable questions with an ``expect``, each read once (:class:`Read`)."""
    out: dict[str, list] = {}
    for slug in answers.courses_of(split):
        rows = answers.one_course_rows(slug, embedder, settings)
        out[slug] = list(zip(rows, answers.CASES, strict=True))
    if answers.VTU_QUESTIONS.exists() and answers.SYLLABI.exists():
        rows = answers.vtu_rows(split, embedder, settings)
        out["vtu"] = list(zip(rows, answers.CASES, strict=True))
    return {
        name: [read(r, c) for r, c in pairs if r.question.answerable and r.question.expect]
        for name, pairs in out.items()
    }


def read(row: answers.Row, case: tuple) -> Read:
    """The sentence reading of one case (``extractive.read_sentences``: its ranked units, best
    first, and its signals), and which units hold the question's facts."""
    _a, question, hits, fallback = case
    if fallback:
        return Read(row, case, [], [], None)
    sentences, signals = read_sentences(question, hits, fallback, THRESHOLDS)
    units = sentences.ranked
    return Read(row, case, units, [expect_met(u.text, row.question.expect) for u in units], signals)


def stages(r: Read) -> dict[str, bool]:
    """Where this question's facts are seen whole (:data:`STAGES`)."""
    hits = r.case[2]
    seen = {
        "reply": bool(r.row.expect),
        "unit 1st": bool(r.holds[:1] and r.holds[0]),
        "any unit": any(r.holds),
    }
    for name, k in (("top 1", 1), ("top 3", 3), ("top 5", 5), ("top k", len(hits))):
        seen[name] = bool(hits) and expect_met("\n".join(h.text for h in hits[:k]), r.row.question.expect)
    return seen


def facts_auc(reads: Sequence[Read]) -> float:
    """AUC of the shipped verdict's probability for "the reply holds the facts" (answerable only)."""
    calibration = THRESHOLDS.calibration
    if calibration is None:
        return float("nan")
    judged = [
        (calibration.probability(r.signals), bool(r.row.expect)) for r in reads if r.signals is not None
    ]
    positive = [p for _s, p in judged]
    return (
        answers.auc([s for s, _p in judged], positive) if 0 < sum(positive) < len(positive) else float("nan")
    )


def unit_features(r: Read, cosines: Sequence[float]) -> np.ndarray:
    """Each unit's inputs to the hand-set ranker (``extractive._rank``), its score, and its cosine."""
    hits = r.case[2]
    focus = sorted({u.hit_index for u in r.units})
    best = max((hits[i].score for i in focus), default=1.0) or 1.0
    wants = float(bool(r.case[1].intent.wants))
    return np.array(
        [
            [
                unit.overlap,
                float(unit.has_value) * wants,
                unit.lead_overlap * (1 - wants),
                hits[unit.hit_index].score / best,
                hits[unit.hit_index].cosine,
                hits[unit.hit_index].keyword,
                float(focus.index(unit.hit_index)),
                math.log(1 + len(unit.text)),
                float(bool(unit.unit.items)),
                unit.score,
                cosine,
            ]
            for unit, cosine in zip(r.units, cosines, strict=True)
        ]
    )


def learned_ranker(fams: dict[str, list[Read]], embedder) -> dict[str, tuple[int, int]]:
    """Per course, (hand-set, learned) first units holding the facts, the learned ranker fitted
    (``train_decision.fit``) on the other courses (leave one course out)."""
    from bench.train_decision import fit

    texts = sorted({u.text for reads in fams.values() for r in reads for u in r.units})
    matrix = embed_cached(embedder, texts, "ceiling-units")
    at = {t: i for i, t in enumerate(texts)}
    data: dict[str, list] = {}
    for name, reads in fams.items():
        queries = embed_queries_cached(embedder, [r.case[1].text for r in reads], f"ceiling-{name}")
        data[name] = [
            (unit_features(r, [float(matrix[at[u.text]] @ q) for u in r.units]), np.array(r.holds))
            for r, q in zip(reads, queries, strict=True)
            if r.units
        ]
    out = {}
    for name in data:
        train = [(x, y) for other, rows in data.items() if other != name for x, y in rows if y.any()]
        w, b = fit(
            np.vstack([x for x, _y in train]),
            np.concatenate([y for _x, y in train]).astype(float),
            steps=3000,
        )
        learned = sum(bool(y[int(np.argmax(x @ w + b))]) for x, y in data[name])
        out[name] = (sum(bool(y[0]) for _x, y in data[name]), learned)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    args = parser.parse_args(argv)
    embedder, settings = default_embedder(), bench_settings()
    fams = families(args.split, embedder, settings)
    if not any(fams.values()):
        print("no corpus courses or VTU questions here (../shared/data); nothing to count")
        return 0
    table, pooled = [], dict.fromkeys(STAGES, 0)
    courses_n = 0
    for name, reads in fams.items():
        seen = [stages(r) for r in reads]
        counts = {s: sum(x[s] for x in seen) for s in STAGES}
        if name != "vtu":
            courses_n += len(reads)
            pooled = {s: pooled[s] + counts[s] for s in STAGES}
        table.append([name, len(reads), *(counts[s] for s in STAGES), f"{facts_auc(reads):.3f}"])
    table.append(["courses pooled", courses_n, *(pooled[s] for s in STAGES), "—"])
    print(markdown_table(["set", "n", *STAGES, "facts AUC"], table))
    if args.split == "dev":
        ranked = learned_ranker({k: v for k, v in fams.items() if k != "vtu"}, embedder)
        rows = [[name, hand, learned] for name, (hand, learned) in ranked.items()]
        rows.append(["pooled", sum(h for h, _l in ranked.values()), sum(lv for _h, lv in ranked.values())])
        print()
        print(
            markdown_table(
                ["course (left out)", "hand-set ranker: 1st unit holds the facts", "learned"], rows
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
