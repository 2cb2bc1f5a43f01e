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
import io
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.common import DATA, ROOT, machine_stamp, markdown_table

DOC = ROOT / "docs" / "EXTRACTION.md"
_WORD = re.compile(r"[^\W\d_]+")
_RUN_TOGETHER = re.compile(r"[A-Za-z]{22,}")
_LOST = re.compile(r"\S*[\ufffe\x00]\S*|\(cid:\d+\)")
_MARKERS = "●○■□▲△▼▽◆◇★☆▪▫◦"
_MARKER_RUN = re.compile(f"(?:[{_MARKERS}][ \\t]*){{3,}}")


@dataclass
class Tally:
    files: int = 0
    refused: int = 0
    run_together: int = 0
    lost: int = 0
    glyphs: int = 0
    words: int = 0
    seconds: float = 0.0

    def count(self, pages: list[str], lost: int | None = None) -> None:
        text = "\n".join(pages)
        self.files += 1
        self.run_together += len(_RUN_TOGETHER.findall(text))
        self.lost += len(_LOST.findall(text)) if lost is None else lost + len(_LOST.findall(text))
        self.glyphs += sum(len(re.findall(f"[{_MARKERS}]", m)) for m in _MARKER_RUN.findall(text))
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
    from syllabot.worker.loaders import load_document

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


def measure(name: str, files: list[Path], repeat: int = 1) -> Tally | None:
    package, extract = EXTRACTORS[name]
    if not _version(package):
        print(f"{name}: {package} is not installed; skipped", file=sys.stderr)
        return None
    tally = Tally()
    blobs = [(path.read_bytes(), path.name) for path in files]
    extract(*blobs[0])  # imports and one-time loads (the vocabulary) are no file's cost
    for run in range(repeat):  # the fastest run: the machine is shared, and others' jobs only slow one
        start = time.perf_counter()
        for data, filename in blobs:
            try:
                pages, lost = extract(data, filename)
            except Exception:  # a scan or a file the extractor cannot read: counted, not measured
                tally.refused += run == 0
                continue
            if run == 0:
                tally.count(pages, lost)
        seconds = time.perf_counter() - start
        tally.seconds = seconds if run == 0 else min(tally.seconds, seconds)
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
    rows = []
    for name in args.only:
        tally = measure(name, files, max(1, args.repeat))
        if tally is None:
            continue
        package = EXTRACTORS[name][0]
        label = (
            f"{name} ({package} {_version(package)})" if name != "loader" else f"loader ({package} + repairs)"
        )
        rows.append(
            [
                label,
                f"{tally.files} (+{tally.refused} refused)",
                tally.run_together,
                tally.lost,
                tally.glyphs,
                f"{tally.words:,}",
                f"{tally.seconds:.1f}",
            ]
        )
        print(" | ".join(str(v) for v in rows[-1]), flush=True)
    table = markdown_table(
        [
            "extractor",
            "PDFs",
            "run-together (>=22 letters)",
            "lost-glyph words",
            "plot glyphs left",
            "words",
            "seconds",
        ],
        rows,
    )
    print(table)
    if args.write:
        _write(table, len(files))
    return 0


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
