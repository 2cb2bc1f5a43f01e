"""An answer's words, composed from the :class:`~syllabot.shared.schema.Answer`'s data.

A worker sends data: ``status``, the body (``Answer.text``: what the answer says, no lead, no
marker), the citations and any general knowledge (no label). The words that depend only on the
status — the exact :data:`NOT_IN_MATERIALS` marker, the plain :data:`UNCERTAIN_LEAD`, the
general-knowledge label — are added here, in one place, so no renderer has to strip a worker's
wording again and every reader (renderers, the terminal, ``--json``, evaluation's ``expect``)
sees the same full text.

In ``shared/`` rather than ``bots/frontend.py`` because the worker's evaluation and the benchmarks
match expected strings against the full text too, and the worker may import only ``shared``;
``bots/frontend.py`` re-exports it as part of the front-end core. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from syllabot.shared.schema import NOT_IN_MATERIALS, UNCERTAIN_LEAD, Answer, AnswerStatus, Citation

__all__ = [
    "GENERAL_KNOWLEDGE_LABEL",
    "STATUS_LABELS",
    "UNCERTAIN_INTRO",
    "UNCERTAIN_TAIL",
    "AnswerParts",
    "answer_parts",
    "answer_text",
    "status_lead",
    "status_tail",
    "with_bold",
]

#: What an ``uncertain`` answer's plain text opens with: the closest passages come first, so the
#: reply is useful before it hedges ("Your materials say: Late homework will not be accepted. [1]
#: — I can't tell whether that answers your question.").
UNCERTAIN_INTRO = "Your materials say:"
#: What an ``uncertain`` answer's plain text ends with, after the passages.
UNCERTAIN_TAIL = "I can't tell whether that answers your question."
#: The label in front of general knowledge (text from outside the materials, LLM answerer only).
GENERAL_KNOWLEDGE_LABEL = "General knowledge (not from your course materials):"

#: What each status is called where a renderer shows one label (a heading) for it.
STATUS_LABELS: dict[AnswerStatus, str] = {
    "answered": "Answer",
    "uncertain": UNCERTAIN_LEAD,
    "not_in_materials": NOT_IN_MATERIALS,
}


def status_lead(status: AnswerStatus) -> str:
    """The plain-text words an answer of ``status`` starts with ("" for ``answered``).

    ``not_in_materials`` starts with the exact marker (students, scripts and the evaluation look
    for it); ``uncertain`` with "Your materials say:", the passages, then :data:`UNCERTAIN_TAIL`
    (:func:`status_tail`): never the marker, never claimed as an answer.
    """
    if status == "not_in_materials":
        return f"{NOT_IN_MATERIALS}."
    if status == "uncertain":
        return UNCERTAIN_INTRO
    return ""


def status_tail(status: AnswerStatus) -> str:
    """The words after the body: the uncertain hedge, "" for the other outcomes."""
    return UNCERTAIN_TAIL if status == "uncertain" else ""


#: A run a worker put in bold (the asked value, ``extractive.emphasise``): Markdown's ``**…**``.
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")


def with_bold(text: str, mark: str) -> str:
    """``text`` with its bold runs marked as a platform marks them: Discord reads Markdown's ``**``
    as it is, Slack's mrkdwn wants ``*``, plain text (a terminal, a notification) none."""
    return _BOLD.sub(lambda m: f"{mark}{m.group(1)}{mark}", text)


@dataclass(frozen=True)
class AnswerParts:
    """An :class:`Answer` as front-ends lay it out (all text unescaped: renderers escape).

    ``label`` is the status's heading, ``lead`` its plain-text opening, ``body`` the worker's text,
    ``general_knowledge`` without a label; :attr:`text` puts them together as plain text.
    """

    status: AnswerStatus
    label: str
    lead: str
    body: str
    citations: list[Citation]
    general_knowledge: str
    question: str
    collection: str
    note: str

    @property
    def said(self) -> str:
        """Lead, body and (uncertain) the hedge after it: the answer without general knowledge."""
        first = " ".join(part for part in (self.lead, with_bold(self.body, "")) if part)
        tail = status_tail(self.status)
        return f"{first} — {tail}" if tail else first

    @property
    def text(self) -> str:
        """The whole answer as plain text: :attr:`said`, then the labelled general knowledge
        (no sources list: each front-end lays citations out its own way)."""
        first = self.said
        if not self.general_knowledge:
            return first
        return f"{first}\n\n{GENERAL_KNOWLEDGE_LABEL}\n{self.general_knowledge}"


def answer_parts(answer: Answer) -> AnswerParts:
    """Split an answer for rendering; the layout is chosen by ``answer.status``, never by the text."""
    return AnswerParts(
        status=answer.status,
        label=STATUS_LABELS[answer.status],
        lead=status_lead(answer.status),
        body=answer.text.strip(),
        citations=sorted(answer.citations, key=lambda c: c.n),
        general_knowledge=(answer.general_knowledge or "").strip(),
        question=" ".join(answer.question.split()),
        collection=answer.collection,
        note=answer.note or "",
    )


def answer_text(answer: Answer) -> str:
    """The whole answer as plain text (:attr:`AnswerParts.text`): what a terminal shows, what
    ``ask --json`` prints as ``text``, and what evaluation's ``expect`` strings are matched in."""
    return answer_parts(answer).text
