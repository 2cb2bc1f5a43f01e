"""Real VTU syllabi: page recall@5 and module accuracy on our own labelled questions.

Why: these are the documents the product is for, with their traps (modules crossing pages, a page
that starts with another course's tail, near-duplicate DBMS syllabi of two schemes, "Unit – II"
with an en dash). The questions in ``bench/data/vtu_questions.jsonl`` were written by us and label
file, page(s) and module. All syllabus PDFs go into one collection, as a department would index
them; the scanned PDF is expected to fail with a clear error and is reported, not indexed.

* page recall@k: a top-k hit from the labelled file covers a labelled page
  (``worker.ops.evaluation.metrics``, as ``syllabot eval``);
* module accuracy: the top hit comes from the labelled file and its module equals the label
  ("Module 3", "Unit II"; compared case- and space-insensitively);
* the answerer's in-materials decision on the unanswerable questions.

    python -m bench.vtu [--quick]      # quick: no per-question listing of misses
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Sequence

from bench.common import (
    CONFIGS,
    DATA,
    ROOT,
    bench_settings,
    default_embedder,
    embed_queries_cached,
    machine_stamp,
    markdown_table,
    parse_files,
    publish,
    search_rows,
    snapshot_of,
)

QUESTIONS = ROOT / "bench" / "data" / "vtu_questions.jsonl"
SYLLABI = DATA / "syllabi"


def same_module(a: str | None, b: str | None) -> bool:
    def norm(s: str | None) -> str:
        return re.sub(r"[\s\-–—:]+", " ", (s or "").lower()).strip()

    return bool(a) and bool(b) and norm(a) == norm(b)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the listing of misses")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if not SYLLABI.exists() or not QUESTIONS.exists():
        print(f"VTU syllabi ({SYLLABI}) or questions ({QUESTIONS}) missing; skipping")
        return 0
    from syllabot.worker.answerers.extractive import status_of
    from syllabot.worker.ops.evaluation import load_questions, metrics

    started = time.perf_counter()
    questions = load_questions(QUESTIONS)
    embedder = default_embedder()
    chunks, errors = parse_files(sorted(SYLLABI.glob("*.pdf")))
    snapshot = snapshot_of(chunks, embedder, "vtu", collection="vtu")
    qvecs = embed_queries_cached(embedder, [q.question for q in questions], "vtu")

    rows_out, misses = [], []
    decisions: list[tuple[str, int, int, int, int]] = []  # per thresholded config
    for label, alpha, method, threshold in CONFIGS:
        settings = bench_settings(hybrid_alpha=alpha, keyword_method=method)
        if threshold is not None:
            settings = settings.model_copy(update={"score_threshold": threshold})
        results = [
            search_rows(snapshot, q.question, qvecs[i], settings, settings.top_k)
            for i, q in enumerate(questions)
        ]
        m = metrics([(q, r.hits, not r.fallback) for q, r in zip(questions, results, strict=True)])
        labelled = [(q, r) for q, r in zip(questions, results, strict=True) if q.extra.get("module")]
        module_ok = [
            bool(r.hits) and r.hits[0].file == q.file and same_module(r.hits[0].module, q.extra["module"])
            for q, r in labelled
        ]
        module_acc = sum(module_ok) / len(module_ok) if module_ok else 0.0
        rows_out.append((label, m["recall@1_page"], m["recall@5_page"], m["recall@18_page"], module_acc))
        print(f"  {label:<58} page R@5 {m['recall@5_page']:.3f}  module acc {module_acc:.3f}", flush=True)
        if threshold is None:
            said = [status_of(q.question, r) == "answered" for q, r in zip(questions, results, strict=True)]
            unans = [s for q, s in zip(questions, said, strict=True) if not q.answerable]
            ans = [s for q, s in zip(questions, said, strict=True) if q.answerable]
            decisions.append(
                (f"alpha {alpha}", sum(not s for s in unans), len(unans), sum(not s for s in ans), len(ans))
            )
            if len(decisions) == 1:  # the shipped configuration
                for (q, r), ok in zip(labelled, module_ok, strict=True):
                    if not ok:
                        top = r.hits[0] if r.hits else None
                        misses.append(
                            f"- {q.question!r}: want {q.file} {q.extra['module']}, got "
                            + (f"{top.file} {top.module} p{top.page}" if top else "nothing")
                        )

    elapsed = time.perf_counter() - started
    n_modules = sum(1 for q in questions if q.extra.get("module"))
    n_answerable = sum(1 for q in questions if q.answerable)
    lines = [
        "## Retrieval quality: real VTU syllabi",
        "",
        f"`python -m bench.vtu{' --quick' if args.quick else ''}` — {machine_stamp()} "
        f"{len(questions)} questions of ours (`bench/data/vtu_questions.jsonl`: {n_answerable} answerable, "
        f"{n_modules} with a module label, {len(questions) - n_answerable} unanswerable) over one collection "
        f"of {len(chunks)} chunks from the text-layer syllabi; default embedder `{embedder.id}`, k = 18. "
        f"Whole run {elapsed:.0f} s.",
        "",
        markdown_table(
            ["retrieval", "page R@1", "page R@5", "page R@18", "module accuracy (top hit)"], rows_out
        ),
        "",
    ]
    for name, flagged_u, n_u, flagged_a, n_a in decisions:
        lines.append(
            f"- Answerer's decision with the real threshold, {name}: {flagged_u}/{n_u} unanswerable questions "
            f'get "Not in your materials"; {flagged_a}/{n_a} answerable ones are wrongly flagged.'
        )
    if errors:
        lines.append("- Not indexed (as intended for the scanned PDF): " + "; ".join(errors))
    if misses and not args.quick:
        lines += [
            "",
            "<details><summary>Module misses of the shipped configuration</summary>",
            "",
            *misses,
            "",
            "</details>",
        ]
    publish("vtu", lines, write=not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
