"""Keeping Python's cyclic garbage collector off the snapshots a worker holds.

Why: a worker serving hundreds of collections holds hundreds of thousands of long-lived objects
(chunks, catalogs, keyword indexes), and every full (generation 2) collection walks all of them:
~50 ms with 500 collections cached, a pause for every question in flight, and 45 such pauses over
1,000 first questions (``python -m bench.load_collections``: first questions p99 55 ms, max 58 ms;
with this module p99 15 ms, max 22 ms, the same RSS). Snapshots hold no reference cycles, so
after a load the process's objects go to the permanent generation (``gc.freeze``), which
collections skip; reference counting still frees them when the cache evicts them.

The cost: cyclic garbage-to-be that is alive at a freeze (an in-flight job's objects, say) would
never be collected. Two things bound it: the young generations are collected just before each
freeze (most such garbage is young), and when the frozen count has doubled since the last full
collection (by at least :data:`REFREEZE_MIN_GROWTH` objects), one full collection runs over
everything -- the old pause, paid once per doubling instead of every few loads -- and is logged.

Only a worker process turns this on (:func:`enable`, in ``worker.main.run_worker``): the CLI, the
tests' in-process workers and the benchmarks load a few snapshots, and their garbage collection
stays as Python ships it unless they enable it themselves.
"""

from __future__ import annotations

import gc
import logging
import threading
import time

log = logging.getLogger("syllabot.cache")

#: A full collection over the frozen objects is due when their count has doubled *and* grown by
#: at least this many since the last one (so a small process does not collect after every load).
REFREEZE_MIN_GROWTH = 200_000
#: Loads between two looks at the frozen count: counting walks the whole frozen list (~3 ms with
#: 500 collections cached), which every load paying would put back a third of a first question.
CHECK_EVERY = 32

_lock = threading.Lock()
_enabled = False
_baseline = 0  # frozen objects right after the last full collection
_loads = 0  # since the last look at the frozen count


def enable() -> None:
    """Freeze after every snapshot load from now on (a worker process's start: what it holds then,
    its modules, is collected once and frozen too)."""
    global _enabled, _baseline
    with _lock:
        _enabled = True
        gc.collect()
        gc.freeze()
        _baseline = gc.get_freeze_count()
    log.info("garbage collector: snapshots frozen after each load (%d objects frozen at start)", _baseline)


def disable() -> None:
    """Stop freezing and return every frozen object to the collector (tests, between workers)."""
    global _enabled, _baseline, _loads
    with _lock:
        _enabled = False
        _baseline = _loads = 0
        gc.unfreeze()


def after_snapshot_load() -> None:
    """Move what the process holds now, a new snapshot included, out of the collector's way."""
    global _baseline, _loads
    if not _enabled:
        return
    with _lock:
        gc.collect(1)  # young cyclic garbage goes now, not into the permanent generation
        gc.freeze()
        _loads += 1
        if _loads < CHECK_EVERY:
            return
        _loads = 0
        frozen = gc.get_freeze_count()
        if frozen < 2 * _baseline or frozen - _baseline < REFREEZE_MIN_GROWTH:
            return
        t0 = time.perf_counter()
        gc.unfreeze()
        collected = gc.collect()
        gc.freeze()
        _baseline = gc.get_freeze_count()
        log.info(
            "full garbage collection over the frozen heap: %d objects before, %d after, %d collected, %.0f ms",
            frozen,
            _baseline,
            collected,
            (time.perf_counter() - t0) * 1000,
        )
