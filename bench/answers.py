"""Answer quality as a student reads it: the three outcomes, page R@1 and `expect`, tuned vs held out.

Why: retrieval recall says the right page came back; a student reads the *answer*. This benchmark
runs the product's whole answering path — ``worker.query.reading.read_question`` (greetings, emoji and
mentions dropped, course names resolved), the default embedder, ``search_snapshot`` with the
shipped settings, and the extractive answerer — and scores what it says:

* the 3×2 table of status (answered / uncertain / not_in_materials) × answerable;
* answerable questions told "Not in your materials" (target ≤ 5%), unanswerable ones ``answered``
  (≤ 15%), ``uncertain`` share of all (≤ 25%), page R@1 (≥ 0.85), ``expect`` met (≥ 80%).

Two data sets, each split so that thresholds and rules are tuned on one half and reported on the
other (the report's headline rows are the held-out halves):

* **VTU student questions** (``bench/data/vtu_student_questions.jsonl``): written blind, the way
  students type; ``split`` dev (OS, CN, DBMS 2022) / test (ADA, DBMS 2021, AI). All six text-layer
  syllabi in one collection, as a department would index them.
* **SyllabusQA** (``../shared/data/syllabusqa``): each syllabus its own collection; the first 7
  syllabi (sorted by file name) tune, the other 6 are held out.

    python -m bench.answers [--split dev|test|all] [--set vtu|syllabusqa|all] [--show] [--no-write]
    python -m bench.answers --signals    # how well each evidence feature separates answerable questions
    python -m bench.answers --bound      # the most any band on each signal could answer, held out
"""

from __future__ import annotations

import argparse
import csv
import functools
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bench.common import (
    DATA,
    ROOT,
    bench_settings,
    default_embedder,
    embed_queries_cached,
    machine_stamp,
    markdown_table,
    parse_files,
    publish,
    result_for,
    snapshot_of,
)
from bench.courses import course_snapshot, courses_of

VTU_QUESTIONS = ROOT / "bench" / "data" / "vtu_student_questions.jsonl"
SYLLABI = DATA / "syllabi"
SQA = DATA / "syllabusqa"
TUNE_SYLLABI = 7
COURSES = DATA / "courses"
CASES: list = []  # the last run's (answerable, Question, hits, fallback), for --tune


@dataclass
class Row:
    question: object  # LabelledQuestion
    status: str
    text: str
    page_hit_at_1: bool
    expect: bool | None
    ms: float
    cite_page: bool = False  # every page the answer's first citation names holds the answer


def run(questions, snapshots_for, embedder, settings) -> list[Row]:
    from syllabot.shared.answer_text import answer_text
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.ops.evaluation import cited_page_right, expect_met, page_match
    from syllabot.worker.query.reading import read_question

    answerer = ExtractiveAnswerer(settings)
    prepared = [read_question(q.question, snapshots_for(q)) for q in questions]
    vectors = embed_queries_cached(embedder, [p.text for p in prepared], "answers")
    rows = []
    CASES.clear()
    for q, p, vector in zip(questions, prepared, vectors, strict=True):
        snapshot = snapshots_for(q)
        result = result_for(snapshot, q.question, p, vector, settings, settings.top_k)
        hits = result.hits
        CASES.append((q.answerable, p, hits, result.fallback))
        t0 = time.perf_counter()
        answer = answerer.answer_sync(q.question, result, snapshot.collection)
        ms = (time.perf_counter() - t0) * 1000
        expect = q.expect or None
        text = answer_text(answer)  # the whole answer, its status's lead included
        first = answer.citations[0] if answer.citations else None
        rows.append(
            Row(
                q,
                answer.status,
                text,
                bool(hits) and page_match(hits[0], q),
                expect_met(text, expect) if expect else None,
                ms,
                first is not None and cited_page_right(first, q),
            )
        )
    return rows


