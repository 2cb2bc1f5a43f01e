"""Structure-aware chunking of loaded documents (docs/ARCHITECTURE.md, retrieval rule 6).

Why structure matters: a student asks "what is in module 3?" or "which textbooks does 21CS44 use?",
and the answer must come back whole and cited as "21CS44 Operating Systems — Module 3, p. 2". A
fixed-size splitter cuts modules in half, glues the tail of one course onto the header of the next,
and loses the page a module starts on. So syllabi are cut along their own headings:

* **course header** (code, title, credits, CIE/SEE marks) — a "Course Code" line switches the
  current course, so a PDF whose first page ends another course's syllabus (21CS53 p1 carries the
  end of 21CS52) or whose last page starts the next course (21CS52 p3) labels every chunk with the
  course it really belongs to;
* **modules / units / chapters** in every spelling seen in real syllabi ("Module-1", "MODULE-2",
  "Module – 3", "Module 4", "Unit-I", "Unit – II", "UNIT III"), normalised to "Module 3" (arabic)
  or "Unit II" (roman numerals kept for units); a module that crosses a page break keeps
  ``page`` = the page its content starts on and ``page_end`` = the page it ends on;
* **course objectives, course outcomes** (numbered CO1.. or bare bullets), **textbooks** and
  **reference books**, each kept whole as one chunk; they are only split (same labels on every
  part, no overlap) when longer than twice ``max_chars``. Lists whose items only make sense
  together are kept whole the same way although they are ``section`` chunks: how the marks are
  split (assessment details, CIE, SEE, rubrics) and lab program lists ("Practical component",
  "List of experiments"). Lab components printed inside a module stay in that module;
* other headed blocks (teaching-learning process, and in US-style syllabi unnamed ALL-CAPS or short
  headings such as "GRADING") become ``section`` chunks, cut when longer than ``max_chars``;
* every split (any kind) is at line boundaries, preferably where a list item, topic or paragraph
  starts, into parts of even size (:func:`_line_parts`), so an experiment is not cut in two;
* running page headers and footers ("03092022", "Courses Common to all Programs Page 64") are
  dropped, and pages are cited by physical number.

Text before a document's first course header that has syllabus headings of its own is the end of
the previous course in the booklet the PDF was cut from: a document family that knows its
booklets' order names that course (``worker.ingest.families.preceding_course``; the VTU family guesses
"21CS52" before 21CS53 and ``link_course_tails`` upgrades the guess with evidence when the other
course's document is indexed alongside); with no family's word it has no subject.

The heading and course-header rules themselves are in ``worker/ingest/headings.py``; this module turns a
document's lines into sections and sections into chunks. It stays one module (~780 lines) because
the line walk, the section builder and the splitter share the ``_Line``/``_Section`` types and
their invariants (page marks, whole blocks), which would otherwise cross module boundaries.

Markdown is cut at its headings of levels 1 to 4, the first ``# Title`` aside (the heading text
becomes ``section``); its table rows are records of their own (``markdown_text``). A DOCX or text
file with ``## `` headings but no syllabus structure is treated the same way. Text with no structure at all
falls back to overlapping sentence windows (sentences end at ``. ! ?`` and the Bangla ``।``).

Chunk text convention: every chunk's ``text`` is one **context line**, a newline, then the body::

    21CS44 Operating Systems — Module 2
    Module-2
    Multi-threaded Programming: Overview; ...

The context line is ``"<subject or document title> — <module or section>"`` (just the subject or
title when there is neither). It is there so the embedding and the keyword leg both see which course
and module a passage belongs to even when the body never names them. :func:`chunk_body` strips it
again for display and de-duplication.

Everything here is a pure function of a :class:`~worker.text.documents.Document`; no I/O.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from syllabot.worker.ingest.headings import (
    CODE_LINE,
    CODE_SHAPE,
    LIST_START,
    CourseHeader,
    find_courses,
    generic_heading,
    match_heading,
)
from syllabot.worker.ingest.markdown_text import TABLE_ROW, markdown_lines
from syllabot.worker.text.display import find_bullets
from syllabot.worker.text.documents import Chunk, Document, Page
from syllabot.worker.text.sentences import ITEM_START, ROUND_BULLETS, split_sentences

CONTEXT_SEPARATOR = " — "
"""Between subject/title and module/section on a chunk's first line."""

