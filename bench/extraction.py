"""PDF text extractors compared over every PDF under ../shared/data: what each one gets wrong, and
how long it takes.

    python -m bench.extraction [--only NAME ...] [--repeat N] [--write]

Extractors (each over the same files, one after the other, in this process):

* ``pypdf``: ``PdfReader(...).pages[i].extract_text()``, the extractor Syllabot used before
  (installed with the ``bench`` and ``test`` extras only);
* ``pdfminer.six``: ``pdfminer.high_level.extract_text`` (``bench`` extra), when installed;
* ``pypdfium2``: PDFium's raw text layer, ``PdfTextPage.get_text_range()``, one page at a time;
* ``loader``: Syllabot's ``load_document`` (PDFium, hidden text left out, ``pdf_repair``): the
  text that is indexed. Run from a checkout of an older commit (this file copied in), it measures
  that commit's loader the same way.

Per extractor: words of 22 letters or more (justified words run together: "dataWithPseudoResiduals"
counts, as no English word is that long), words still holding a glyph the extractor could not map
(U+FFFE, U+0000 or pdfminer's "(cid:N)"; for ``loader`` the marks its repairs could only guess,
``Document.dropped["unmended_marks"]``), plot-marker glyphs left in runs of three or more ("● ● ●"),
all words, and the seconds for all files (the fastest of ``--repeat`` runs, 3 by default). A file an extractor refuses (the scanned syllabus) is
counted apart. ``--write`` writes docs/EXTRACTION.md.
"""

from __future__ import annotations

import argparse
import functools
import io
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from bench.common import DATA, ROOT, machine_stamp, markdown_table

DOC = ROOT / "docs" / "EXTRACTION.md"
_WORD = re.compile(r"[^\W\d_]+")
_RUN_TOGETHER = re.compile(r"[A-Za-z]{22,}")
_LOST = re.compile(r"\S*[\ufffe\x00]\S*|\(cid:\d+\)")
#: Plot marks: the Geometric Shapes, Miscellaneous Symbols and Dingbats blocks ("●", "■", "▲", "❍",
#: "★", "✕"), whatever font drew them.
_MARKERS = "\u25a0-\u25ff\u2600-\u26ff\u2700-\u27bf"
#: Three or more marks with only spaces or line ends between them ("● ● ●", one per line).
_MARKER_RUN = re.compile(f"(?:[{_MARKERS}]\\s*){{3,}}")
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?%?")


def tick_runs(text: str) -> int:
    """Runs of four or more numbers in a row (spaces or line ends between) that step evenly, as an
    axis's tick labels do ("0 25 50 75 100", "0.00 0.25 0.50 0.75", "0\\n10\\n20\\n30"): each maximal
    run counted once."""
    runs = 0
    values: list[float] = []
    last_end = -1
    for m in _NUMBER.finditer(text):
        if last_end >= 0 and text[last_end : m.start()].strip():
            runs += _even_run(values)
            values = []
        values.append(float(m.group(0).rstrip("%").replace(",", ".")))
        last_end = m.end()
    return runs + _even_run(values)


def _even_run(values: list[float]) -> int:
    """1 when ``values`` holds four or more in a row with one step (not 0) between them."""
    length = 1
    for i in range(1, len(values)):
        step = values[i] - values[i - 1]
        same = i >= 2 and step and abs(step - (values[i - 1] - values[i - 2])) < 1e-9 * max(1.0, abs(step))
        length = length + 1 if same else 2
        if length >= 4:
            return 1
    return 0


