"""Typos in a question mended against the collection's own words, before retrieval and decision.

Why: students type "distrobution", "assignmnet", "pyschology"; the keyword leg then finds nothing
and the word weighs as absent from every passage, so a question the materials answer reads as one
they do not. A word is changed only when it is neither an English word (the shipped vocabulary,
``worker/text/vocabulary.py``) nor a word of the collection, and one typing slip (a letter dropped,
added or swapped with the next, or typed as a key beside it or as another vowel) makes it a word of
the collection: "zoom" stays "zoom" where the syllabus
says "room", and a word the materials do not have is not invented into one they do. A word under
five letters is left alone, one of five is mended only by a letter dropped, added or swapped (too
many neighbours one key away). Pure; no model calls.
"""

from __future__ import annotations

import re

from syllabot.worker.text.keyword import STOPWORDS, KeywordIndex, keyword_stem
from syllabot.worker.text.vocabulary import common, known, match_case

#: A plain word of at least five letters, lower-case or capitalised: never an acronym, a code, a
#: function call ("groupby("), nor part of an address or identifier ("df.groupby", "a@b.edu").
_WORD = re.compile(r"(?<![\w'’\-/.@])[A-Za-z][a-z]{4,}(?![\w'’\-/@(]|\.\w)")
#: Words shorter than this are mended only by a letter dropped, added or swapped ("ofice"), never
#: by a letter changed: five-letter words have too many neighbours one key away ("hyped").
SUBSTITUTE_FROM = 6
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_VOWELS = frozenset("aeiouy")


def _neighbours() -> dict[str, frozenset[str]]:
    """Keys beside each letter on a QWERTY keyboard (same row and the rows above and below)."""
    where = {c: (r, i) for r, row in enumerate(_ROWS) for i, c in enumerate(row)}
    return {
        c: frozenset(d for d, (r2, i2) in where.items() if d != c and abs(r2 - r) <= 1 and abs(i2 - i) <= 1)
        for c, (r, i) in where.items()
    }


_NEAR = _neighbours()


def _swappable(old: str, new: str) -> bool:
    """A letter typed for another as people do: a key beside it, or one vowel for another
    ("distrobution"). Any other substitution ("sqlite" → "splite") is a different word."""
    return new in _NEAR.get(old, frozenset()) or (old in _VOWELS and new in _VOWELS)


def _edits(word: str, substitute: bool = True) -> set[str]:
    """Every string one typing slip from ``word``: a letter dropped, added or doubled, two swapped,
    or one replaced by a neighbouring key or another vowel (Norvig's edits1, substitutions narrowed)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return {
        *(a + b[1:] for a, b in splits if b),
        *(a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1),
        *(a + c + b[1:] for a, b in splits if b and substitute for c in _LETTERS if _swappable(b[0], c)),
        *(a + c + b for a, b in splits for c in _LETTERS),
    }


def _nearest(low: str, index: KeywordIndex) -> str | None:
    """The collection's most frequent word one slip from ``low`` (ties: alphabetical), or None."""
    best: tuple[int, str] | None = None
    for candidate in _edits(low, substitute=len(low) >= SUBSTITUTE_FROM):
        stem = keyword_stem(candidate)
        if candidate != low and stem in index:
            key = (-index.df(stem), candidate)
            best = key if best is None or key < best else best
    return None if best is None else best[1]


#: The most words of one question looked up for a mend: a question has a typo or two, and a
#: 2,000-character paste of unknown words would otherwise cost ~0.1 s of CPU.
MAX_LOOKUPS = 6


def correct_spelling(text: str, index: KeywordIndex) -> str:
    """``text`` with each misspelt word replaced by the collection's most frequent word one edit
    away (ties: alphabetical); every other character unchanged. Only the first ``MAX_LOOKUPS``
    words that are neither English nor the collection's are looked up."""
    looked = 0

    def mend(m: re.Match[str]) -> str:
        nonlocal looked
        word = m.group(0)
        low = word.lower()
        if low in STOPWORDS or known(low) or keyword_stem(low) in index or looked >= MAX_LOOKUPS:
            return word
        looked += 1
        best = _nearest(low, index)
        if best is None:
            return word
        return match_case(best, word)

    return _WORD.sub(mend, text)


#: Any word, for :func:`unknown_words` (codes and numbers included: "CS101" a collection lacks is
#: as telling as a word).
_ANY_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def unknown_words(text: str, index: KeywordIndex) -> tuple[str, ...]:
    """The words of ``text`` (lower-cased, stopwords out, in order) that the collection never uses,
    after :func:`correct_spelling` has had its chance. Why: "can I pay in instalments?" shares
    "pay" with the shop's delivery-fee passages, and only the collection as a whole can say that
    "instalments" appears nowhere in it — the 18 hits cannot (``decision.Evidence.unknown``)."""
    words = (w.lower() for w in _ANY_WORD.findall(text))
    return tuple(
        dict.fromkeys(
            w for w in words if w not in STOPWORDS and not common(w) and keyword_stem(w) not in index
        )
    )
