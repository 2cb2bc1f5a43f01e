"""The part of a long unit a quote shows.

Why: a table flattened by a PDF's text layer ("Distribution name Parameter(s) … Uniform Start and
end points … Von Mises Circular mean and concentration Angles …") or a paragraph without full
stops is one unit of several hundred characters. Quoted from its start and clipped, the reply
showed the table's header and first rows, and "whats the uniform distribution controlled by" never
saw the row that answers it. A long unit is shown from a few words before the stretch that holds
the rarest of the question's words it has, and of those the most of the others (rarity-weighted);
a unit that fits is shown whole, and one whose best stretch is its start is shown from its start
and clipped, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from syllabot.worker.text.terms import terms

#: The longest quote of one unit, in characters: this window's size and the clip every quoted
#: sentence gets (``extractive._clip``).
QUOTE_CHARS = 360
#: Words of context kept before the first of the question's words the window starts at.
LEAD_IN_WORDS = 3
ELLIPSIS = "…"

_TOKEN = re.compile(r"\S+")


def focus_window(text: str, weights: Mapping[str, float], limit: int = QUOTE_CHARS) -> str:
    """The stretch of ``text`` (within ``limit`` characters with its "…" marks, cut at spaces) that
    holds the rarest of the question's words ``weights`` (:func:`terms` forms) the text has, and of
    those the most weight of the others, starting ``LEAD_IN_WORDS`` words before one of them; of
    two such stretches holding the same words, the one where they come earlier. ``text`` itself
    when it fits or when its start holds as much. Pure.

    The rarest word leads because a table's header names what every row has ("Distribution name
    Parameter(s)"): for "which distribution n what params if my data r angles" the header holds two
    of the question's words and the row "Von Mises … Angles" one, the one that picks the row."""
    if len(text) <= limit:
        return text
    limit -= 2 * len(ELLIPSIS)
    tokens = [(m.start(), m.end(), frozenset(terms(m.group()))) for m in _TOKEN.finditer(text)]
    hits = [k for k, (_s, _e, found) in enumerate(tokens) if any(t in weights for t in found)]
    if not hits:
        return text
    held = {t for k in hits for t in tokens[k][2] if t in weights}
    anchor = max(held, key=lambda t: (weights[t], t))
    starts = sorted({0, *(max(0, k - LEAD_IN_WORDS) for k in hits)})
    stretches = [_stretch(tokens, first, limit, weights, anchor) for first in starts]
    most = max(s.score for s in stretches)
    if stretches[0].score >= most:
        return text  # its start holds every word any stretch does: the caller clips it
    # of the stretches holding the most, the one where those words come first: "Prerequisites:
    # (Course Code …)" starts at the prerequisites, not 60 words before them
    best = min((s for s in stretches if s.score >= most), key=lambda s: s.late)
    first, end = best.first, tokens[best.last][1]
    while first > 0 and end - tokens[first - 1][0] <= limit:
        first -= 1  # a stretch at the text's end keeps the words before it, up to the limit
    shown = ELLIPSIS + text[tokens[first][0] : end]
    return shown + ELLIPSIS if best.last < len(tokens) - 1 else shown


class _Stretch(NamedTuple):
    first: int  # its first token
    last: int  # its last token
    score: tuple[bool, float]  # (holds the anchor, weight of the question's words it holds)
    late: float  # their weighted mean token offset from ``first``: lower is earlier


def _stretch(
    tokens: Sequence[tuple[int, int, frozenset[str]]],
    first: int,
    limit: int,
    weights: Mapping[str, float],
    anchor: str,
) -> _Stretch:
    """The stretch from token ``first`` that fits ``limit`` characters, scored."""
    origin = tokens[first][0]
    last = first
    while last + 1 < len(tokens) and tokens[last + 1][1] - origin <= limit:
        last += 1
    at: dict[str, int] = {}  # each question word's first token in the stretch
    for k in range(first, last + 1):
        for t in tokens[k][2]:
            if t in weights:
                at.setdefault(t, k - first)
    weight = sum(weights[t] for t in at)
    late = sum(weights[t] * k for t, k in at.items()) / weight if weight else 0.0
    return _Stretch(first, last, (anchor in at, weight), late)
