"""Check the course question corpus's labels against the documents' own text.

Every answerable question of ``bench/data/course_<slug>_questions.jsonl`` names the ``file`` that
answers it, the 1-based physical ``pages`` (PDFs; ``null`` for Markdown, Word and the like), the
``evidence`` (the answering sentence or list, quoted from the extracted text) and ``expect`` (short
strings a correct answer must hold). A label is only worth something if a script can check it: a
page label off by one or an evidence quote from another document would quietly move every figure
measured on it. The check reads the text itself, through PDFium (pypdfium2, the raw text layer) for
PDFs, python-docx for Word, and the file as it is for text formats, so it does not depend on what
the product's loaders do to the text.

Matching is on *folded* text: NFKC, case-folded, every character that is not a letter or a digit
dropped. A quote therefore survives differences of spacing, line breaks, bullets and punctuation
but not of words; a glyph PDFium could not map (U+FFFE, a dropped "fi"/"fl" ligature) is tried as
each of the usual ligatures, so "final" matches a text layer's "\\ufffenal".

Run: ``python -m bench.corpus_labels`` (all courses present) or ``--course SLUG``; ``--dump SLUG FILE``
prints a document's text page by page, as the check reads it. Exits 1 on any failing label.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
COURSES = DATA / "courses"
QUESTIONS = ROOT / "bench" / "data"

#: Course slug (the questions' ``course`` field) → folder under ``../shared/data/courses/`` and split.
#: The split is fixed (bench/data/README.md): held out = never trained or tuned on.
COURSE_FOLDERS: dict[str, tuple[str, str]] = {
    "ec607": ("ec607-data-science", "heldout"),
    "poir613": ("poir613-comp-social-science", "heldout"),
    "bee4750": ("bee4750-env-systems", "heldout"),
    "psyc11": ("psyc11-lab-psych", "tune"),
    "la7032": ("geospatial-modeling-la", "tune"),
    "hseml": ("hse-ml-data-mining", "tune"),
    "econometrics": ("regensburg-econometrics", "tune"),
    "neu365p": ("neu365p-neuro-data-python", "tune"),
    "cse8803": ("computational-dynamics", "tune"),
}

LIGATURES = ("fi", "fl", "ff", "ffi", "ffl", "th", "")


def questions_path(slug: str) -> Path:
    return QUESTIONS / f"course_{slug}_questions.jsonl"


def fold(text: str) -> str:
    """Letters and digits only, case-folded; U+FFFE kept as the one mark of a lost glyph."""
    text = unicodedata.normalize("NFKC", text.replace("\ufffe", "\x00")).casefold()
    return "".join(ch for ch in text if ch.isalnum() or ch == "\x00")


def variants(folded: str) -> list[str]:
    """The folded text with every lost-glyph mark read as one ligature at a time."""
    if "\x00" not in folded:
        return [folded]
    return [folded.replace("\x00", lig) for lig in LIGATURES]


def raw_pdf_pages(data: bytes) -> list[str]:
    """A PDF's raw PDFium text layer, one entry per physical page (no repairs, nothing left out)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        out = []
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            out.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return out
    finally:
        pdf.close()


