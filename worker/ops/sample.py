"""The sample corpus shipped inside the distribution (package ``syllabot.corpus``).

A fresh install has something to ask about: `syllabot ask` with nothing indexed yet answers from
the ``sample`` collection, indexing these files into it first, and the terminal says so. The
samples live only there: never in ``default`` or any collection a user indexes into, so a bike
shop's warranty can never answer a question about a syllabus.
"""

from __future__ import annotations

from importlib import resources

from syllabot.shared.formats import is_document_name
from syllabot.shared.schema import IngestReport
from syllabot.worker.indexes.engine import Engine, Progress


def sample_files() -> list[tuple[str, bytes]]:
    """(file name, bytes) of every shipped sample document, sorted by name."""
    root = resources.files("syllabot.corpus")
    files = [
        (entry.name, entry.read_bytes())
        for entry in root.iterdir()
        if entry.is_file() and is_document_name(entry.name) and entry.name != "README.md"
    ]
    return sorted(files)


def seed_if_empty(engine: Engine, collection: str, progress: Progress | None = None) -> IngestReport | None:
    """Index the sample corpus into ``collection`` when it has no documents; None when it had some."""
    if engine.store.documents(collection):
        return None
    return engine.ingest(collection, sample_files(), who="sample-corpus", progress=progress)