#: Document kinds whose text is Markdown or written as Markdown by their loader (``web_text``):
#: cut at their "#" headings, their tables' rows kept as records.
MARKDOWN_SHAPED = frozenset({"markdown", "html", "rst"})
STRUCTURED_KINDS = frozenset({"module", "outcomes", "objectives", "textbooks", "references", "header"})
"""Kinds kept whole (split only beyond twice ``max_chars``)."""

_BULLET_PUA = re.compile("[\ue000-\uf8ff]")  # Symbol-font bullets (e.g. U+F0B7) that PDFs extract as PUA
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# ----------------------------------------------------------------------------------------------
# Lines and page boilerplate
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    page: int
    text: str


def _clean_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    text = _BULLET_PUA.sub("•", text)
    return _CONTROL.sub("", text)


def _boiler_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split())).lower()


def _lines(pages: Sequence[Page]) -> list[_Line]:
    """All lines of all pages, minus running headers/footers.

    Why: "03092022", "IPCC (26.04.2022) / 1", "Courses Common to all Programs Page 64" repeat at the
    top or bottom of every page; left in, they split modules and pollute every chunk. A line (digits
    ignored) seen in the first three or last two lines of most pages is boilerplate. Heading lines
    are never dropped, so a two-page document with a module heading at the top of each page is safe.
    """
    # Runs of spaces and tabs (PDF layout) collapse to one space: "Course\tdetails" -> "Course details".
    page_lines = [[" ".join(ln.split()) for ln in _clean_text(p.text).split("\n")] for p in pages]
    remove: set[str] = set()
    if len(pages) >= 2:
        counts: Counter[str] = Counter()
        for lines in page_lines:
            counts.update({_boiler_key(lines[i]) for i in _zone(lines) if _boilerplate_candidate(lines[i])})
        threshold = max(2, math.ceil(0.6 * len(pages)))
        remove = {key for key, n in counts.items() if n >= threshold}
    out: list[_Line] = []
    for page, lines in zip(pages, page_lines, strict=True):
        zone = _zone(lines) if remove else set()
        kept = [
            text
            for i, text in enumerate(lines)
            if not (i in zone and _boiler_key(text) in remove and _boilerplate_candidate(text))
        ]
        # Blank lines at a page's edges are layout, not paragraph breaks: a sentence or a module
        # running over the page break must read on without a gap.
        while kept and not kept[-1]:
            kept.pop()
        while kept and not kept[0]:
            kept.pop(0)
        out.extend(_Line(page.number, text) for text in kept)
    return out


def _zone(lines: list[str]) -> set[int]:
    nonblank = [i for i, text in enumerate(lines) if text]
    return set(nonblank[:3] + nonblank[-2:])


def _boilerplate_candidate(text: str) -> bool:
    """Short, not a sentence, not a heading, not a course code line."""
    return (
        bool(text)
        and len(text) <= 100
        and not text.endswith((".", "!", "?", "।"))
        and match_heading(text) is None
        and not CODE_LINE.search(text)
    )


# ----------------------------------------------------------------------------------------------
# Sentences and windows
# ----------------------------------------------------------------------------------------------

#: A list item's start: "1. ", "1) ", "1.) ", "1.Email" (a PDF lost the space), a bullet, "CO1".


@dataclass
class _Sentence:
    text: str
    page: int
    page_end: int
    #: a line of its own: a header block's "Label: value" line or a table row (``_window_text``)
    own_line: bool = False


