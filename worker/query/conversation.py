"""Follow-ups: a question read against the conversation so far (pure, no I/O).

Why: in a thread students write "and which textbook for that?" after "which module of OS has
deadlocks?". On its own that question names no course and no topic, so it searches every course
(and every course's textbooks look alike). Read against the previous turn it means "the textbooks
of 21CS44, about deadlocks, Module 3".

What is carried over, when the follow-up names no course of its own (a question that names one
starts over in that course; if it names nothing else, "what about for DBMS?", it asks the previous
question's topic of that course: :func:`switched_course`):

* the **courses** of the previous turn: search is scoped to them, as if the follow-up had named them;
* the previous turn's **module**, when the follow-up names none;
* the previous turn's **topic words** that do not change what the follow-up asks for: a word that on
  its own reads as a request (a list block, "which module", a value such as "hours") is left
  behind, so "how many hours is the exam" after "how many credits" still asks for hours, and
  "textbooks" after "the syllabus of module 2" does not become a textbook question.

The turns themselves are stored by ``shared/threads.py``; :func:`turn_for` says what to record.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from syllabot.shared.schema import Hit
from syllabot.shared.threads import Turn
from syllabot.worker.query.intent import read_intent
from syllabot.worker.query.question import references
from syllabot.worker.text.keyword import STOPWORDS

__all__ = ["EXPIRED_NOTE", "FollowUp", "follow_up", "switched_course", "turn_for"]

#: What an answer says when its conversation had expired (the answerer's ``note``, shown by every
#: front-end under the answer).
EXPIRED_NOTE = (
    "This conversation had been idle too long, so the question was answered on its own "
    "(name the course if it needs one)."
)

#: Most topic words a turn keeps: a conversation's context stays a few words, never a paragraph.
MAX_TOPIC_WORDS = 12

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#./-]*")
#: Words that ask rather than name a topic (beyond the keyword stopwords).
_ASKING = frozenset(
    """what whats which where when who whom why how pls please plz bro tell explain give list show
    covered cover covers taught teach teaches come comes in under syllabus course subject topic topics
    module modules unit units mod chapter part anything something about there is are we do does""".split()
)


@dataclass(frozen=True)
class FollowUp:
    """A follow-up made ready for search: ``text`` to embed and match, the inherited ``courses``,
    ``topic`` (own words plus the carried ones) and ``carried`` (the words added, for logs)."""

    text: str
    courses: tuple[str, ...]
    topic: str
    carried: tuple[str, ...]


#: "Module 3", "unit-IV", "mod 2": carried as a module label, never as loose words.
_MODULE_REF = re.compile(r"\b(?:module|unit|mod|chapter)\s*[-.]?\s*(?:\d{1,2}|[ivx]{1,4})\b", re.IGNORECASE)


def _topic_words(text: str, *, requests: bool = False) -> list[str]:
    """The words of ``text`` that name a topic; with ``requests``, also those that on their own ask
    for something ("textbooks", "hours"), which a follow-up normally leaves behind."""
    words = []
    for word in _WORD.findall(_MODULE_REF.sub(" ", text)):
        lower = word.lower()
        if lower in STOPWORDS or lower in _ASKING or len(lower) < 2:
            continue
        if not requests and read_intent(lower) != read_intent(""):  # it asks for something: leave it
            continue
        words.append(word)
    return words


def follow_up(
    text: str, own_topic: str, turns: Sequence[Turn], known: Callable[[str], bool]
) -> FollowUp | None:
    """``text`` (a cleaned question naming no course) read against the last of ``turns``; None when
    there is nothing to carry (no turns, or the previous turn's courses are gone from the index).

    ``known(course_key)``: whether the collection still has that course.
    """
    if not turns:
        return None
    previous = turns[-1]
    courses = tuple(c for c in previous.courses if known(c))
    present = {w.lower() for w in _WORD.findall(text)}
    carried: list[str] = []
    if previous.modules and not references(text).modules:
        carried.append(previous.modules[0])
    for word in _topic_words(previous.topic):
        if word.lower() not in present and word not in carried:
            carried.append(word)
    if not courses and not carried:
        return None
    resolved = " ".join([text, *carried]).strip()
    topic = " ".join([own_topic or text, *carried]).strip()
    return FollowUp(resolved, courses, topic, tuple(carried))


_ONLY_SWITCH = frozenset("and what about for how same then also again this that one".split())


def switched_course(own_topic: str, previous_question: str) -> tuple[str, ...]:
    """What a follow-up that names another course and nothing else ("what about for DBMS?" after
    "textbooks for OS?") asks: the previous question's words, its request included ("textbooks"),
    its course names removed by the caller (``previous_question``) and its module left behind
    (modules are numbered per course); () when the follow-up says anything of its own."""
    own = [w for w in _WORD.findall(own_topic) if w.lower() not in _ONLY_SWITCH]
    if own or read_intent(own_topic) != read_intent(""):
        return ()
    return tuple(dict.fromkeys(_topic_words(previous_question, requests=True)))


def turn_for(
    question: str, query: str, courses: Sequence[str], topic: str, hits: Sequence[Hit], at: float
) -> Turn:
    """What to remember of an answered question: its courses (named or inherited, else its best
    passage's), the module it named (else its best passage's) and its topic words."""
    top = hits[0] if hits else None
    if not courses and top is not None and top.subject:
        courses = (top.subject,)
    modules = references(query).modules
    if not modules and top is not None and top.module:
        modules = (top.module,)
    words = _topic_words(topic)[-MAX_TOPIC_WORDS:]
    return Turn(
        question=question, courses=tuple(courses), modules=tuple(modules), topic=" ".join(words), at=at
    )
