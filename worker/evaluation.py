"""Retrieval metrics for `syllabot eval` and the benchmarks: pure functions over labelled questions.

A hit matches a question *by file* when its file is the labelled basename, and *by page* when it
also covers one of the labelled pages (the hit's page span counts, so a module running from p. 1 to
p. 2 matches a question labelled p. 2).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shared.schema import Hit

CUTOFFS = (1, 5, 18)


@dataclass
class LabelledQuestion:
    question: str
    file: str | None
    pages: list[int] = field(default_factory=list)
    answerable: bool = True
    extra: dict = field(default_factory=dict)


class EvalFileError(ValueError):
    """The eval file is not JSON lines of the documented shape; the message names the line."""


def load_questions(path: Path) -> list[LabelledQuestion]:
    questions: list[LabelledQuestion] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            text = str(data["question"]).strip()
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise EvalFileError(f"{path}:{number}: expected a JSON object with a 'question' ({exc})") from exc
        pages = [int(p) for p in data.get("pages") or []]
        if data.get("page") is not None and int(data["page"]) not in pages:
            pages.insert(0, int(data["page"]))
        file = data.get("file")
        answerable = bool(data.get("answerable", file is not None))
        extra = {
            k: v for k, v in data.items() if k not in {"question", "file", "page", "pages", "answerable"}
        }
        questions.append(LabelledQuestion(text, Path(file).name if file else None, pages, answerable, extra))
    if not questions:
        raise EvalFileError(f"{path}: no questions found")
    return questions


def file_match(hit: Hit, q: LabelledQuestion) -> bool:
    return q.file is not None and hit.file == q.file


def page_match(hit: Hit, q: LabelledQuestion) -> bool:
    if not file_match(hit, q):
        return False
    if not q.pages:
        return True
    start = hit.page or 1
    end = hit.page_end or start
    return any(start <= p <= end for p in q.pages)


def first_rank(hits: Sequence[Hit], q: LabelledQuestion, by_page: bool) -> int | None:
    match = page_match if by_page else file_match
    for position, hit in enumerate(hits, start=1):
        if match(hit, q):
            return position
    return None


def metrics(results: Iterable[tuple[LabelledQuestion, Sequence[Hit], bool]]) -> dict[str, float | int]:
    """recall@1/5/18 and MRR by file and by page over answerable questions; flag rates for the rest."""
    rows = list(results)
    answerable = [(q, hits, flag) for q, hits, flag in rows if q.answerable and q.file]
    unanswerable = [flag for q, _, flag in rows if not q.answerable]
    out: dict[str, float | int] = {
        "questions": len(rows),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
    }
    for by_page, name in ((False, "file"), (True, "page")):
        ranks = [first_rank(hits, q, by_page) for q, hits, _ in answerable]
        for k in CUTOFFS:
            out[f"recall@{k}_{name}"] = _mean([1.0 if r is not None and r <= k else 0.0 for r in ranks])
        out[f"mrr_{name}"] = _mean([1.0 / r if r else 0.0 for r in ranks])
    # "flagged" = the reply would start with "Not in your materials".
    out["unanswerable_flagged"] = _mean([0.0 if flag else 1.0 for flag in unanswerable])
    out["answerable_flagged"] = _mean([0.0 if flag else 1.0 for _, _, flag in answerable])
    return out


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0
