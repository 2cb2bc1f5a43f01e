"""The course card, measured: slots read right against labels, and course-fact questions by kind.

``python -m bench.card`` prints, per real course (``../shared/data/courses``):

* **slots**: each labelled slot (``bench/data/card_labels/<course>.jsonl``, written blind from the
  documents) read right (a fact of that slot holds every ``expect`` string), missed (no fact does),
  and, for a slot no document fills, wrongly filled (the card claims a fact no document states);
* **questions by kind** (the question corpus, ``bench/data/course_*_questions.jsonl``): for the
  course-fact kinds (logistics, day_time, person, rule), the other answerable kinds and the
  unanswerable questions — the first citation's page, the reply holding the asked facts,
  answered with them, confident without them, told "not in your materials".

``--off`` reads the questions without the card (no slot asked), for the on/off figures.
``--split dev`` is the six tuning courses, ``test`` the three held out (read once, to report).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from bench.common import bench_settings, default_embedder

LABELS = Path(__file__).parent / "data" / "card_labels"
FACT_KINDS = ("logistics", "day_time", "person", "rule")


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").split())


def slot_scores(slug: str, card) -> dict[str, int] | None:
    """Right / missed of the labelled filled slots, wrong of the labelled empty ones."""
    path = LABELS / f"{slug}.jsonl"
    if not path.exists():
        return None
    labels = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = {"right": 0, "missed": 0, "empty_right": 0, "wrong": 0}
    for label in labels:
        if label.get("older"):
            continue
        facts = [_norm(f.text) for f in card.of(label["slot"])]
        if label.get("absent"):
            out["wrong" if facts else "empty_right"] += 1
            continue
        expect = [_norm(e) for e in label.get("expect", [])]
        ok = any(all(e in f for e in expect) for f in facts)
        out["right" if ok else "missed"] += 1
    return out


def kind_rows(rows: Sequence) -> list[tuple[str, dict[str, float]]]:
    """The answer figures for each group of question kinds."""
    groups: dict[str, list] = {"course facts": [], "other answerable": [], "unanswerable": []}
    for r in rows:
        kind = r.question.extra.get("kind")
        if not r.question.answerable:
            groups["unanswerable"].append(r)
        elif kind in FACT_KINDS:
            groups["course facts"].append(r)
        else:
            groups["other answerable"].append(r)
    for kind in FACT_KINDS:
        groups[f"  {kind}"] = [
            r for r in rows if r.question.answerable and r.question.extra.get("kind") == kind
        ]
    out = []
    for name, rs in groups.items():
        n = len(rs)
        if not n:
            continue
        checked = [r for r in rs if r.expect is not None]
        cited = [r for r in rs if r.question.file]
        fig = {
            "n": n,
            "first_cite_page": round(sum(r.cite_page for r in cited) / len(cited), 3) if cited else 0.0,
            "facts_held": round(
                sum(bool(r.expect) and r.status != "not_in_materials" for r in checked) / len(checked), 3
            )
            if checked
            else 0.0,
            "answered_with_facts": round(
                sum(bool(r.expect) and r.status == "answered" for r in checked) / len(checked), 3
            )
            if checked
            else 0.0,
            "confident_lacking": round(
                sum(not r.expect and r.status == "answered" for r in checked) / len(checked), 3
            )
            if checked
            else 0.0,
            "told_not_in": round(sum(r.status == "not_in_materials" for r in rs) / n, 3),
            "answered": round(sum(r.status == "answered" for r in rs) / n, 3),
        }
        out.append((name, fig))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--off", action="store_true", help="questions read without the card")
    parser.add_argument("--show", action="store_true", help="print every course-fact question's reply")
    args = parser.parse_args(argv)
    from bench.answers import one_course_rows, show
    from bench.courses import course_snapshot, courses_of

    slugs = courses_of(args.split)
    if not slugs:
        print("no course data found (../shared/data/courses); skipping")
        return 0
    if args.off:
        import syllabot.worker.query.reading as reading

        reading.asked_slots = lambda text: ()  # type: ignore[assignment]
    embedder, settings = default_embedder(), bench_settings()
    pooled = []
    totals = {"right": 0, "missed": 0, "empty_right": 0, "wrong": 0}
    for slug in slugs:
        snapshot = course_snapshot(slug, embedder)
        scores = slot_scores(slug, snapshot.course_card)
        if scores is not None:
            for key in totals:
                totals[key] += scores[key]
            print(
                f"{slug}: slots right {scores['right']}, missed {scores['missed']}; empty slots kept empty "
                f"{scores['empty_right']}, filled wrongly {scores['wrong']}"
            )
        rows = one_course_rows(slug, embedder, settings)
        if args.show:
            show(
                [r for r in rows if r.question.extra.get("kind") in FACT_KINDS or not r.question.answerable],
                only_wrong=False,
            )
        pooled += rows
    filled = totals["right"] + totals["missed"]
    empty = totals["empty_right"] + totals["wrong"]
    if filled:
        print(
            f"pooled: slots right {totals['right']}/{filled} ({totals['right'] / filled:.3f}); "
            f"empty slots filled wrongly {totals['wrong']}/{empty}"
        )
    print(f"{'kind':22} " + " ".join(f"{k:>19}" for k in kind_rows(pooled)[0][1]))
    for name, fig in kind_rows(pooled):
        print(f"{name:22} " + " ".join(f"{v:>19}" for v in fig.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