_ROUND_BULLET = re.compile(f"[{ROUND_BULLETS}]")
_FIELD_LINE = re.compile(r"^(?P<key>[A-Z][A-Za-z&/.' -]{0,30}?)\s*:\s+\S")
_BULLET_VALUE = re.compile(r"^[•●▪◦■\-*–]\s*\S")


def field_key(text: str) -> str | None:
    """ "Office Hours" of "Office Hours:   By appointment": a header block's label, else None."""
    m = _FIELD_LINE.match(text)
    if not m or len(m.group("key").split()) > 4 or "http" in text[: m.end()].lower():
        return None
    return m.group("key").strip().lower()


def _sentences(lines: Sequence[_Line], max_chars: int) -> list[_Sentence]:
    """Sentences with the pages they span, from wrapped lines.

    Line breaks inside a paragraph are joined (PDF text wraps mid-sentence); blank lines and list
    items ("1.", "•", "CO1") start a new sentence. A run of "Label: value" lines (a header block:
    meeting times, rooms, each person's email, office and hours) keeps each line a sentence of its
    own: the course card reads whose each field is (``worker.query.card``), and joined into one
    sentence a whole block was quoted for one of its fields.
    Over-long "sentences" (tables, URL lists) are cut at word boundaries so no window ever exceeds
    ``max_chars`` on their account.
    """
    out: list[_Sentence] = []
    buf: list[str] = []
    first = last = 0
    fields: list[_Line] = []  # the run of "Label: value" lines being read

    def flush() -> None:
        nonlocal buf
        if buf:
            # a slide's bullets ("•Quick check-in", no space) stay in the sentence they continue
            # (windows count sentences) but each on its own line, where the answerer finds items
            text = "".join(part if k == 0 or part[:1] == "\n" else f" {part}" for k, part in enumerate(buf))
            out.append(_Sentence(text, first, last))
            buf = []

    def flush_fields() -> None:
        if not fields:
            return
        # each on a line of its own, where the card reads labels: a lone "Lectures: Mondays 12pm"
        # before prose was read only where a window happened to start with it
        out.extend(_Sentence(" ".join(ln.text.split()), ln.page, ln.page, own_line=True) for ln in fields)
        fields.clear()

    for line in lines:
        text = line.text.strip()
        if text and field_key(text):
            flush()
            fields.append(_Line(line.page, text))
            continue
        if fields and text and _BULLET_VALUE.match(text):
            # "Who: Dana Reyes" / "• dreyes@example.edu" / "• Mon & Wed, 09:00-10:30"
            prev = fields[-1]
            fields[-1] = _Line(prev.page, f"{prev.text}, {text.lstrip('•●▪◦■-*– ').strip()}")
            continue
        flush_fields()
        if not text:
            flush()
            continue
        if TABLE_ROW.match(text):
            # a Markdown table's row is a record of its own: joined with the next, a table of
            # assignments became one "sentence" with every lab's due date in it
            flush()
            out.append(_Sentence(" ".join(text.split()), line.page, line.page, own_line=True))
            continue
        if LIST_START.match(text) or (buf and line.page != last and not text[:1].islower()):
            # a new page that does not go on in lower case starts a new sentence: slides end
            # without a full stop, and a "sentence" over five slides cited p. 2 for a fact on p. 6
            flush()
        parts = split_sentences(text)
        for k, part in enumerate(parts):
            if not buf:
                first = line.page
            bullet = buf and k == 0 and _ROUND_BULLET.match(text)
            buf.append(f"\n{part.strip()}" if bullet else part.strip())
            last = line.page
            if k < len(parts) - 1 or part.rstrip().endswith((".", "!", "?", "।", ".”", '."')):
                flush()
    flush()
    flush_fields()
    result: list[_Sentence] = []
    for s in out:
        if len(s.text) <= max_chars:
            result.append(s)
            continue
        words, piece = s.text.split(), ""
        for w in words:
            if piece and len(piece) + 1 + len(w) > max_chars:
                result.append(_Sentence(piece, s.page, s.page_end))
                piece = w
            else:
                piece = f"{piece} {w}" if piece else w
        if piece:
            result.append(_Sentence(piece, s.page, s.page_end))
    return result


