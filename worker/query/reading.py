"""The question read once: ``read_question`` makes the :class:`Question` every later step takes.

Why one place: the same words were cleaned and classified in four modules that could disagree
("how long is the essay" was a length to one and a duration to another). Here the text is cleaned
as students write it (``worker.query.question.clean_question``), syllabus shorthand spelled out, typing
slips mended against the collection's own words, the courses it names found in the collection's
catalogue (a follow-up read against its conversation), and then what is asked is read from it
once: the shape of answer (:class:`~worker.query.intent.Intent`), what it asks of a numbered outline
(:func:`~worker.query.outlines.read_ask`), with the kinds of value it asks for read once in the intent (the
value the answer quotes and the kinds the conflict check compares). Retrieval, the evidence, the decision and the conflict
check read these fields; none of them parses the text again.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from syllabot.shared.threads import Turn
from syllabot.worker.query.card import asked_slots
from syllabot.worker.query.conversation import follow_up, switched_course
from syllabot.worker.query.intent import Intent, asks_about_a_change, read_intent
from syllabot.worker.query.outlines import OutlineAsk, read_ask
from syllabot.worker.query.question import clean_question
from syllabot.worker.query.spelling import correct_spelling, unknown_words
from syllabot.worker.query.values import values_in

if TYPE_CHECKING:
    from syllabot.worker.indexes.index import IndexSnapshot

#: Syllabus shorthand a student types that shares no word with the page: (pattern, what it means).
_EXPANSIONS = (
    (re.compile(r"\bl\s*:\s*t\s*:\s*p(?:\s*:\s*s)?\b", re.IGNORECASE), "teaching hours/week (L:T:P:S)"),
)


#: A question answered yes or no ("is there a required textbook?"): no block of the kind it names
#: came back, but a sentence can still answer it ("There is no required textbook for this class").
_YES_NO = re.compile(
    r"^\W*(?:is|are|do|does|did|will|would|can|could|should|must|has|have)\b(?!.*\b(?:list|all)\b)",
    re.IGNORECASE,
)


#: Words about which syllabus, not about what is asked: "this sem", "new scheme", "syllabus".
_FILLER = re.compile(
    r"\b(?:this|current|next|our|the)\s+(?:sem|semester|term)\b|\b(?:new|old|latest|current|previous)\s+"
    r"(?:scheme|syllabus|one)\b|\b(?:syllabus|scheme|new|latest)\b"
    # where the student saw it, not what it says: "in the stats slides", "acc to the limits of data deck"
    r"|\b(?:in|from|according\s+to)\s+(?:the|that|this|our|last|today'?s)\s+(?:[\w'’-]+\s+){0,4}?"
    r"(?:slides?|decks?|lecture|lec|notes|handout|ppt|pdf)\b"
    r"|\b(?:which|what)\s+(?:slides?|decks?|lecture|lec)\s+(?:had|has|have|covers?|covered|mentioned|said)\b"
    # "what tools did the limits of data deck say we have": the deck is where, not what
    r"|\b(?:did|does|do)\s+(?:the|that|this|our)\s+(?:[\w'’-]+\s+){0,4}?(?:slides?|decks?|lecture|lec|notes"
    r"|handout|syllabus)\s+(?:say|said|mention|list|show)\b"
    # the values a student offers after the question ("what days does it meet? mwf or tth"): one of
    # them may be the answer, neither is a word the passage must hold
    r"|\?\s*(?:[\w'’:-]+\s+){0,2}?[\w'’:-]+\s+or\s+(?:[\w'’:-]+\s*){1,3}\??$",
    re.IGNORECASE,
)


#: "Which slides had the 3 pass method", "what lecture talked about p-values": where it is said is
#: the answer, so the reply names the deck or document (and page) of its first quote.
_ASKS_SOURCE = re.compile(
    r"\b(?:which|what)\s+(?:slides?|decks?|lectures?|lecs?|notes|handouts?|readings?)\b"
    r"|\b(?:slides?|decks?|lecture|lec)\s+(?:had|has|covered|covers|talked|mentioned|discussed)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Question:
    """A question as read once: what is embedded and searched, the courses it names, and what it asks.

    ``text``: cleaned (chat words spelled out, slips mended); ``topic``: the same without the course
    names (what the passages must be about); ``carried``: words a follow-up took from its
    conversation; ``unknown``: words of the topic the collection never uses (the decision weighs
    them). The rest is read from ``text`` by :func:`read_question` and never again."""

    text: str
    courses: tuple[str, ...] = ()
    topic: str = ""
    carried: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    #: the shape of answer asked for: a list block, a module, a value of a kind, a grade breakdown …
    intent: Intent = field(default_factory=Intent)
    #: what the answer reads of a numbered outline of the unit named ("which lecture is PCA")
    outline: OutlineAsk | None = None
    #: what the course's outlines of any unit are read for ("is X covered anywhere"): the outline
    #: passages retrieval adds and the conflict check compares
    coverage: OutlineAsk | None = None
    #: asks about a change itself ("what changed in the new syllabus"): superseded versions may answer
    about_change: bool = False
    #: what the passages must be about: the topic without words about *which* document or syllabus
    #: ("in the stats slides", "this sem") and without values offered after it ("? mwf or tth")
    about: str = ""
    #: answered by yes or no ("is there a required textbook?")
    yes_no: bool = False
    #: asks where something is said ("which slides had …"): the reply names the document first
    asks_source: bool = False
    #: the counts it names ("the 5 weekly themes"), as the value recogniser normalises them
    counts: frozenset[str] = frozenset()
    #: the course-card slots it asks about ("office hrs?" asks ``staff.office_hours``;
    #: ``worker.query.card.SLOTS``), the one its words name most fully first
    slots: tuple[str, ...] = ()


def _expand(text: str) -> str:
    for pattern, meaning in _EXPANSIONS:
        text = pattern.sub(meaning, text)
    return text


def asked(question: Question) -> Question:
    """``question`` with what it asks read from its text and topic (the one place that reads it)."""
    topic = question.topic or question.text
    about = _FILLER.sub(" ", topic).strip() or question.text
    return dataclasses.replace(
        question,
        topic=topic,
        intent=read_intent(question.text),
        outline=read_ask(topic),
        coverage=read_ask(topic, any_unit=True),
        about_change=asks_about_a_change(question.text),
        about=about,
        yes_no=bool(_YES_NO.match(question.text)),
        asks_source=bool(_ASKS_SOURCE.search(question.text)),
        counts=frozenset(v.norm for v in values_in(about) if v.kind == "count"),
        slots=asked_slots(question.text),
    )


def read_question(
    question: str, snapshot: IndexSnapshot | None = None, turns: Sequence[Turn] = ()
) -> Question:
    """Clean the question as students write it, find the courses it names in this collection (a
    follow-up that names none is read against the conversation's ``turns``, worker/query/conversation.py)
    and read what it asks."""
    text = _expand(clean_question(question))
    if snapshot is None:
        return asked(Question(text))
    text = correct_spelling(text, snapshot.keyword)
    courses = snapshot.catalog.mentioned(text)
    topic = snapshot.catalog.without_mentions(text) if courses else text
    read = Question(text, tuple(courses), topic or text)
    if turns and not courses:
        catalog = snapshot.catalog
        follow = follow_up(text, topic, turns, lambda key: catalog.get(key) is not None)
        if follow is not None:
            read = Question(follow.text, follow.courses, follow.topic, follow.carried)
    elif turns and courses:
        previous = clean_question(turns[-1].question)
        carried = switched_course(topic, snapshot.catalog.without_mentions(previous))
        if carried:
            words = " ".join(carried)
            read = Question(f"{text} {words}", tuple(courses), f"{topic} {words}".strip(), carried)
    return asked(dataclasses.replace(read, unknown=unknown_words(read.topic, snapshot.keyword)))
