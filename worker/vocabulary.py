"""The English words the worker knows without a dictionary download: the whole words of the
shipped MiniLM WordPiece vocabulary (~21,700), with common English endings.

Why one place: PDF repair joins ligature fragments only into such words, and spelling correction
never touches one ("zoom" is a word, not a typo of "room"); both must agree on what a word is.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

_VOCAB_FILE = Path(__file__).parent / "embedders" / "data" / "tokenizer.json"
_SUFFIXES = ("s", "es", "ed", "d", "ing", "ly", "er", "ers")


@cache
def vocabulary() -> frozenset[str]:
    """Lower-case whole English words of the shipped tokenizer (its ``##`` pieces left out)."""
    data = json.loads(_VOCAB_FILE.read_text(encoding="utf-8"))
    return frozenset(w for w in data["model"]["vocab"] if w.isascii() and w.isalpha() and len(w) > 1)


#: WordPiece numbers a vocabulary's words roughly by how often they occur in its training text
#: (English Wikipedia and books): the words before this id are everyday English ("best", "held",
#: "students"), the rest rarer ("instalment", "textbook", "tardy"). 3,000 by measurement: 8,000 and
#: 15,000 also call "policy" and "credit" everyday and change no outcome (docs/BENCHMARKS.md).
COMMON_BELOW = 3000


@cache
def common_words() -> frozenset[str]:
    """Everyday English words: the shipped tokenizer's whole words numbered under :data:`COMMON_BELOW`."""
    data = json.loads(_VOCAB_FILE.read_text(encoding="utf-8"))
    return frozenset(
        w for w, i in data["model"]["vocab"].items() if i < COMMON_BELOW and w.isascii() and w.isalpha()
    )


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