def _window_text(window: Sequence[_Sentence]) -> str:
    """A window's sentences joined, each header block's line, table row and list item on a line of
    its own.

    Why: the answerer and the course card read a chunk by lines and re-find sentences by their full
    stops; a header block's lines ("Office Hours: MWF 11:30AM — 1PM") end in none, so joined by
    spaces a whole block (every person's email, office and hours) came back as one "sentence",
    quoted cut off before the asked hours.
    """
    out = ""
    for s in window:
        own_line = s.own_line or ITEM_START.match(s.text)
        out += s.text if not out else ("\n" if own_line else " ") + s.text
    return out


def _windows(
    sentences: Sequence[_Sentence], max_chars: int, size: int, overlap: int
) -> list[list[_Sentence]]:
    """Overlapping windows of up to ``size`` sentences and ``max_chars`` characters.

    Each window after the first repeats the last ``overlap`` sentences of the one before, so a fact
    stated across a window boundary is still retrievable whole; the start always advances.
    """
    out: list[list[_Sentence]] = []
    i, n = 0, len(sentences)
    while i < n:
        j, length = i, 0
        while j < n and j - i < size and (j == i or length + 1 + len(sentences[j].text) <= max_chars):
            length += len(sentences[j].text) + 1
            j += 1
        out.append(list(sentences[i:j]))
        if j >= n:
            break
        i = max(i + 1, j - overlap)
    return out


# ----------------------------------------------------------------------------------------------
# Sections
# ----------------------------------------------------------------------------------------------


@dataclass
class _Section:
    kind: str
    section: str | None
    module: str | None
    subject: str | None
    heading: _Line | None = None
    lines: list[_Line] = field(default_factory=list)
    whole: bool = False  # kept whole up to twice max_chars (see HeadingRule.whole)

    def has_content(self) -> bool:
        return any(line.text for line in self.lines)


def _structured_sections(
    lines: list[_Line], courses: list[CourseHeader], default_subject: str | None
) -> list[_Section]:
    """Walk the lines once, opening a section at each heading and switching course at each header."""
    starts = {c.start_index: c for c in courses}
    subject = default_subject
    if courses and courses[0].start_index > 0:
        pre = lines[: courses[0].start_index]
        if any(match_heading(ln.text) for ln in pre if ln.text):
            # The document opens with the end of another course's syllabus: a family that knows
            # how its booklets are ordered names that course
            from syllabot.worker.ingest.families import preceding_course  # the families import this module

            subject = preceding_course(courses[0].code)
        else:
            subject = courses[0].subject
    sections: list[_Section] = []
    current = _Section("section", None, None, subject)
    for i, line in enumerate(lines):
        if i in starts:
            sections.append(current)
            subject = starts[i].subject
            current = _Section("header", "Course details", None, subject)
            current.lines.append(line)
            continue
        heading = match_heading(line.text) if line.text else None
        # An unnamed heading right under a named one is its table's column row ("RUBRIC FOR THE
        # CONTINUOUS INTERNAL EVALUATION (THEORY)" / "# COMPONENTS MARKS"), not a new block: opening
        # one would leave the named heading empty, and its name would be lost.
        under_named = current.heading is not None and not current.has_content()
        if heading is None and line.text and current.kind not in ("module", "header") and not under_named:
            heading = generic_heading(line.text, lines[i - 1].text if i else "")
        if heading and (heading.strong or current.kind != "module"):
            sections.append(current)
            current = _Section(
                heading.kind, heading.section, heading.module, subject, heading=line, whole=heading.whole
            )
            continue
        current.lines.append(line)
    sections.append(current)
    return sections


