"""The default answerer: offline, no model beyond the embedder — quotes the materials with citations.

Two jobs, both pure functions of the question and the retrieved hits:

* **Decide** whether the materials answer the question (:func:`decide`), from retrieval evidence:
  the fallback flag (nothing cleared the score threshold), the best cosine, and how much of the
  question's content words (weighted by rarity among the retrieved chunks) the best chunk
  contains. The thresholds are calibrated on labelled questions; see ``docs/ANSWERING.md``.
* **Compose** the reply from the most relevant sentences of the top chunks, each followed by its
  citation [n]. When the materials do not answer, the reply begins with ``Not in your materials``
  and then points at the closest passage, cited, so the student knows where to look.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from shared.schema import NOT_IN_MATERIALS, Answer, Hit
from worker.answerers.base import cite_marker, finalise_citations, quotable
from worker.chunking import context_line

if TYPE_CHECKING:
    from shared.config import Settings
    from worker.engine import SearchResult

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*•+]\s+|\d+[.)]\s+|>\s*)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")

STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be been before being below between both but
    by can could did do does doing done during each either else etc ever for from further get gets getting
    got had has have having he her here hers him his how however i if in into is it its itself just let
    lets may me might more most must my myself need needs no nor not now of off on once one only or other
    our ours out over own per please same shall she should so some such tell than that the their theirs them
    then there these they this those through to too under until up upon us very want was way we were what
    whats when where whether which while who whom whose why will with within without would yes yet you your
    yours know like make use used using much many long often soon
    """.split()
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deliberately light suffix strip: enough for plurals and -ing/-ed, never clever."""
    if len(word) > 5 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=4096)
def term_set(text: str) -> frozenset[str]:
    """The set of :func:`terms` of a text; cached because the same chunks come back question after
    question, and tokenising 18 chunks would otherwise be most of the answerer's time."""
    return frozenset(terms(text))


def terms(text: str) -> list[str]:
    """Content words of ``text``, lower-cased and stemmed, stopwords dropped (order kept)."""
    out = []
    for raw in _WORD.findall(text.lower()):
        if raw in STOPWORDS or (len(raw) < 2 and not raw.isdigit()):
            continue
        out.append(stem(raw))
    return out


# --- what a question asks for ------------------------------------------------------------------

