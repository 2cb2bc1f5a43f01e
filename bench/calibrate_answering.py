"""Calibrate the extractive answerer's "in your materials?" decision on labelled questions.

Two labelled sets, each question with ``answerable`` true/false:

* ``tests/data/sample_questions.jsonl`` against the shipped sample corpus (collection ``sample``);
* SyllabusQA's test split (``../shared/data/syllabusqa/test.eval.jsonl``), each syllabus indexed as
  its own collection, as a class would. (Its ``val.csv`` has questions but not the syllabi, so it
  cannot be searched; instead the 13 test syllabi are split by course: the first 7 in sorted order
  tune the thresholds, the other 6 are held out.)

Step 1 (``features``) indexes everything with the configured embedder (default: minilm) under a
throw-away Redis key prefix and writes each question's label and retrieved hits to a JSON-lines file
(so the rule can be re-tuned without re-embedding);
step 2 (``tune``) grid-searches the thresholds of :func:`worker.answerers.decision.decide` on the
tuning syllabi (maximising balanced accuracy) and reports precision and recall everywhere.

    python bench/calibrate_answering.py features            # -> bench/results/raw/answering_features.jsonl
    python bench/calibrate_answering.py tune bench/results/raw/answering_features.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from syllabot.shared.config import Settings  # noqa: E402
from syllabot.shared.schema import Hit  # noqa: E402
from syllabot.worker.answerers.decision import Evidence, Thresholds, bands, evidence  # noqa: E402

SYLLABUSQA = REPO.parent / "shared" / "data" / "syllabusqa"
SAMPLE_QUESTIONS = REPO / "tests" / "data" / "sample_questions.jsonl"
TUNE_SYLLABI = 7


def _collection_name(syllabus: str) -> str:
    stem = Path(syllabus).stem.lower()
    return "sqa-" + "".join(ch if ch.isalnum() else "-" for ch in stem)[:40].strip("-")


def cmd_features(args: argparse.Namespace) -> int:
    import redis

    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.ops.sample import sample_files

    prefix = f"calibrate:{uuid.uuid4().hex[:8]}:"
    settings = Settings(redis_url=args.redis_url, key_prefix=prefix, embedder=args.embedder, _env_file=None)
    engine = Engine(settings)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    try:
        started = time.time()
        engine.ingest("sample", sample_files(), who="calibration")
        print(f"sample corpus indexed in {time.time() - started:.0f} s", file=sys.stderr)
        for line in SAMPLE_QUESTIONS.read_text().splitlines():
            if line.strip():
                q = json.loads(line)
                rows.append(_row(engine, "sample", "sample", q["question"], q["answerable"]))
        questions = [json.loads(x) for x in (SYLLABUSQA / "test.eval.jsonl").read_text().splitlines() if x]
        syllabi = sorted({q["syllabus"] for q in questions})
        for i, syllabus in enumerate(syllabi):
            collection = _collection_name(syllabus)
            data = (SYLLABUSQA / "test_syllabi_pdf" / syllabus).read_bytes()
            started = time.time()
            report = engine.ingest(collection, [(syllabus, data)], who="calibration")
            print(
                f"{syllabus}: {report.total_chunks} chunks in {time.time() - started:.0f} s", file=sys.stderr
            )
            split = "tune" if i < TUNE_SYLLABI else "held-out"
            for q in questions:
                if q["syllabus"] == syllabus:
                    rows.append(_row(engine, collection, split, q["question"], q["answerable"]))
        with out.open("w") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
        print(f"{len(rows)} questions -> {out}", file=sys.stderr)
    finally:
        client = redis.Redis.from_url(args.redis_url)
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    return 0


def _row(engine, collection: str, split: str, question: str, answerable: bool) -> dict:
    """The question's label and retrieval result (hits kept, so the rule can be re-tuned offline)."""
    result = engine.search(collection, question)
    return {
        "split": split,
        "question": question,
        "answerable": answerable,
        "fallback": result.fallback,
        "hits": [hit.model_dump(mode="json") for hit in result.hits],
    }


def _evidence(row: dict) -> Evidence:
    return evidence(row["question"], [Hit.model_validate(h) for h in row["hits"]], row["fallback"])


def _scores(rows: list[dict], thresholds: Thresholds) -> dict[str, float]:
    tp = fp = fn = tn = 0
    for row in rows:
        said = bands(row["evidence"], thresholds) == "answered"
        if said and row["answerable"]:
            tp += 1
        elif said:
            fp += 1
        elif row["answerable"]:
            fn += 1
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    not_precision = tn / (tn + fn) if tn + fn else 0.0
    not_recall = tn / (tn + fp) if tn + fp else 0.0
    return {
        "n": len(rows),
        "precision": precision,
        "recall": recall,
        "not_precision": not_precision,
        "not_recall": not_recall,
        "balanced_accuracy": (recall + not_recall) / 2,
        "accuracy": (tp + tn) / len(rows) if rows else 0.0,
    }


def cmd_tune(args: argparse.Namespace) -> int:
    rows = [json.loads(x) for x in Path(args.features).read_text().splitlines() if x.strip()]
    for row in rows:
        row["evidence"] = _evidence(row)
    tune = [r for r in rows if r["split"] == "tune"]
    grid = itertools.product(
        [round(0.05 * i, 2) for i in range(0, 13)],  # min_cosine 0 .. 0.6
        [round(0.1 * i, 2) for i in range(0, 11)],  # min_coverage 0 .. 1
        [0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 1.01],  # sure_cosine (1.01 = never)
    )
    best = max(
        (Thresholds(c, v, s) for c, v, s in grid if s > c),
        key=lambda t: (round(_scores(tune, t)["balanced_accuracy"], 4), -t.min_cosine),
    )
    chosen = Thresholds(*args.use) if args.use else best
    never = Thresholds(min_cosine=-1.0, min_coverage=0.0, sure_cosine=-1.0)  # only fallback says "not in"
    print(f"best on tune split: {best}")
    print(f"reporting: {chosen}\n")
    print(
        "| set, rule | questions | answerable | in-materials precision | recall "
        "| not-in precision | recall | balanced accuracy |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, subset in (
        ("SyllabusQA tune (7 syllabi)", tune),
        ("SyllabusQA held-out (6 syllabi)", [r for r in rows if r["split"] == "held-out"]),
        ("sample corpus questions", [r for r in rows if r["split"] == "sample"]),
    ):
        answerable = sum(r["answerable"] for r in subset)
        for rule, thresholds in (("calibrated rule", chosen), ("fallback flag only", never)):
            s = _scores(subset, thresholds)
            print(
                f"| {name}, {rule} | {s['n']} | {answerable} | {s['precision']:.3f} | {s['recall']:.3f} "
                f"| {s['not_precision']:.3f} | {s['not_recall']:.3f} | {s['balanced_accuracy']:.3f} |"
            )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("features")
    p.add_argument("--out", default=str(REPO / "bench" / "results" / "raw" / "answering_features.jsonl"))
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    p.set_defaults(func=cmd_features)
    p = sub.add_parser("tune")
    p.add_argument("features")
    p.add_argument("--use", nargs=3, type=float, metavar=("MIN_COS", "MIN_COV", "SURE_COS"))
    p.set_defaults(func=cmd_tune)
    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