def tune(families: dict[str, list], base) -> None:
    """Grid-search the decision bands on the tuning halves: the mean of the families' costs
    (``family_cost``, each family once), among settings that leave SyllabusQA's tuning half no
    worse than the shipped bands on answerable-told-not-in and unanswerable-answered (its adversarial
    near-misses must not be answered more often to help the slide decks). Prints the best few."""
    import dataclasses
    import itertools

    from syllabot.worker.answerers.extractive import reply_for

    def rates(t) -> list[tuple[float, float, float, float]]:
        return [
            family_cost([(a, reply_for(q, h, fb, t).status) for a, q, h, fb in cases])
            for cases in families.values()
        ]

    names = list(families)
    shipped = dict(zip(names, rates(base), strict=True))
    grid = itertools.product(
        (0.25, 0.30, 0.35, 0.40), (0.3, 0.4, 0.5, 0.6), (0.45, 0.5, 0.55, 0.6, 0.65),
        (0.15, 0.2, 0.25), (0.05, 0.1, 0.15),
    )  # fmt: skip
    scored = []
    for mc, mv, sc, fc, fv in grid:
        t = dataclasses.replace(
            base, min_cosine=mc, min_coverage=mv, sure_cosine=sc, floor_cosine=fc, floor_coverage=fv
        )
        got = dict(zip(names, rates(t), strict=True))
        if "syllabusqa" in got and any(
            got["syllabusqa"][k] > shipped["syllabusqa"][k] + 1e-9 for k in (1, 2)
        ):
            continue  # more of SyllabusQA denied or invented than today
        mean = sum(r[0] for r in got.values()) / len(got)
        scored.append(
            (
                round(mean, 4),
                (mc, mv, sc, fc, fv),
                {k: tuple(round(x, 3) for x in v[1:]) for k, v in got.items()},
            )
        )
    scored.sort(key=lambda r: r[0])
    print("shipped:", {k: tuple(round(x, 3) for x in v[1:]) for k, v in shipped.items()})
    for row in scored[:8]:
        print(row)


def family_cases(split: str, embedder, settings) -> dict[str, list]:
    """The last run's CASES of each family's ``split`` half, by family."""
    out: dict[str, list] = {}
    if VTU_QUESTIONS.exists() and SYLLABI.exists():
        vtu_rows(split, embedder, settings)
        out["vtu"] = list(CASES)
    if courses_available(split):
        course_rows(split, embedder, settings)
        out["course"] = list(CASES)
    if (SQA / "test.eval.jsonl").exists():
        sqa_rows(split, embedder, settings)
        out["syllabusqa"] = list(CASES)
    return out


def family_cost(statuses: Sequence[tuple[bool, str]]) -> tuple[float, float, float, float]:
    """(cost, ans→not in, unans→answered, uncertain share of answerable) against the targets for courses from elsewhere:
    not-in ≤ 3%, unanswerable answered ≤ 1 in 15, uncertain ≤ 10% of answerable; the two harms
    weigh double the hedge."""
    ans = [st for a, st in statuses if a]
    una = [st for a, st in statuses if not a]
    not_in = sum(st == "not_in_materials" for st in ans) / max(len(ans), 1)
    wrong = sum(st == "answered" for st in una) / max(len(una), 1)
    unsure = sum(st == "uncertain" for st in ans) / max(len(ans), 1)
    cost = (
        4 * max(0.0, not_in - 0.03) + 4 * max(0.0, wrong - 1 / 15) + 2 * max(0.0, unsure - 0.10)
        + not_in + wrong + 0.5 * unsure
    )  # fmt: skip
    return cost, not_in, wrong, unsure


def _weighed(case):
    """What the answerer weighs for one case (``weigh_query``): focus, ranked sentences, value
    sentences, evidence."""
    from syllabot.worker.answerers.extractive import weigh_query

    _a, question, hits, fallback = case
    return weigh_query(question, hits, fallback)


def _probe_features(case, weighed=None) -> list[float]:
    """Retrieval features a learned decision could combine: the bands' two axes, the best
    sentence's word overlap and the best keyword score of the focus chunks (``weighed``: the case's
    :func:`_weighed`, when the caller has it)."""
    hits = case[2]
    focus, ranked, _v, ev = weighed or _weighed(case)
    top_kw = max((hits[i].keyword for i in focus[:3]), default=0.0)
    return [ev.top_cosine, ev.coverage, ranked[0].overlap if ranked else 0.0, top_kw]


