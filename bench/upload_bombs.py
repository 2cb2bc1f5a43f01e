"""Uploads that expand: what a refused decompression bomb costs the worker (peak memory, time).

    python -m bench.upload_bombs [--no-write]

Each DOCX is built here (a real Word file whose ``word/document.xml`` is padded with one paragraph
repeated: deflate shrinks it about a thousand times), then loaded by ``load_document`` in a fresh
process, which reports its peak RSS (``ru_maxrss``) before and after and the seconds it took.
Writes the ``upload_bombs`` section of docs/benchmarks/results.md.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import zipfile

from bench.common import machine_stamp, publish

#: (label, uncompressed XML bytes): the issue's 78 KB (25 MB XML) and 1.2 MB (400 MB XML) files,
#: and an honest 200 KB document for comparison.
CASES = [
    ("honest, 200 KB of XML", 200_000),
    ("bomb, 25 MB of XML", 25 << 20),
    ("bomb, 400 MB of XML", 400 << 20),
]

_PARAGRAPH = b"<w:p><w:r><w:t>deadlock deadlock deadlock</w:t></w:r></w:p>"


def docx_bomb(xml_bytes: int) -> bytes:
    """A real DOCX whose word/document.xml is ``xml_bytes`` of whole paragraphs (valid XML)."""
    import docx

    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("Module 1: deadlocks.")
    document.save(buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename != "word/document.xml":
                bomb.writestr(item, data)
                continue
            head, _, tail = data.partition(b"</w:body>")
            with bomb.open("word/document.xml", "w", force_zip64=True) as member:
                member.write(head)
                count = max(1, (xml_bytes - len(head) - len(tail)) // len(_PARAGRAPH))
                block = 1 << 14
                for start in range(0, count, block):
                    member.write(_PARAGRAPH * min(block, count - start))
                member.write(b"</w:body>" + tail)
    return out.getvalue()


_PROBE = """
import json, resource, sys, time
from syllabot.worker.ingest.loaders import IngestError, load_document
data = sys.stdin.buffer.read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
try:
    doc = load_document(data, "notes.docx", 20 * 1024 * 1024)
    outcome = f"loaded, {sum(len(p.text) for p in doc.pages):,} characters"
except IngestError as exc:
    outcome = f"refused: {type(exc).__name__}"
seconds = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"outcome": outcome, "seconds": seconds, "before_mb": before / 1024, "after_mb": after / 1024}))
"""


def measure(data: bytes) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE], input=data, capture_output=True, check=True)
    return dict(json.loads(done.stdout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/ alone")
    args = parser.parse_args(argv)
    lines = [
        "## Uploads that expand",
        "",
        f"`python -m bench.upload_bombs` — {machine_stamp()} Each file loaded by `load_document` in a fresh "
        "process with the default limits; peak RSS of that process before and after the load.",
        "",
        "| file | DOCX size | outcome | time | peak RSS before → after |",
        "|---|---:|---|---:|---:|",
    ]
    for label, xml_bytes in CASES:
        data = docx_bomb(xml_bytes)
        row = measure(data)
        lines.append(
            f"| {label} | {len(data) / 1024:,.0f} KB | {row['outcome']} | {row['seconds'] * 1000:,.1f} ms | "
            f"{row['before_mb']:.0f} → {row['after_mb']:.0f} MB |"
        )
    publish("upload_bombs", lines, write=not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
