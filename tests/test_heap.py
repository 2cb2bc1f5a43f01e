"""worker/indexes/heap.py: a worker's snapshots are kept out of the garbage collector's full collections,
and what that could leak is collected once the frozen heap has doubled."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from syllabot.shared.config import Settings
from syllabot.worker.indexes import heap
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files


@pytest.fixture
def freezing() -> Iterator[None]:
    heap.enable()
    try:
        yield
    finally:
        heap.disable()


def _tracked(target: object) -> bool:
    """Whether the collector's generations 0-2 hold ``target`` (frozen objects are in none)."""
    return any(o is target for o in gc.get_objects())


def test_a_loaded_snapshot_leaves_the_collectors_generations(settings: Settings, freezing: None) -> None:
    Engine(settings).ingest("shop", sample_files(), "test")
    reader = Engine(settings)  # a fresh cache: its first question loads the snapshot from Redis
    snapshot = reader.snapshot("shop")
    assert snapshot is not None
    assert gc.get_freeze_count() > 0
    assert not _tracked(snapshot.chunks[0]) and not _tracked(snapshot.chunks)
    # Frozen is not immortal: evicted, the snapshot is freed by reference counting.
    gone = weakref.ref(snapshot.keyword)
    reader.cache.clear()
    del snapshot
    assert gone() is None


def test_nothing_is_frozen_unless_a_worker_enabled_it(settings: Settings) -> None:
    heap.disable()
    Engine(settings).ingest("shop", sample_files(), "test")
    snapshot = Engine(settings).snapshot("shop")
    assert snapshot is not None and gc.get_freeze_count() == 0 and _tracked(snapshot.chunks[0])


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector can free it


def test_frozen_cyclic_garbage_is_collected_once_the_frozen_heap_doubles(
    monkeypatch: pytest.MonkeyPatch, freezing: None
) -> None:
    monkeypatch.setattr(heap, "REFREEZE_MIN_GROWTH", 1_000)
    monkeypatch.setattr(heap, "CHECK_EVERY", 1)
    base = gc.get_freeze_count()
    nodes = [_Node() for _ in range(base + 10_000)]  # alive at a freeze, garbage after it
    gc.collect()  # old enough to have left the young generations
    leaked = weakref.ref(nodes[0])
    heap.after_snapshot_load()
    del nodes
    assert leaked() is not None  # frozen cyclic garbage: what the refreeze exists for
    frozen = gc.get_freeze_count()
    assert frozen >= base + 10_000
    more = [_Node() for _ in range(frozen + 10_000)]  # the next load finds the frozen heap doubled
    gc.collect()
    heap.after_snapshot_load()
    assert leaked() is None  # collected by the full collection over the frozen heap
    assert gc.get_freeze_count() < frozen + len(more)  # the leaked nodes left the frozen count
    del more
