"""The default answerer: offline, no model beyond the embedder — quotes the materials with citations.

Everything here is a pure function of the (cleaned) question and the retrieved hits. The reply's
shape follows what the question asks for (:mod:`worker.query.intent`):

* a **list** ("the COs of CN", "textbooks for OS", "lab programs", "CIE split") is the whole block
  of the right course, in order, one item a line — never three fragments from different chunks;
* **one course outcome** ("CO3 of OS") is that outcome's line; a CO the course does not list is
  not in the materials;
* **which module** names the module (with subject and page) first, then the clause that matched;
* a **value** ("when", "who", "how many", "email") must be in the quoted sentence; a passage about
  the topic without it is not an answer (the exam "as per the scheduled timetable" gives no date);
* anything else quotes the best sentences of the top course's passages, dropping weak tails.

A question that names no course in a collection of several, whose lists or values come from more
than one course, is answered per course, each under its own name — never a mix of two courses.

The outcome (``answered`` / ``uncertain`` / ``not_in_materials``) is decided from structure first
(a whole list of the asked kind found in the asked course is an answer) and otherwise from retrieval
evidence (:mod:`worker.answerers.decision`). When the materials do not answer, the reply points at
the closest passage, cited; when unsure, it shows the closest passages. The words that say which
(the "Not in your materials" marker, the uncertain lead) are not written here: ``Answer.text`` is
the body, and ``shared/answer_text.py`` adds them from the status.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from syllabot.shared.schema import Answer, AnswerStatus, Hit
from syllabot.worker.answerers.base import (
    AnswerContext,
    cite_marker,
    emphasise,
    finalise_citations,
    first_cited,
    for_reader,
    quotable,
    rendered_reply,
)
from syllabot.worker.answerers.decision import (
    DEFAULT_THRESHOLDS,
    Evidence,
    Finding,
    Reading,
    Signals,
    Thresholds,
    Verdict,
    decide,
    evidence,
    thresholds_for,
    weights,
)
from syllabot.worker.answerers.focus import ELLIPSIS, QUOTE_CHARS, focus_window
from syllabot.worker.answerers.notes import lead_with_conflict, lead_with_record, lead_with_term
from syllabot.worker.indexes.breakdown import grade_breakdown
from syllabot.worker.indexes.conflicts import conflict_of
from syllabot.worker.ingest.passages import (
    ANNOUNCES,
    ANNOUNCING,
    LIST_DASH,
    LIST_ITEM,
    blocks,
    item_line,
    passage,
    read_blocks,
)
from syllabot.worker.query.card import SLOT_OF, CardAnswer
from syllabot.worker.query.intent import VALUE_PATTERNS, Intent, section_pattern
from syllabot.worker.query.outlines import Entry, OutlineAsk, outlines_by_document, read_for
from syllabot.worker.query.reading import Question, read_question
from syllabot.worker.text.currency import how_current
from syllabot.worker.text.sentences import split_sentences
from syllabot.worker.text.terms import term_set, terms
from syllabot.worker.text.text_caches import PER_TEXT

if TYPE_CHECKING:
    from syllabot.shared.config import Settings
    from syllabot.worker.indexes.retrieval import SearchResult

_CO_ITEM = re.compile(r"^\s*(?:CO|C\.O\.)\s?-?(\d{1,2})\b", re.IGNORECASE)

#: How many of the top hits a general (sentence) answer quotes from.
TOP_HITS = 3
#: How many hits are searched for the block a list question asks for.
SECTION_SCAN = 10
#: A general answer's later sentences must score at least this share of the best one's.
TAIL_SHARE = 0.6
#: A value question's cue bonus (a duration for "how long", a number for "how many").
CUE_BONUS = 0.25
#: Courses answered side by side when a question names none and the answer spans several.
MAX_COURSES = 3
LIST_CHARS = 3000  # a lab list runs to ~2,200 characters; renderers split long replies
#: A list a quoted sentence belongs to is quoted whole up to this many items and characters.
RUN_ITEMS = 12
RUN_CHARS = 900


@dataclass(frozen=True)
class Reply:
    """The verdict's outcome and the text composed for it (with private citation markers)."""

    status: AnswerStatus
    text: str
    verdict: Verdict | None = None


# --- reading chunks ---------------------------------------------------------------------------


def course_of(hit: Hit) -> str:
    """The course a hit belongs to; "" for material of no course (help pages, notes), which is
    all one group: answers never mix two courses, but may draw on several pages of a handbook."""
    return hit.subject or ""


def _name(hit: Hit) -> str:
    return hit.subject or hit.title or hit.file


def sentences(text: str) -> list[str]:
    """Sentences and list items of a chunk, markup stripped; table rows kept as one line each."""
    return [part.strip() for block in blocks(text) for part in split_sentences(block) if part.strip()]


@dataclass(frozen=True)
class _Unit:
    """What the answerer can quote of a hit: a sentence, a header row, or a whole list (``items``,
    ``text`` then its lead-in and items joined, which is what is scored)."""

    text: str
    lead: str | None = None
    items: tuple[str, ...] = ()


#: A lead-in's colon followed by a dash, as syllabi print it ("the students will be able to:-").
_LEAD_DASH = re.compile(r":\s*[-–—]+$")


def _is_lead(text: str) -> bool:
    """A block that introduces the list after it: a line that announces it ("…the following three
    questions:", "the materials below", "be able to:-"), a question ("What tools do we have to
    achieve our goal?"), or a slide's title ("Weekly snippets", "How to (very quickly) skim an
    article": up to ``LEAD_WORDS`` words that end no sentence and hold no number, so not a course's
    header line). Every short heading (:func:`_is_heading`) is such a title."""
    return len(text) <= 160 and (
        text.endswith("?")
        or ANNOUNCES.search(text) is not None
        or _LEAD_DASH.search(text) is not None
        or (len(text.split()) <= LEAD_WORDS and not re.search(r"[.!]$|\d", text))
    )


