"""Metrics for `syllabot eval` and the benchmarks: pure functions over labelled questions.

Retrieval: a hit matches a question *by file* when its file is the labelled basename, and *by page*
when it also covers one of the labelled pages (the hit's page span counts, so a module running from
p. 1 to p. 2 matches a question labelled p. 2).

Answers: every question is answered as a user would be answered, so the figures describe what
students see rather than a proxy. :func:`status_table` crosses the answer's status (answered,
uncertain, not in materials) with the label (answerable or not); :func:`expect_met` checks the
strings a correct answer must contain. Both are pure so they are tested without Redis or a model.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from syllabot.shared.answer_text import answer_text
from syllabot.shared.schema import ANSWER_STATUSES, Answer, AnswerStatus, Hit, Passage

CUTOFFS = (1, 5, 18)


@dataclass
class LabelledQuestion:
    question: str
    file: str | None
    pages: list[int] = field(default_factory=list)
    answerable: bool = True
    extra: dict = field(default_factory=dict)
    #: Strings a correct answer must all contain (see :func:`expect_met`); empty when unchecked.
    expect: list[str] = field(default_factory=list)


class EvalFileError(ValueError):
    """The eval file is not JSON lines of the documented shape; the message names the line."""


_KNOWN_FIELDS = {"question", "file", "page", "pages", "answerable", "expect"}


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
        expect = data.get("expect") or []
        if isinstance(expect, str):  # one string is a list of one, not a list of characters
            expect = [expect]
        if not isinstance(expect, list) or not all(isinstance(e, str) for e in expect):
            raise EvalFileError(f"{path}:{number}: 'expect' must be a list of strings, not {expect!r}")
        extra = {k: v for k, v in data.items() if k not in _KNOWN_FIELDS}
        questions.append(
            LabelledQuestion(
                text,
                Path(file).name if file else None,
                pages,
                answerable,
                extra,
                [e for e in expect if e.strip()],
            )
        )
    if not questions:
        raise EvalFileError(f"{path}: no questions found")
    return questions


# --- retrieval ---------------------------------------------------------------------------------


def file_match(hit: Passage, q: LabelledQuestion) -> bool:
    return q.file is not None and hit.file == q.file


def page_match(hit: Passage, q: LabelledQuestion) -> bool:
    if not file_match(hit, q):
        return False
    if not q.pages:
        return True
    start = hit.page or 1
    end = hit.page_end or start
    return any(start <= p <= end for p in q.pages)


def cited_page_right(passage: Passage, q: LabelledQuestion) -> bool:
    """The pages a citation names are all pages holding the answer: the page a student opens is
    right. Stricter than :func:`page_match`, which lets a span of pp. 2–6 count for a fact on p. 5."""
    if not file_match(passage, q):
        return False
    if not q.pages or passage.page is None:
        return True
    return all(p in q.pages for p in range(passage.page, (passage.page_end or passage.page) + 1))


def first_rank(hits: Sequence[Hit], q: LabelledQuestion, by_page: bool) -> int | None:
    match = page_match if by_page else file_match
    for position, hit in enumerate(hits, start=1):
        if match(hit, q):
            return position
    return None


def metrics(results: Iterable[tuple[LabelledQuestion, Sequence[Hit], bool]]) -> dict[str, float | int]:
    """recall@1/5/18 and MRR by file and by page over answerable questions; flag rates for the rest.

    The third element of each row is False when the reply would start with "Not in your materials"
    (``syllabot eval`` passes ``status != "not_in_materials"``; the benchmarks pass their own rule).
    """
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


# --- answers: expected strings -------------------------------------------------------------------

#: Hyphen-like characters a printed label may use between its words ("Module-3", "Unit – II").
_DASHES = "\\-\u00ad\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
#: A run of spaces and dashes *between* two other characters: where an expected string may differ
#: in layout from the answer (never at its ends, so "-5" keeps its minus sign).
_SEPARATOR_RUN = re.compile(rf"(?<=[^\s{_DASHES}])[\s{_DASHES}]+(?=[^\s{_DASHES}])")
#: What such a run matches in the answer: any run of whitespace (line breaks included) and dashes.
_SEPARATOR = rf"[\s{_DASHES}]+"
#: A word broken across lines with a hyphen ("manage-\nment"): the answer's own line-wrap.
_WRAP_HYPHEN = re.compile(rf"(?<=\w)[{_DASHES}][ \t]*\n\s*(?=\w)")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _normalise(text: str) -> str:
    """NFKC (PDF ligatures such as "ﬁ" become "fi"), straight quotes, no soft hyphens."""
    return unicodedata.normalize("NFKC", text).translate(_QUOTES).replace("\u00ad", "")


@lru_cache(maxsize=4096)
def expect_pattern(expected: str) -> re.Pattern[str]:
    """The regex an answer must match to contain ``expected``.

    Case-insensitive. Each run of spaces or dashes inside ``expected`` matches any run of
    whitespace or dashes, so "Module 3" accepts "Module-3", "MODULE 3", "Unit – II" style labels
    and a label the answer wraps across lines. An ``expected`` that starts (ends) with a word
    character must not be preceded (followed) by another one: labels match as whole tokens, so
    "Unit I" is not satisfied by "Unit II" nor "Module 3" by "Module 30" — but "03" is also not
    found inside "2003", which is what a label check wants. A number may be followed by letters:
    "11:30" is in "11:30AM" (a time), "15" in "15pt".
    """
    target = _normalise(expected).strip()
    body = _SEPARATOR.join(re.escape(part) for part in _SEPARATOR_RUN.split(target))
    before = r"(?<!\w)" if re.match(r"\w", target) else ""
    # a number may run into a unit ("11:30" in "11:30AM", "15" in "15pt"), never into more digits
    after = r"(?!\d)" if re.search(r"\d$", target) else r"(?!\w)" if re.search(r"\w$", target) else ""
    return re.compile(before + body + after, re.IGNORECASE)


def expect_met(text: str, expect: Sequence[str]) -> bool:
    """True when every string of ``expect`` occurs in ``text`` (see :func:`expect_pattern`).

    The answer is read twice: as written, and with words hyphenated across a line break joined
    again ("manage-\\nment" → "management"), because extractive answers quote the materials' own
    line-wraps. An empty ``expect`` is met (nothing was required); blank strings are ignored.
    """
    written = _normalise(text).replace("**", "")  # bold is how a value is shown, not what it says
    variants = (written, _WRAP_HYPHEN.sub("", written))
    return all(any(expect_pattern(e).search(v) for v in variants) for e in expect if e.strip())


# --- answers: outcomes ---------------------------------------------------------------------------


@dataclass
class EvalRow:
    """One evaluated question: what retrieval found and what the user would have been told.

    ``text`` is the whole answer as plain text, its status's lead included (``answer_text``), so
    an ``expect`` string may name the "Not in your materials" marker or the uncertain lead."""

    question: LabelledQuestion
    hits: Sequence[Hit]
    status: AnswerStatus
    text: str

    @classmethod
    def of(cls, question: LabelledQuestion, hits: Sequence[Hit], answer: Answer) -> EvalRow:
        return cls(question, hits, answer.status, answer_text(answer))

    @property
    def in_materials(self) -> bool:
        return self.status == "answered"

    @property
    def expect_met(self) -> bool | None:
        """None when the question expects nothing (nothing to check, not a pass)."""
        return expect_met(self.text, self.question.expect) if self.question.expect else None


def _rate(part: int, whole: int) -> float | None:
    """A share rounded for reports; None when there is nothing to divide (not a misleading 0)."""
    return round(part / whole, 4) if whole else None


def status_table(rows: Iterable[tuple[bool, str]]) -> dict:
    """Cross each answer's status with whether its question is answerable.

    ``rows`` are ``(answerable, status)`` pairs. Returns ``counts[status][column]`` and
    ``rates[status][column]`` (the share of that column, so each column's rates sum to 1) for the
    columns ``answerable``, ``unanswerable`` and ``all``; ``totals[column]``; and the three headline
    rates — the two mistakes that cost a student most, and how often the answerer hedges:

    * ``answerable_not_in_materials``: answerable questions told "Not in your materials";
    * ``unanswerable_answered``: unanswerable questions given an answer as if from the materials;
    * ``uncertain``: questions of either kind answered "I can't tell", of all questions.

    A rate over an empty column is None.
    """
    columns = ("answerable", "unanswerable", "all")
    counts = {status: dict.fromkeys(columns, 0) for status in ANSWER_STATUSES}
    for answerable, status in rows:
        if status not in counts:
            raise ValueError(f"unknown answer status {status!r}; expected one of {ANSWER_STATUSES}")
        counts[status]["answerable" if answerable else "unanswerable"] += 1
        counts[status]["all"] += 1
    totals = {c: sum(counts[s][c] for s in ANSWER_STATUSES) for c in columns}
    rates = {s: {c: _rate(counts[s][c], totals[c]) for c in columns} for s in ANSWER_STATUSES}
    return {
        "counts": counts,
        "rates": rates,
        "totals": totals,
        "answerable_not_in_materials": rates["not_in_materials"]["answerable"],
        "unanswerable_answered": rates["answered"]["unanswerable"],
        "uncertain": rates["uncertain"]["all"],
    }


def expect_summary(values: Iterable[bool | None]) -> dict[str, int | float | None]:
    """Share of questions with an ``expect`` whose answer meets it; None (no expect) is not counted."""
    checked = [v for v in values if v is not None]
    met = sum(1 for v in checked if v)
    return {"n": len(checked), "met": met, "rate": _rate(met, len(checked))}


def summarise(rows: Sequence[EvalRow]) -> dict:
    """Everything `syllabot eval` reports about the answers: the status table and its headline
    rates, and ``expect`` met."""
    return {
        **status_table((r.question.answerable, r.status) for r in rows),
        "expect": expect_summary(r.expect_met for r in rows),
        "conflicts": conflict_summary((bool(r.question.extra.get("conflict")), r.text) for r in rows),
    }


def conflict_summary(rows: Iterable[tuple[bool, str]]) -> dict[str, int | float | None]:
    """For an eval file with ``conflict: true`` questions (their documents disagree on the asked
    fact): how many answers say the materials disagree, and how many other answers do (false)."""
    from syllabot.worker.answerers.notes import DISAGREE_LEAD

    pairs = [(conflict, DISAGREE_LEAD in text) for conflict, text in rows]
    noted = sum(1 for conflict, said in pairs if conflict and said)
    false_notes = sum(1 for conflict, said in pairs if not conflict and said)
    conflict_n = sum(1 for conflict, _ in pairs if conflict)
    other_n = len(pairs) - conflict_n
    return {
        "conflict_n": conflict_n,
        "noted": noted,
        "noted_rate": _rate(noted, conflict_n),
        "other_n": other_n,
        "false_notes": false_notes,
        "false_rate": _rate(false_notes, other_n),
    }