_MD_SECTION = re.compile(r"^##\s+(?P<title>.+?)\s*#*\s*$")
#: A heading a Markdown section starts at: levels 1 to 4 ("# Lectures", "### Human subjects
#: research materials"); deeper ones stay lines of their section.
_MD_HEADING = re.compile(r"^#{1,4}\s+(?P<title>.+?)\s*#*\s*$")
_MD_TITLE = re.compile(r"^#\s+\S")


def _markdown_sections(lines: list[_Line], subject: str | None) -> list[_Section]:
    """Cut at each heading of levels 1 to 4 but the document's first ``# Title`` (already the
    context line's title); fenced code blocks are not scanned for headings.

    Why every level: course READMEs put their parts under ``#`` headings ("# Lectures",
    "# Assignments") and their subparts under ``###``; cut only at ``##``, a "# Lectures" line was
    dropped as if it were the title (so its numbered list named no unit) and "# Assignments" ran on
    inside the "Slides" section before it, cited as "Slides"."""
    sections: list[_Section] = []
    current = _Section("section", None, None, subject)
    fenced = False
    titled = False
    for line in lines:
        if line.text.startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else _MD_HEADING.match(line.text)
        if m and not titled and _MD_TITLE.match(line.text):
            titled = True
            continue  # the document's "# Title" line: already the context line's title
        if m:
            sections.append(current)
            current = _Section("section", m.group("title").strip(), None, subject, heading=line)
            continue
        current.lines.append(line)
    sections.append(current)
    return sections


# ----------------------------------------------------------------------------------------------
# Chunks
# ----------------------------------------------------------------------------------------------


def context_line(subject_or_title: str, label: str | None) -> str:
    """The first line of every chunk: "21CS44 Operating Systems — Module 2"."""
    return f"{subject_or_title}{CONTEXT_SEPARATOR}{label}" if label else subject_or_title


def chunk_body(text: str) -> str:
    """A chunk's text without its context line (for display and near-duplicate checks)."""
    return text.split("\n", 1)[1] if "\n" in text else ""


def _join(lines: Iterable[_Line]) -> str:
    out: list[str] = []
    for line in lines:
        if line.text or (out and out[-1]):
            out.append(line.text)
    return "\n".join(out).strip()


def page_marks(lines: Iterable[_Line]) -> tuple[tuple[int, int], ...]:
    """Where each page after the first begins in the text :func:`_join` makes of ``lines``: (the
    count of non-space characters before it, the page). Counted without spaces so that any
    re-spacing of a quote (an answer joins a sentence's lines) still finds its page."""
    marks: list[tuple[int, int]] = []
    seen = 0
    page: int | None = None
    for line in lines:
        if not line.text:
            continue
        if page is not None and line.page != page:
            marks.append((seen, line.page))
        page = line.page
        seen += nonspace_len(line.text)
    return tuple(marks)


def nonspace_len(text: str) -> int:
    """Characters of ``text`` that are not whitespace."""
    return len(text) - sum(1 for ch in text if ch.isspace())


def _label(section: _Section) -> str | None:
    if section.module and section.section:
        return f"{section.module}: {section.section}"
    return section.module or section.section


_TABLE_ITEM = re.compile(r"^\d{1,2}\s+[A-Z]")  # "4 Create a row level trigger ..." (a numbered table row)
_TOPIC_START = re.compile(r"^[A-Z][\w ,&/’'()-]{2,60}:\s")  # "Asymptotic Notations: Big-Oh ..." in a module


def _cut_quality(pieces: Sequence[_Line], k: int) -> int:
    """How good a place the start of ``pieces[k]`` is to cut: 1 at a list item or paragraph break.

    Why: a cut inside an item ("2. Design and implement ... / positive integers whose SUM ...") leaves
    half an experiment in each part; a cut before the next item keeps every item readable whole.
    """
    text, before = pieces[k].text, pieces[k - 1].text
    if before.endswith(":"):  # "Laboratory Component:" introduces what follows
        return 0
    lead_in = text.endswith(":") and len(text) <= 60  # "Laboratory Component:" starts a new block
    return int(
        not text
        or not before
        or lead_in
        or bool(LIST_START.match(text) or _TABLE_ITEM.match(text) or _TOPIC_START.match(text))
    )