def probe_learned(embedder, settings) -> None:
    """Can a logistic regression over retrieval features beat the bands' own axes on held-out
    families? Fitted on the tuning halves (VTU dev, the psychology course, SyllabusQA's first 7),
    scored by AUC on the held-out halves. Measured 2026-12-01: no (docs/BENCHMARKS.md), so the
    product keeps the bands and their cut-offs are re-tuned instead (``--tune``)."""
    import numpy as np

    tune_fams = family_cases("dev", embedder, settings)
    x = np.array([_probe_features(c) for cases in tune_fams.values() for c in cases])
    y = np.array([c[0] for cases in tune_fams.values() for c in cases], dtype=float)
    mean, std = x.mean(0), x.std(0) + 1e-9
    w, b = _logistic((x - mean) / std, y, l2=1.0)
    print("standardised weights (cosine, coverage, sentence overlap, keyword):", np.round(w, 3), round(b, 3))
    for name, cases in family_cases("test", embedder, settings).items():
        feats = np.array([_probe_features(c) for c in cases])
        labels = [c[0] for c in cases]
        learned = ((feats - mean) / std) @ w + b
        axes = feats[:, 0] + 0.5 * feats[:, 1]
        print(
            f"held-out {name}: AUC learned {auc(list(learned), labels):.3f}, bands' axes {auc(list(axes), labels):.3f}"
        )


def best_answered_share(scores: Sequence[float], positive: Sequence[bool], wrong: float = 1 / 15) -> float:
    """The largest share of answerable questions one cut-off on this score could answer while at most
    ``wrong`` of the unanswerable ones are answered, the cut-off chosen on the very data scored: an
    optimistic bound, so a figure under the target proves no band on this score can reach it."""
    neg = sorted((s for s, p in zip(scores, positive, strict=True) if not p), reverse=True)
    pos = [s for s, p in zip(scores, positive, strict=True) if p]
    if not pos:
        return float("nan")
    allowed = int(wrong * len(neg))
    cut = neg[allowed] + 1e-9 if allowed < len(neg) else min(pos)
    return sum(s >= cut for s in pos) / len(pos)


def sentence_cosine(embedder, query: str, ranked, candidates: int = 8) -> float:
    """The best cosine between the question and the answerer's first ``candidates`` ranked
    sentences, each embedded alone: does similarity read at sentence grain, rather than over a
    whole chunk, tell an answered question from a near miss?"""
    texts = list(dict.fromkeys(s.text for s in ranked))[:candidates]
    if not texts:
        return 0.0
    return float((embedder.embed_documents(texts) @ embedder.embed_query(query)).max())


