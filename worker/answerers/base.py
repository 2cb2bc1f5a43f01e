"""What every answerer shares: the protocol, and turning [n] markers into checked citations.

Answerers number the retrieved chunks 1..k for themselves (the LLM sees them that way). The reply
that reaches a user keeps only markers that point at a retrieved chunk, renumbered 1, 2, 3 in order
of first use, and its ``citations`` list holds exactly those chunks — so "[7]" from a model that
saw five chunks never reaches anyone, and a citation number always means the same chunk in the
text and in the list below it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from shared.labels import citation_label
from shared.schema import Answer, Citation, Hit

if TYPE_CHECKING:
    from worker.engine import SearchResult

#: ``[3]``, ``[1, 2]``, ``[1][2]`` (the last is two markers). Ranges like [1-3] are expanded.
_MARKER = re.compile(r"\[(\s*\d+\s*(?:(?:,|-|–)\s*\d+\s*)*)\]")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([.,;:!?])")
_MULTI_SPACE = re.compile(r"[ \t]{2,}")
SNIPPET_CHARS = 240


@runtime_checkable
class Answerer(Protocol):
    """Turns a question and what retrieval found into an :class:`Answer`. Never raises for content."""

    async def answer(self, question: str, result: SearchResult, collection: str) -> Answer: ...


def hit_label(hit: Hit) -> str:
    """ "Subject — Module N, p. P" (the engine usually filled ``hit.label`` already)."""
    return citation_label(hit)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """A one-line excerpt of a chunk, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return f"{cut}…"


#: What a citation carries over from the hit it cites.
_CITED_FIELDS = {"doc_id", "file", "title", "subject", "module", "section", "page", "page_end", "score"}


def citation(n: int, hit: Hit) -> Citation:
    return Citation(
        n=n, snippet=snippet(hit.text), label=hit_label(hit), **hit.model_dump(include=_CITED_FIELDS)
    )


def _numbers(body: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*,\s*", body.strip()):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            lo, hi = int(bounds[0]), int(bounds[1])
            if 0 < hi - lo < 20:
                out.extend(range(lo, hi + 1))
                continue
        if part.isdigit():
            out.append(int(part))
    return out


def finalise_citations(text: str, hits: Sequence[Hit]) -> tuple[str, list[Citation]]:
    """Keep only markers naming a retrieved chunk (1-based), renumber them by first use, list them.

    Returns the cleaned text and the citations it uses, in order of their new numbers.
    """
    renumber: dict[int, int] = {}

    def replace(match: re.Match[str]) -> str:
        kept: list[int] = []
        for n in _numbers(match.group(1)):
            if 1 <= n <= len(hits):
                new = renumber.setdefault(n, len(renumber) + 1)
                if new not in kept:
                    kept.append(new)
        return "".join(f"[{n}]" for n in kept)

    cleaned = _MARKER.sub(replace, text)
    cleaned = re.sub(r"(\[\d+\])(?:\1)+", r"\1", cleaned)  # "[1][1]" from "[1] [1]" collapses
    cleaned = _SPACE_BEFORE_PUNCT.sub(r"\1", cleaned)
    cleaned = "\n".join(_MULTI_SPACE.sub(" ", line).rstrip() for line in cleaned.splitlines()).strip()
    citations = [citation(new, hits[old - 1]) for old, new in sorted(renumber.items(), key=lambda kv: kv[1])]
    return cleaned, citations


def strip_markers(text: str) -> str:
    """Remove every [n] marker (for general-knowledge text, which must not look sourced)."""
    cleaned = _MARKER.sub("", text)
    cleaned = _SPACE_BEFORE_PUNCT.sub(r"\1", cleaned)
    return "\n".join(_MULTI_SPACE.sub(" ", line).rstrip() for line in cleaned.splitlines()).strip()
