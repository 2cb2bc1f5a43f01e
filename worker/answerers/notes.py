"""The note an answer leads with when the materials disagree: the words, written for the verdict.

Why here: the indexes find a disagreement (``worker.indexes.conflicts`` at question time, the record
of versions at index time) and ``decision.decide`` weighs it; how a reply says so is the answer's
business, like every other word of a reply, so the indexes stage never names an answer or a
verdict. Both answerers lead with these notes: the question-time check's
(:func:`lead_with_conflict`) and a recorded one that the final answer cites (:func:`lead_with_record`),
both sides quoted and cited, the evidently current one first (``worker.text.currency``).
Pure functions (no I/O).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from syllabot.shared.labels import citation
from syllabot.shared.schema import Answer, Hit
from syllabot.worker.answerers.decision import Verdict
from syllabot.worker.indexes.conflicts import Conflict, Side, tell_apart
from syllabot.worker.indexes.versions import asked_about
from syllabot.worker.query.reading import Question

#: How every answer that reports a disagreement begins (``syllabot eval`` counts it).
DISAGREE_LEAD = "Your materials disagree"


def _said(side: Side) -> str:
    """What a side is quoted as saying: a schedule's line for the unit asked about ("Week 7: Collect
    data") on its own, else the sentence around its values."""
    kinds = {v.kind for v in side.found}
    if kinds == {"item"}:
        return "; ".join(side.quoted)
    return _excerpt(side.sentence, side.quoted)


def _excerpt(sentence: str, quoted: Sequence[str], width: int = 180) -> str:
    text = " ".join(sentence.split())
    if len(text) <= width:
        return text
    at = max(0, text.find(quoted[0]) if quoted else 0)
    start = max(0, at - width // 3)
    piece = text[start : start + width].strip()
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def render_conflict(conflict: Conflict, numbers: Sequence[int] = ()) -> str:
    """The plain words an answer leads with (no platform markup: each front-end renders the text);
    ``numbers``: each side's citation number, written "[n]" after its name."""
    names = tell_apart([side.label for side in conflict.sides], [side.file for side in conflict.sides])
    if numbers:
        names = [f"{name} [{n}]" for name, n in zip(names, numbers, strict=True)]
    parts = [f"{name} says “{_said(side)}”" for name, side in zip(names, conflict.sides, strict=True)]
    if conflict.current_reason:
        lead, rest = conflict.sides[0], parts[1:]
        return (
            f"{DISAGREE_LEAD}. The current one looks like {names[0]} ({conflict.current_reason}): "
            f"it says “{_said(lead)}”; " + "; ".join(rest) + "."
        )
    return f"{DISAGREE_LEAD}: " + "; ".join(parts) + "."


def shows(conflict: Conflict, text: str) -> bool:
    """Whether ``text`` holds the note of ``conflict`` (each side's words as the note quotes them)."""
    return DISAGREE_LEAD in text and all(f"“{_said(side)}”" in text for side in conflict.sides)


def lead_with_note(answer: Answer, conflict: Conflict) -> Answer:
    """``answer`` led by the note of ``conflict``, each side cited (numbered after the answer's own
    citations unless one already cites its passage's page) and its number written in the note."""
    citations = list(answer.citations)
    numbers = []
    for side in conflict.sides:
        cited = next((c.n for c in citations if c.doc_id == side.doc_id and c.page == side.hit.page), None)
        if cited is None:
            cited = len(citations) + 1
            citations.append(citation(cited, side.hit))
        numbers.append(cited)
    text = f"{render_conflict(conflict, numbers)}\n\n{answer.text}"
    return answer.model_copy(update={"text": text, "citations": citations})


def lead_with_conflict(answer: Answer, conflict: Conflict | None, verdict: Verdict | None) -> Answer:
    """``answer`` led by the disagreement its verdict weighed (``decision.decide``: a conflict on the
    asked fact proves the materials speak of it), both sides cited, the evidently current one first.

    Only the text is composed here; the status is the verdict's. When the verdict found an answer
    beside the note (``verdict.beside``), that answer follows the note; otherwise the note is the
    whole reply, citing the two sides ("how much is the see worth for os" retrieves the textbook
    list, but the syllabus and the revision notice each give the SEE marks)."""
    if conflict is None or verdict is None or verdict.reason != "conflict":
        return answer
    if verdict.beside is not None:
        return lead_with_note(answer, conflict)
    cited = [side.hit for side in conflict.sides]
    return answer.model_copy(
        update={
            "text": render_conflict(conflict, range(1, len(cited) + 1)),
            "general_knowledge": None,
            "citations": [citation(n, hit) for n, hit in enumerate(cited, 1)],
        }
    )


def lead_with_record(answer: Answer, recorded: Sequence[Conflict], question: Question) -> Answer:
    """``answer`` led by a recorded disagreement (``retrieval.recorded_for``) one side of which it
    quotes: "Your materials disagree", both sides quoted and cited, the current one first, then
    the answer as it was. Applied to the final answer (either answerer's, confident or "I can't
    tell"), keyed by what it cites: a passage it cites printing a side of a disagreement on what
    ``question`` asks (``versions.asked_about``; a schedule quoted whole for another question prints
    every recorded line of it). An answer that already leads with the question-time check's note
    keeps it."""
    if not recorded or answer.status == "not_in_materials" or DISAGREE_LEAD in answer.text:
        return answer
    chosen = next(
        (
            conflict
            for conflict in recorded
            if asked_about(conflict, question) and any(_cites(answer, side.hit) for side in conflict.sides)
        ),
        None,
    )
    if chosen is None:
        return answer
    return lead_with_note(answer, chosen)


def lead_with_term(answer: Answer, older: Mapping[str, tuple[str, str]]) -> Answer:
    """``answer`` led by a line saying its first source is last term's, where it is: a collection
    may hold last term's syllabus beside this term's, and an answer quoting the older one (a
    schedule of last term's dates) must not read as this term's. Confident or "I can't tell"
    alike; a "not in your materials" reply states nothing from it."""
    if not older or answer.status == "not_in_materials" or not answer.citations:
        return answer
    first = min(answer.citations, key=lambda c: c.n)
    if first.doc_id not in older:
        return answer
    term, latest = older[first.doc_id]
    note = f"(From {first.file}, {term}. Your materials also hold {latest} documents, which may differ.)"
    return answer.model_copy(update={"text": f"{note}\n\n{answer.text}"})


def _cites(answer: Answer, hit: Hit) -> bool:
    """Whether ``answer`` cites the passage ``hit`` (its document, on one of its pages)."""
    last = hit.page_end or hit.page
    return any(
        c.doc_id == hit.doc_id
        and (hit.page is None or c.page is None or hit.page <= c.page <= (last or c.page))
        for c in answer.citations
    )