#: The most words a title without a colon has to introduce the list under it.
LEAD_WORDS = 12


@lru_cache(maxsize=PER_TEXT)
def _block_units(body: str) -> tuple[_Unit, ...]:
    """Sentences of the blocks of ``body``, each list (lead-in and 2 to ``RUN_ITEMS`` items within
    ``RUN_CHARS``) one unit.

    Why: a slide is a title and bullets, a syllabus paragraph a lead-in and numbered items. As
    separate sentences the best item alone answered "what questions do we answer in the snippets"
    with one of the three, and the items lost their lead-in's words ("Week 5" for the topics under
    it); as one unit the list is scored with its lead-in and quoted whole.
    """
    found = read_blocks(body)
    out: list[_Unit] = []
    k = 0
    while k < len(found):
        j = k
        while j < len(found) and found[j].item:
            j += 1
        items = tuple(b.text for b in found[k:j])
        if j > k and 2 <= len(items) <= RUN_ITEMS and sum(len(t) for t in items) <= RUN_CHARS:
            # the block before, if it introduces the list (its last sentence: "… three questions:")
            lead = out.pop().text if k > 0 and not found[k - 1].item and _is_lead(out[-1].text) else None
            out.append(_Unit(" ".join(([lead] if lead else []) + list(items)), lead, items))
            k = j
            continue
        # not a list, or one too long to quote whole: every block of the run read as sentences (a
        # long list's tail must not become a list of its own, cut from its lead-in)
        sentences = (
            part.strip() for block in found[k : max(j, k + 1)] for part in split_sentences(block.text)
        )
        out.extend(unit for sentence in sentences if sentence for unit in _sentence_units(sentence))
        k = max(j, k + 1)
    return tuple(out)


#: A sentence that announces a list and runs it on after a colon: "Your paper should include the
#: following sections: title page, abstract, introduction, …, and bibliography."
_INLINE_LIST = re.compile(rf"^(?P<lead>[^:]{{0,200}}{ANNOUNCING}[^:]{{0,60}}):\s*(?P<items>[^:]+?)\.?$", re.I)
_ITEM_SPLIT = re.compile(r"\s*(?:,|;)\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+(?=[^,;]+$)")


def _sentence_units(sentence: str) -> tuple[_Unit, ...]:
    """What one sentence is read as: the sentence, or, when it announces a list and runs it on
    after a colon (three or more short items), that list: scored and quoted as a list with its
    lead-in, as a slide's bullets are."""
    m = _INLINE_LIST.match(sentence)
    if m is None:
        return (_Unit(sentence),)
    items = tuple(i.strip() for i in _ITEM_SPLIT.split(m.group("items")) if i.strip())
    if len(items) < 3 or any(len(i.split()) > 6 for i in items):
        return (_Unit(sentence),)
    return (_Unit(sentence, m.group("lead").strip() + ":", items),)


@lru_cache(maxsize=PER_TEXT)
def _word_sets(unit: _Unit) -> tuple[frozenset[str], ...]:
    """The words a unit is scored by: a sentence's own; each item of a list with its lead-in's."""
    if not unit.items:
        return (term_set(unit.text),)
    lead = term_set(unit.lead) if unit.lead else frozenset()
    return tuple(lead | term_set(item) for item in unit.items)


def _units(hit: Hit) -> tuple[_Unit, ...]:
    """What can be quoted from a hit: its sentences and lists (:func:`_block_units`), and for a
    course header its rows (one line each: "Credits 04 Exam Hours 03" answers "how many credits?",
    the whole header does not)."""
    body = passage(hit)
    if (hit.section or "").lower() == "course details":
        return tuple(_Unit(line.strip()) for line in body.splitlines() if len(line.strip()) >= 6)
    return _block_units(body)


def _is_heading(text: str) -> bool:
    """Short lines that do not end a sentence: headings and labels, not answers."""
    return (
        len(text) <= 80
        and not re.search(r"[.!?]$", text)
        and len(text.split()) < 7
        and not re.search(r"\d", text)
    )