def bound(embedder, settings) -> None:
    """Per held-out family, each retrieval signal's AUC and :func:`best_answered_share` (the issue's
    ≤ 1 in 15 unanswerable answered): whether any band on it could reach 85% answered."""
    names = (
        "top cosine",
        "coverage",
        "best sentence overlap",
        "bands' axes (cosine + coverage/2)",
        "best candidate sentence's own cosine",
        "sentence cosine + top cosine",
    )
    for family, cases in family_cases("test", embedder, settings).items():
        weighed = [_weighed(c) for c in cases]
        feats = [_probe_features(c, w) for c, w in zip(cases, weighed, strict=True)]
        labels = [c[0] for c in cases]
        columns = [[f[0] for f in feats], [f[1] for f in feats], [f[2] for f in feats]]
        columns.append([f[0] + 0.5 * f[1] for f in feats])
        sentences = [sentence_cosine(embedder, c[1], w[1]) for c, w in zip(cases, weighed, strict=True)]
        columns.append(sentences)
        columns.append([s + f[0] for s, f in zip(sentences, feats, strict=True)])
        print(f"held-out {family}: n={len(labels)}, answerable {sum(labels)}")
        for name, values in zip(names, columns, strict=True):
            print(
                f"  AUC {auc(values, labels):.3f}  answered at most {best_answered_share(values, labels):.3f}  {name}"
            )


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """Probability that a random answerable question scores above a random unanswerable one
    (ties count half): the one figure that says whether a signal *can* separate the two.
    Counted by ranks (tied scores share their mean rank), so a bootstrap can call it thousands of
    times (``bench.train_reader``)."""
    import numpy as np

    s = np.asarray(scores, dtype=np.float64)
    p = np.asarray(positive, dtype=bool)
    if len(s) != len(p):
        raise ValueError(f"{len(s)} scores for {len(p)} labels")
    n_pos, n_neg = int(p.sum()), int((~p).sum())
    if not n_pos or not n_neg:
        return float("nan")
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    mean_rank = np.cumsum(counts) - (counts - 1) / 2  # 1-based, ties sharing their mean
    rank_sum = float(mean_rank[inverse][p].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def least_uncertain(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """The smallest ``uncertain`` share any two cut-offs on this one score can give while both error
    targets hold (answerable told not-in ≤ 5%, unanswerable answered ≤ 15%), cut-offs chosen on the
    very data scored: an optimistic bound, so a figure above 0.25 proves the signal cannot do it."""
    pos = sorted(s for s, p in zip(scores, positive, strict=True) if p)
    neg = sorted(s for s, p in zip(scores, positive, strict=True) if not p)
    # answered iff score >= hi: the lowest hi keeping unanswerable-answered <= 15%
    hi = neg[len(neg) - int(0.15 * len(neg)) - 1] + 1e-9 if neg else min(pos)
    # not in the materials iff score < lo: the highest lo keeping answerable-denied <= 5%
    lo = pos[int(0.05 * len(pos))] if pos else hi
    lo = min(lo, hi)
    unsure = sum(lo <= s < hi for s in scores)
    return unsure / len(scores)


def _logistic(x, y, l2: float = 1.0, steps: int = 3000):
    """Class-balanced L2 logistic regression by gradient descent (numpy; a bench probe, not product)."""
    import numpy as np

    w, b = np.zeros(x.shape[1]), 0.0
    weight = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    for _ in range(steps):
        g = (1 / (1 + np.exp(-(x @ w + b))) - y) * weight
        w -= 0.5 * (x.T @ g / len(y) + l2 * w / len(y))
        b -= 0.5 * g.mean()
    return w, b


def signals(embedder, settings) -> None:
    """AUC of each answerability signal for answerable vs unanswerable SyllabusQA questions, per
    split, with the least ``uncertain`` share two cut-offs on it could give while both error targets
    hold. Why: the decision can only be as good as its best signal; if none separates the classes,
    no threshold meets the targets and the fix is a new signal, not new bands. Besides the retrieval
    evidence the product uses, two probes: a question-style prior (a logistic regression on the
    MiniLM embeddings of SyllabusQA's ``val.csv`` questions, whose syllabi are not here: does the
    *way* a question is asked say it is unanswerable?) and that prior combined with cosine and
    coverage (fit on the tune 7, scored on both)."""
    import csv

    import numpy as np

    from syllabot.worker.answerers.decision import evidence
    from syllabot.worker.ops.evaluation import load_questions
    from syllabot.worker.query.reading import read_question
    from syllabot.worker.text.terms import term_set, terms

    questions = load_questions(SQA / "test.eval.jsonl")
    syllabi = sorted({q.extra["syllabus"] for q in questions})
    rows: list[tuple[str, str, dict[str, float], bool]] = []
    for split, names in (("tune 7", syllabi[:TUNE_SYLLABI]), ("held-out 6", syllabi[TUNE_SYLLABI:])):
        for name in names:
            chunks, _ = parse_files([SQA / "test_syllabi_pdf" / name])
            if not chunks:
                continue
            snap = snapshot_of(chunks, embedder, "syllabusqa", collection=name)
            vocab: set[str] = set()
            for c in snap.chunks:
                vocab |= term_set(c.text) | term_set(f"{c.title} {c.section or ''}")
            mine = [q for q in questions if q.extra["syllabus"] == name]
            prepared = [read_question(q.question, snap) for q in mine]
            vectors = embed_queries_cached(embedder, [p.text for p in prepared], "answers")
            for q, p, vector in zip(mine, prepared, vectors, strict=True):
                result = result_for(snap, q.question, p, vector, settings, settings.top_k)
                ev = evidence(p.text, result.hits, result.fallback)
                q_terms = set(terms(p.text))
                values = {
                    "top cosine": ev.top_cosine,
                    "top hybrid score": ev.top_score,
                    "word coverage (top 3)": ev.coverage,
                    "cosine + coverage / 2 (the shipped rule's axes)": ev.top_cosine + 0.5 * ev.coverage,
                    "question words in the syllabus at all": len(q_terms & vocab) / max(len(q_terms), 1),
                }
                rows.append((split, q.question, values, q.answerable))
    val_csv = SQA / "val.csv"
    if val_csv.exists():
        with val_csv.open(newline="", encoding="utf-8") as fh:
            val = list(csv.DictReader(fh))
        w, b = _logistic(
            np.asarray(embedder.embed_documents([r["question"] for r in val])),
            np.array([r["question_type"] != "no answer" for r in val], dtype=float),
        )
        prior = np.asarray(embedder.embed_documents([r[1] for r in rows])) @ w + b
        feats = np.array(
            [
                [pr, r[2]["top cosine"], r[2]["word coverage (top 3)"]]
                for pr, r in zip(prior, rows, strict=True)
            ]
        )
        tune_mask = np.array([r[0] == "tune 7" for r in rows])
        # scaled by the tune half's own statistics: nothing of the held-out half leaks in
        feats = (feats - feats[tune_mask].mean(0)) / feats[tune_mask].std(0)
        labels = np.array([r[3] for r in rows], dtype=float)
        w2, b2 = _logistic(feats[tune_mask], labels[tune_mask], l2=0.1)
        combined = feats @ w2 + b2
        for i, r in enumerate(rows):
            r[2]["question-style prior (trained on val.csv questions)"] = float(prior[i])
            r[2]["prior + cosine + coverage (fit on tune 7)"] = float(combined[i])
    for split in ("tune 7", "held-out 6"):
        mine_rows = [r for r in rows if r[0] == split]
        labels_ = [r[3] for r in mine_rows]
        print(f"SyllabusQA {split}: n={len(labels_)}, answerable {sum(labels_)}")
        for key in mine_rows[0][2]:
            values_ = [r[2][key] for r in mine_rows]
            print(
                f"  AUC {auc(values_, labels_):.3f}  least uncertain {least_uncertain(values_, labels_):.3f}  {key}"
            )


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


@functools.lru_cache(maxsize=1)
def _sqa_spans() -> dict[str, tuple[str, ...]]:
    """SyllabusQA's annotated answer spans by question id (``test.csv``), normalised, each at
    least 8 characters: what an ``uncertain`` reply is checked for when a question has no
    ``expect``."""
    path = SQA / "test.csv"
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    spans = {r["id"]: tuple(_norm(r[f"answer_span_{k}"]) for k in range(1, 6)) for r in rows}
    return {i: tuple(x for x in found if len(x) >= 8) for i, found in spans.items()}


def quotes_answer(row: Row) -> bool | None:
    """Whether the reply quotes the answer: its ``expect`` met, or (SyllabusQA) the first 40
    characters of an annotated answer span in it; None when neither can say. Why: an
    ``uncertain`` reply leads with the closest passages, and how often they hold the answer is
    what the hedge costs a student."""
    if row.question.expect:
        return bool(row.expect)
    spans = _sqa_spans().get(str(row.question.extra.get("id", "")), ())
    if not spans:
        return None
    text = _norm(row.text)
    return any(span[:40] in text for span in spans)


def summary(rows: Sequence[Row]) -> dict[str, float | int]:
    ans = [r for r in rows if r.question.answerable]
    una = [r for r in rows if not r.question.answerable]
    exp = [r.expect for r in rows if r.expect is not None]
    ms = sorted(r.ms for r in rows)

    def share(part: int, whole: int) -> float:
        return round(part / whole, 3) if whole else 0.0

    out: dict[str, float | int] = {"n": len(rows), "answerable": len(ans), "unanswerable": len(una)}
    for status in ("answered", "uncertain", "not_in_materials"):
        out[f"ans_{status}"] = sum(r.status == status for r in ans)
        out[f"una_{status}"] = sum(r.status == status for r in una)
    out["ans_told_not_in"] = share(int(out["ans_not_in_materials"]), len(ans))
    out["una_answered_share"] = share(int(out["una_answered"]), len(una))
    out["uncertain"] = share(sum(r.status == "uncertain" for r in rows), len(rows))
    out["page_r1"] = share(
        sum(r.page_hit_at_1 for r in ans if r.question.file), sum(1 for r in ans if r.question.file)
    )
    out["expect_met"] = share(sum(exp), len(exp))
    out["expect_n"] = len(exp)
    out["ans_uncertain_share"] = share(int(out["ans_uncertain"]), len(ans))
    out["ans_answered_share"] = share(int(out["ans_answered"]), len(ans))
    checked = [r for r in ans if r.expect is not None]
    out["expect_and_answered"] = share(
        sum(bool(r.expect) and r.status == "answered" for r in checked), len(checked)
    )
    # answered, and the reply lacks what the question expects: the quiet wrongness a hedge avoids
    answered_checked = [r for r in checked if r.status == "answered"]
    out["answered_missing"] = sum(not r.expect for r in answered_checked)
    out["answered_checked"] = len(answered_checked)
    lists = [r for r in checked if r.question.extra.get("kind") == "list"]
    out["list_whole"] = share(sum(bool(r.expect) for r in lists), len(lists))
    out["list_n"] = len(lists)
    judged = [q for q in (quotes_answer(r) for r in ans if r.status == "uncertain") if q is not None]
    out["uncertain_quoting"] = share(sum(judged), len(judged))
    out["uncertain_judged"] = len(judged)
    out["uncertain_quoting_n"] = sum(judged)
    # what the student reads (issue 55's measure): the reply, confident or not, holds the asked facts
    out["facts_n"] = len(checked)
    out["facts_held_n"] = sum(bool(r.expect) and r.status != "not_in_materials" for r in checked)
    out["facts_held"] = share(int(out["facts_held_n"]), len(checked))
    out["confident_wrong_share"] = share(int(out["answered_missing"]), len(checked))
    out["answered_with_facts_n"] = sum(bool(r.expect) and r.status == "answered" for r in checked)
    lengths = sorted(len(r.text) for r in rows)
    out["reply_chars_p50"] = lengths[len(lengths) // 2] if lengths else 0
    out["reply_chars_max"] = lengths[-1] if lengths else 0
    cited = [r for r in ans if r.question.file]
    out["cite_page"] = share(sum(r.cite_page for r in cited), len(cited))
    out["answer_ms_p50"] = round(ms[len(ms) // 2], 2) if ms else 0.0
    out["markup_replies"] = sum(has_markup(r.text) for r in rows)
    return out


#: Template or citation markup no reply may show (issue 63): Liquid output or tags ("{{", "{%"),
#: a pandoc citation ("[@key]", "@dirckx:2006anatomical"), a backslash escape ("15\%"), raw bold
#: ("**").
MARKUP = re.compile(
    r"\{\{|\{%|\[-?@\w|(?<![\w.@])@[A-Za-z][\w-]*:\w|\\[%$&#_{}*]|\*\*(?=[^\s*])|(?<=[^\s*])\*\*"
)


def has_markup(text: str) -> bool:
    """The reply shows markup a rendered page would not (:data:`MARKUP`)."""
    return MARKUP.search(text) is not None


def vtu_rows(split: str, embedder, settings) -> list[Row]:
    from syllabot.worker.ops.evaluation import load_questions

    questions = [q for q in load_questions(VTU_QUESTIONS) if split == "all" or q.extra.get("split") == split]
    chunks, _ = parse_files(sorted(SYLLABI.glob("*.pdf")))
    snapshot = snapshot_of(chunks, embedder, "vtu", collection="vtu")
    return run(questions, lambda q: snapshot, embedder, settings)


def one_course_rows(slug: str, embedder, settings) -> list[Row]:
    """One real course (all its documents in one collection) against its blind questions."""
    from bench.corpus_labels import questions_path
    from syllabot.worker.ops.evaluation import load_questions

    snapshot = course_snapshot(slug, embedder)
    return run(load_questions(questions_path(slug)), lambda q: snapshot, embedder, settings)


def course_rows(split: str, embedder, settings) -> list[Row]:
    """Every course of a split, each its own collection, rows pooled (``--tune`` reads them as one family)."""
    return [row for slug in courses_of(split) for row in one_course_rows(slug, embedder, settings)]


def courses_available(split: str) -> bool:
    return bool(courses_of(split))


def sqa_rows(split: str, embedder, settings) -> list[Row]:
    from syllabot.worker.ops.evaluation import load_questions

    questions = load_questions(SQA / "test.eval.jsonl")
    syllabi = sorted({q.extra["syllabus"] for q in questions})
    keep = {"dev": syllabi[:TUNE_SYLLABI], "test": syllabi[TUNE_SYLLABI:], "all": syllabi}[split]
    snapshots = {}
    for name in keep:
        chunks, _ = parse_files([SQA / "test_syllabi_pdf" / name])
        if chunks:
            snapshots[name] = snapshot_of(chunks, embedder, "syllabusqa", collection=name)
    questions = [q for q in questions if q.extra["syllabus"] in snapshots]
    return run(questions, lambda q: snapshots[q.extra["syllabus"]], embedder, settings)


def show(rows: Sequence[Row], only_wrong: bool = True) -> None:
    for r in rows:
        q = r.question
        wrong = (
            (q.answerable and r.status != "answered")
            or (not q.answerable and r.status == "answered")
            or r.expect is False
        )
        if only_wrong and not wrong:
            continue
        mark = "OK " if not wrong else "XX "
        print(
            f"{mark}[{r.status}] ans={q.answerable} p@1={r.page_hit_at_1} expect={r.expect} :: {q.question}"
        )
        if q.expect:
            print(f"      expect {q.expect}")
        print("      " + r.text.replace("\n", "\n      ")[:900])


#: What the student reads, first (the targets count these): the reply holds the asked facts
#: (answered or uncertain), confident answers lacking them, answered with them, told not-in,
#: unanswerable answered, lists whole, first citation's page.
READS_HEADERS = [
    "set", "answerable / unanswerable", "reply holds the facts", "confident, lacking them",
    "answered with the facts", "told not-in", "unanswerable answered", "lists whole",
    "1st citation's page", "reply chars p50 / max", "replies with markup",
]  # fmt: skip


def reads_row(name: str, s: dict) -> list:
    n = s["facts_n"]
    return [
        name,
        f"{s['answerable']} / {s['unanswerable']}",
        f"{s['facts_held']:.3f} ({s['facts_held_n']}/{n})" if n else "—",
        f"{s['confident_wrong_share']:.3f} ({s['answered_missing']}/{n})" if n else "—",
        f"{s['expect_and_answered']:.3f} ({s['answered_with_facts_n']}/{n})" if n else "—",
        f"{s['ans_told_not_in']:.3f} ({s['ans_not_in_materials']}/{s['answerable']})",
        f"{s['una_answered_share']:.3f} ({s['una_answered']}/{s['unanswerable']})",
        f"{s['list_whole']:.3f} (n={s['list_n']})" if s["list_n"] else "—",
        f"{s['cite_page']:.3f}",
        f"{s['reply_chars_p50']} / {s['reply_chars_max']}",
        s["markup_replies"],
    ]


HEADERS = [
    "set", "n", "answered (of answerable)", "ans→not in", "unans→answered", "uncertain (of answerable)",
    "page R@1", "1st citation page", "expect met", "expect met and answered",
    "answered without what was expected (of answered)", "lists whole",
    "uncertain replies quoting the answer", "answer p50 ms",
]  # fmt: skip


def table_row(name: str, s: dict) -> list:
    return [
        name,
        s["n"],
        f"{s['ans_answered_share']:.3f} ({s['ans_answered']}/{s['answerable']})",
        f"{s['ans_told_not_in']:.3f} ({s['ans_not_in_materials']}/{s['answerable']})",
        f"{s['una_answered_share']:.3f} ({s['una_answered']}/{s['unanswerable']})",
        f"{s['ans_uncertain_share']:.3f}",
        f"{s['page_r1']:.3f}",
        f"{s['cite_page']:.3f}",
        f"{s['expect_met']:.3f} (n={s['expect_n']})" if s["expect_n"] else "—",
        f"{s['expect_and_answered']:.3f}" if s["expect_n"] else "—",
        f"{s['answered_missing'] / s['answered_checked']:.3f} ({s['answered_missing']}/{s['answered_checked']})"
        if s["answered_checked"]
        else "—",
        f"{s['list_whole']:.3f} (n={s['list_n']})" if s["list_n"] else "—",
        f"{s['uncertain_quoting']:.3f} ({s['uncertain_quoting_n']}/{s['uncertain_judged']})"
        if s["uncertain_judged"]
        else "—",
        s["answer_ms_p50"],
    ]


def status_table(name: str, s: dict) -> list[str]:
    return [
        f"{name}: status × answerable",
        "",
        markdown_table(
            ["", "answered", "uncertain", "not_in_materials"],
            [
                ["answerable", s["ans_answered"], s["ans_uncertain"], s["ans_not_in_materials"]],
                ["unanswerable", s["una_answered"], s["una_uncertain"], s["una_not_in_materials"]],
            ],
        ),
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--split", choices=["dev", "test", "all"], default=None, help="default: both, reported apart"
    )
    parser.add_argument("--set", choices=["vtu", "syllabusqa", "courses", "all"], default="all")
    parser.add_argument("--show", action="store_true", help="print every wrong answer")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--tune", action="store_true", help="grid-search the thresholds on the dev split")
    parser.add_argument("--signals", action="store_true", help="AUC of each evidence signal (SyllabusQA)")
    parser.add_argument(
        "--bound",
        action="store_true",
        help="per held-out family: each signal's AUC and the most it could answer (cut-off fit on it)",
    )
    parser.add_argument(
        "--probe-learned", action="store_true", help="a logistic decision vs the bands, by held-out AUC"
    )
    parser.add_argument("--alpha", type=float, default=None, help="hybrid alpha (default: the shipped one)")
    args = parser.parse_args(argv)
    if args.signals:
        if not (SQA / "test.eval.jsonl").exists():
            print("no SyllabusQA data found (../shared/data); skipping")
            return 0
        signals(default_embedder(), bench_settings())
        return 0
    if args.bound:
        bound(default_embedder(), bench_settings())
        return 0
    if args.probe_learned:
        probe_learned(default_embedder(), bench_settings())
        return 0
    if args.tune:
        from syllabot.worker.answerers.decision import thresholds_for

        embedder = default_embedder()
        tune(family_cases("dev", embedder, bench_settings()), thresholds_for(embedder.id))
        return 0
    embedder = default_embedder()
    settings = bench_settings() if args.alpha is None else bench_settings(hybrid_alpha=args.alpha)
    started = time.perf_counter()
    splits = [args.split] if args.split else ["dev", "test"]
    results: list[tuple[str, dict]] = []
    for split in splits:
        if args.set in ("vtu", "all") and SYLLABI.exists() and VTU_QUESTIONS.exists():
            rows = vtu_rows(split, embedder, settings)
            if args.show:
                show(rows)
            results.append((f"VTU student questions, {split}", summary(rows)))
        course_splits = ["dev", "test"] if split == "all" else [split]
        for cs in course_splits:
            if args.set not in ("courses", "all"):
                continue
            label = "tune" if cs == "dev" else "held out"
            pooled: list[Row] = []
            for slug in courses_of(cs):
                rows = one_course_rows(slug, embedder, settings)
                if args.show:
                    show(rows)
                pooled += rows
                results.append((f"Course {slug}, {label}", summary(rows)))
            if len(courses_of(cs)) > 1:
                results.append((f"Courses pooled, {label}", summary(pooled)))
        if args.set in ("syllabusqa", "all") and (SQA / "test.eval.jsonl").exists():
            rows = sqa_rows(split, embedder, settings)
            if args.show:
                show(rows)
            results.append(
                (
                    f"SyllabusQA, {'tune 7' if split == 'dev' else 'held-out 6' if split == 'test' else 'all 13'}",
                    summary(rows),
                )
            )
    if not results:
        print("no evaluation data found (../shared/data); skipping")
        return 0
    for name, s in results:
        print(name, s)
    elapsed = time.perf_counter() - started
    lines = [
        "## Answers students read: three outcomes, tuned vs held out",
        "",
        f"`python -m bench.answers` — {machine_stamp()} Extractive answerer, default embedder, shipped "
        f"settings. Targets on held-out data: ans→not in ≤ 0.05, unans→answered ≤ 0.15, uncertain ≤ 0.25, "
        f"page R@1 ≥ 0.85, expect met ≥ 0.80, answer ≤ 5 ms p50. Whole run {elapsed:.0f} s.",
        "",
        "What the student reads (answerable questions with the facts they ask for; the targets count these):",
        "",
        markdown_table(READS_HEADERS, [reads_row(name, s) for name, s in results]),
        "",
        "Outcomes and retrieval:",
        "",
        markdown_table(HEADERS, [table_row(name, s) for name, s in results]),
        "",
    ]
    for name, s in results:
        lines += status_table(name, s)
    if not args.no_write and not args.split and args.set == "all":
        publish("answers", lines, write=True)
    else:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
