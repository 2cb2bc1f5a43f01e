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

import numpy as np

from bench import answers
from bench.common import bench_settings, default_embedder, embed_cached, embed_queries_cached, markdown_table

#: The columns of the table, in the order the facts are lost.
STAGES = ("reply", "unit 1st", "any unit", "top 1", "top 3", "top 5", "top k")


def families(split: str, embedder, settings) -> dict[str, list]:
    """Each family's (row, case) pairs for its answerable questions with an ``expect``."""
    out: dict[str, list] = {}
    for slug in answers.courses_of(split):
        rows = answers.one_course_rows(slug, embedder, settings)
        out[slug] = list(zip(rows, answers.CASES, strict=True))
    if answers.VTU_QUESTIONS.exists() and answers.SYLLABI.exists():
        rows = answers.vtu_rows(split, embedder, settings)
        out["vtu"] = list(zip(rows, answers.CASES, strict=True))
    return {
        name: [(r, c) for r, c in pairs if r.question.answerable and r.question.expect]
        for name, pairs in out.items()
    }


def units_of(case) -> list:
    """The ranked units of the focus passages (``extractive.weigh_query``), best first."""
    from syllabot.worker.answerers.extractive import weigh_query

    _a, question, hits, fallback = case
    return [] if fallback else weigh_query(question, hits, fallback)[1]


def stages(row, case) -> dict[str, bool]:
    """Where this question's facts are seen whole (:data:`STAGES`)."""
    from syllabot.worker.evaluation import expect_met

    expect = row.question.expect
    hits = case[2]
    units = units_of(case)
    holds = [expect_met(u.text, expect) for u in units]
    seen = {"reply": bool(row.expect), "unit 1st": bool(holds[:1] and holds[0]), "any unit": any(holds)}
    for name, k in (("top 1", 1), ("top 3", 3), ("top 5", 5), ("top k", len(hits))):
        seen[name] = bool(hits) and expect_met("\n".join(h.text for h in hits[:k]), expect)
    return seen


def facts_auc(pairs) -> float:
    """AUC of the shipped verdict's probability for "the reply holds the facts" (answerable only)."""
    from syllabot.worker.answerers.decision import thresholds_for
    from syllabot.worker.answerers.extractive import read_sentences

    thresholds = thresholds_for("minilm")
    calibration = thresholds.calibration
    scores, positive = [], []
    for row, (_a, question, hits, fallback) in pairs:
        if fallback or calibration is None:
            continue
        signals = read_sentences(question, hits, fallback, thresholds)[1]
        scores.append(calibration.probability(signals))
        positive.append(bool(row.expect))
    return answers.auc(scores, positive) if 0 < sum(positive) < len(positive) else float("nan")


def unit_features(case, unit, cosine: float) -> list[float]:
    """The hand-set ranker's inputs for one unit (``extractive._rank``), its score, and its cosine."""
    _a, question, hits, _f = case
    focus = sorted({u.hit_index for u in units_of(case)})
    best = max((hits[i].score for i in focus), default=1.0) or 1.0
    wants = float(bool(question.intent.wants))
    hit = hits[unit.hit_index]
    return [
        unit.overlap,
        float(unit.has_value) * wants,
        unit.lead_overlap * (1 - wants),
        hit.score / best,
        hit.cosine,
        hit.keyword,
        float(focus.index(unit.hit_index)),
        math.log(1 + len(unit.text)),
        float(bool(unit.unit.items)),
        float(unit.unit.record is not None),
        unit.score,
        cosine,
    ]


def learned_ranker(fams: dict[str, list], embedder) -> dict[str, tuple[int, int]]:
    """Per course, (hand-set, learned) first units holding the facts, the learned ranker fitted
    on the other courses (leave one course out)."""
    from syllabot.worker.evaluation import expect_met

    per: dict[str, list] = {}
    for name, pairs in fams.items():
        for row, case in pairs:
            per.setdefault(name, []).append((case, units_of(case), row.question.expect))
    texts = sorted({u.text for rows in per.values() for _c, units, _e in rows for u in units})
    matrix = embed_cached(embedder, texts, "ceiling-units")
    at = {t: i for i, t in enumerate(texts)}
    data: dict[str, list] = {}
    for name, rows in per.items():
        queries = embed_queries_cached(embedder, [c[1].text for c, _u, _e in rows], f"ceiling-{name}")
        data[name] = [
            (
                np.array([unit_features(c, u, float(matrix[at[u.text]] @ q)) for u in units]),
                np.array([expect_met(u.text, e) for u in units]),
            )
            for (c, units, e), q in zip(rows, queries, strict=True)
            if units
        ]
    out = {}
    for name in data:
        train = [(x, y) for other, rows in data.items() if other != name for x, y in rows if y.any()]
        x = np.vstack([x for x, _y in train])
        y = np.concatenate([y for _x, y in train]).astype(float)
        mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
        w, b = answers._logistic((x - mean) / std, y)
        learned = sum(bool(y[int(np.argmax(((x - mean) / std) @ w + b))]) for x, y in data[name])
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
    for name, pairs in fams.items():
        seen = [stages(row, case) for row, case in pairs]
        counts = {s: sum(x[s] for x in seen) for s in STAGES}
        if name != "vtu":
            courses_n += len(pairs)
            pooled = {s: pooled[s] + counts[s] for s in STAGES}
        table.append([name, len(pairs), *(counts[s] for s in STAGES), f"{facts_auc(pairs):.3f}"])
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