@functools.cache
def symbol_bullets(data: bytes) -> tuple[tuple[str, str], ...]:
    """(glyph, the word after it) for every line PDFium starts with a lone glyph it could not map to
    Unicode (``FPDFText_HasUnicodeMapError``): a symbol-font bullet that reads as a letter ("I" for
    Beamer's triangle from the msam maths font). An extractor that prints the glyph before the same
    word at a line's start read the bullet as a letter."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    out = []
    pdf = pdfium.PdfDocument(data)
    try:
        for page in pdf:
            textpage = page.get_textpage()
            raw = textpage.get_text_range()
            for m in _LINE_START_GLYPH.finditer(raw):
                if pdfium_c.FPDFText_HasUnicodeMapError(textpage.raw, m.start(1)):
                    out.append((m.group(1), m.group(2)))
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return tuple(out)


_LINE_START_GLYPH = re.compile(r"(?m)^[ \t]*(\S)[ \t]+([^\W\d_]{2,})")


def letter_bullets(data: bytes, text: str) -> int:
    """Lines of ``text`` that start with a symbol bullet read as a letter (:func:`symbol_bullets`)."""
    wanted = {(g, w) for g, w in symbol_bullets(data) if g.isalnum()}
    return sum((m.group(1), m.group(2)) in wanted for m in _LINE_START_GLYPH.finditer(text))


@dataclass
class Tally:
    files: int = 0
    refused: int = 0
    run_together: int = 0
    lost: int = 0
    glyphs: int = 0
    ticks: int = 0
    bullets: int = 0
    words: int = 0
    seconds: float = 0.0

    def count(self, pages: list[str], data: bytes, lost: int | None = None) -> None:
        text = "\n".join(pages)
        self.files += 1
        self.run_together += len(_RUN_TOGETHER.findall(text))
        self.lost += len(_LOST.findall(text)) if lost is None else lost + len(_LOST.findall(text))
        self.glyphs += len(_MARKER_RUN.findall(text))
        self.ticks += tick_runs(text)
        self.bullets += letter_bullets(data, text)
        self.words += len(_WORD.findall(text))


def _pypdf(data: bytes, name: str) -> tuple[list[str], int | None]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages], None


def _pdfminer(data: bytes, name: str) -> tuple[list[str], int | None]:
    from pdfminer.high_level import extract_text

    return extract_text(io.BytesIO(data)).split("\f"), None


def _pdfium(data: bytes, name: str) -> tuple[list[str], int | None]:
    from bench.corpus_labels import raw_pdf_pages

    return raw_pdf_pages(data), None


def _loader(data: bytes, name: str) -> tuple[list[str], int | None]:
    from syllabot.worker.ingest.loaders import load_document

    doc = load_document(data, name, 1 << 30)
    dropped = getattr(doc, "dropped", {})  # an older commit's Document has none
    return [p.text for p in doc.pages], dropped.get("unmended_marks", 0)


EXTRACTORS: dict[str, tuple[str, Callable[[bytes, str], tuple[list[str], int | None]]]] = {
    "pypdf": ("pypdf", _pypdf),
    "pdfminer": ("pdfminer.six", _pdfminer),
    "pypdfium2": ("pypdfium2", _pdfium),
    "loader": ("pypdfium2", _loader),
}


def _version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return ""


def measure(name: str, blobs: list[tuple[bytes, str]], repeat: int = 1) -> Tally | None:
    package, extract = EXTRACTORS[name]
    if not _version(package):
        print(f"{name}: {package} is not installed; skipped", file=sys.stderr)
        return None
    tally = Tally()
    extract(*blobs[0])  # imports and one-time loads (the vocabulary) are no file's cost
    read: list[tuple[list[str], bytes, int | None]] = []
    for run in range(repeat):  # the fastest run: the machine is shared, and others' jobs only slow one
        start = time.perf_counter()
        for data, filename in blobs:
            try:
                pages, lost = extract(data, filename)
            except Exception:  # a scan or a file the extractor cannot read: counted, not measured
                tally.refused += run == 0
                continue
            if run == 0:
                read.append((pages, data, lost))
        seconds = time.perf_counter() - start
        tally.seconds = seconds if run == 0 else min(tally.seconds, seconds)
    for pages, data, lost in read:  # counted outside the timed runs
        tally.count(pages, data, lost)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(EXTRACTORS), default=list(EXTRACTORS))
    parser.add_argument("--repeat", type=int, default=3, help="runs per extractor; the fastest is shown")
    parser.add_argument("--write", action="store_true", help="write docs/EXTRACTION.md")
    args = parser.parse_args(argv)
    files = sorted(DATA.rglob("*.pdf"))
    if not files:
        print(f"no PDFs under {DATA}", file=sys.stderr)
        return 1
    from bench.slide_decks import decks

    corpus = [(path.read_bytes(), path.name) for path in files]
    ours = [(data, name) for name, data in decks().items()]
    rows = []
    for name in args.only:
        package = EXTRACTORS[name][0]
        label = (
            f"{name} ({package} {_version(package)})" if name != "loader" else f"loader ({package} + repairs)"
        )
        for blobs, what in ((corpus, ""), (ours, f"; our {len(ours)} decks")):
            tally = measure(name, blobs, max(1, args.repeat) if not what else 1)
            if tally is None:
                break
            rows.append(_row(f"{label}{what}", tally))
            print(" | ".join(str(v) for v in rows[-1]), flush=True)
    table = markdown_table(
        [
            "extractor",
            "PDFs",
            "run-together (>=22 letters)",
            "lost-glyph words",
            "plot-mark runs (>=3)",
            "tick runs (>=4)",
            "bullets read as a letter",
            "words",
            "seconds",
        ],
        rows,
    )
    print(table)
    if args.write:
        _write(table, len(files))
    return 0


def _row(label: str, tally: Tally) -> list[object]:
    return [
        label,
        f"{tally.files} (+{tally.refused} refused)",
        tally.run_together,
        tally.lost,
        tally.glyphs,
        tally.ticks,
        tally.bullets,
        f"{tally.words:,}",
        f"{tally.seconds:.1f}",
    ]


def _write(table: str, files: int) -> None:
    """Replace the measured table in docs/EXTRACTION.md, keeping the prose around it."""
    begin, end = "<!-- extraction table -->", "<!-- /extraction table -->"
    block = f"{begin}\n{files} PDFs under `../shared/data/`. {machine_stamp()}\n\n{table}\n{end}"
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else f"# Text extraction\n\n{begin}\n{end}\n"
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    DOC.write_text(head + block + tail, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