@cache
def pages_of(path: Path) -> tuple[str, ...]:
    """The document's text, one entry per physical page (one entry for formats without pages)."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return tuple(raw_pdf_pages(path.read_bytes()))
    if suffix == ".docx":
        import docx

        document = docx.Document(str(path))
        parts = [p.text for p in document.paragraphs]
        for table in document.tables:
            for row in table.rows:
                parts.append(" | ".join(cell.text for cell in row.cells))
        return ("\n".join(parts),)
    return (path.read_text(encoding="utf-8", errors="replace"),)


@cache
def folded_pages(path: Path) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(variants(fold(p))) for p in pages_of(path))


def found(needle: str, haystacks: Sequence[str]) -> bool:
    n = fold(needle)
    return bool(n) and any(n in h for h in haystacks)


@dataclass
class Problem:
    line: int
    question: str
    what: str


def _side_problems(folder: Path, side: dict, expect: Sequence[str], need_evidence: bool) -> Iterator[str]:
    name = side.get("file")
    if not name:
        yield "no file"
        return
    path = folder / name
    if not path.is_file():
        yield f"file {name!r} not in {folder.name}"
        return
    folded = folded_pages(path)
    pages = side.get("pages") or ([side["page"]] if side.get("page") else None)
    if path.suffix.lower() == ".pdf":
        if not pages:
            yield f"{name}: a PDF needs its page(s)"
            return
        bad = [p for p in pages if not (isinstance(p, int) and 1 <= p <= len(folded))]
        if bad:
            yield f"{name}: pages {bad} outside 1..{len(folded)}"
            return
        if side.get("page") is not None and side["page"] not in pages:
            yield f"{name}: page {side['page']} not among pages {pages}"
        texts = [v for p in pages for v in folded[p - 1]]
    else:
        texts = [v for page in folded for v in page]
    evidence = side.get("evidence")
    if need_evidence and not evidence:
        yield f"{name}: no evidence"
    elif evidence and not found(evidence, texts):
        yield f"{name}: evidence not on {('pages ' + str(pages)) if pages else 'the file'}: {evidence[:80]!r}"
    for e in expect:
        if not found(e, texts):
            yield f"{name}: expect {e!r} not on {('pages ' + str(pages)) if pages else 'the file'}"


def check_question(folder: Path, q: dict) -> list[str]:
    """Every way this question's labels disagree with the documents (empty: the labels hold)."""
    out: list[str] = []
    for field in ("question", "answerable", "course", "kind"):
        if field not in q:
            out.append(f"missing field {field!r}")
    if not isinstance(q.get("expect", []), list):
        out.append("expect must be a list")
    if not q.get("answerable"):
        if q.get("file") or q.get("expect"):
            out.append("an unanswerable question carries no file and no expect")
        return out
    if not q.get("expect"):
        out.append("an answerable question needs expect strings")
    if q.get("conflict"):
        sides = q.get("sides") or []
        if len(sides) < 2:
            out.append("a conflict question needs two sides")
        for side in sides:
            out.extend(_side_problems(folder, side, side.get("expect", []), need_evidence=True))
        # The question's own file/page/evidence/expect: the side it names, checked as any answer.
    out.extend(_side_problems(folder, q, q.get("expect") or [], need_evidence=True))
    return out


def check_course(slug: str) -> tuple[int, list[Problem]]:
    folder = COURSES / COURSE_FOLDERS[slug][0]
    path = questions_path(slug)
    problems: list[Problem] = []
    n = 0
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        n += 1
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(i, line[:60], f"not JSON: {exc}"))
            continue
        if q.get("course") != slug:
            problems.append(
                Problem(i, q.get("question", "")[:60], f"course {q.get('course')!r}, not {slug!r}")
            )
        problems.extend(Problem(i, q.get("question", "")[:60], w) for w in check_question(folder, q))
    return n, problems


def course_files(folder: str) -> list[Path]:
    """Every document of a course folder the product can index (the folder is one class)."""
    from syllabot.shared.formats import DOCUMENT_KINDS

    return sorted(p for p in (COURSES / folder).iterdir() if p.suffix.lower() in DOCUMENT_KINDS)


def available() -> list[str]:
    """The courses whose documents and questions are both here (``../shared/data/`` may lack any)."""
    return [
        s for s, (f, _) in COURSE_FOLDERS.items() if (COURSES / f).is_dir() and questions_path(s).is_file()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course", action="append", help="course slug (repeatable); default: all present")
    parser.add_argument("--dump", nargs=2, metavar=("SLUG", "FILE"), help="print a document's text by page")
    args = parser.parse_args(argv)
    if args.dump:
        slug, name = args.dump
        for i, text in enumerate(pages_of(COURSES / COURSE_FOLDERS[slug][0] / name), start=1):
            print(f"===== {name} p{i} =====")
            print(text)
        return 0
    slugs = args.course or available()
    failed = 0
    for slug in slugs:
        n, problems = check_course(slug)
        qs = [
            json.loads(x) for x in questions_path(slug).read_text(encoding="utf-8").splitlines() if x.strip()
        ]
        unans = sum(1 for q in qs if not q.get("answerable"))
        print(
            f"{slug}: {n} questions, {unans} unanswerable ({unans / max(n, 1):.0%}), {len(problems)} label problems"
        )
        for p in problems:
            print(f"  line {p.line}: {p.question!r}: {p.what}")
        failed += len(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
