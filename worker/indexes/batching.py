"""Micro-batching: items submitted within a few milliseconds of each other are processed in one call.

Why: a burst of questions reaches a worker within milliseconds, and embedding them one call each
pays the embedder's per-call cost (tokenising, onnxruntime's dispatch, a thread hop) once per
question while the calls contend for the same cores. One call for the questions that arrived
together does the same arithmetic once, with the same results (``embed_queries`` gives each text
the vector it would get alone).

How items are grouped (continuous batching):

* when fewer than ``max_in_flight`` batches run, the first item waits up to ``max_wait_s`` for
  company, or until ``max_size`` items are waiting;
* while ``max_in_flight`` batches run, new items gather; when one finishes, the items waiting
  (up to ``max_size``) go at once -- they have waited for that whole batch already;
* an error of a batch reaches every item of that batch, and only those.

``max_size=1`` turns batching off: every item is its own call, started at once.

The batch function runs through ``run`` (an executor hop, in the worker); it must return one
result per item, in order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger("syllabot.worker")


@dataclass
class BatchStats:
    """Counts since start, for logs, metrics and tests: how well items are being grouped."""

    batches: int = 0
    items: int = 0
    largest: int = 0

    def record(self, size: int) -> None:
        self.batches += 1
        self.items += size
        self.largest = max(self.largest, size)


class MicroBatcher(Generic[T, R]):
    """Groups concurrent :meth:`submit` calls into calls of ``process`` on lists of items."""

    def __init__(
        self,
        process: Callable[[list[T]], Sequence[R]],
        run: Callable[[Callable[[list[T]], Sequence[R]], list[T]], Awaitable[Sequence[R]]],
        *,
        max_size: int,
        max_wait_s: float,
        max_in_flight: int = 1,
    ) -> None:
        if max_size < 1:
            raise ValueError(f"max_size must be >= 1, got {max_size}")
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        if max_wait_s < 0:
            raise ValueError(f"max_wait_s must be >= 0, got {max_wait_s}")
        self.process = process
        self.run = run
        self.max_size = max_size
        self.max_wait_s = max_wait_s
        self.max_in_flight = max_in_flight
        self.stats = BatchStats()
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._in_flight = 0
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, item: T) -> R:
        """The result of ``process`` for this item, computed in a batch with its neighbours in time."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        if self.max_size == 1 or len(self._waiting) >= self.max_size:
            self._start_batches()
        elif self._timer is None and self._in_flight < self.max_in_flight:
            self._timer = asyncio.get_running_loop().call_later(self.max_wait_s, self._on_timer)
        return await future

    def _on_timer(self) -> None:
        self._timer = None
        self._start_batches()

    def _start_batches(self) -> None:
        """Start as many batches as there are free slots and waiting items (full ones first)."""
        while self._waiting and self._in_flight < self.max_in_flight:
            batch, self._waiting = self._waiting[: self.max_size], self._waiting[self.max_size :]
            batch = [(item, future) for item, future in batch if not future.cancelled()]
            if not batch:
                continue
            self._in_flight += 1
            task = asyncio.get_running_loop().create_task(self._run_batch(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if not self._waiting and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _run_batch(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        items = [item for item, _ in batch]
        self.stats.record(len(items))
        try:
            results = await self.run(self.process, items)
            if len(results) != len(items):
                raise RuntimeError(f"a batch of {len(items)} items returned {len(results)} results")
        except asyncio.CancelledError:  # the worker is closing: nobody gets a result
            for _, future in batch:
                future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - every waiter of this batch gets it; the next batch runs
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
        else:
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)
        finally:
            self._in_flight -= 1
            # Whatever gathered meanwhile has waited a whole batch already: no further wait.
            self._start_batches()
