"""Revised copies of real VTU syllabus PDFs, built at bench time: conflicts planted in PDFs, not only
in Markdown notices.

Why built, not committed: the syllabi are not ours to copy into the project, and a copy made from
the original at run time changes exactly the planted facts and nothing else. Each plant rewrites the
text-showing operators (``[(…)] TJ``) of chosen pages of the original's content streams: a value
after a given piece of text becomes another ("CIE Marks" 50 → 60). Every replacement must happen
exactly once, or the build fails loudly (a changed original would otherwise plant nothing and the
bench would measure a conflict that is not there). The copies' names carry "revised", as a college's
re-issued syllabus would, which is how the answer can tell the current one.

`python -m bench.planted_pdfs` builds them into ``bench/results/raw/planted/`` and prints what each
page now says where it was changed.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.common import DATA, RAW

OUT = RAW / "planted"
SYLLABI = DATA / "syllabi"

_TJ = re.compile(rb"\[((?:[^\]\\]|\\.)*)\]\s*TJ")


@dataclass(frozen=True)
class Change:
    """On ``page`` (0-based): the first text operator after one holding ``after`` (or the first
    anywhere, when ``after`` is empty) whose text holds ``old`` shows ``new`` in its place."""

    page: int
    after: bytes
    old: bytes
    new: bytes


#: planted file -> (original in the VTU syllabi, its changes). Question sets: ``conflict_questions.jsonl``.
PLANTS: dict[str, tuple[str, tuple[Change, ...]]] = {
    # CIE/SEE split 50/50 -> 60/40, on the credits table (p1) and the assessment details (p3).
    "21CS44_revised.pdf": (
        "21CS44.pdf",
        (
            Change(0, b"CIE Marks", b"50", b"60"),
            Change(0, b"SEE Marks", b"50", b"40"),
            Change(
                2,
                b"",
                b"is 50% and for Semester End Exam \\(SEE\\) is 50%",
                b"is 60% and for Semester End Exam \\(SEE\\) is 40%",
            ),
            Change(2, b"", b"scaled down to 50 marks", b"scaled down to 60 marks"),
            Change(2, b"", b"reduced to 50 marks", b"reduced to 40 marks"),
        ),
    ),
    # Textbook 2 (Kurose and Ross): 7th -> 8th edition (p3).
    "21CS52_revised.pdf": (
        "21CS52.pdf",
        (Change(2, b"Education ", b"7", b"8"),),
    ),
}


def literal_strings(array: bytes) -> list[bytes]:
    """The literal strings of a TJ array, escapes kept as written ("\\(" stays two bytes)."""
    out: list[bytes] = []
    i = 0
    while i < len(array):
        if array[i : i + 1] != b"(":
            i += 1
            continue
        depth, j, buf = 1, i + 1, bytearray()
        while j < len(array):
            c = array[j : j + 1]
            if c == b"\\":
                buf += array[j : j + 2]
                j += 2
                continue
            if c == b"(":
                depth += 1
            elif c == b")":
                depth -= 1
                if not depth:
                    break
            buf += c
            j += 1
        out.append(bytes(buf))
        i = j + 1
    return out


def rewrite(content: bytes, changes: list[Change]) -> bytes:
    """``content`` (one page's decoded content stream) with each change made once; an operator
    changed is rewritten as one string (its kerning dropped, which moves no words apart here)."""
    ops = list(_TJ.finditer(content))
    texts = [b"".join(literal_strings(m.group(1))) for m in ops]
    replaced: dict[int, bytes] = {}
    for change in changes:
        start = 0
        if change.after:
            start = next((k + 1 for k, t in enumerate(texts) if change.after in t), len(texts))
        target = next((k for k in range(start, len(texts)) if change.old in replaced.get(k, texts[k])), None)
        if target is None:
            raise ValueError(f"page {change.page + 1}: no text {change.old!r} after {change.after!r}")
        replaced[target] = replaced.get(target, texts[target]).replace(change.old, change.new, 1)
    out, last = bytearray(), 0
    for k, m in enumerate(ops):
        if k in replaced:
            out += content[last : m.start()] + b"[(" + replaced[k] + b")] TJ"
            last = m.end()
    return bytes(out + content[last:])


def build(name: str, out_dir: Path = OUT) -> Path:
    """The planted copy ``name`` under ``out_dir`` (rebuilt each time: it takes well under a second)."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import DecodedStreamObject

    source, changes = PLANTS[name]
    writer = PdfWriter(clone_from=PdfReader(SYLLABI / source))
    for page_number in sorted({c.page for c in changes}):
        page = writer.pages[page_number]
        content = page.get_contents()
        assert content is not None, f"{source} p{page_number + 1} has no content stream"
        stream = DecodedStreamObject()
        stream.set_data(rewrite(content.get_data(), [c for c in changes if c.page == page_number]))
        page.replace_contents(stream)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def main() -> int:
    if not SYLLABI.is_dir():
        print(f"{SYLLABI} is not here: nothing to plant")
        return 0
    from syllabot.worker.ingest.loaders import load_document

    for name, (_source, changes) in PLANTS.items():
        path = build(name)
        document = load_document(path.read_bytes(), path.name, 50 * 1024 * 1024)
        print(f"{path}: {len(document.pages)} pages")
        for change in changes:
            text = document.pages[change.page].text
            at = text.find(change.new.decode().replace("\\", ""))
            print(f"  p{change.page + 1}: …{' '.join(text[max(0, at - 60) : at + 40].split())}…")
    return 0


if __name__ == "__main__":
    sys.exit(main())
