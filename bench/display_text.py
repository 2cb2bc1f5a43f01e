"""What a student reads of every PDF under ../shared/data: symbol-font bullets read as a letter,
and runs of glyphs no font map reads (what a student reads).

    python -m bench.display_text

For each PDF (every folder of ``../shared/data`` that exists; the scanned and the unreadable are
counted apart) and the decks of our own (``bench.slide_decks``): the text PDFium reads, the text
the index reads (the loader's chunks), and the text a student reads (the chunks as the answerers
read them, ``answerers.base.as_read``), each counted for

* **"I"-bullet lines**: places where a line of words opens with a glyph PDFium could not map
  (``FPDFText_HasUnicodeMapError``; Beamer's msam triangle read as "I"), found by that glyph and
  the word after it (``bench.extraction.symbol_bullets``): at a line's start, or, in a chunk whose
  lines a window joined, anywhere after a space;
* **undecoded runs**: words made only of two or more Latin Extended letters, as a font without a
  usable map reads ("ķŀĵƦƤƥ").

Targets: "I"-bullet lines in what a student reads <= 10, undecoded runs 0. Structural counts only;
no question is asked.

``--breaks``: per real course (one collection each), the words a line end broke that a student
now reads whole (``display.broken_words`` against the course's own keyword index), each listed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time

from bench.common import DATA
from bench.extraction import symbol_bullets

#: A word of two or more Latin Extended letters and nothing else ("ķŀĵƦƤƥ"): glyph numbers read as
#: characters. No language writes a word without a letter of ASCII or Latin-1; Greek ("βˆ" in a
#: formula) and maths are other blocks.
UNDECODED = re.compile(r"(?<!\S)[\u0100-\u024f]{2,}(?!\S)")


def bullet_places(pairs: set[tuple[str, str]], text: str) -> int:
    """Places in ``text`` where a glyph of ``pairs`` stands before its word, at a line's start or
    after a space."""
    if not pairs:
        return 0
    return sum(
        len(re.findall(rf"(?:^|(?<=\s)){re.escape(g)}[ \t]+{re.escape(w)}(?!\w)", text, re.M))
        for g, w in pairs
    )


def undecoded(text: str) -> int:
    return sum(1 for m in UNDECODED.finditer(text) if all(ch.isalpha() for ch in m.group(0)))


def measure(data: bytes, name: str) -> tuple[int, int, int, int, int, int] | None:
    """("I" places: PDFium, index, student; undecoded runs: PDFium, index, student), None when the
    loader refuses the file."""
    import pypdfium2 as pdfium

    from syllabot.worker.answerers.base import as_read
    from syllabot.worker.indexes.retrieval import hit_from_chunk
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.ingest_errors import IngestError
    from syllabot.worker.ingest.loaders import load_document

    pairs = {(g, w) for g, w in symbol_bullets(data) if g.isalnum()}
    pdf = pdfium.PdfDocument(data)
    try:
        raw = "\n".join(page.get_textpage().get_text_range() for page in pdf)
    finally:
        pdf.close()
    try:
        chunks = chunk_document(load_document(data, name, 10**9))
    except IngestError:
        return None
    index = "\n".join(c.text for c in chunks)
    student = "\n".join(as_read(hit_from_chunk(c, 1, 0.0, 0.0, 0.0)).text for c in chunks)
    return (
        bullet_places(pairs, raw),
        bullet_places(pairs, index),
        bullet_places(pairs, student),
        undecoded(raw),
        undecoded(index),
        undecoded(student),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print each file with a count left")
    parser.add_argument("--breaks", action="store_true", help="words a line end broke, per course")
    args = parser.parse_args(argv)
    if args.breaks:
        return breaks()
    files = sorted(DATA.rglob("*.pdf")) if DATA.is_dir() else []
    blobs = [(path.read_bytes(), str(path.relative_to(DATA))) for path in files]
    from bench.slide_decks import decks

    blobs += [(data, f"(our deck) {name}") for name, data in decks().items()]
    if not files:
        print(f"no PDFs under {DATA}: our decks only", file=sys.stderr)
    started = time.perf_counter()
    totals = [0] * 6
    refused = 0
    for data, name in blobs:
        counts = measure(data, name)
        if counts is None:
            refused += 1
            continue
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        if args.verbose and (counts[2] or counts[5]):
            print(f"  {name}: 'I' bullets left {counts[2]}, undecoded runs left {counts[5]}")
    print(
        f"{len(blobs) - refused} PDFs read ({refused} refused: scanned or unreadable), "
        f"{time.perf_counter() - started:.1f} s\n"
    )
    print('| text | "I"-bullet places | undecoded runs |\n|---|---|---|')
    for label, k in (("PDFium raw", 0), ("index (chunks)", 1), ("student reads", 2)):
        print(f"| {label} | {totals[k]} | {totals[k + 3]} |")
    print(
        f'\nTargets (student reads): "I"-bullet places <= 10 {"✓" if totals[2] <= 10 else "✗"}; '
        f"undecoded runs 0 {'✓' if totals[5] == 0 else '✗'}"
    )
    return 0


def breaks() -> int:
    """Per course, the broken words shown whole (every chunk read as passages of one result)."""
    from bench.common import default_embedder
    from bench.courses import course_snapshot, courses_of
    from syllabot.worker.indexes.retrieval import broken_among

    slugs = courses_of("dev") + courses_of("test")
    if not slugs:
        print("no course data found (../shared/data/courses); skipping")
        return 0
    embedder = default_embedder()
    print("| course | words shown whole | which |\n|---|---|---|")
    for slug in slugs:
        snapshot = course_snapshot(slug, embedder)
        found = broken_among(snapshot, snapshot.chunks)
        which = ", ".join(f"{k} → {v}" for k, v in sorted(found.items())) or "—"
        print(f"| {slug} | {len(found)} | {which} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
