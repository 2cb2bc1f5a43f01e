"""Slide furniture and figure text in what students are quoted: over ``bench.answers``' replies for the
real courses, the quoted pieces that start with a document's file stem or are mostly symbols and
numbers (a plot's marks or axis, or no word), and "Your materials disagree" notes that quote such a piece.

    python -m bench.quoted_furniture [--split dev|test]

Why: a deck's file stem ("lecture03") or a plot's marks and axis ("● ● ●", "0.00 0.25 0.50") quoted
as an answer reads as garbage, and a plot's axis quoted against a grading slide is a false
disagreement (``worker/ingest/pdf_figures.py``, ``worker/ingest/pdf_repair.without_furniture``).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bench.answers import courses_of, one_course_rows
from bench.common import bench_settings, default_embedder
from bench.extraction import tick_runs

_CITED = re.compile(r"\s*\[\d+(?:,\s*\d+)*\]\s*")
_QUOTED = re.compile(r"'([^']{8,})'")
_WORD = re.compile(r"[^\W\d_]{2,}")
_MARK_RUN = re.compile(r"(?:[\u25a0-\u25ff\u2600-\u26ff\u2700-\u27bf]\s*){3,}")


def figure_like(piece: str) -> bool:
    """A plot's text: three marks in a row ("● ● ●"), an axis's ticks ("0.00 0.25 0.50 0.75"), or
    no word at all (" . , # ."). A table of marks or a code listing with words is not."""
    return bool(_MARK_RUN.search(piece)) or tick_runs(piece) > 0 or not _WORD.search(piece)


def stem_first(piece: str, stems: set[str]) -> bool:
    """The piece opens with a file stem that is no word ("lecture03", "08-numpy-1"), not as the
    citation label the answer itself puts before a second source ("lecture03, p. 2: …")."""
    words = piece.split()
    if not words or re.match(r"\S+, pp?\. \d", piece):
        return False
    first = words[0].lower().strip(".,:;")
    return first in stems and not first.isalpha()


def pieces(reply: str) -> list[str]:
    """The reply's quoted pieces: the text before each citation marker."""
    parts = _CITED.split(reply)
    return [p.strip() for p in parts[:-1] if p.strip()] if len(parts) > 1 else []


def count(split: str) -> dict[str, int]:
    from bench.corpus_labels import COURSE_FOLDERS, course_files

    embedder, settings = default_embedder(), bench_settings()
    out = {"replies": 0, "pieces": 0, "start with a file stem": 0, "figure text": 0,
           "disagree notes from figure text": 0}  # fmt: skip
    for slug in courses_of(split):
        stems = {Path(p).stem.lower() for p in course_files(COURSE_FOLDERS[slug][0])}
        for row in one_course_rows(slug, embedder, settings):
            out["replies"] += 1
            for piece in pieces(row.text):
                body = piece.split(":", 1)[1] if piece.startswith("Your materials say:") else piece
                out["pieces"] += 1
                if stem_first(body.strip(), stems):
                    out["start with a file stem"] += 1
                    print(f"  stem: {body[:120]!r}")
                if figure_like(body):
                    out["figure text"] += 1
                    print(f"  figure: {body[:120]!r}")
            if "disagree" in row.text and any(figure_like(q) for q in _QUOTED.findall(row.text)):
                out["disagree notes from figure text"] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    args = parser.parse_args(argv)
    print(args.split, count(args.split))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
