"""Embedding that overlaps reading: passages are embedded on a background thread while the build
is still extracting and chunking the next documents.

Why: indexing is embedding-bound (76-97% of its time in the embedder, ``docs/BENCHMARKS.md``), yet
a build used to extract and chunk every file first and only then start the embedder, so PDF
extraction (a fifth of the time for real syllabi) was added to the embedding instead of hidden
under it. onnxruntime releases the GIL while it computes, so the reader (Python) and the embedder
(native code) really run at once.

* **Bounded.** Passages wait in a queue of at most :data:`QUEUE_TEXTS`; a reader far ahead of the
  embedder blocks instead of holding a whole term's chunks twice.
* **Less padding.** Passages are measured in tokens as they arrive (the embedder's
  ``token_lengths``, else characters). While reading goes on, each batch is the run of similar
  lengths that pads least (:func:`tightest_run`), cut from a pool of :data:`POOL_BATCHES` batches'
  worth; at the end the rest goes longest first. Every vector goes back to its passage's place, and
  the vectors are the same as in any other order (within float tolerance: ``tests/test_pipeline.py``).
* **Progress keeps flowing.** While documents are read the build reports ``reading``; once
  :meth:`EmbedPipeline.finish` knows every passage, each embedder call reports ``embedding
  done/total`` (passages embedded during reading, and those the index keeps, count at once), in
  chunks the index will store: the last count is the report's number of chunks.
* **A cancel is seen within a second.** The cancel check runs before every embedder call, and a
  batch is cut into calls sized by time, not by count: each call holds no more passages than the
  embedder, at the speed measured on the calls before it, embeds in :data:`CHECK_EVERY_S`. A
  batch of 32 long passages for a large model on a slow, shared machine took ~10 s in one call;
  now a Ctrl-C waits for one short call, whatever the machine (the first call holds one passage,
  to measure).
* Vectors are kept by passage text: a passage whose text changes after reading (a course tail
  relabelled by a document family, ``worker.ingest.families.relink``) is embedded again under its final text,
  so the index is exactly what embedding the final chunks would give.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from types import TracebackType

import numpy as np

from syllabot.worker.indexes.embedders.base import Embedder

#: progress(stage, done, total), as in worker.indexes.engine
Progress = Callable[[str, int, int], None]

#: Passages the consumer takes off the queue at a time.
WINDOW = 256
#: A batch is cut from a pool of this many batches' worth of passages while reading goes on.
POOL_BATCHES = 2
#: Passages read ahead of the embedder at most.
QUEUE_TEXTS = 4 * WINDOW
#: Seconds one embedder call may take, at the speed measured so far: the most that passes between
#: two cancel checks while embedding (a Ctrl-C is seen within this plus the worker's poll).
CHECK_EVERY_S = 0.5
_END = None


def tightest_run(ascending: Sequence[int], size: int) -> int:
    """Start of the ``size`` consecutive lengths (sorted ascending) that pad least as one batch:
    the least ``size * longest - sum``. The whole list when it is no longer than ``size``."""
    if len(ascending) <= size:
        return 0
    prefix = [0]
    for n in ascending:
        prefix.append(prefix[-1] + n)
    waste = [
        size * ascending[i + size - 1] - (prefix[i + size] - prefix[i])
        for i in range(len(ascending) - size + 1)
    ]
    return min(range(len(waste)), key=waste.__getitem__)


class EmbedPipeline:
    """A consumer thread that embeds the passages :meth:`feed` gives it; :meth:`finish` collects.

    Use as a context manager: leaving the block (normally or by an exception) stops the thread.
    """

    def __init__(
        self,
        embedder: Embedder,
        batch_size: int = 32,
        progress: Progress | None = None,
        window: int = WINDOW,
        check: Callable[[], None] | None = None,
        check_every_s: float | None = None,
    ) -> None:
        """``check``: called before each embedder call; what it raises (a cancelled build) ends the
        embedding and is re-raised by :meth:`finish`. ``check_every_s``: how long one call may take
        at the measured speed (default :data:`CHECK_EVERY_S`)."""
        self.embedder = embedder
        self._check = check
        self.check_every_s = CHECK_EVERY_S if check_every_s is None else check_every_s
        #: Seconds per padded token (or character) of the calls so far; None before the first.
        self._per_token: float | None = None
        self.batch_size = max(1, batch_size)
        self.window = max(self.batch_size, window)
        #: Passages held back while reading, so each batch can be cut from similar lengths.
        self.pool_size = POOL_BATCHES * self.batch_size
        self._progress = progress
        self._queue: queue.Queue[str | None] = queue.Queue(maxsize=max(QUEUE_TEXTS, self.window))
        self._fed: set[str] = set()
        self._vectors: dict[str, np.ndarray] = {}
        self._error: BaseException | None = None
        self._abort = threading.Event()
        #: Set by finish(): each passage wanted and how many times; from then on, calls report progress.
        self._wanted: Counter[str] | None = None
        self._total: int | None = None
        self._done = 0
        self._lock = threading.Lock()
        self._report_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="syllabot-embed", daemon=True)
        self._thread.start()

    # --- the reader's side ----------------------------------------------------------------------
    def feed(self, texts: Sequence[str]) -> None:
        """Queue passages for embedding (blocks while the queue is full; duplicates are embedded once)."""
        for text in texts:
            if text in self._fed:
                continue
            self._fed.add(text)
            while not self._put(text):
                if self._error is not None or self._abort.is_set():
                    return

    def finish(self, texts: Sequence[str], kept: int = 0) -> np.ndarray:
        """The vectors of ``texts`` in their order: those not fed yet are embedded now.

        Reports ``embedding done/total`` from here on, counting what the index will store: every
        one of ``texts`` (a passage repeated in two places counts twice, as it is stored twice) plus
        ``kept``, the passages the index keeps with their vectors, which count as done at once. The
        last count is the index's number of chunks.
        """
        wanted = Counter(texts)
        with self._lock:
            self._wanted = wanted
            self._total = kept + len(texts)
            self._done = kept + sum(n for text, n in wanted.items() if text in self._vectors)
        self._report()
        self.feed(list(dict.fromkeys(texts)))
        self._stop()
        if self._error is not None:
            raise self._error
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack([self._vectors[t] for t in texts])

    def _put(self, item: str | None) -> bool:
        try:
            self._queue.put(item, timeout=0.1)
        except queue.Full:
            return False
        return True

    def _stop(self) -> None:
        while self._thread.is_alive() and not self._put(_END):
            pass
        self._thread.join()

    def __enter__(self) -> EmbedPipeline:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread.is_alive():
            self._abort.set()
            self._stop()

    # --- the embedder's side --------------------------------------------------------------------
    def _run(self) -> None:
        pool: list[tuple[int, str]] = []  # (tokens, passage) waiting to be embedded
        ended = False
        while not ended:
            arrived = [self._queue.get()]
            while len(arrived) < self.window:  # and whatever else is waiting, without blocking
                try:
                    arrived.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            ended = _END in arrived
            if self._abort.is_set():
                pool.clear()
                continue
            texts = [t for t in arrived if t is not None]
            if texts and self._error is None:
                pool += zip(self._lengths(texts), texts, strict=True)
            # While reading goes on, embed only a batch of passages of nearly one length, chosen
            # from a pool of several batches; at the end, the rest longest first.
            while not ended and len(pool) >= self.pool_size and self._error is None:
                pool.sort(key=lambda p: p[0])
                start = tightest_run([n for n, _ in pool], self.batch_size)
                batch = pool[start : start + self.batch_size]
                del pool[start : start + self.batch_size]
                self._embed(batch)
            if ended and pool:
                pool.sort(key=lambda p: p[0], reverse=True)
                for start in range(0, len(pool), self.batch_size):
                    self._embed(pool[start : start + self.batch_size])
                pool = []

    def _lengths(self, texts: list[str]) -> Sequence[int]:
        measure: Callable[[Sequence[str]], Sequence[int]] | None = getattr(
            self.embedder, "token_lengths", None
        )
        try:
            return measure(texts) if measure is not None else [len(t) for t in texts]
        except Exception as exc:  # noqa: BLE001 - re-raised in the reader by finish()
            self._error = exc
            return [0] * len(texts)

    def _embed(self, batch: list[tuple[int, str]]) -> None:
        """Embed ``batch`` ((tokens, passage) pairs) in calls sized by time, checking before each."""
        while batch and self._error is None:
            n = self._fitting(batch)
            self._call(batch[:n])
            batch = batch[n:]

    def _fitting(self, batch: Sequence[tuple[int, str]]) -> int:
        """How many of ``batch``'s first passages one call embeds within :attr:`check_every_s` at
        the speed measured so far (padded to the longest of them); one at least, one before any
        call was measured."""
        if self._per_token is None:
            return 1
        longest = 1
        for n, (tokens, _) in enumerate(batch):
            longest = max(longest, tokens)
            if n and (n + 1) * longest * self._per_token > self.check_every_s:
                return n
        return len(batch)

    def _call(self, batch: Sequence[tuple[int, str]]) -> None:
        texts = [t for _, t in batch]
        try:
            if self._check is not None:
                self._check()
            started = time.perf_counter()
            vectors = self.embedder.embed_documents(texts)
            took = time.perf_counter() - started
        except Exception as exc:  # noqa: BLE001 - re-raised in the reader by finish()
            self._error = exc
            return
        per_token = took / (len(texts) * max(1, *(n for n, _ in batch)))
        # Slower at once, faster by halves: one quick call on a busy machine does not make the
        # next call long.
        known = self._per_token
        self._per_token = per_token if known is None or per_token > known else (known + per_token) / 2
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                if text not in self._vectors and self._wanted is not None:
                    self._done += self._wanted[text]
                self._vectors[text] = vector
            report = self._wanted is not None
        if report:
            try:
                self._report()
            except Exception as exc:  # noqa: BLE001 - re-raised in the reader by finish()
                self._error = exc

    def _report(self) -> None:
        if self._progress is None or self._total is None:
            return
        with self._report_lock:  # one call at a time, counts never going back
            with self._lock:
                done, total = self._done, self._total
            self._progress("embedding", done, total)
