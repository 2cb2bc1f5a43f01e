"""A document's own title with its course, read from its first page: what a citation should name.

Why: a slide deck or a set of notes rarely carries PDF metadata, so citations named the file stem
("lecture17, pp. 5-8", "week1_overview"). A student looks for "GEOL 415 — Lecture 11: Plate Margins",
which the title slide prints. Decks and notes of any school open the same way: a title (often
"Lecture N: ..."), the course ("BIOL 210: Field Methods in Ecology", "Northfield
College | HIST 330"), the instructor. Pure functions on the first page's text; syllabi with a VTU-style
course header keep their subject (``chunking.detect_subject``) and are not renamed here.
"""

from __future__ import annotations

import re

#: "BIOL 210", "HIST 330", "CHEMBIO 215", "ARTS118QX", "GEOL 415": a department and a number.
_CODE = re.compile(r"(?<![A-Za-z0-9])(?P<dept>[A-Z]{2,8})[ \t]?(?P<num>\d{2,4}[A-Z]{0,2})(?![A-Za-z0-9])")
_NOT_DEPT = frozenset(
    {"SPRING", "FALL", "SUMMER", "WINTER", "ROOM", "PAGE", "WEEK", "LECTURE", "UNIT", "MODULE", "AM", "PM"}
)
_LECTURE = re.compile(
    r"^(?:Lecture|Lec|Class|Week|Session|Topic)\s+\d{1,2}\s*[:.\-–—]\s*\S.*$", re.IGNORECASE
)
_NOT_TITLE = re.compile(r"@|https?://|^\W*\d[\d\s/.:-]*$|^page\s+\d", re.IGNORECASE)
_GLUED_CODE = re.compile(r"(?<=[a-z])(?=[A-Z]{2,8}[ \t]?\d{2,4}\b)")
_LINES = 6
_MAX_TITLE = 80


def course_code(line: str) -> str | None:
    """The course code a line names ("BIOL 210"), or None."""
    for m in _CODE.finditer(line):
        if m.group("dept") not in _NOT_DEPT:
            return f"{m.group('dept')} {m.group('num')}"
    return None


def _head_lines(text: str) -> list[str]:
    text = _GLUED_CODE.sub("\n", text)  # "meadowBIOL 210: ..." (a title glued to the course line)
    lines = [" ".join(ln.split()) for ln in text.split("\n")]
    return [ln for ln in lines if ln and not _NOT_TITLE.search(ln)][:_LINES]


def document_title(first_page: str, fallback: str, file_name: str = "") -> str:
    """ "BIOL 210 — Sampling a meadow", "HIST 330 — Lecture 6: Archives (1)",
    "HIST 330 — Syllabus", or ``fallback`` when the first page names no course."""
    lines = _head_lines(first_page)
    code_at = next((i for i, ln in enumerate(lines) if course_code(ln)), None)
    if code_at is None:
        return fallback
    code = course_code(lines[code_at])
    assert code is not None
    lecture = next((ln for ln in lines if _LECTURE.match(ln)), None)
    if lecture:
        title = lecture
    elif code_at > 0:
        title = " ".join(lines[:code_at])
    elif "syllabus" in f"{file_name} {' '.join(lines)}".lower():
        title = "Syllabus"
    else:  # the course line opens the page: "BIOL 210: Field Methods in Ecology"
        m = _CODE.search(lines[0])
        title = lines[0][m.end() :] if m else ""
        if len(title.strip(" :-–—|")) < 4:
            return fallback
    title = title.strip(" :-–—|")
    if not title or len(title) > _MAX_TITLE or course_code(title) == code:
        return f"{code} — Syllabus" if "syllabus" in file_name.lower() else fallback
    return f"{code} — {title}"
