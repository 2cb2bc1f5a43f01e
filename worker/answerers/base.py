"""What every answerer shares: the protocol, and turning [n] markers into checked citations.

Answerers number the retrieved chunks 1..k for themselves (the LLM sees them that way). The reply
that reaches a user keeps only markers that point at a retrieved chunk, renumbered 1, 2, 3 in order
of first use, and its ``citations`` list holds exactly those chunks — so "[7]" from a model that
saw five chunks never reaches anyone, and a citation number always means the same chunk in the
text and in the list below it.

Two ways in. The extractive answerer quotes course material verbatim, and that material has its
own brackets (``int a[10]``, "Silberschatz [1]"), so it marks its citations with a private
sentinel (:func:`cite_marker`) that quoted text cannot contain, and only those become ``[n]``.
A model's reply can only use ``[n]``; there a marker counts only when it is not glued to a word
or to another bracket (``a[2][3]``) and is not a markdown link (``[3](url)``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypedDict, runtime_checkable

from syllabot.shared.labels import citation, citation_label
from syllabot.shared.schema import Answer, Citation, Hit
from syllabot.worker.ingest.markdown_text import rendered
from syllabot.worker.ingest.passages import LIST_DASH
from syllabot.worker.text.display import joined, literal_asterisks, shown

if TYPE_CHECKING:
    from syllabot.worker.indexes.retrieval import SearchResult

#: Delimits a citation number in text an answerer composed itself (NUL, "3", NUL for [3]).
SENTINEL = "\x00"
_SENTINEL_MARK = re.compile(r"([ \t]*)\x00(\d+)\x00")
#: One ``[3]``, ``[1, 2]`` or ``[1-3]`` (ranges are expanded).
_BRACKET = re.compile(r"\[(\s*\d+\s*(?:(?:,|-|–)\s*\d+\s*)*)\]")
#: A run of them in a model's reply (``[1][2]`` is two markers), not glued to a word or a bracket
#: before it (``a[2][3]`` is code) and not a markdown link (``[3](url)``). The run is possessive so
#: that "[1][2](url)" is not read as "[1]" followed by a link.
_BRACKET_RUN = re.compile(r"([ \t]*)(?<![\w\]])((?:\[\s*\d+\s*(?:(?:,|-|–)\s*\d+\s*)*\])++)(?!\()")
_DUPLICATES = re.compile(r"(\x00\d+\x00)(?:[ \t]*\1)+")


class AnswerContext(TypedDict):
    """The fields every ``Answer`` of one question shares (``Answer(..., **context)``)."""

    collection: str
    index_version: str | None
    question: str


@runtime_checkable
class Answerer(Protocol):
    """Turns a question and what retrieval found into an :class:`Answer`. Never raises for content."""

    async def answer(self, question: str, result: SearchResult, collection: str) -> Answer: ...


def hit_label(hit: Hit) -> str:
    """ "Subject — Module N, p. P" (the engine usually filled ``hit.label`` already)."""
    return citation_label(hit)


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


def cite_marker(n: int) -> str:
    """The private citation marker for chunk ``n`` (1-based); :func:`finalise_citations` reads it."""
    return f"{SENTINEL}{n}{SENTINEL}"


def first_cited(text: str) -> int | None:
    """The chunk number (1-based) of the first :func:`cite_marker` in ``text``, or None."""
    m = _SENTINEL_MARK.search(text)
    return int(m.group(2)) if m else None


#: Two emphasised values this close, with only a range's or a list's joiner between, are one
#: ("**2**-**3pm**" reads as "**2-3pm**").
#: The kinds of value a reply shows in bold: those read exactly (a count's noun is read loosely:
#: "April 16 No class" is not a count of classes).
EMPHASISED = frozenset({"weekday", "date", "time", "duration", "percent"})
#: A citation, private (:func:`cite_marker`) or as shown ("[2]"): never emphasised.
_MARKS = re.compile(r"(\x00\d+\x00|\[\d+(?:\s*[,–-]\s*\d+)*\])")
_JOINER = re.compile(r"\s*(?:[-–—,/&]|to|and)?\s*")


def emphasise(text: str, kinds: frozenset[str]) -> str:
    """``text`` with every value of the asked ``kinds`` it quotes in bold (Markdown ``**``): the
    date of "when is the exam", the percent of "how much is homework worth", read by the one value
    recogniser (:func:`values.values_in`). Why: a reply quotes a sentence or a piece of a page, and
    the asked value is one word of it; bold lets a student find it at a glance. Citation markers
    and text already in bold are left as they are."""
    if not kinds:
        return text
    from syllabot.worker.query.values import values_in  # the query stage; answerers import it lazily

    out: list[str] = []
    for part in _MARKS.split(text):
        if _MARKS.fullmatch(part) or "**" in part:
            out.append(part)
            continue
        lines = []
        for line in part.split("\n"):
            found: list[tuple[int, int]] = []
            for value in values_in(line):
                if value.kind not in kinds & EMPHASISED:
                    continue
                at = line.find(value.text)
                while at >= 0 and any(a < at + len(value.text) and at < b for a, b in found):
                    at = line.find(value.text, at + 1)  # the same words again: their next place
                if at >= 0:
                    found.append((at, at + len(value.text)))
            spans: list[list[int]] = []
            for start, end in sorted(found):
                if spans and _JOINER.fullmatch(line[spans[-1][1] : start]):
                    spans[-1][1] = end
                else:
                    spans.append([start, end])
            for start, end in reversed(spans):
                line = f"{line[:start]}**{line[start:end]}**{line[end:]}"
            lines.append(line)
        out.append("\n".join(lines))
    return "".join(out)


def quotable(text: str) -> str:
    """Text safe to put next to :func:`cite_marker` markers (the sentinel character removed)."""
    return text.replace(SENTINEL, "")


def _tidy(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines()).strip()


#: A quoted line is looked up in its passage by its first this-many non-space characters (an
#: answer may clip a long sentence's end).
_PROBE = 30
#: Lines shorter than this (non-space) are not looked up: "1." or a bullet would match anywhere.
_MIN_PROBE = 12


def as_read(hit: Hit, markdown: bool = True, breaks: Mapping[str, str] | None = None) -> Hit:
    """``hit`` with its text as a student reads it: symbol-font bullets as "•", words a line end
    broke shown whole (``breaks``, ``worker.text.display``), a non-Markdown source's printed
    asterisks as "∗" (``display.literal_asterisks``), and with ``markdown`` a Markdown-shaped
    source rendered to its words (``markdown_text.rendered``). The same hit when there is nothing
    to show differently."""
    render = markdown and hit.markdown
    text = joined(shown(hit.text, hit.bullets), breaks or {})
    if render:
        text = rendered(text)
    elif not hit.markdown:
        text = literal_asterisks(text)  # a PDF's footnote marks, never chat emphasis
    if text == hit.text and not hit.bullets and not render:
        return hit
    return hit.model_copy(update={"text": text, "bullets": [], "markdown": hit.markdown and not render})


def for_reader(result: SearchResult, markdown: bool = True) -> SearchResult:
    """``result`` with every passage an answer may quote as a student reads it (:func:`as_read`;
    ``markdown``: Markdown-shaped sources rendered too).

    Why at the answerer's door: search ranked the passages on the text the index reads; what an
    answer quotes, and what a model reads and quotes, is the text a student sees. Both answerers
    call it first (an LLM's extractive fallback too: a second call changes nothing). The
    extractive answerer renders Markdown in its reply instead (:func:`rendered_reply`). Lists are
    copied only when a passage shows differently."""
    if not result.breaks and not any(
        h.bullets or (markdown and h.markdown) or (not h.markdown and "*" in h.text) for h in result.passages
    ):
        return result
    return dataclasses.replace(
        result,
        hits=[as_read(h, markdown, result.breaks) for h in result.hits],
        related=[as_read(h, markdown, result.breaks) for h in result.related],
        breaks={},
    )


def rendered_reply(text: str, hits: Sequence[Hit]) -> str:
    """An extractive reply's quotes of Markdown-shaped sources as a reader sees them rendered
    (``markdown_text.rendered``), when any passage is of one; ``text`` itself otherwise.

    Why the reply and not the passages: the answerer reads a passage's structure from its text
    ("**Project** | …" rows), and reading them rendered changed which block a list reply quoted
    (one tuning reply lost its facts, ``docs/BENCHMARKS.md``). The reply is quotes, citation
    sentinels and the answerer's own plain words, which rendering leaves as they are; anything an
    answer composes in Markdown (bold) must be added after this."""
    return rendered(text) if any(h.markdown for h in hits) else text


def narrowed(hit: Hit, quoted: Sequence[str]) -> Hit:
    """``hit`` cited by the pages its ``quoted`` text is on: a passage over pp. 4–5 whose quoted
    sentence is on p. 5 cites p. 5, the page a student opens. Each quoted line is found by its
    opening characters in the passage, spaces ignored (an answer re-spaces what it quotes).
    Unchanged for a passage on one page, or when no quote is found in it (a model's paraphrase)."""
    if not hit.page_marks or hit.page is None:
        return hit
    flat = "".join(hit.text.split())
    starts = [(0, hit.page), *hit.page_marks]
    pages: set[int] = set()
    for line in (line for q in quoted for line in q.splitlines()):
        probe = "".join(line.removeprefix(LIST_DASH).split()).lstrip("…")[:_PROBE].rstrip("…")
        at = flat.find(probe) if len(probe) >= _MIN_PROBE else -1
        if at >= 0:
            pages.add(next(page for start, page in reversed(starts) if start <= at))
    if not pages:
        return hit
    first, last = min(pages), max(pages)
    if (first, last) == (hit.page, hit.page_end):
        return hit
    old = f", pp. {hit.page}–{hit.page_end}"
    new = f", p. {first}" if first == last else f", pp. {first}–{last}"
    return hit.model_copy(
        update={"page": first, "page_end": last, "label": hit.label.replace(old, new) if hit.label else ""}
    )


def finalise_citations(
    text: str, hits: Sequence[Hit], *, brackets: bool = True
) -> tuple[str, list[Citation]]:
    """Keep only markers naming a retrieved chunk (1-based), renumber them by first use, list them.

    :func:`cite_marker` markers are always read. ``brackets`` (a model's reply) also reads ``[n]``
    markers that stand on their own (see ``_BRACKET_RUN``); pass ``False`` for text that quotes
    the materials, whose brackets are theirs. A dropped marker takes the spaces before it along,
    so "Forever [7]." becomes "Forever."; nothing else in the text changes.

    Returns the cleaned text and the citations it uses, in order of their new numbers.
    """
    renumber: dict[int, int] = {}
    source = quotable(text) if brackets else text  # a model's reply: any sentinel in it is not ours
    # What the answer says each cited passage says: the text before each of its markers, back to the
    # previous marker (by the number as written), for citing the page of the quote (:func:`narrowed`).
    quoted: dict[int, list[str]] = {}
    after_previous = 0

    def keep(numbers: list[int], match: re.Match[str]) -> str:
        nonlocal after_previous
        for n in numbers:
            quoted.setdefault(n, []).append(source[after_previous : match.start()])
        after_previous = match.end()
        kept: list[int] = []
        for n in numbers:
            if 1 <= n <= len(hits):
                new = renumber.setdefault(n, len(renumber) + 1)
                if new not in kept:
                    kept.append(new)
        return match.group(1) + "".join(cite_marker(n) for n in kept) if kept else ""

    def from_sentinel(match: re.Match[str]) -> str:
        return keep([int(match.group(2))], match)

    def from_brackets(match: re.Match[str]) -> str:
        return keep([n for body in _BRACKET.findall(match.group(2)) for n in _numbers(body)], match)

    cleaned = (
        _BRACKET_RUN.sub(from_brackets, source) if brackets else _SENTINEL_MARK.sub(from_sentinel, source)
    )
    cleaned = _DUPLICATES.sub(r"\1", cleaned)  # "[1] [1]" collapses to "[1]"
    cleaned = re.sub(r"\x00(\d+)\x00", r"[\1]", cleaned)
    citations = [
        citation(new, narrowed(hits[old - 1], quoted.get(old, [])))
        for old, new in sorted(renumber.items(), key=lambda kv: kv[1])
    ]
    return _tidy(quotable(cleaned)), citations


def strip_markers(text: str) -> str:
    """Remove citation markers (for general-knowledge text, which must not look sourced).

    The same markers :func:`finalise_citations` reads in a model's reply: ``a[2]`` stays.
    """
    cleaned = _BRACKET_RUN.sub("", _SENTINEL_MARK.sub("", text))
    return _tidy(quotable(cleaned))