_BAD_CUT = 1.0
"""Cost of a cut inside a list item, against (part size / balanced size - 1)² per part."""


def _line_parts(lines: list[_Line], max_chars: int, heading: _Line | None = None) -> list[list[_Line]]:
    """Split a long section at line boundaries into balanced parts of at most ``max_chars``.

    Why lines, not sentence windows: syllabus blocks are lists (topics, experiments, books) whose
    line breaks are the natural boundaries, and list items are too short for sentence windows. The
    cuts are chosen together (dynamic programming over line positions): each part costs its squared
    relative distance from the balanced size, plus :data:`_BAD_CUT` when it ends inside a list item,
    so parts come out even, items stay whole where that is possible, and no tiny last part is left.
    The heading line never forms a part on its own.
    """
    pieces: list[_Line] = []
    for line in lines:
        if len(line.text) <= max_chars:
            pieces.append(line)
        else:  # one enormous line (a table flattened by extraction): cut it at sentences or words
            pieces.extend(_Line(s.page, s.text) for s in _sentences([line], max_chars))
    n = len(pieces)
    sizes = [len(line.text) + 1 for line in pieces]
    target = sum(sizes) / math.ceil(sum(sizes) / max_chars)
    content = [bool(line.text) and line is not heading for line in pieces]
    # best[j]: (cost, start of the last part) of the best split of pieces[:j].
    best: list[tuple[float, int]] = [(0.0, 0)] + [(math.inf, 0)] * n
    for j in range(1, n + 1):
        penalty = 0.0 if j == n else _BAD_CUT * (1 - _cut_quality(pieces, j))
        size, has_content = 0, False
        for i in range(j - 1, -1, -1):
            size += sizes[i]
            has_content = has_content or content[i]
            if size > max_chars and i < j - 1:
                break
            if not has_content or best[i][0] == math.inf:
                continue
            cost = best[i][0] + (size / target - 1) ** 2 + penalty
            if cost < best[j][0]:
                best[j] = (cost, i)
    if best[n][0] == math.inf:  # only the heading has text: nothing to balance
        return [pieces] if any(content) or any(ln.text for ln in pieces) else []
    cuts: list[int] = []
    j = n
    while j > 0:
        cuts.append(j)
        j = best[j][1]
    bounds = [0, *reversed(cuts)]
    parts = [pieces[a:b] for a, b in itertools.pairwise(bounds)]
    return [p for p in parts if any(ln.text for ln in p)]


class _Builder:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.chunks: list[Chunk] = []

    def add(
        self,
        section: _Section,
        kind: str,
        body: str,
        page: int | None,
        page_end: int | None,
        marks: tuple[tuple[int, int], ...] = (),
    ) -> None:
        head = section.subject or self.doc.title
        context = context_line(head, _label(section))
        text = f"{context}\n{body}"
        shift = nonspace_len(context)
        self.chunks.append(
            Chunk(
                chunk_id=f"{self.doc.doc_id}:{len(self.chunks)}",
                doc_id=self.doc.doc_id,
                file=self.doc.file,
                title=self.doc.title,
                cite_title=self.doc.cite_title,
                text=text,
                subject=section.subject,
                module=section.module,
                section=section.section,
                page=page,
                page_end=page_end,
                page_marks=tuple((at + shift, p) for at, p in marks) if page != page_end else (),
                version=self.doc.version,
                status=self.doc.status,
                lang=self.doc.lang,
                kind=kind,
            )
        )


def _content_pages(section: _Section) -> tuple[int | None, int | None]:
    """Cite the page the content starts on (a heading alone at the foot of a page points onward)."""
    body = [ln for ln in section.lines if ln.text]
    if body:
        return body[0].page, body[-1].page
    if section.heading:
        return section.heading.page, section.heading.page
    return None, None


