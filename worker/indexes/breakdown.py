"""A course's grading breakdown read from its passages: each graded component and its weight.

Why: "how is the grade broken down?" is asked of every course, and no syllabus prints it the same
way. One puts each component at the head of its own paragraph on two pages ("Lab Exercises (40%)
We'll do…", "Final Paper (40%) A 15-page…"), another a numbered list ("1) Attendance 10%"),
another a table flattened to one line ("Class participation 10% Weekly Posts 10% Midterm 20% …").
Quoting the best sentence gives one component; quoting the passages gives pages of prose. What
every format shares is a name before a percentage, and a breakdown's weights add up to 100%:
that sum is the check that the components found are the whole breakdown and nothing else (a grade
scale "94-100% = A", a worked example "Exam 1: 75%", "worth 10% of your grade" never sum to it).
Pure functions; nothing here knows a course.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from syllabot.shared.schema import Hit

#: A percentage, with what stands right before it (a range "94-100%" is a grade scale, not a weight).
_PERCENT = re.compile(r"(?P<range>\d\s*[-–—]\s*)?(?P<pct>\d{1,3}(?:\.\d+)?)\s*%\)?")
#: Where a component's name can begin: a line, a sentence, a clause or the previous weight ends.
_BOUNDARY = re.compile(r"(?:^|\n|[.!?]\s+|[;,]\s*|[()]\s*|:\s+)")
#: An aside inside a name: "Attendance (iClicker or asynchronous) 10%".
_ASIDE = re.compile(r"\([^()%\n]*\)")
_NUMBERING = re.compile(r"^\s*(?:[-•*▪◦o]\s+|\(?\d{1,2}[.)]\s*|\(?[a-z][.)]\s+)")
_SEPARATORS = " \t:=–—-(•*"
#: Words that make a phrase prose about a weight, not a component's name.
_PROSE = frozenset(
    """will be is are was were receive earn earns get gets worth least than maximum minimum up each
    your you if when by with replacing raise my our their it this that these those which who
    account accounts count counts make makes""".split()
)
#: The most words a component's name has ("Team: Social Venture Assessment Report").
NAME_WORDS = 6
#: How far from 100 the weights may sum (rounded shares: 33.3 + 33.3 + 33.3).
SUM_SLACK = 0.5


@dataclass(frozen=True)
class Component:
    """One graded component: its name as printed, its weight, where it was read."""

    name: str
    weight: float
    hit_index: int  # 0-based into the hits
    offset: int  # where in that hit's text


def components(text: str, hit_index: int = 0) -> list[Component]:
    """Every "name … NN%" of ``text`` whose name reads as a component's, in order."""
    out: list[Component] = []
    start = 0  # where the text a name may come from begins (after the previous weight)
    for m in _PERCENT.finditer(text):
        if m.group("range"):
            start = m.end()
            continue  # "94-100% = A": a grade scale
        before = _ASIDE.sub("", text[start : m.start()]).rstrip(_SEPARATORS)
        cuts = [b.end() for b in _BOUNDARY.finditer(before)]
        name = before[cuts[-1] :] if cuts else before
        name = _NUMBERING.sub("", name).strip(_SEPARATORS + " ")
        start = m.end()
        if _is_name(name):
            out.append(Component(name, float(m.group("pct")), hit_index, m.start()))
    return out


@functools.lru_cache(maxsize=4096)
def prints_weights(text: str) -> bool:
    """Whether a passage prints any graded component's weight (cached: the same passages of a
    syllabus are read for every breakdown question)."""
    return bool(components(text))


def _is_name(name: str) -> bool:
    words = name.split()
    counted = re.match(r"\d{1,2}\s+(?=[A-Z])", name)  # "2 Exams 40%"
    head = name[counted.end() :] if counted else name
    if not 1 <= len(words) <= NAME_WORDS or not head[:1].isalpha() or not head[:1].isupper():
        return False
    return not any(w.lower().strip(",.") in _PROSE for w in words)


def _adds_up(parts: Sequence[Component]) -> bool:
    return len(parts) >= 2 and abs(sum(c.weight for c in parts) - 100.0) <= SUM_SLACK


def _key(c: Component) -> str:
    return re.sub(r"\W+", " ", c.name.lower()).strip()


