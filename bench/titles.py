"""Document titles that name no document, counted over every document of ``../shared/data``.

    python -m bench.titles [--all]

Each document the product can index (every folder under the data directory, whatever folders are
there; the data's own README.md files left out) is loaded as ingest loads it, and the title a
citation names it by (``shared.labels.citation_head``: its subject, else its display title) is
checked. A title is counted when the document part of it (after "CODE — ", when it has a course
part) is:

* **room**: a code or a numbered place that the first page prints on a line naming a place or a
  meeting ("Lectures: MWF 9-10 am, IB 335"), or a course part that is such a room;
* **code alone**: a course code or "Word 123" and nothing else;
* **date**: only a date, a term or a time;
* **page label**: only a page label ("Page 1", "1/12");
* **bare label**: one word (not the file's own name) ("Contents", "Instructor"), only words that
  name a kind of document ("Course Syllabus"), or a person by their role ("Instructor Jane Roe");
* **version line**: it carries an exporting program's version mark ("Obsidian v1.8.10").

Titles that are the file's name unchanged ("lecture_01") are counted too, apart (not a fault when
nothing better is printed). The checks are written here, not taken from ``worker.ingest.doc_titles``,
so the product's rules are measured, not restated; they share only the value shapes
(``worker.text.value_shapes``). Target: 0 faulty titles. ``--all`` lists every title, not only the
faulty ones.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path, PurePath

from bench.common import DATA

#: What a document part of a title may be, faulty, in the order they are checked.
FAULTS = ("room", "code alone", "date", "page label", "bare label", "version line")
_KIND = {"course", "class", "syllabus", "lecture", "lectures", "notes", "information", "info", "contents",
         "outline", "slides", "handout", "index", "home", "schedule", "instructor", "instructors", "of", "the",
         "table", "untitled", "document"}  # fmt: skip
_ROLE = re.compile(r"^(?:instructors?|professor|prof\.?|lecturer|teaching\s+assistants?|tas?)\b", re.I)
_WORD = re.compile(r"[^\W\d_]{2,}")


def documents(root: Path = DATA) -> list[Path]:
    """Every indexable file under ``root`` (none when it is absent), the data's READMEs left out."""
    from syllabot.shared.formats import DOCUMENT_KINDS

    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix.lower() in DOCUMENT_KINDS and p.name != "README.md"
    )


def _only(shapes: Sequence[re.Pattern[str]], text: str) -> bool:
    """``text`` prints one of ``shapes`` and no word besides."""
    if not any(s.search(text) for s in shapes):
        return False
    for shape in shapes:
        text = shape.sub(" ", text)
    return not _WORD.search(text)


def _on_place_line(code: str, page: str) -> bool:
    from syllabot.worker.text.value_shapes import place_line

    lines = page.split("\n")
    return any(
        code in line
        and (place_line(line) or (k and lines[k - 1].rstrip().endswith(":") and place_line(lines[k - 1])))
        for k, line in enumerate(lines)
    )


def fault(title: str, file_name: str, first_page: str) -> str | None:
    """What is wrong with ``title`` (one of :data:`FAULTS`), or None."""
    from syllabot.worker.text import value_shapes as v

    course, _, name = title.rpartition(" — ")
    name = name.strip()
    if course and _on_place_line(course, first_page):
        return "room"
    codes = (v.COURSE_CODE, v.NUMBERED_NAME)
    if _only(codes, name):
        return "room" if _on_place_line(name, first_page) else "code alone"
    if _only((v.DATE, v.NUMERIC_DATE, v.TERM, v.TIMES, v.DAY_WORD), name):
        return "date"
    if _only((v.PAGE_LABEL,), name) or re.fullmatch(r"\W*\d+\W*", name):
        return "page label"
    words = _WORD.findall(name.lower())
    if set(words) <= set(_WORD.findall(PurePath(file_name).stem.lower())):
        return None  # the file's own name: what a document is called where it prints nothing better
    if not words or all(w in _KIND for w in words) or len(name.split()) == 1 or _ROLE.match(name):
        return "bare label"
    if v.VERSION_MARK.search(name):
        return "version line"
    return None


def _first_page(doc, data: bytes, name: str) -> str:
    """The first page as printed (a PDF's running header included), as the title was read from."""
    if doc.kind != "pdf":
        return doc.pages[0].text
    from syllabot.worker.ingest.pdf_text import read_pdf

    return read_pdf(data, name, None, on_page=lambda _n: None).pages[0]


def main(argv: Sequence[str] | None = None) -> int:
    from syllabot.shared.labels import citation_head
    from syllabot.worker.ingest.loaders import load_document

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="list every title, not only the faulty ones")
    args = parser.parse_args(argv)
    paths = documents()
    if not paths:
        print(f"no documents found under {DATA}; skipping")
        return 0
    counts: Counter[str] = Counter()
    loaded = stems = 0
    for path in paths:
        data = path.read_bytes()
        try:
            doc = load_document(data, path.name, 200 * 1024 * 1024)
        except Exception:  # a file the product refuses (a scan) has no title to check
            continue
        loaded += 1
        title = citation_head(doc)
        what = fault(title, doc.file, _first_page(doc, data, path.name))
        raw_stem = title == PurePath(doc.file).stem
        stems += raw_stem
        if what:
            counts[what] += 1
        if what or args.all:
            print(f"{what or ('file name' if raw_stem else 'ok'):12} {path.relative_to(DATA)}: {title}")
    faulty = sum(counts.values())
    print(f"\n{loaded} documents under {DATA}: {faulty} titles that name no document", end="")
    print(f" ({', '.join(f'{k} {counts[k]}' for k in FAULTS if counts[k])})" if faulty else "")
    print(f"{stems} titled by their file's name unchanged")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