def _emit_windows(
    builder: _Builder, section: _Section, lines: list[_Line], max_chars: int, size: int, overlap: int
) -> None:
    """Sentence windows that never cross a page break.

    Why: a student opens the page a citation names. A window spanning pp. 2-6 of a slide deck
    (slides hold a few sentences each) cites p. 2 for a fact on p. 5. A sentence that itself runs
    over the break stays whole, on the page it starts on.
    """
    sentences = _sentences(lines, max_chars)
    runs: list[list[_Sentence]] = []
    for s in sentences:
        if runs and runs[-1][-1].page == s.page:
            runs[-1].append(s)
        else:
            runs.append([s])
    for run in runs:
        for window in _windows(run, max_chars, size, overlap):
            body = _window_text(window)
            builder.add(section, "window", body, window[0].page, max(s.page_end for s in window))


def _emit_section(
    builder: _Builder, section: _Section, max_chars: int, size: int, overlap: int, *, syllabus: bool
) -> None:
    """One chunk per section; long ones split by lines (syllabi) or sentence windows (prose).

    In a syllabus the heading line stays in the body ("MODULE-2 No. of Hours: 8" carries the hours);
    in Markdown it is already the context line.
    """
    if not section.has_content():
        return  # a bare heading such as "Suggested Learning Resources:" introduces the next section
    lines = ([section.heading] if syllabus and section.heading else []) + section.lines
    body = _join(lines)
    page, page_end = _content_pages(section)
    limit = 2 * max_chars if section.kind in STRUCTURED_KINDS or section.whole else max_chars
    if len(body) <= limit:
        builder.add(section, section.kind, body, page, page_end, page_marks(lines))
    elif syllabus:
        for part in _line_parts(lines, max_chars, section.heading):
            nonblank = [ln for ln in part if ln.text and ln is not section.heading] or part
            builder.add(
                section, section.kind, _join(part), nonblank[0].page, nonblank[-1].page, page_marks(part)
            )
    else:
        _emit_windows(builder, section, lines, max_chars, size, overlap)


def _is_structured(lines: list[_Line], courses: list[CourseHeader]) -> bool:
    if courses:
        return True
    kinds: Counter[str] = Counter()
    for line in lines:
        heading = match_heading(line.text) if line.text else None
        if heading:
            kinds[heading.kind] += 1
    return kinds["module"] >= 2 or len({k for k in kinds if k in STRUCTURED_KINDS}) >= 2


def chunk_document(
    doc: Document, max_chars: int = 1200, window_sentences: int = 5, overlap_sentences: int = 2
) -> list[Chunk]:
    """Cut a loaded document into retrievable chunks (see the module docstring for the rules).

    ``max_chars`` bounds generic sections and sentence windows; structured sections (modules,
    outcomes, textbooks ...) may reach twice that before they are split. Windows hold up to
    ``window_sentences`` sentences and repeat ``overlap_sentences`` of the previous window.
    """
    if max_chars < 50:
        raise ValueError("max_chars must be at least 50")
    if window_sentences < 1 or not 0 <= overlap_sentences < window_sentences:
        raise ValueError("need window_sentences >= 1 and 0 <= overlap_sentences < window_sentences")
    builder = _Builder(doc)
    if doc.kind in MARKDOWN_SHAPED:
        lines = [
            _Line(p.number, ln.rstrip())
            for p in doc.pages
            for ln in markdown_lines(_clean_text(p.text).split("\n"))
        ]
        for section in _markdown_sections(lines, doc.subject):
            _emit_section(builder, section, max_chars, window_sentences, overlap_sentences, syllabus=False)
        for chunk in builder.chunks:
            chunk.markdown = True  # read rendered (``markdown_text.rendered``)
        return builder.chunks

    lines = _lines(doc.pages)
    courses = find_courses([ln.text for ln in lines])
    if _is_structured(lines, courses):
        for section in _structured_sections(lines, courses, doc.subject):
            _emit_section(builder, section, max_chars, window_sentences, overlap_sentences, syllabus=True)
    elif doc.kind != "pdf" and any(_MD_SECTION.match(ln.text) for ln in lines):
        # Not for PDFs: R and Jupyter notes print console output as "## [1] 6" lines.
        for section in _markdown_sections(lines, doc.subject):
            _emit_section(builder, section, max_chars, window_sentences, overlap_sentences, syllabus=False)
    else:
        whole = _Section("window", None, None, doc.subject, lines=lines)
        if whole.has_content():
            _emit_windows(builder, whole, lines, max_chars, window_sentences, overlap_sentences)
    return _mark_bullets(_mark_foreign(builder.chunks, doc.subject), doc.bullets)


