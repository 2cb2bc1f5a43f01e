"""The English words the worker knows without a dictionary download: the whole words of the
shipped MiniLM WordPiece vocabulary (~21,700), with common English endings.

Why one place: PDF repair joins ligature fragments only into such words, and spelling correction
never touches one ("zoom" is a word, not a typo of "room"); both must agree on what a word is.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

_VOCAB_FILE = Path(__file__).parents[1] / "indexes" / "embedders" / "data" / "tokenizer.json"
_SUFFIXES = ("s", "es", "ed", "d", "ing", "ly", "er", "ers")


@cache
def _whole_words() -> tuple[frozenset[str], frozenset[str]]:
    """The shipped tokenizer's whole words (its ``##`` pieces left out), read once: (all of them
    of two letters or more, the everyday ones numbered under :data:`COMMON_BELOW`)."""
    vocab: dict[str, int] = json.loads(_VOCAB_FILE.read_text(encoding="utf-8"))["model"]["vocab"]
    words = [(w, i) for w, i in vocab.items() if w.isascii() and w.isalpha()]
    return frozenset(w for w, _ in words if len(w) > 1), frozenset(w for w, i in words if i < COMMON_BELOW)


def vocabulary() -> frozenset[str]:
    """Lower-case whole English words of the shipped tokenizer (its ``##`` pieces left out)."""
    return _whole_words()[0]


#: WordPiece numbers a vocabulary's words roughly by how often they occur in its training text
#: (English Wikipedia and books): the words before this id are everyday English ("best", "held",
#: "students"), the rest rarer ("instalment", "textbook", "tardy"). 3,000 by measurement: 8,000 and
#: 15,000 also call "policy" and "credit" everyday and change no outcome (docs/BENCHMARKS.md).
COMMON_BELOW = 3000


def common_words() -> frozenset[str]:
    """Everyday English words: the shipped tokenizer's whole words numbered under :data:`COMMON_BELOW`."""
    return _whole_words()[1]


def common(word: str) -> bool:
    """An everyday English word, or one with a common English ending ("books", "held")."""
    return known(word, common_words())


def known(word: str, words: frozenset[str] | None = None) -> bool:
    """A vocabulary word, or one with a common English ending ("flips", "defined", "workflows")."""
    words = vocabulary() if words is None else words
    low = word.lower()
    if low in words:
        return True
    return any(low.endswith(s) and len(low) - len(s) >= 3 and low[: -len(s)] in words for s in _SUFFIXES)


def match_case(word: str, like: str) -> str:
    """``word`` capitalised as ``like`` is ("Final" for "final" in "Final"): a repaired or mended
    word keeps the case of what was written."""
    return word[0].upper() + word[1:] if like[:1].isupper() else word