def _distinct(parts: Sequence[Component]) -> list[Component]:
    """The first reading of each name (overlapping windows print a component twice)."""
    seen: set[str] = set()
    out = []
    for c in parts:
        if _key(c) not in seen:
            seen.add(_key(c))
            out.append(c)
    return out


def _run_to_100(parts: Sequence[Component]) -> list[Component] | None:
    """The longest run of consecutive components whose weights sum to 100% (a worked example or
    a late-penalty line before or after the breakdown is left out)."""
    best: list[Component] | None = None
    for i in range(len(parts)):
        for j in range(len(parts), i + 1, -1):
            run = _distinct(parts[i:j])
            if _adds_up(run) and (best is None or len(run) > len(best)):
                best = run
                break
    return best


def grade_breakdown(
    hits: Sequence[Hit], texts: Sequence[str], current: Callable[[Hit], tuple[int, int]] | None = None
) -> list[Component] | None:
    """The components of the breakdown the hits print, in the document's order, or None.

    ``texts`` are the hits' passages (context lines removed). A breakdown is one passage whose
    weights sum to 100%, or the components of one document's passages together (a syllabus that
    heads each component's paragraph with its weight, over two pages). Of several documents' the
    most evidently ``current`` one's (a revised syllabus beside the first week's slides: the
    answer's conflict note leads with it, so must the breakdown), else the best-ranked.
    """
    found = [components(text, i) for i, text in enumerate(texts)]
    candidates: dict[str, list[Component]] = {}  # per document, in the order of its best hit
    for parts in found:
        run = _run_to_100(parts)
        if run is not None:
            candidates.setdefault(hits[run[0].hit_index].file, run)
    by_file: dict[str, list[Component]] = {}
    for parts in found:
        for c in parts:
            by_file.setdefault(hits[c.hit_index].file, []).append(c)
    for file, parts in by_file.items():
        run = _distinct(parts)
        if file not in candidates and _adds_up(run):
            candidates[file] = _in_document_order(run, hits, texts, found)
    if not candidates:
        return None
    ranked = list(candidates.values())
    if current is None:
        return ranked[0]
    return max(ranked, key=lambda run: current(hits[run[0].hit_index]))  # max keeps the first of ties


def _in_document_order(
    run: list[Component], hits: Sequence[Hit], texts: Sequence[str], found: Sequence[list[Component]]
) -> list[Component]:
    runs = {c.hit_index: _run_position(c.hit_index, hits, texts) for c in run}

    def compare(a: Component, b: Component) -> int:
        return _before(a, b, hits, runs, found)

    return sorted(run, key=functools.cmp_to_key(compare))


#: How much of a passage's start identifies it inside the window before it (windows overlap).
_HEAD = 60


def _before(
    a: Component, b: Component, hits: Sequence[Hit], runs: dict[int, int], found: Sequence[list[Component]]
) -> int:
    """Document order of two components read from different passages: by page; then by where a
    passage holding both puts them; then by which passage runs on into the other (overlapping
    windows: the later one begins inside the earlier); else by offset."""
    pa, pb = hits[a.hit_index].page or 0, hits[b.hit_index].page or 0
    if pa != pb:
        return -1 if pa < pb else 1
    for parts in found:
        where = {_key(c): c.offset for c in parts}
        if _key(a) in where and _key(b) in where:
            return -1 if where[_key(a)] < where[_key(b)] else 1
    ra, rb = runs[a.hit_index], runs[b.hit_index]
    if ra != rb:
        return -1 if ra < rb else 1
    return -1 if a.offset < b.offset else (1 if a.offset > b.offset else 0)


def _run_position(
    i: int, hits: Sequence[Hit], texts: Sequence[str], seen: frozenset[int] = frozenset()
) -> int:
    """How many overlapping windows of the same page come before passage ``i``: a window begins
    inside the one before it, so follow that chain back (0 when no passage holds its start)."""
    head = texts[i][:_HEAD]
    before = [
        j
        for j, text in enumerate(texts)
        if j != i
        and j not in seen
        and hits[j].page == hits[i].page
        and head in text
        and texts[j][:_HEAD] != head
    ]
    return max((_run_position(j, hits, texts, seen | {i}) + 1 for j in before), default=0)