def _clip(text: str, limit: int = QUOTE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + ELLIPSIS


def _sentence_end(text: str) -> str:
    return text if re.search(r"[.!?…:]$", text) else f"{text}."


# --- ranking sentences ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sentence:
    text: str
    hit_index: int  # 0-based into the hits (citation number - 1)
    score: float
    overlap: float
    has_value: bool
    unit: _Unit  # what was scored: a list (``items``) is quoted as the list
    #: for a list, the share of the question's (rarity-weighted) words its lead-in holds
    lead_overlap: float = 0.0
    #: the question's words and their weights: what a long sentence's quote is centred on
    weights: Mapping[str, float] = field(default_factory=dict, compare=False, hash=False, repr=False)


#: What a list gains in ranking per unit of its lead-in's share of the question's words, for a
#: question that asks for no value: the slide titled "Occam's razor:" over the "Strategies:" list
#: that merely names it, "The 'Discussion' section:" over a sentence that mentions discussions.
LEAD_BONUS = 0.2


def _rank(
    question: str, intent: Intent, hits: Sequence[Hit], indices: Sequence[int], all_hits: Sequence[Hit]
) -> list[_Sentence]:
    q_terms = set(terms(question))
    w = weights(list(q_terms), all_hits) if q_terms else {}
    total = sum(w.values()) or 1.0
    best_score = max((hits[i].score for i in indices), default=1.0) or 1.0
    value = VALUE_PATTERNS.get(intent.wants or "")
    ranked: list[_Sentence] = []
    for index in indices:
        hit = hits[index]
        for position, unit in enumerate(_units(hit)):
            text = unit.text
            # Headings and lead-ins ("Your bike is part of the recall if:") say nothing on their own.
            if not unit.items and (len(text) < 6 or _is_heading(text) or text.endswith(":")):
                continue
            # a list is as close as its best item read with its lead-in: the union of every item's
            # words would favour long lists ("CLO 1 … CLO 4" for "credits for dbms, 3 or 4?")
            overlap = max(
                sum(v for t, v in w.items() if t in present) / total for present in _word_sets(unit)
            )
            has_value = bool(value.search(text)) if value else False
            cue = CUE_BONUS if has_value else 0.0
            lead = term_set(unit.lead) if unit.items and unit.lead else None
            lead_overlap = sum(v for t, v in w.items() if t in lead) / total if lead else 0.0
            score = overlap + cue + 0.35 * (hit.score / best_score) - 0.01 * position
            if not intent.wants:
                score += LEAD_BONUS * lead_overlap
            ranked.append(_Sentence(text, index, score, overlap, has_value, unit, lead_overlap, w))
    ranked.sort(key=lambda s: s.score, reverse=True)
    return ranked


def _quote(chosen: Sequence[_Sentence]) -> str:
    """The chosen sentences, each cited; a list (:func:`_block_units`) as its lead-in and items."""
    parts: list[str] = []
    for s in chosen:
        marker = cite_marker(s.hit_index + 1)
        if not s.unit.items:
            shown = _clip(focus_window(s.text, s.weights))  # a flattened table: the row asked about
            parts.append(f"{quotable(_sentence_end(shown))} {marker}")
            continue
        parts.append(f"{quotable(_list_lines(s.unit))} {marker}\n")
    return " ".join(parts).replace("\n ", "\n").strip()


def _list_lines(unit: _Unit) -> str:
    """A list unit as quoted: its lead-in ending in ":" and one item a line."""
    lead = _LEAD_DASH.sub(":", unit.lead) if unit.lead else None  # "… be able to:-"
    if lead and lead.endswith("."):
        lead = lead[:-1]  # "… the materials below before collecting data." introduces the list
    lines = [lead if lead.endswith((":", "?")) else f"{lead}:"] if lead else []
    # an item keeps its own number ("2.) What am I planning…"); a bulleted one gets a dash
    return "\n".join(lines + [item_line(_clip(item, 300)) for item in unit.items])


def _best_sentences(ranked: Sequence[_Sentence], limit: int, max_chars: int = 900) -> list[_Sentence]:
    """The best sentence, then any others scoring close to it (no trailing unrelated fragments)."""
    chosen: list[_Sentence] = []
    seen: set[frozenset[str]] = set()
    length = 0
    for s in ranked:
        if chosen and (s.score < TAIL_SHARE * chosen[0].score or s.overlap <= 0.0):
            break
        signature = term_set(s.text)
        if signature in seen:
            continue  # said already
        if chosen and length + len(s.text) > max_chars:
            break
        seen.add(signature)
        chosen.append(s)
        length += len(s.text)
        if len(chosen) >= limit:
            break
    return chosen


def _snippet(hit: Hit, limit: int = QUOTE_CHARS) -> str:
    """The chunk's own words, for when it holds no quotable sentence (headings, short items)."""
    text = ""
    for block in blocks(passage(hit)):
        text += block if not text else (" " if text.endswith(":") else "; ") + block
    text = _clip(text or " ".join(hit.text.split()), limit)
    return text if re.search(r"[.!?…]$", text) else f"{text.rstrip(':;,')}."


def closest(question: str, intent: Intent, hits: Sequence[Hit]) -> str:
    """The closest passage, cited: what a not-in reply points at."""
    indices = range(min(len(hits), TOP_HITS))
    chosen = _best_sentences(_rank(question, intent, hits, list(indices), hits), 1, 600)
    if not chosen:
        return f"{quotable(_snippet(hits[0]))} {cite_marker(1)}"
    return _quote(chosen)


#: An "I can't tell" reply shows the best piece of each of this many passages.
PIECES = 3
#: How far down the top course's hits the pieces are looked for.
PIECE_SCAN = 6
#: The longest piece, in characters: its best unit and the units beside it that fit.
PIECE_CHARS = 400
#: The most characters of quoted pieces in one reply (the status's words come on top, so the
#: whole reply stays within ~1,200 characters on Discord and Slack).
PIECES_CHARS = 1100
#: A piece sharing at least this share of its words with a piece already shown says it again
#: (overlapping windows of one page, a slide and the syllabus line it restates).
PIECE_REPEAT = 0.6
#: A later piece is shown only when its best unit ranks at least this share of the first piece's.
LATER_PIECE_SHARE = 0.5
#: A later piece's shortest run grows to at least this many characters: never a bare heading.
LATER_PIECE_AT_LEAST = 100


def _shown_unit(unit: _Unit) -> str:
    """A unit as a piece shows it: a sentence ended, a list as :func:`_list_lines`."""
    return _list_lines(unit) if unit.items else _sentence_end(unit.text)


def _piece(
    hits: Sequence[Hit], s: _Sentence, limit: int = PIECE_CHARS, grow: bool = True, at_least: int = 0
) -> str:
    """What a piece quotes of the passage ``s`` is from, cited: the run of its units (sentences,
    bullets, rows, lists), in the passage's order, that holds ``s`` and the most of the question's
    words within ``limit`` characters -- of those the longest (``grow``: the whole passage when it
    fits), else the shortest (a confident answer's quote: the row or sentences that hold it).

    Why not the one unit: the unit that matched the question's words is often next to the fact
    asked for ("Homework" … "is due every other Friday"), and a short slide or paragraph is best
    read whole (tuning courses: uncertain replies holding the asked facts 145 → 162 of 260)."""
    units = _units(hits[s.hit_index])
    at = units.index(s.unit) if s.unit in units else -1
    marker = cite_marker(s.hit_index + 1)
    if at < 0 or len(_shown_unit(s.unit)) > limit:
        shown_one = s.unit.text if not s.unit.items else _shown_unit(s.unit)
        return f"{quotable(_sentence_end(focus_window(shown_one, s.weights, limit)))} {marker}"
    shown = [_shown_unit(u) for u in units]
    words = [_word_sets(u) for u in units]
    best: tuple[float, int, int, int, int] | None = None
    window = (at, at)
    for first in range(at, -1, -1):
        size = sum(len(t) + 1 for t in shown[first:at])
        if size + len(shown[at]) > limit:
            break
        present: set[str] = set()
        for k in range(first, at):
            present.update(*words[k])
        for last in range(at, len(units)):
            size += len(shown[last]) + 1
            if size - 1 > limit:
                break
            present.update(*words[last])
            weight = sum(v for t, v in s.weights.items() if t in present)
            # the most of the question's words; of those the longest (or shortest) run, then the
            # one reaching least far back
            key = (
                weight,
                size if grow else min(size, at_least),
                size if grow else -size,
                -(at - first),
                last,
            )
            if best is None or key > best:
                best, window = key, (first, last)
    return f"{quotable(' '.join(shown[window[0] : window[1] + 1]))} {marker}"


def pieces(question: str, intent: Intent, hits: Sequence[Hit], count: int = PIECES) -> str:
    """The best piece (:func:`_piece`) of each of up to ``count`` passages of the top course, best
    first, each saying something the ones before it did not, cited: what an "I can't tell" reply
    shows. Why several: on courses nobody tuned for, the first passage holds the asked facts for
    about half of the questions and the first three for ~0.7; a student shown the best of each
    reads the answer the ranking could not pick.

    Why the later ones short: the first piece is read whole around its best unit (the answer is
    often the sentence beside the one that matched); a later piece is a second chance, shown as
    the shortest run that holds its question words, and only when it ranks within
    ``LATER_PIECE_SHARE`` of the first (held out: reply p50 943 -> 713 characters for 8 of 280
    replies no longer holding the asked facts, ``docs/BENCHMARKS.md``: a trade, not a gain)."""
    focus = _focus(hits, PIECE_SCAN)
    chosen: list[str] = []
    said: list[frozenset[str]] = []
    used: set[int] = set()
    size = 0
    first_score = 0.0
    for s in _rank(question, intent, hits, focus, hits):
        if s.hit_index in used:
            continue
        if chosen and s.score < LATER_PIECE_SHARE * first_score:
            break
        text = _piece(hits, s, grow=not chosen, at_least=LATER_PIECE_AT_LEAST)
        words = term_set(text)
        if (chosen and size + len(text) > PIECES_CHARS) or any(
            len(words & earlier) >= PIECE_REPEAT * max(1, len(words)) for earlier in said
        ):
            continue
        first_score = first_score or s.score
        used.add(s.hit_index)
        said.append(words)
        chosen.append(text)
        size += len(text)
        if len(chosen) >= count:
            break
    if not chosen:
        return f"{quotable(_snippet(hits[0]))} {cite_marker(1)}"
    return "\n\n".join(chosen)


# --- list answers ------------------------------------------------------------------------------


def list_items(hit: Hit) -> list[str]:
    """The items of a list block (heading and lead-in dropped), wrapped lines joined."""
    items = blocks(passage(hit))
    while items and (
        _is_heading(items[0])
        or items[0].endswith(":")
        or (
            not LIST_ITEM.match(items[0])
            and len(items) > 1
            and LIST_ITEM.match(items[1])
            and len(items[0]) < 120
        )
    ):
        items = items[1:]
    return items


_LAB_BLOCK = re.compile(
    r"laboratory\s+component\s*:?(?P<body>.*?)(?=teaching\s*-?\s*learning\s+process|\Z)",
    re.IGNORECASE | re.DOTALL,
)


def lab_items(hit: Hit) -> list[str]:
    """The lab programs a module lists under "Laboratory Component:" (VTU prints them per module)."""
    match = _LAB_BLOCK.search(passage(hit))
    return blocks(match.group("body")) if match else []


def _section_hits(intent: Intent, hits: Sequence[Hit]) -> list[int]:
    """Indices of hits holding the block the question asks for, best first."""
    assert intent.section is not None
    pattern = section_pattern(intent.section)
    return [i for i, h in enumerate(hits[:SECTION_SCAN]) if h.section and pattern.search(h.section)]


def _module_lab_reply(hits: Sequence[Hit], named: Sequence[str]) -> Finding | None:
    """Lab programs gathered from every module of one course, in module order."""
    with_lab = [i for i, h in enumerate(hits) if h.module and lab_items(h)]
    if not with_lab:
        return None
    groups = _by_course(with_lab, hits)
    if len(groups) > 1 and not named:
        return None
    indices = next(iter(groups.values()))
    lines = [f"Lab programs of {quotable(_name(hits[indices[0]]))}:"]
    for i in sorted(indices, key=lambda i: (hits[i].page or 0, hits[i].module or "")):
        items = lab_items(hits[i])
        lines.append(f"{quotable(hits[i].module or '')}:")
        for n, item in enumerate(items):
            marker = f" {cite_marker(i + 1)}" if n == len(items) - 1 else ""
            lines.append(f"  {quotable(_clip(item, 400))}{marker}")
    return Finding("proves", "lab list", "\n".join(lines))


def _by_course(indices: Sequence[int], hits: Sequence[Hit]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i in indices:
        groups.setdefault(course_of(hits[i]), []).append(i)
    return groups


def _heading_for(hit: Hit, what: str) -> str:
    return f"{what} of {_name(hit)}"


def _list_reply(intent: Intent, hits: Sequence[Hit], indices: Sequence[int]) -> str:
    """One course's whole block (parts in page order), one item a line, cited once per part. A
    block longer than :data:`LIST_CHARS` is shown as far as it fits and says what it leaves out
    ("… and 4 more on p. 3"), cited: a student is never shown part of a list as if it were all."""
    parts = sorted(indices, key=lambda i: (hits[i].page or 0, hits[i].rank))
    top = hits[parts[0]]
    what = top.section or top.module or "The list"
    lines = [f"{quotable(_heading_for(top, what))}:"]
    length = 0
    left, cut_at = 0, -1
    for i in parts:
        items = list_items(hits[i])
        for n, item in enumerate(items):
            text = quotable(_clip(item, 600))
            if cut_at >= 0 or length + len(text) > LIST_CHARS:
                cut_at = i if cut_at < 0 else cut_at
                left += 1
                continue
            length += len(text)
            marker = f" {cite_marker(i + 1)}" if n == len(items) - 1 else ""
            lines.append(item_line(text) + marker)
    if left:
        page = hits[cut_at].page
        lines.append(f"… and {left} more{f' on p. {page}' if page else ''} {cite_marker(cut_at + 1)}")
    return "\n".join(lines)


def _co_reply(intent: Intent, hits: Sequence[Hit], indices: Sequence[int]) -> str | None:
    """The asked course outcomes' lines from one course's outcomes block, or None if it lacks one."""
    found: dict[int, tuple[str, int]] = {}
    unnumbered: list[tuple[str, int]] = []
    for i in indices:
        for item in list_items(hits[i]):
            match = _CO_ITEM.match(item)
            if match:
                found.setdefault(int(match.group(1)), (item, i))
            else:
                unnumbered.append((item, i))
    if not found and unnumbered:  # bullets without numbers (BCS403): the n-th bullet is COn
        found = {n: pair for n, pair in enumerate(unnumbered, start=1)}
    if not all(co in found for co in intent.cos):
        return None
    top = hits[indices[0]]
    lines = [f"{quotable(_name(top))}:"] if len(intent.cos) > 1 else []
    for co in intent.cos:
        item, i = found[co]
        text = item if _CO_ITEM.match(item) else f"CO{co}: {item}"
        lines.append(f"{quotable(_sentence_end(_clip(text, 400)))} {cite_marker(i + 1)}")
    if len(intent.cos) == 1:
        return f"{quotable(_name(top))}, {lines[0]}"
    return "\n".join(lines)


def _co_count(hits: Sequence[Hit], indices: Sequence[int]) -> int:
    numbered = [
        int(m.group(1)) for i in indices for item in list_items(hits[i]) if (m := _CO_ITEM.match(item))
    ]
    return max(numbered) if numbered else sum(len(list_items(hits[i])) for i in indices)


def section_reply(question: str, intent: Intent, hits: Sequence[Hit], named: Sequence[str]) -> Finding | None:
    """A list (or one CO) from the block the question asks for; None when no such block was found."""
    indices = _section_hits(intent, hits)
    if not indices:
        return _module_lab_reply(hits, named) if intent.section == "lab" else None
    groups = _by_course(indices, hits)
    courses = list(groups)[: (MAX_COURSES if not named and len(groups) > 1 else 1)]
    replies: list[str] = []
    for course in courses:
        group = groups[course]
        if intent.cos:
            text = _co_reply(intent, hits, group)
            if text is None:
                if len(courses) == 1:
                    asked = ", ".join(f"CO{c}" for c in intent.cos)
                    have = _co_count(hits, group)
                    lead = f"The course outcomes of {quotable(_name(hits[group[0]]))} list {have} outcomes, not {asked}."
                    return Finding("absent", "outcome", f"{lead} {cite_marker(group[0] + 1)}")
                continue
            replies.append(text)
        else:
            replies.append(_list_reply(intent, hits, group))
    if not replies:
        return None
    if len(replies) > 1:
        lead = f"Your materials have this for {len(replies)} courses (name one to get only its answer):"
        return Finding("proves", "list", lead + "\n\n" + "\n\n".join(replies))
    return Finding("proves", "list", replies[0])


def module_reply(intent: Intent, hits: Sequence[Hit], named: Sequence[str]) -> Finding | None:
    """ "Topics of module 3": that module's whole text, of the named course (or the only one)."""
    wanted = {m.lower() for m in intent.modules}
    indices = [i for i, h in enumerate(hits) if h.module and h.module.lower() in wanted]
    if not indices:
        return None
    groups = _by_course(indices, hits)
    if len(groups) > 1 and not named:
        names = ", ".join(
            f"{quotable(course)} {cite_marker(group[0] + 1)}"
            for course, group in list(groups.items())[:MAX_COURSES]
        )
        return Finding(
            "partial",
            "which course",
            f"Several courses have {'/'.join(intent.modules)}: {names}. Name the course to get its list.",
        )
    return Finding("proves", "module", _list_reply(intent, hits, next(iter(groups.values()))))


# --- which module -------------------------------------------------------------------------------

_WHERE_WORDS = frozenset(
    terms(
        "which what module unit chapter mod part cover covered covers come comes taught fall falls syllabus topic topics study"
    )
)


def where_reply(question: str, intent: Intent, hits: Sequence[Hit], thresholds: Thresholds) -> Finding | None:
    """ "Which module covers X?": the module whose text holds X's words, named first."""
    topic = [t for t in dict.fromkeys(terms(question)) if t not in _WHERE_WORDS]
    candidates = [i for i, h in enumerate(hits[:SECTION_SCAN]) if h.module]
    if not topic or not candidates:
        return None
    w = weights(topic, hits)
    course_terms = {t for i in candidates for t in term_set(course_of(hits[i]))}

    def cover(i: int) -> float:
        present = term_set(passage(hits[i]))
        return sum(v for t, v in w.items() if t in present and t not in course_terms) / max(
            sum(v for t, v in w.items() if t not in course_terms), 1e-9
        )

    best = max(candidates, key=lambda i: (round(cover(i), 3), hits[i].score))
    share = cover(best)
    if share < 0.5 and hits[best].cosine < thresholds.sure_cosine:
        return None
    top = hits[best]
    lead = quotable(f"{top.module} of {_name(top)}{_pages(top)}.") + f" {cite_marker(best + 1)}"
    chosen = _best_sentences(_rank(question, intent, hits, [best], hits), 1)
    quote = f" {_quote(chosen)}" if chosen and chosen[0].overlap > 0 else ""
    return Finding("proves" if share >= 0.5 else "partial", "which module", lead + quote)


def breakdown_reply(hits: Sequence[Hit]) -> Finding | None:
    """ "How is the grade broken down?": every graded component of the top course's passages and
    its weight, in the document's order, each cited, when the weights add up to 100%
    (``breakdown.grade_breakdown``); else None and the general answer."""
    focus = [i for i, h in enumerate(hits) if course_of(h) == course_of(hits[0])]
    chosen = [hits[i] for i in focus]
    texts = [passage(h) for h in chosen]

    def current(hit: Hit) -> tuple[int, int]:
        return how_current(hit, (t for h, t in zip(chosen, texts, strict=True) if h.doc_id == hit.doc_id))[:2]

    parts = grade_breakdown(chosen, texts, current)
    if parts is None:
        return None
    lines = ["The grade is made up of (together 100%):"]
    for c in parts:
        lines.append(f"{LIST_DASH}{quotable(c.name)}: {c.weight:g}% {cite_marker(focus[c.hit_index] + 1)}")
    return Finding("proves", "breakdown", "\n".join(lines))


def _entry_lines(entries: Sequence[Entry[int]]) -> list[str]:
    """One line per entry ("- 3. Logistic regression"), each passage cited once, after its last
    entry (an entry's source is its passage's 0-based index)."""
    lines = []
    for n, entry in enumerate(entries):
        last_of_passage = n + 1 == len(entries) or entries[n + 1].source != entry.source
        marker = f" {cite_marker(entry.source + 1)}" if last_of_passage else ""
        lines.append(f"{LIST_DASH}{quotable(entry.text)}{marker}")
    return lines


def outline_reply(ask: OutlineAsk, hits: Sequence[Hit], related: Sequence[Hit]) -> Finding | None:
    """ "How many lectures are there?", "what's the last week", "which lecture is PCA", "is there a
    lecture on ethics": read from the whole numbered outline of the unit asked about (the
    ``related`` passages, ``retrieval.outline_rows``), not from pieces of it, and answered from the
    most evidently current document that prints one (``currency.how_current``, as the grading
    breakdown and the conflict note judge it; then the best-ranked). Citations index ``hits``
    followed by ``related``. None when no document prints such an outline, or none can say (how
    many, from a schedule's later part; a number it does not list): the general answer."""
    outlines = outlines_by_document([(h.doc_id, h.text) for h in related], ask.unit, offset=len(hits))
    if not outlines:
        return None
    pool = [*hits, *related]

    def rank(doc_id: str) -> tuple[int, int, int]:
        first = next(i for i, h in enumerate(pool) if h.doc_id == doc_id)
        texts = [h.text for h in pool if h.doc_id == doc_id]
        current, year, _why = how_current(pool[first], texts)
        return (-current, -year, first)

    readings = {d: r for d, o in outlines.items() if (r := read_for(o, ask)) is not None}
    if not readings:
        return None
    doc_id = min(readings, key=rank)
    outline, reading = outlines[doc_id], readings[doc_id]
    source = pool[outline.entries[0].source]
    title = source.cite_title or source.title or source.file
    unit, units = ask.unit, f"{ask.unit}s"
    if reading.what == "count":
        lines = [f"{title} lists {reading.total} {units if reading.total != 1 else unit}:"]
        return Finding("proves", "outline", "\n".join(lines + _entry_lines(reading.entries)))
    if reading.what == "last":
        (entry,) = reading.entries
        of = f"of the {reading.total} {units} " if outline.whole else f"{unit} "
        return Finding(
            "proves",
            "outline",
            f"The last {of}in {title} is {quotable(entry.text)} {cite_marker(entry.source + 1)}",
        )
    if not reading.found and reading.what in ("number", "name"):
        return None  # "what is lecture 25 about" of 20: the general answer
    if not reading.found:
        lines = [f"{title} lists {reading.total} {units}, none named for that:"]
        return Finding("partial", "outline", "\n".join(lines + _entry_lines(outline.entries)))
    if reading.what == "topic_count":
        lead = f"{len(reading.entries)} of the {reading.total} {units} in {title}:"
    elif reading.what == "covered":
        lead = f"Yes, in {title}:"
    else:
        lead = f"In {title}:"
    return Finding("proves", "outline", "\n".join([lead, *_entry_lines(reading.entries)]))


def _pages(hit: Hit) -> str:
    """ ", p. 2" or ", pp. 1–2" for a PDF hit, else ""."""
    if hit.page is None or not hit.file.lower().endswith(".pdf"):
        return ""
    if not hit.page_end or hit.page_end == hit.page:
        return f", p. {hit.page}"
    return f", pp. {hit.page}–{hit.page_end}"


# --- the general answer ----------------------------------------------------------------------------


def _focus(hits: Sequence[Hit], width: int) -> list[int]:
    """Indices of the top hits from one course (the top hit's): answers never mix two courses."""
    if not hits:
        return []
    course = course_of(hits[0])
    return [i for i, h in enumerate(hits) if course_of(h) == course][:width]


def _weigh(
    question: str, intent: Intent, hits: Sequence[Hit], fallback: bool, unknown: Sequence[str] = ()
) -> tuple[list[int], list[_Sentence], list[_Sentence], Evidence]:
    """The focus chunks, their ranked sentences (value-holding ones first when a value is asked
    for), those with the value, and the evidence the decision reads."""
    focus = _focus(hits, 2 * TOP_HITS if intent.wants else TOP_HITS)
    ranked = _rank(question, intent, hits, focus, hits)
    with_value: list[_Sentence] = []
    type_found = True
    if intent.wants:
        with_value = [s for s in ranked if s.has_value and s.overlap > 0]
        type_found = bool(with_value)
        ranked = with_value + [s for s in ranked if not (s.has_value and s.overlap > 0)]
    width = _evidence_width(focus, with_value)
    focus_hits = [hits[i] for i in focus[:width]]
    ev = evidence(question, focus_hits, fallback, type_found, width, unknown)
    return focus, ranked, with_value, ev


def _evidence_width(focus: Sequence[int], with_value: Sequence[_Sentence]) -> int:
    """How many focus hits the evidence reads: the top ``TOP_HITS``, and the passage holding the
    asked value wherever in the focus it ranks ("Credit Units: 3 credits" 4th must not leave "how
    many credits" with no coverage and "Not in your materials")."""
    if not with_value:
        return TOP_HITS
    return max(TOP_HITS, focus.index(with_value[0].hit_index) + 1)


def weigh_query(
    question: Question, hits: Sequence[Hit], fallback: bool
) -> tuple[list[int], list[_Sentence], list[_Sentence], Evidence]:
    """What the general answer weighs for this question: its focus chunks, ranked sentences, value
    sentences and evidence (also for the benchmarks' probes)."""
    return _weigh(question.about, question.intent, hits, fallback, question.unknown)


@dataclass(frozen=True)
class _Sentences:
    """The sentence reading of the passages: what the general answer would quote."""

    focus: list[int]
    ranked: list[_Sentence]
    with_value: list[_Sentence]


def read_sentences(
    question: Question, hits: Sequence[Hit], fallback: bool, thresholds: Thresholds
) -> tuple[_Sentences, Signals]:
    """The best sentences of the top course's passages and what they show the decision."""
    intent = question.intent
    focus, ranked, with_value, ev = weigh_query(question, hits, fallback)
    chosen = _best_sentences(ranked, 1 if intent.wants else TOP_HITS)
    best = ranked[0] if ranked else None
    signals = Signals(
        ev,
        value_overlap=with_value[0].overlap if with_value else 0.0,
        value_asked=bool(intent.wants),
        list_named=best is not None
        and (
            best.lead_overlap >= thresholds.list_lead
            or (bool(best.unit.items) and str(len(best.unit.items)) in question.counts)
        ),
        chosen_value=not chosen or chosen[0].has_value,
        chosen_overlap=chosen[0].overlap if chosen else 1.0,
        list_asked=intent.section is not None and not question.yes_no,
    )
    return _Sentences(focus, ranked, with_value), signals


def card_reply(card: CardAnswer) -> Finding | None:
    """What the course card says of the asked slot: its facts quoted, each with its page (proving
    the answer when what is filled is what was asked, else showing the closest facts first); an
    empty slot in a course whose syllabus the card read is "not listed", with the closest fact the
    card holds. None when the card has nothing to say (no syllabus basics read, nothing filled)."""
    if card.facts:
        lines = [
            f"{quotable(_clip(fact.shown, QUOTE_CHARS))} {cite_marker(n)}"
            for fact, n in zip(card.facts, card.numbers, strict=False)
        ]
        # facts of the slot, none surely the asked one: the passages answer as they can, but the
        # materials do speak of it (``decision``: never "not in your materials")
        return Finding("proves" if card.strong else "speaks", "card", "\n".join(lines))
    if not card.read:
        return None
    text = f"I found no {SLOT_OF[card.slot].says} in your materials."
    if card.closest is not None and card.numbers:
        near = " ".join(card.closest.text.split())
        text += (
            f" The closest course fact I found: {quotable(_clip(near, 200))} {cite_marker(card.numbers[-1])}"
        )
    return Finding("absent", "card", text)


def find_structure(
    question: Question,
    hits: Sequence[Hit],
    related: Sequence[Hit],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    card: CardAnswer | None = None,
) -> list[Finding]:
    """What the structure of the passages says, in the order it is trusted: the course card's
    facts of the asked slot, a numbered outline, a module's whole text, a list block (or one course
    outcome), the module holding a topic, a grading breakdown. Empty when the question asks for no
    such shape, or none was found."""
    intent = question.intent
    named = question.courses
    found: list[Finding | None] = []
    stated = card_reply(card) if card is not None else None
    # an outline, a list or a count asked is the structure's to answer, not the card's
    shaped = question.outline is not None or intent.is_list or bool(question.counts)
    if not shaped:
        found.append(stated)
    if question.outline is not None and related:
        found.append(outline_reply(question.outline, hits, related))
    if intent.modules and not intent.where and intent.section is None:
        found.append(module_reply(intent, hits, named))
    if intent.section is not None:
        listed = section_reply(question.about, intent, hits, named)
        if listed is None and intent.cos and named:
            text = f"The closest passage I found: {closest(question.about, intent, hits)}"
            listed = Finding("absent", "outcome", text)
        found.append(listed)
    if intent.where:
        found.append(where_reply(question.about, intent, hits, thresholds))
    if intent.breakdown:
        found.append(breakdown_reply(hits))
    if shaped and stated is not None and card is not None and card.facts:
        # a list or a count asked of a slot the card fills ("whats the textbook"): the structure
        # answers it, but facts of the asked slot are never "not in your materials"
        found.append(dataclasses.replace(stated, claim="speaks"))
    return [f for f in found if f is not None]


def _named_source(text: str, hits: Sequence[Hit]) -> str:
    """``text`` led by the citation label of its first quote ("BIOL 210 — Reading the field guide,
    p. 14: …")."""
    first = first_cited(text)
    if first is None or not 1 <= first <= len(hits):
        return text
    hit = hits[first - 1]
    return f"{quotable(hit.label or hit.title or hit.file)}: {text}"


def compose(
    verdict: Verdict,
    question: Question,
    hits: Sequence[Hit],
    findings: Sequence[Finding],
    read: _Sentences,
    thresholds: Thresholds,
) -> str:
    """The reply's text for the verdict (with private citation markers): the finding that settled
    it, the value sentence, the best sentences, or the closest passages."""
    for finding in findings:
        if finding.reason == verdict.reason:
            return finding.text
    intent, about = question.intent, question.about
    if verdict.reason == "value":
        text = _piece(hits, read.with_value[0], grow=False)
    elif verdict.reason == "sentences":
        chosen = _best_sentences(read.ranked, 1 if intent.wants else TOP_HITS)
        focus = read.focus[0]
        text = _quote(chosen) if chosen else f"{quotable(_snippet(hits[focus]))} {cite_marker(focus + 1)}"
    elif verdict.status == "uncertain":
        text = pieces(about, intent, hits)
    else:
        text = f"The closest passage I found: {closest(about, intent, hits)}"
    if question.asks_source and verdict.status != "not_in_materials" and not read_list_demoted(verdict):
        text = _named_source(text, hits)
    return text


def read_list_demoted(verdict: Verdict) -> bool:
    """A list was asked and only a stray sentence came back: the closest passages, not named."""
    return verdict.reason == "list not found"


def reply_for(
    question: Question,
    hits: Sequence[Hit],
    fallback: bool,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    related: Sequence[Hit] = (),
    conflict: bool = False,
    card: CardAnswer | None = None,
) -> Reply:
    """The verdict and composed text for a question read once (pure): the structure's findings and
    the sentence reading gathered, :func:`decision.decide` the outcome, the text composed for it.
    ``related``: the course's other passages the engine read for it (a numbered outline, whose
    citations follow the hits' numbers); ``conflict``: two documents state the asked fact differently."""
    # the card is read from the documents, not retrieved: it answers even where search fell back
    findings = find_structure(question, hits, related, thresholds, card)
    if fallback:
        findings = [f for f in findings if f.reason == "card"]
    read, signals = read_sentences(question, hits, fallback, thresholds)
    verdict = decide(Reading(fallback, signals, tuple(findings), conflict), thresholds)
    shown = verdict if verdict.beside is None else dataclasses.replace(verdict, reason=verdict.beside)
    return Reply(verdict.status, compose(shown, question, hits, findings, read, thresholds), verdict)


class ExtractiveAnswerer:
    """Quotes the retrieved material; decides the outcome from structure and retrieval evidence."""

    def __init__(self, settings: Settings | None = None, thresholds: Thresholds | None = None) -> None:
        """``thresholds``: decide every question on these (tests, benchmarks); by default each is
        decided on the thresholds of the embedder that built the index it was searched in
        (``SearchResult.embedder_id``), so a collection still served with an earlier model is
        read on that model's cosine scale. ``settings``: taken as every answerer is built
        (:func:`get_answerer`); nothing here reads them."""
        self.thresholds = thresholds

    async def answer(self, question: str, result: SearchResult, collection: str) -> Answer:
        return self.answer_sync(question, result, collection)

    def answer_sync(self, question: str, result: SearchResult, collection: str) -> Answer:
        """Pure CPU and fast (about a millisecond for 18 hits), so no thread hop is needed."""
        result = for_reader(result, markdown=False)  # bullets as "•"; Markdown: rendered_reply
        hits = list(result.hits)
        thresholds = self.thresholds or thresholds_for(result.embedder_id)
        base: AnswerContext = {
            "collection": collection,
            "index_version": result.index_version,
            "question": question,
        }
        if not hits:
            verdict = decide(Reading(True), thresholds)
            text = (
                f"The collection '{collection}' has no indexed documents yet."
                if result.index_version is None
                else f"Nothing in the collection '{collection}' matches the question."
            )
            return Answer(text=text, status=verdict.status, **base)
        # a result built without a reading (a stand-in engine's) is read here, from the question asked
        asked = result.read if result.read is not None else read_question(question)
        conflict = conflict_of(result, asked) or result.card_conflict
        reply = reply_for(
            asked, hits, result.fallback, thresholds, result.related, conflict is not None, result.card
        )
        shown = rendered_reply(reply.text, result.passages)
        text, citations = finalise_citations(shown, result.passages, brackets=False)
        text = emphasise(text, asked.intent.compared)  # after: citations find quotes by their words
        answer = Answer(text=text, status=reply.status, citations=citations, **base)
        answer = lead_with_record(lead_with_conflict(answer, conflict, reply.verdict), result.recorded, asked)
        return lead_with_term(answer, result.older)


def status_of(question: str, result: SearchResult) -> AnswerStatus:
    """The extractive answerer's outcome alone, for benchmarks that need only that."""
    return ExtractiveAnswerer().answer_sync(question, result, result.collection).status
