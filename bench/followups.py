"""Follow-ups: page recall@5 of a conversation's second question, with and without the conversation.

Why: in a thread a student's second question names neither the course nor the module ("and the
course outcomes?"), so on its own it searches every course of the collection, and the two sample
syllabi print the same blocks (outcomes, textbooks, assessment) in the same places. The worker
resolves it against the previous turn (``worker/query/conversation.py``): this measures how much that
gives back.

* ``bench/data/followups.jsonl``: two-turn conversations of our own over the sample syllabi in
  ``corpus/``, written as students would before the system was run on them; the second turn names
  neither course nor module, and its labelled page(s) answer it. Split ``dev`` (what the carrying
  rules were tuned on) and ``test`` (reported, not tuned on).
* The collection is the whole sample corpus (help-centre pages too), loaded, chunked and embedded
  as ``syllabot index`` does. The first turn is searched as the worker does and its turn recorded
  with ``worker.query.conversation.turn_for``; the second is searched with ``worker.query.reading.read_question``
  given that turn ("with") and given nothing ("without"), through ``search_snapshot`` at the
  shipped settings. A hit counts when it covers a labelled page of the labelled file.

    python -m bench.followups [--no-write] [--verbose]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.common import (
    ROOT,
    bench_settings,
    default_embedder,
    machine_stamp,
    mark,
    markdown_table,
    parse_files,
    publish,
    snapshot_of,
)

CONVERSATIONS = ROOT / "bench" / "data" / "followups.jsonl"
CORPUS = ROOT / "corpus"
TARGET = 0.9
K = 5


def load_conversations(path: Path = CONVERSATIONS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def corpus_paths() -> list[Path]:
    from syllabot.shared.formats import is_document_name

    return sorted(p for p in CORPUS.iterdir() if is_document_name(p.name) and p.name != "README.md")


def covers(hit, conversation: dict) -> bool:
    if hit.file != conversation["file"]:
        return False
    start = hit.page or 1
    end = hit.page_end or start
    return any(start <= p <= end for p in conversation["pages"])


def run(conversations: list[dict], verbose: bool = False) -> list[dict]:
    """Per conversation: whether the second turn's top-K holds its page, with and without context."""
    from syllabot.worker.indexes.retrieval import search_snapshot
    from syllabot.worker.query.conversation import turn_for
    from syllabot.worker.query.reading import read_question

    settings = bench_settings()
    embedder = default_embedder()
    chunks, errors = parse_files(corpus_paths())
    if errors:
        raise SystemExit(f"the sample corpus did not load: {errors}")
    snapshot = snapshot_of(chunks, embedder, "sample-corpus", collection="default")

    def search(question: str, turns=()):
        prepared = read_question(question, snapshot, turns)
        _, hits = search_snapshot(snapshot, embedder.embed_query(prepared.text), prepared, settings, K)
        return prepared, hits

    rows = []
    for c in conversations:
        first, second = c["turns"]
        prepared, hits = search(first)
        turn = turn_for(first, prepared.text, prepared.courses, prepared.topic, hits, 0.0)
        with_query, with_hits = search(second, (turn,))
        _, alone_hits = search(second)
        row = {
            "id": c["id"],
            "split": c["split"],
            "with": any(covers(h, c) for h in with_hits[:K]),
            "without": any(covers(h, c) for h in alone_hits[:K]),
            "with@1": bool(with_hits) and covers(with_hits[0], c),
            "without@1": bool(alone_hits) and covers(alone_hits[0], c),
            "with_course": _share(with_hits[:K], c),
            "without_course": _share(alone_hits[:K], c),
        }
        rows.append(row)
        if verbose:
            print(
                f"{c['id']:>3} {c['split']:<4} with={row['with']!s:<5} without={row['without']!s:<5} "
                f"{second!r} -> {with_query.text!r} {with_query.courses} "
                f"top: {[(h.file[:12], h.page) for h in with_hits[:K]]}"
            )
    return rows


def _share(hits, conversation: dict) -> float:
    """Share of the top hits from the conversation's own syllabus (the rest are another course's)."""
    return sum(h.file == conversation["file"] for h in hits) / len(hits) if hits else 0.0


def recall(rows: list[dict], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows) if rows else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-write", action="store_true", help="print the table, leave the docs alone")
    parser.add_argument("--verbose", action="store_true", help="one line per conversation")
    args = parser.parse_args()
    conversations = load_conversations()
    rows = run(conversations, verbose=args.verbose)
    table = []
    for split in ("dev", "test", "all"):
        part = rows if split == "all" else [r for r in rows if r["split"] == split]
        with_r, without_r = recall(part, "with"), recall(part, "without")
        table.append(
            (
                split,
                len(part),
                without_r,
                with_r,
                mark(with_r, TARGET),
                recall(part, "without@1"),
                recall(part, "with@1"),
                recall(part, "without_course"),
                recall(part, "with_course"),
            )
        )
    lines = [
        "## Follow-ups in threads",
        "",
        f"`python -m bench.followups` — {machine_stamp()} {len(rows)} two-turn conversations of ours "
        "(`bench/data/followups.jsonl`) over the sample syllabi in `corpus/`, searched in the whole "
        "sample corpus; the second turn names neither course nor module. Page recall@5 of the second "
        f"turn searched on its own and with the conversation (`worker/query/conversation.py`); target ≥ {TARGET} "
        "with it. The carrying rules were written before the first run; the one change after it (module "
        "numerals are carried as a module label, never as loose words) came from a `dev` conversation; "
        "nothing was changed for a `test` one.",
        "",
        markdown_table(
            (
                "split",
                "conversations",
                f"R@{K} alone",
                f"R@{K} with",
                "target",
                "R@1 alone",
                "R@1 with",
                f"top-{K} from the right syllabus, alone",
                "with",
            ),
            table,
        ),
        "",
        "Each syllabus has 4 pages, so five hits from anywhere in the corpus often include the right "
        "page by luck: the R@1 and right-syllabus columns show what the conversation changes.",
    ]
    publish("followups", lines, write=not args.no_write)


if __name__ == "__main__":
    main()