_DURATION = re.compile(
    r"\b\d+\s*(?:working\s+|business\s+|calendar\s+)?(?:minute|hour|day|week|month|year|semester)s?\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b",
    re.IGNORECASE,
)
_MONEY = re.compile(
    r"[€$£¥₹]\s?\d|\d\s?(?:€|eur|euros?|usd|dollars?|gbp|rs\.?|rupees?)\b|\bfree\b|\d\s?%", re.I
)
_NUMBER = re.compile(r"\d")
#: (question pattern, sentence pattern): e.g. "how long ...?" prefers sentences stating a duration.
_CUES = (
    (
        re.compile(
            r"\b(?:how\s+long|how\s+soon|when|deadline|due|until|how\s+many\s+(?:days|weeks|hours))\b", re.I
        ),
        _DURATION,
    ),
    (re.compile(r"\b(?:how\s+much|cost|costs|price|fee|fees|charge|charged|pay|refund)\b", re.I), _MONEY),
    (re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bpercentage\b|\bweight(?:age)?\b", re.I), _NUMBER),
)
CUE_BONUS = 0.25

# What kind of thing a question asks for, and what a passage that answers it must contain. A
# question asking "when" whose retrieved passages hold no day, date, time or period cannot be
# answered from them, however similar the words ("When is the last day to drop the class?").
_WHEN_ASKED = re.compile(
    r"\b(?:when|what\s+time|what\s+date|which\s+day|how\s+long|how\s+soon|deadline)\b", re.I
)
_WHEN_FOUND = re.compile(
    r"\d|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|"
    r"weekly|daily|week|weeks|semester|finals?|midterm|noon|midnight|morning|afternoon|evening|today|"
    r"tomorrow|deadline|end\s+of)\b",
    re.I,
)
_MONEY_ASKED = re.compile(
    r"\b(?:how\s+much\s+(?:does|do|will|is|are|would)\b.*\b(?:cost|charge|pay|price)|cost|costs|price|fee|fees)\b",
    re.I,
)
_COUNT_ASKED = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bpercent(?:age)?\b", re.I)
_WHO_ASKED = re.compile(r"^\W*who\b", re.I)
_WHO_FOUND = re.compile(
    r"\b(?:prof\.?|professor|dr\.?|instructor|lecturer|teacher|faculty|taught\s+by|coordinator|tutor)\b", re.I
)
ANSWER_TYPES = (
    (_WHEN_ASKED, _WHEN_FOUND),
    (_MONEY_ASKED, _MONEY),
    (_COUNT_ASKED, _NUMBER),
    (_WHO_ASKED, _WHO_FOUND),
)


def answer_type_found(question: str, hits: Sequence[Hit]) -> bool:
    """False when the question asks for a kind of thing (a time, an amount, a count, a person)
    that none of the passages contains; True otherwise (including questions of no such kind)."""
    wanted = [found for asked, found in ANSWER_TYPES if asked.search(question)]
    return all(any(found.search(hit.text) for hit in hits) for found in wanted)


# --- the in-materials decision ----------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """What retrieval says about whether the materials answer a question."""

    fallback: bool
    top_score: float
    top_cosine: float
    coverage: float  # weighted share of the question's content words in the best of the top chunks
    n_terms: int
    type_found: bool = True  # the top chunks contain the kind of thing asked for (see ANSWER_TYPES)


@dataclass(frozen=True)
class Thresholds:
    """The calibrated rule. In the materials iff retrieval did not fall back, the top chunks hold the
    kind of thing asked for, and either cosine >= ``min_cosine`` with coverage >= ``min_coverage``,
    or the cosine alone is at least ``sure_cosine`` (a paraphrase that shares few words)."""

    min_cosine: float
    min_coverage: float
    sure_cosine: float


#: Calibrated per embedder (cosine scales differ between models); see docs/ANSWERING.md.
THRESHOLDS: dict[str, Thresholds] = {
    "minilm": Thresholds(min_cosine=0.30, min_coverage=0.40, sure_cosine=0.55),
    "hashing": Thresholds(min_cosine=0.20, min_coverage=0.40, sure_cosine=0.60),
}
DEFAULT_THRESHOLDS = THRESHOLDS["minilm"]

#: How many of the top hits the coverage and the composed answer look at.
TOP_HITS = 3


def _weights(question_terms: Sequence[str], hits: Sequence[Hit]) -> dict[str, float]:
    """Rarer-among-the-retrieved-chunks words weigh more (a smoothed IDF over the hits)."""
    docs = [term_set(hit.text) for hit in hits]
    n = len(docs)
    return {t: math.log(1.0 + (n + 1) / (0.5 + sum(t in d for d in docs))) for t in set(question_terms)}


def evidence(question: str, hits: Sequence[Hit], fallback: bool) -> Evidence:
    """Measure the retrieval evidence for ``question`` (pure; no model calls)."""
    if not hits:
        return Evidence(True, 0.0, 0.0, 0.0, len(set(terms(question))), False)
    q_terms = list(dict.fromkeys(terms(question)))
    top = hits[:TOP_HITS]
    coverage = 0.0
    if q_terms:
        weights = _weights(q_terms, hits)
        total = sum(weights.values())
        for hit in top:
            present = term_set(hit.text) | term_set(f"{hit.title} {hit.section or ''}")
            coverage = max(coverage, sum(w for t, w in weights.items() if t in present) / total)
    return Evidence(
        fallback=fallback,
        top_score=max(h.score for h in top),
        top_cosine=max(h.cosine for h in top),
        coverage=round(coverage, 4),
        n_terms=len(q_terms),
        type_found=answer_type_found(question, top),
    )


def decide(ev: Evidence, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """True when the retrieved material answers the question, by the calibrated rule."""
    if ev.fallback or ev.top_cosine <= 0.0 or not ev.type_found:
        return False
    if ev.top_cosine >= thresholds.sure_cosine:
        return True
    return ev.top_cosine >= thresholds.min_cosine and ev.coverage >= thresholds.min_coverage


def thresholds_for(embedder: str) -> Thresholds:
    return THRESHOLDS.get(embedder, DEFAULT_THRESHOLDS)


def in_materials(question: str, result: SearchResult, embedder: str = "minilm") -> bool:
    """The extractive answerer's decision, for callers (``syllabot eval``) that need only that."""
    return decide(evidence(question, result.hits, result.fallback), thresholds_for(embedder))


# --- composing the reply --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sentence:
    text: str
    hit_index: int  # 0-based into the hits (citation number - 1)
    position: int
    score: float


_LIST_ITEM = re.compile(r"^\s*(?:[-*•+]\s+|\d+[.)]\s+|CO\s?\d+[.:)]?\s)")


def _blocks(text: str) -> list[str]:
    """Paragraphs and list items, with lines that a layout wrapped mid-sentence joined back.

    Markdown and PDF text both wrap long sentences over several lines; a blank line, a list item
    or a table row starts a new block.
    """
    blocks: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _TABLE_RULE.match(line):
            flush()
            continue
        if stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|") if c.strip()]
            if cells:
                blocks.append(": ".join(cells))
            continue
        if _LIST_ITEM.match(line) or stripped.startswith("#"):
            flush()
        current.append(_MARKUP.sub("", stripped).strip() if not current else stripped)
    flush()
    return blocks


def sentences(text: str) -> list[str]:
    """Sentences and list items of a chunk, markup stripped; table rows kept as one line each."""
    return [part.strip() for block in _blocks(text) for part in _SENTENCE_END.split(block) if part.strip()]


def passage(hit: Hit) -> str:
    """The chunk's text without the context line the chunker puts first for the embedder.

    That line ("Safety recalls — Active recall") repeats the citation label; quoted as a sentence
    it reads as a non-answer.
    """
    first, _, rest = hit.text.partition("\n")
    expected = context_line(hit.subject or hit.title, hit.module or hit.section)
    return rest if rest and first.strip() == expected else hit.text


def _is_heading(text: str) -> bool:
    """Short lines that do not end a sentence: headings and labels, not answers."""
    return len(text) <= 80 and not re.search(r"[.!?]$", text) and len(text.split()) < 7


def _rank_sentences(
    question: str, hits: Sequence[Hit], weight_hits: Sequence[Hit] | None = None
) -> list[_Sentence]:
    q_terms = set(terms(question))
    weights = _weights(list(q_terms), weight_hits or hits) if q_terms else {}
    total = sum(weights.values()) or 1.0
    best_score = max((h.score for h in hits), default=1.0) or 1.0
    cues = [answer for asked, answer in _CUES if asked.search(question)]
    ranked: list[_Sentence] = []
    for index, hit in enumerate(hits):
        for position, text in enumerate(sentences(passage(hit))):
            # Headings and lead-ins ("Your bike is part of the recall if:") say nothing on their own.
            if len(text) < 12 or _is_heading(text) or text.endswith(":"):
                continue
            present = term_set(text)
            overlap = sum(w for t, w in weights.items() if t in present) / total
            # Word overlap decides; a sentence of the kind the question asks for (a duration for
            # "how long", an amount for "how much") gets a bonus; the chunk's retrieval score breaks
            # ties; earlier sentences of a chunk (its topic sentence) are slightly preferred.
            cue = CUE_BONUS if any(pattern.search(text) for pattern in cues) else 0.0
            score = overlap + cue + 0.35 * (hit.score / best_score) - 0.01 * position
            ranked.append(_Sentence(text, index, position, score))
    ranked.sort(key=lambda s: s.score, reverse=True)
    return ranked


def _clip(text: str, limit: int = 360) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"


def _fallback_snippet(hit: Hit, limit: int = 360) -> str:
    """The top chunk's own words, for when it holds no quotable sentence (headings, short items).

    Blocks are joined with "; ", except after a lead-in ending in ":" (then a space).
    """
    text = ""
    for block in sentences(passage(hit)):
        text += block if not text else (" " if text.endswith(":") else "; ") + block
    text = _clip(text or " ".join(hit.text.split()), limit)
    return text if re.search(r"[.!?…]$", text) else f"{text.rstrip(':;,')}."


def compose(question: str, hits: Sequence[Hit], max_sentences: int = 3, max_chars: int = 900) -> str:
    """The best sentences of the top hits, each followed by its citation (1-based into ``hits``).

    Citations are :func:`~worker.answerers.base.cite_marker` sentinels, not "[n]": the quoted
    text keeps its own brackets. When no sentence qualifies, a snippet of the top hit, cited [1].
    """
    chosen: list[_Sentence] = []
    seen: set[frozenset[str]] = set()
    length = 0
    for sentence in _rank_sentences(question, hits[:TOP_HITS], weight_hits=hits):
        signature = frozenset(terms(sentence.text))
        if signature in seen:
            continue
        clipped = _clip(sentence.text)
        if chosen and length + len(clipped) > max_chars:
            break
        seen.add(signature)
        chosen.append(_Sentence(clipped, sentence.hit_index, sentence.position, sentence.score))
        length += len(clipped)
        if len(chosen) >= max_sentences:
            break
    if not chosen and hits:
        return f"{quotable(_fallback_snippet(hits[0], min(max_chars, 360)))} {cite_marker(1)}"
    parts = []
    for s in chosen:
        text = quotable(s.text if re.search(r"[.!?…:]$", s.text) else f"{s.text}.")
        parts.append(f"{text} {cite_marker(s.hit_index + 1)}")
    return " ".join(parts)


_WHERE_QUESTION = re.compile(r"\b(which|what|in which)\s+(module|unit|chapter|part)\b", re.IGNORECASE)


def where_lead(question: str, hits: Sequence[Hit]) -> str:
    """For "which module covers X?", say the module first: the quoted syllabus text rarely does."""
    if not _WHERE_QUESTION.search(question) or not hits or not hits[0].module:
        return ""
    top = hits[0]
    pages = ""
    if top.page is not None and top.file.lower().endswith(".pdf"):
        pages = (
            f", p. {top.page}"
            if not top.page_end or top.page_end == top.page
            else f", pp. {top.page}–{top.page_end}"
        )
    subject = f" of {top.subject}" if top.subject else ""
    return quotable(f"{top.module}{subject}{pages}.") + f" {cite_marker(1)} "


class ExtractiveAnswerer:
    """Quotes the retrieved material; decides "in materials" from retrieval evidence (calibrated)."""

    def __init__(self, settings: Settings | None = None, thresholds: Thresholds | None = None) -> None:
        self.settings = settings
        embedder = settings.embedder if settings is not None else "minilm"
        self.thresholds = thresholds or thresholds_for(embedder)

    async def answer(self, question: str, result: SearchResult, collection: str) -> Answer:
        return self.answer_sync(question, result, collection)

    def answer_sync(self, question: str, result: SearchResult, collection: str) -> Answer:
        """Pure CPU and fast (well under a millisecond for 18 hits), so no thread hop is needed."""
        hits = list(result.hits)
        base = {"collection": collection, "index_version": result.index_version, "question": question}
        if not hits:
            text = (
                f"{NOT_IN_MATERIALS}: the collection '{collection}' has no indexed documents yet."
                if result.index_version is None
                else f"{NOT_IN_MATERIALS}: nothing in the collection '{collection}' matches the question."
            )
            return Answer(text=text, in_materials=False, **base)
        ev = evidence(question, hits, result.fallback)
        if decide(ev, self.thresholds):
            raw = where_lead(question, hits) + compose(question, hits)
            text, citations = finalise_citations(raw, hits, brackets=False)
            return Answer(text=text, in_materials=True, citations=citations, **base)
        closest = compose(question, hits, max_sentences=1, max_chars=360)
        text, citations = finalise_citations(
            f"{NOT_IN_MATERIALS}. The closest passage I found: {closest}", hits, brackets=False
        )
        return Answer(text=text, in_materials=False, citations=citations, **base)