def _mark_bullets(chunks: list[Chunk], bullets: Sequence[tuple[int, str]]) -> list[Chunk]:
    """Each chunk's symbol-font bullets (``Chunk.bullets``), found by the glyph and what follows it
    on its page (``Document.bullets``); the text is left as it is."""
    if not bullets:
        return chunks
    for chunk in chunks:
        first = chunk.page or 1
        last = chunk.page_end or first
        probes = [probe for page, probe in bullets if first <= page <= last]
        if probes:
            chunk.bullets = find_bullets(chunk.text, probes)
    return chunks


def _course_code(subject: str | None) -> str | None:
    return subject.split()[0] if subject else None


def _mark_foreign(chunks: list[Chunk], own_subject: str | None) -> list[Chunk]:
    """Flag chunks of another course than the document's own (see ``Chunk.foreign``)."""
    own = _course_code(own_subject)
    if own:
        for chunk in chunks:
            code = _course_code(chunk.subject)
            chunk.foreign = code is not None and code != own
    return chunks


def detect_subject(pages: Sequence[Page], prefer: str | None = None) -> str | None:
    """The document's main course ("21CS44 Operating Systems"), or None when it has no course header.

    The first course header wins (a later one is the next course's header printed on the last
    page), unless ``prefer`` (e.g. the file name) names one of the codes found.
    """
    # Most documents print no "Course Code:" line at all: their pages are not split into lines.
    if not any(CODE_LINE.search(_clean_text(p.text)) for p in pages):
        return None
    courses = find_courses([ln.text for ln in _lines(pages)])
    if not courses:
        return None
    if prefer:
        wanted = prefer.upper()
        for course in courses:
            if course.code in wanted:
                return course.subject
    return courses[0].subject


# ----------------------------------------------------------------------------------------------
# Across documents
# ----------------------------------------------------------------------------------------------


def split_subject(subject: str | None) -> tuple[str | None, str]:
    """("21CS44", "Operating Systems") from "21CS44 Operating Systems"; (None, subject) without a code.

    A chunk's ``subject`` is the course code and printed title (:attr:`CourseHeader.subject`), or the
    code alone for a tail whose title is not known; anything else (a loader's title) has no code.
    """
    if not subject:
        return None, ""
    head, _, rest = subject.strip().partition(" ")
    if CODE_SHAPE.match(head):
        return head, rest.strip()
    return None, subject.strip()


def relabelled(chunk: Chunk, subject: str, module: str | None, section: str | None, kind: str) -> Chunk:
    """``chunk`` under another subject, module and section: its context line rewritten for the
    embedder and its page marks shifted with it (a document family's relinking,
    ``worker.ingest.families``)."""
    label = _label(_Section(kind, section, module, subject))
    context = context_line(subject, label)
    text = f"{context}\n{chunk_body(chunk.text)}"
    shift = nonspace_len(context) - nonspace_len(chunk.text.split("\n", 1)[0])  # the marks follow the body
    marks = tuple((at + shift, page) for at, page in chunk.page_marks)
    bullets = tuple(at + shift for at in chunk.bullets)
    return replace(
        chunk,
        subject=subject,
        module=module,
        section=section,
        kind=kind,
        text=text,
        page_marks=marks,
        bullets=bullets,
    )
