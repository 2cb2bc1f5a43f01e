"""How counts and cut text read, the same in the terminal, Discord and Slack (pure).

One ``plural`` instead of a dozen inline ``'s' if n != 1`` forms, some of which were missing
("1 of 1 questions"), and one ``clip`` that cuts at a word boundary, so a table's column never
ends mid-word ("Operating Syst…").
"""

from __future__ import annotations

#: Characters left dangling at the end of text cut short, dropped before the "…".
_DANGLING = " \t—–-,;:·/("


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 page', '2 pages', '0 pages' (``many``: an irregular plural, e.g. 'indices')."""
    return f"{count} {word}" if count == 1 else f"{count} {many or word + 's'}"


def clip(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters: cut at the last word boundary that fits
    (a word longer than half the width is cut inside), dangling dashes and commas dropped, "…" added."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: max(1, width - 1)]
    space = cut.rfind(" ")
    if space >= width // 2:
        cut = cut[:space]
    return cut.rstrip(_DANGLING) + "…"
