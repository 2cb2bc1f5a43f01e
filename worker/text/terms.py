"""The content words of a text, as the decision, the readers and the comparisons weigh them.

Why one place: a question's words and a passage's words must be read the same way wherever they
are compared (the verdict's coverage, a value's topic, an outline's units, two versions of a
syllabus), or a word one part finds the other misses. Stemmed as the keyword index stems
(:func:`keyword_stem`), with the words a question asks with rather than names its topic by left
out. Pure functions, cached by text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from syllabot.worker.text.keyword import STOPWORDS as KEYWORD_STOPWORDS
from syllabot.worker.text.keyword import keyword_stem
from syllabot.worker.text.text_caches import PER_TEXT
from syllabot.worker.text.vocabulary import vocabulary

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

#: The keyword index's function words and the words a question uses to ask rather than to name
#: its topic ("can someone tell me", "what's the thing about"), which the index keeps (they are
#: stored in its snapshots) but weigh nothing here.
STOPWORDS = KEYWORD_STOPWORDS | frozenset(
    """
    above again being below between both doing done during each either else etc ever further get gets
    getting got having he her here hers him his however itself let lets me myself need needs nor now off
    once one ours out over per please she tell theirs those through under until up upon want way whats
    whether whose within know like make use used using much many long often soon something anything
    someone anyone stuff thing things actually really located situated without yes yet
    """.split()
)


#: Names of one role or thing that materials and students use for each other: "who r the TAs" is
#: answered by "Teaching assistants: …", "the prof" (read as "instructor") by "Professor …", "do i
#: need to buy a textbook" by "All required text … will be freely available".
_ROLE_PHRASE = re.compile(r"\bteaching\s+assistants?\b")
_ROLE_WORDS = {
    "tas": "ta",
    "professor": "instructor",
    "professors": "instructor",
    "lecturer": "instructor",
    "textbook": "text",
    "textbooks": "text",
}


def terms(text: str) -> list[str]:
    """Content words of ``text``, lower-cased and stemmed, stopwords dropped (order kept); a role's
    or a thing's names read as one (:data:`_ROLE_WORDS`). Stemmed as the keyword index stems
    (``keyword_stem``: one stemmer for search, the decision and the gap report), so a word the
    decision looks up is spelled as the index spells it."""
    out = []
    for raw in _WORD.findall(_ROLE_PHRASE.sub("ta", text.lower())):
        if raw in STOPWORDS or (len(raw) < 2 and not raw.isdigit()):
            continue
        out.append(keyword_stem(_ROLE_WORDS.get(raw, raw)))
    return out


#: A word written with a hyphen, or broken at one across a line ("re- using"): read joined too.
_HYPHENATED = re.compile(r"\b([a-z]{1,12})-\s?([a-z]{2,})\b")


@lru_cache(maxsize=PER_TEXT)
def term_set(text: str) -> frozenset[str]:
    """The set of :func:`terms` of a text, with the head word of each compound label ("Classroom:"
    holds "room", "Textbook:" "book"); cached because the same chunks come back question after
    question, and tokenising 18 chunks would otherwise be most of the answerer's time."""
    found = set(terms(text))
    # "re-grade" is also "regrade", "e-mail" "email": a student may type either
    found.update(keyword_stem(a + b) for a, b in _HYPHENATED.findall(text.lower()))
    for label in _LABEL.findall(text):
        found.update(_compound_head(label.lower()))
    return frozenset(found)


#: A field's label ("Classroom: Hale B03", "Auxiliary Classrooms: …").
_LABEL = re.compile(r"\b([A-Za-z]{8,})\s*:")


@lru_cache(maxsize=4096)
def _compound_head(word: str) -> tuple[str, ...]:
    """The last word of a closed compound ("classroom" → "room", "textbooks" → "book"): both parts
    English words of four letters or more, so a label is found by the word a student uses for it
    ("which room r we in")."""
    words = vocabulary()
    base = keyword_stem(word)
    return tuple(
        keyword_stem(base[k:]) for k in range(4, len(base) - 3) if base[:k] in words and base[k:] in words
    )
