"""The worker's in-memory snapshot cache: least recently used collections go first, within a byte budget.

Why a budget rather than a count: one deployment serves a whole department, hundreds of classes,
and a worker that kept every snapshot it ever loaded grew without bound; collections differ by two
orders of magnitude in size, so "keep 100" means nothing for memory. Each snapshot is weighed when
it enters (:func:`snapshot_bytes`: the matrix exactly, the chunks and the keyword index as Python
really stores them), and the least recently used ones are dropped until the sum fits
``SYLLABOT_SNAPSHOT_CACHE_MB``.

A snapshot bigger than the whole budget is still served and kept (alone): refusing it would turn a
sizing mistake into an outage, and not keeping it would make every question to that collection pay
a full load. It is logged (``snapshot_over_budget``) so the operator raises the budget.

The counters (hits, misses, evictions, load time) are read by the Prometheus collector
(``worker/ops/metrics.py``) and published with the heartbeat for ``syllabot doctor``.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from syllabot.worker.indexes.heap import after_snapshot_load

if TYPE_CHECKING:
    from syllabot.worker.indexes.index import IndexSnapshot
    from syllabot.worker.text.keyword import KeywordIndex

log = logging.getLogger("syllabot.cache")

#: Chunks weighed one by one; beyond this a spread sample is weighed and scaled (texts are always
#: counted exactly: they are most of the weight and vary the most).
CHUNK_SAMPLE = 32
#: A Python int object (a term's number in the keyword index's table).
_INT = 28

#: A small numpy array's object header (``sys.getsizeof`` of an empty one).
_ARRAY_HEADER = 112

#: Resident bytes per byte Python reports for a snapshot: the allocator's share (small objects
#: rounded up to its size classes, partly filled pools, malloc's own headers), which neither
#: ``sys.getsizeof`` nor ``tracemalloc`` sees. Measured as the slope of peak RSS against the cache's
#: count between its 128 and 512 MB budgets (``python -m bench.load_collections``: 1.036 on
#: 2026-12-03, in two sessions), so a budget bounds what the snapshots really cost.
ALLOCATOR_SHARE = 1.04


def _array_bytes(array: Any) -> int:
    """A numpy array: its data plus its object header."""
    return int(getattr(array, "nbytes", 0)) + _ARRAY_HEADER


def _chunk_overhead(chunk: Any, seen: set[int]) -> int:
    """One chunk's bytes other than its text: the (slotted) object and each field's value, a value
    object shared with an earlier chunk (``seen``: ids) counted once."""
    total = sys.getsizeof(chunk)
    for name in chunk.__slots__:
        if name != "text":
            value = getattr(chunk, name)
            if id(value) not in seen:
                seen.add(id(value))
                total += sys.getsizeof(value)
    return total


def snapshot_bytes(snapshot: IndexSnapshot) -> int:
    """Resident bytes of a loaded snapshot: matrix + chunks + keyword index (+ masks), with the
    allocator's share (:data:`ALLOCATOR_SHARE`).

    What Python allocates is estimated within a few percent (``tests/test_snapshot_cache.py`` checks
    it against ``tracemalloc``): exact for arrays and chunk texts, sampled for the small fields of
    very large snapshots.
    """
    total = _array_bytes(snapshot.matrix) + _array_bytes(snapshot.superseded)
    chunks = snapshot.chunks
    total += sys.getsizeof(chunks) + sum(sys.getsizeof(c.text) for c in chunks)
    seen: set[int] = set()
    if len(chunks) <= CHUNK_SAMPLE:
        total += sum(_chunk_overhead(c, seen) for c in chunks)
    elif chunks:
        step = len(chunks) / CHUNK_SAMPLE
        sample = [chunks[int(i * step)] for i in range(CHUNK_SAMPLE)]
        total += int(sum(_chunk_overhead(c, seen) for c in sample) * len(chunks) / CHUNK_SAMPLE)
    return int((total + keyword_index_bytes(snapshot.keyword)) * ALLOCATOR_SHARE)


def keyword_index_bytes(keyword: KeywordIndex) -> int:
    """Resident bytes of a keyword index: the term table (its keys, the dict, the terms' numbers
    past CPython's cached small ints) and the CSR arrays; counted in bulk, since weighing must not
    cost more than a fraction of the load it follows."""
    terms = keyword.terms
    total = sys.getsizeof(terms) + sum(map(sys.getsizeof, terms)) + max(0, len(terms) - 257) * _INT
    return total + sum(map(_array_bytes, (keyword.doc_len, keyword.offsets, keyword.rows, keyword.tfs)))


@dataclass(frozen=True)
class CacheStats:
    """What the cache holds and has done since the worker started."""

    budget_bytes: int
    bytes: int
    entries: int
    hits: int
    misses: int
    evictions: int
    loads: int
    load_seconds: float  # total over every load (Redis read + decode + weighing)
    over_budget: int  # snapshots served although bigger than the whole budget

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


@dataclass
class _Entry:
    snapshot: IndexSnapshot
    size: int


class SnapshotCache:
    """Collection -> current snapshot, LRU within ``budget_bytes``. Thread-safe.

    Loading happens outside the cache's lock, under a per-collection lock: a cold 100k-chunk
    collection never holds up questions to collections already in memory, and two questions to the
    same cold collection load it once.
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = max(0, int(budget_bytes))
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._load_locks: dict[str, threading.Lock] = {}
        self._hits = self._misses = self._evictions = self._loads = self._over = 0
        self._load_seconds = 0.0

    # --- reads ----------------------------------------------------------------------------------
    def get(self, collection: str, version: str) -> IndexSnapshot | None:
        """The cached snapshot when it is this version (and mark it recently used), else None."""
        with self._lock:
            entry = self._entries.get(collection)
            if entry is None or entry.snapshot.version != version:
                return None
            self._entries.move_to_end(collection)
            self._hits += 1
            return entry.snapshot

    def get_or_load(
        self, collection: str, version: str, load: Callable[[], IndexSnapshot | None]
    ) -> IndexSnapshot | None:
        """The cached snapshot of ``version``, else ``load()`` it (timed, logged) and keep it."""
        cached = self.get(collection, version)
        if cached is not None:
            return cached
        with self._lock:
            load_lock = self._load_locks.setdefault(collection, threading.Lock())
        with load_lock:
            cached = self.get(collection, version)  # another thread loaded it while we waited
            if cached is not None:
                return cached
            t0 = time.perf_counter()
            snapshot = load()
            if snapshot is None:
                return None
            size = snapshot_bytes(snapshot)
            seconds = time.perf_counter() - t0
            self._put(collection, snapshot, size, seconds)
            after_snapshot_load()
            return snapshot

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                budget_bytes=self.budget_bytes,
                bytes=self._bytes,
                entries=len(self._entries),
                hits=self._hits,
                misses=self._misses,
                evictions=self._evictions,
                loads=self._loads,
                load_seconds=round(self._load_seconds, 6),
                over_budget=self._over,
            )

    def collections(self) -> list[str]:
        """Cached collections, least recently used first."""
        with self._lock:
            return list(self._entries)

    # --- writes ---------------------------------------------------------------------------------
    def _put(self, collection: str, snapshot: IndexSnapshot, size: int, seconds: float) -> None:
        evicted: list[tuple[str, int]] = []
        with self._lock:
            self._misses += 1
            self._loads += 1
            self._load_seconds += seconds
            old = self._entries.pop(collection, None)
            if old is not None:  # an older version of the same collection: replaced, not evicted
                self._bytes -= old.size
            while self._entries and self._bytes + size > self.budget_bytes:
                name, entry = self._entries.popitem(last=False)
                self._bytes -= entry.size
                self._evictions += 1
                evicted.append((name, entry.size))
            self._entries[collection] = _Entry(snapshot, size)
            self._bytes += size
            over = size > self.budget_bytes
            if over:
                self._over += 1
            held, entries = self._bytes, len(self._entries)
        event = {
            "event": "snapshot_load",
            "collection": collection,
            "version": snapshot.version,
            "chunks": len(snapshot),
            "bytes": size,
            "load_ms": round(seconds * 1000, 2),
            "evicted": [name for name, _ in evicted],
            "cache_bytes": held,
            "cache_entries": entries,
            "budget_bytes": self.budget_bytes,
        }
        log.info(json.dumps(event))
        if over:
            log.warning(
                json.dumps(
                    {
                        "event": "snapshot_over_budget",
                        "collection": collection,
                        "bytes": size,
                        "budget_bytes": self.budget_bytes,
                        "advice": "raise SYLLABOT_SNAPSHOT_CACHE_MB; the snapshot is served and kept alone",
                    }
                )
            )

    def drop(self, collection: str) -> None:
        """Forget one collection (it was dropped): its memory is free at once, not at eviction."""
        with self._lock:
            entry = self._entries.pop(collection, None)
            if entry is not None:
                self._bytes -= entry.size

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


#: A worker's published cache figures outlive its last heartbeat by this long (then vanish).
STATS_TTL_S = 30


async def publish_stats(redis_client: Any, key: str, stats: CacheStats) -> None:
    """Write a worker's cache figures where ``syllabot doctor`` reads them (one SET per heartbeat)."""
    await redis_client.set(key, stats.to_json(), ex=STATS_TTL_S)
