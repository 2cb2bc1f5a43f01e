"""What a citation calls a document: its course and its own title, read from its heading or its
first lines; the file's name where nothing better is printed. The one place a display title is made.

Why: a slide deck or a set of notes rarely carries PDF metadata, so citations named the file stem
("lecture17, pp. 5-8", "week1_overview"). A student looks for "GEOL 415 — Lecture 11: Plate Margins",
which the title slide prints. Decks and notes of any school open the same way: a title (often
"Lecture N: ..."), the course ("BIOL 210: Field Methods in Ecology", "Northfield
College | HIST 330"), the instructor.

But a first page also prints lines that name no document, and each was once taken for a title: a
classroom ("CER 114", printed like a course code, made a summer syllabus "CER 114 — Syllabus"), a
date, a page label ("Page 1", "1/12"), a bare label ("Contents", "Instructor"), an exporting
program's mark ("NoteApp v2.3.1"), a list item. So a title is a *title-like line*
(:func:`title_like`): the words it says once every value it prints is taken out (the value shapes
of ``worker.text.value_shapes``, which the value recogniser reads too) are words, not a sentence, not
a list item, not an address; a code is a course only where its line names no place or meeting
(:func:`course_code`). Syllabi with a VTU-style course header keep their subject
(``chunking.detect_subject``) and are not renamed here. Only the display title is made here: the
document's own ``title`` (what every chunk's embedded context line carries) stays as the loader read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

from syllabot.worker.ingest.markdown_text import plain_links
from syllabot.worker.text.documents import Document
from syllabot.worker.text.keyword import keyword_stem
from syllabot.worker.text.terms import terms
from syllabot.worker.text.value_shapes import (
    COURSE_CODE,
    NOT_DEPARTMENT,
    PLACE_WORD,
    VERSION_MARK,
    place_line,
    prints_value,
    without_values,
)
from syllabot.worker.text.vocabulary import known

_LECTURE = re.compile(
    r"^(?:Lecture|Lec|Class|Week|Session|Topic)\s+\d{1,2}\s*[:.\-–—]\s*\S.*$", re.IGNORECASE
)
#: Lines that name no document whatever their words: an address, a list item, a table row.
_NOT_TITLE = re.compile(r"@|https?://|www\.|^\s*(?:[-*+•▪◦●‣–]\s|\d{1,2}[.)]\s|\|)", re.IGNORECASE)
#: The school a document comes from ("University of ...", "Department of Music"): whose, not what.
_INSTITUTION = re.compile(r"\b(?:university|college|department|school|institute|faculty)\b", re.IGNORECASE)
#: The first content word of a line that names a person by their role (``terms`` reads "Professor"
#: and "Lecturer" as "instructor", "teaching assistant" as "ta").
_ROLES = ([keyword_stem("instructor")], [keyword_stem("ta")])
_GLUED_CODE = re.compile(r"(?<=[a-z])(?=[A-Z]{2,8}[ \t]?\d{2,4}\b)")
_HEADING_MARK = re.compile(r"^\s{0,3}#{1,6}\s+|\s+#+\s*$")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(\S(?:.*?\S)?)\1")
_WORD = re.compile(r"[^\W\d_]{2,}")
_DIGIT = re.compile(r"\d")
#: Between a title's parts: "Lecture 4 - notes_glazes - NoteApp v2.3.1".
_PART = re.compile(r"\s+[-–—|]\s+")
#: Words that name what kind of document it is, not which: a line of these alone ("Course Syllabus",
#: "Lecture Notes") names no document.
_KIND_WORDS = frozenset(
    {"course", "class", "syllabus", "lecture", "lectures", "notes", "information", "info", "slides",
     "handout", "outline", "contents", "schedule", "table", "of", "the", "document", "untitled", "home",
     "index"}
)  # fmt: skip
_LINES = 8
_MAX_TITLE = 120
#: A number at the end of a file's name after a word ("numpy-1", "notices_week_5").
_PART_NUMBER = re.compile(r"([^\W\d_]+)[-_ ](\d{1,2})$")
_SEQUENCE = re.compile(r"^\d{1,3}[-_ ]+(?=[A-Za-z])")


@dataclass(frozen=True)
class _Line:
    text: str
    heading: bool  # a Markdown heading ("# ...", a setext underline's line)


def course_code(line: str, before: str = "") -> str | None:
    """The course code a line names ("BIOL 210"), or None; None too where the line (or the label
    line ``before`` it) names a place or a meeting: "CER 114" there is a room."""
    if place_line(line) or (before.rstrip().endswith(":") and place_line(before)):
        return None
    for m in COURSE_CODE.finditer(line):
        if m.group("dept") not in NOT_DEPARTMENT:
            return f"{m.group('dept')} {m.group('num')}"
    return None


def title_like(line: str) -> bool:
    """Can ``line`` name a document? Not when it is only values (a room, a code, a date, a term, a
    page label, a version mark), an address, a list item, a person by their role, a place (a line that opens with a place
    word, or names one and a number) or an institution, a sentence
    (eight words or more ending in a full stop), a continuation (it opens in lower case) or a label
    awaiting its value ("Where:"), nor when most of its words are no words (a glyph lost mid-word:
    "C 1 ourse Syllabus"; words in capitals are names and acronyms, not counted)."""
    line = line.strip()
    if not line or len(line) > _MAX_TITLE or _NOT_TITLE.search(line) or line.endswith(":"):
        return False
    if line[0].islower() or (line.endswith(".") and len(line.split()) >= 8):
        return False
    if terms(line)[:1] in _ROLES:
        return False  # a person or their label: "Instructor", "Professor Jane Roe", "TA: ..."
    if (
        _INSTITUTION.search(line)
        or PLACE_WORD.match(line)
        or (PLACE_WORD.search(line) and _DIGIT.search(line))
    ):
        return False  # "Online via Zoom", "Kiln Sciences Building 135"; "Glaze building blocks" is one
    words = _WORD.findall(without_values(line))
    cased = [w for w in words if not w.isupper()]
    return bool(words) and sum(not known(w) for w in cased) * 2 <= len(cased)


def names_nothing(line: str, file_name: str) -> bool:
    """A bare label ("Contents", "Instructor": one word the file's name does not hold) or a line of
    document-kind words only ("Course Syllabus"): it names a part or a kind, not the document."""
    words = _WORD.findall(line.lower())
    if all(w in _KIND_WORDS for w in words):
        return True
    return len(line.split()) == 1 and words[0] not in file_name.lower()


def readable_name(file_name: str) -> str:
    """The file's name as words: "02-git.pdf" -> "Git", "lecture_01" -> "Lecture 01"."""
    stem = PurePath(file_name).stem or file_name
    words = " ".join(_SEQUENCE.sub("", stem).replace("_", " ").replace("-", " ").split()) or stem
    return words[:1].upper() + words[1:]


def _plain(line: str) -> str:
    """A Markdown heading or line as its words ("## **Week 1:** [Intro](#intro)" -> "Week 1: Intro")."""
    line = _EMPHASIS.sub(r"\2", plain_links(_HEADING_MARK.sub("", line)))
    return " ".join(line.split())


def _continues(before: str, line: str) -> bool:
    """Does ``line`` go on with the title on the line before it? A line in lower case ("Clay
    glazing:" / "raku firing day"), or capitals under capitals ("WHEEL" / "THROWING")."""
    if not line or not before or prints_value(line) or _NOT_TITLE.search(line):
        return False
    return line[0].islower() or (before.isupper() and line.isupper() and not before.endswith((".", ":")))


def _head_lines(text: str) -> list[_Line]:
    """The first lines of a page as words, a title broken over lines read as one."""
    text = _GLUED_CODE.sub("\n", text)  # "meadowBIOL 210: ..." (a title glued to the course line)
    out: list[_Line] = []
    for raw in text.split("\n")[: _LINES * 6]:
        line = _plain(raw)
        if not line:
            continue
        heading = bool(_HEADING_MARK.match(raw)) or (bool(out) and set(line) <= set("=-"))
        if heading and out and set(line) <= set("=-"):  # a setext underline: the line above is a heading
            out[-1] = _Line(out[-1].text, True)
            continue
        if out and not heading and not out[-1].heading and _continues(out[-1].text, line):
            out[-1] = _Line(f"{out[-1].text} {line}", False)
            continue
        out.append(_Line(line, heading))
    return out


def _own(title: str) -> str:
    """The loader's title without what an exporting program adds to it: "Lecture 4 - notes_glazes
    - NoteApp v2.3.1" -> "Lecture 4" (a version mark, a bare identifier)."""
    parts = _PART.split(title.strip())
    while len(parts) > 1 and (VERSION_MARK.search(parts[-1]) or re.fullmatch(r"\S*_\S*", parts[-1])):
        parts.pop()
    return " - ".join(parts)


def _code_of(lines: list[str], file_name: str) -> tuple[str | None, int]:
    """The course code of the head lines and the line it is on: the one the file's name numbers
    when several are printed, else the first."""
    found = [(code, i) for i, ln in enumerate(lines) if (code := course_code(ln, lines[i - 1] if i else ""))]
    stem = PurePath(file_name).stem.lower()
    for code, i in found:
        if code.split()[1].lower() in stem:
            return code, i
    return found[0] if found else (None, -1)


def _usable(line: str, file_name: str) -> bool:
    return title_like(line) and not names_nothing(line, file_name) and course_code(line) is None


def _after_code(line: str) -> str:
    """What a course line says after its code ("BIOL 210: Field Methods" -> "Field Methods"); ""
    where it prints a value there (a term, a date: "CER 210, Spr 2031, Clay School")."""
    m = COURSE_CODE.search(line)
    rest = line[m.end() :].strip(" :-–—|,") if m else ""
    return "" if prints_value(rest) else rest


def _printed_title(lines: list[_Line], code: str | None, code_at: int, file_name: str) -> str | None:
    """The title the head lines print: a "Lecture N: ..." line; the title-like lines just above the
    course line; what a course line says after its code; else the first title-like line, a heading
    before other lines."""
    texts = [ln.text for ln in lines]
    lecture = next((t for t in texts if _LECTURE.match(t) and title_like(t)), None)
    if lecture:
        return lecture
    if code is not None:
        block: list[str] = []  # the title-like lines just above the course line
        for text in reversed(texts[:code_at]):
            if prints_value(text) or not title_like(text):
                break
            block.insert(0, text)
        above = " ".join(block)
        if above and _usable(above, file_name):
            return above
    ordered = [ln.text for ln in lines if ln.heading] + [ln.text for ln in lines if not ln.heading]
    if code is not None:  # the course line first, then every other line that prints the code
        ordered = [texts[code_at]] + [t for t in ordered if t != texts[code_at]]
        ordered = [_after_code(t) if course_code(t) else t for t in ordered]
    return next((t for t in ordered if t and _usable(t, file_name)), None)


def cite_title_of(doc: Document, first_page: str) -> str:
    """What citations call ``doc``: "BIOL 210 — Sampling a meadow", "HIST 330 — Lecture 6: Archives
    (1)", "Lecture 1: What is Pottery?", else its file's name as words. ``first_page``: the page
    as printed (a PDF's running header included: the course line of every slide is one)."""
    if doc.subject:
        return doc.title  # a course header's subject names the document (``detect_subject``)
    lines = _head_lines(first_page)[:_LINES]
    texts = [ln.text for ln in lines]
    code, code_at = _code_of(texts, doc.file)
    own = _own(doc.title)
    stem = PurePath(doc.file).stem
    if own != stem and title_like(own) and not names_nothing(own, doc.file):
        name = own
    else:
        name = _printed_title(lines, code, code_at, doc.file) or readable_name(doc.file)
    part = _PART_NUMBER.search(stem)
    if (
        part
        and part.group(1).lower() in name.lower()
        and int(part.group(2)) not in {int(n) for n in re.findall(r"\d+", name)}
    ):
        # parts of one series named as their title is ("numpy-1", "numpy-2") stay apart: "NUMPY (1)"
        name = f"{name} ({int(part.group(2))})"
    if code is None or code in name:
        return name
    return f"{code} — {name}"
