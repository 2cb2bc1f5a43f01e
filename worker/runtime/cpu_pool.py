"""A worker's CPU for questions: one thread per core, and the questions' embeddings in batches.

Why: a worker holds many questions at once (``SYLLABOT_WORKER_MAX_JOBS``), most of them, with an
LLM, waiting for a reply. Their CPU work -- preparing the query, embedding it, scoring the index,
the extractive answer -- runs here, on ``SYLLABOT_WORKER_CPU_THREADS`` threads (one per core by
default), so two cores run two things at a time instead of dozens of threads slowing each other
down, and a question waiting for its LLM holds no thread at all. Questions that reach the embedder
together share one embedding call (:class:`~worker.indexes.batching.MicroBatcher`; ``embed_queries``
gives each the vector it gets alone, so rankings do not change).

Writes (ingest, reindex, remove) keep their own pool (``worker.runtime.jobs``): a long build never takes
a question's thread.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from syllabot.shared.config import Settings
from syllabot.worker.indexes.batching import MicroBatcher

if TYPE_CHECKING:
    import numpy as np

    from syllabot.shared.threads import Turn
    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.indexes.retrieval import SearchResult

_T = TypeVar("_T")


def cores() -> int:
    """The cores this process may use (its CPU affinity, where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class CpuPool:
    """The worker's question threads and its query batcher (one of each per worker process)."""

    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.engine = engine
        self.threads = settings.worker_cpu_threads or cores()
        self._executor = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="syllabot-cpu")
        # As many embedding calls at a time as threads: onnxruntime spreads one small call over the
        # cores badly (a question alone: 3.0 ms on one thread, 3.1 ms on two), so two calls side by
        # side beat one call twice the size (bench.embed_speed --batches). Questions arriving while
        # both run gather into the next calls.
        self.batcher: MicroBatcher[str, np.ndarray] = MicroBatcher(
            self._embed,
            self.run,
            max_size=settings.query_batch_max if settings.query_batching else 1,
            max_wait_s=settings.query_batch_wait_ms / 1000.0,
            max_in_flight=self.threads,
        )

    def _embed(self, texts: list[str]) -> list[np.ndarray]:
        return list(self.engine.embedder.embed_queries(texts))

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` on one of the pool's threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args))

    async def search(
        self, collection: str, question: str, k: int | None = None, turns: Sequence[Turn] = ()
    ) -> SearchResult:
        """``Engine.search``, with the query embedded in a batch with its neighbours in time.

        ``embed_ms`` is from the question's arrival at the batcher to its vector: the wait for
        company and for the batch before it included, as the asker experiences it.
        """
        from syllabot.worker.indexes.retrieval import SearchResult

        pending = await self.run(self.engine.begin_search, collection, question, turns)
        if isinstance(pending, SearchResult):
            return pending
        t0 = time.perf_counter()
        if pending.embedder is None:
            vector = await self.batcher.submit(pending.query.text)
        else:  # a collection still on the earlier embedder (Engine.embedder_for): its own model
            vector = await self.run(pending.embedder.embed_query, pending.query.text)
        embed_ms = (time.perf_counter() - t0) * 1000
        return await self.run(self.engine.finish_search, pending, vector, embed_ms, k)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
