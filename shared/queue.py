"""The queue client: the only way front-ends talk to workers.

INTERFACE STUB — implemented under issue 3 ("Worker and queue"). Front-ends code against exactly
these names; the implementation must keep them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from shared.config import Settings
from shared.schema import Answer, AskRequest, IngestReport, SourceInfo


class QueueError(RuntimeError):
    """Base class: every failure a front-end must turn into a message for the user."""


class RedisUnreachable(QueueError):
    """Redis did not answer."""


class NoWorker(QueueError):
    """No worker is running (no live heartbeat), so nothing would ever pick the job up."""


class QueueTimeout(QueueError):
    """A worker took the job but no result came within the timeout."""


class JobFailed(QueueError):
    """The worker ran the job and it raised; the message is the worker's, fit to show an admin."""


ProgressCallback = Callable[[dict], Awaitable[None]]


class QueueClient:
    """Enqueue a job and await its result.

    ``progress`` callbacks receive dicts like ``{"stage": "embedding", "done": 120, "total": 300}``.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def connect(self) -> None: ...

    async def close(self) -> None: ...

    async def ask(self, request: AskRequest, timeout: float | None = None) -> Answer:
        raise NotImplementedError

    async def ingest(
        self, collection: str, filename: str, data: bytes, who: str,
        progress: ProgressCallback | None = None, timeout: float | None = None,
    ) -> IngestReport:
        raise NotImplementedError

    async def reindex(
        self, collection: str, who: str, progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> IngestReport:
        raise NotImplementedError

    async def sources(self, collection: str, timeout: float | None = None) -> list[SourceInfo]:
        raise NotImplementedError

    async def remove(self, collection: str, doc_id: str, who: str, timeout: float | None = None) -> IngestReport:
        raise NotImplementedError
