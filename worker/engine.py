"""The retrieval engine: one per process, holding the embedder and the per-collection index cache.

INTERFACE STUB — being implemented now (issue 2). Synchronous on purpose: the worker's arq jobs
call it through ``asyncio.to_thread`` so CPU-heavy work stays off the event loop, and the CLI calls
it directly.
"""

from __future__ import annotations

from collections.abc import Callable

from shared.config import Settings
from shared.schema import Hit, IngestReport, SourceInfo

#: progress(stage, done, total), e.g. ("embedding", 120, 300)
Progress = Callable[[str, int, int], None]


class SearchResult:
    """Hits plus what the answerer and the logs need about how they were found."""

    hits: list[Hit]
    index_version: str | None
    embed_ms: float
    search_ms: float
    fallback: bool  # True when nothing cleared the threshold and the best chunks were returned anyway


class Engine:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def ingest(self, collection: str, files: list[tuple[str, bytes]], who: str = "cli",
               progress: Progress | None = None) -> IngestReport:
        """Store the given files in Redis and rebuild the collection's index (atomic swap)."""
        raise NotImplementedError

    def reindex(self, collection: str, progress: Progress | None = None) -> IngestReport:
        raise NotImplementedError

    def remove(self, collection: str, doc_id: str) -> IngestReport:
        raise NotImplementedError

    def sources(self, collection: str) -> list[SourceInfo]:
        raise NotImplementedError

    def search(self, collection: str, question: str, k: int | None = None,
               include_superseded: bool = False) -> SearchResult:
        raise NotImplementedError
