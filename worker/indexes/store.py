"""Redis I/O for collections: source documents, index snapshots and the "current" pointer.

Everything a worker needs to rebuild an index lives in Redis, so any worker on any host can serve or
rebuild any collection. A build publishes in one MULTI transaction: the new documents, the new
snapshot and the moved pointer appear together or not at all, and the previous snapshot is kept
for a grace period so a reader that fetched the old pointer a moment ago can still load it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from typing import Any, cast

import redis

from syllabot.shared.keys import Keys
from syllabot.shared.redis_conn import NO_WAIT, Durability
from syllabot.shared.schema import CollectionInfo
from syllabot.worker.indexes.buildlock import BUILD_LOCK_TTL_S, BuildLock, owner_name
from syllabot.worker.indexes.index import IndexSnapshot

#: Seconds an unpublished (previous) snapshot survives for in-flight readers.
OLD_SNAPSHOT_GRACE_S = 600
#: Longest a build waits for a collection's lock held by another *live* build (a dead build's lock
#: expires within its TTL, see worker.indexes.buildlock).
BUILD_LOCK_TIMEOUT_S = 1800


class CollectionStore:
    def __init__(self, client: redis.Redis, keys: Keys, durability: Durability = NO_WAIT) -> None:
        self.r = client
        self.keys = keys
        #: A publish or a drop returns only once the replicas hold it (``NotReplicated`` otherwise).
        self.durability = durability

    # --- reads ----------------------------------------------------------------------------------
    def current_version(self, collection: str) -> str | None:
        value = cast(bytes | None, self.r.get(self.keys.current(collection)))
        return value.decode() if value else None

    def load_snapshot(self, collection: str, version: str) -> IndexSnapshot | None:
        fields = cast(dict[bytes, bytes], self.r.hgetall(self.keys.snapshot(collection, version)))
        return IndexSnapshot.from_fields(fields) if fields else None

    def documents(self, collection: str) -> dict[str, dict[str, Any]]:
        raw = cast(dict[bytes, bytes], self.r.hgetall(self.keys.documents(collection)))
        return {k.decode(): json.loads(v) for k, v in raw.items()}

    def document_bytes(self, collection: str, doc_id: str) -> bytes | None:
        return cast(bytes | None, self.r.get(self.keys.document_bytes(collection, doc_id)))

    def collections(self) -> list[str]:
        return sorted(m.decode() for m in cast(set[bytes], self.r.smembers(self.keys.collections)))

    def collection_info(self, collection: str) -> CollectionInfo | None:
        """Counts, embedder, size and last indexing of ``collection`` without loading its index;
        None when it does not exist."""
        if not self.r.sismember(self.keys.collections, collection):
            return None
        return self.collection_infos([collection])[0]

    def collection_infos(self, collections: list[str]) -> list[CollectionInfo]:
        """:meth:`collection_info` of existing collections, in two pipelined round trips whatever
        their number (documents and pointers, then each snapshot's meta and size)."""
        with self.r.pipeline(transaction=False) as pipe:
            for name in collections:
                pipe.hgetall(self.keys.documents(name))
                pipe.get(self.keys.current(name))
            first = pipe.execute()
        docs = [{k.decode(): json.loads(v) for k, v in raw.items()} for raw in first[0::2]]
        versions = [v.decode() if v else None for v in first[1::2]]
        snapshots = [self.keys.snapshot(n, v) for n, v in zip(collections, versions, strict=True) if v]
        with self.r.pipeline(transaction=False) as pipe:
            for key in snapshots:
                pipe.hget(key, "meta")
                # MEMORY USAGE may be renamed or disabled: the documents still count
                pipe.memory_usage(key, samples=0)
            second = iter(pipe.execute(raise_on_error=False))
        infos = []
        for name, stored, version in zip(collections, docs, versions, strict=True):
            meta: dict[str, Any] = {}
            snapshot_bytes = 0
            if version is not None:
                raw, usage = next(second), next(second)
                meta = json.loads(raw) if isinstance(raw, bytes) else {}
                snapshot_bytes = usage if isinstance(usage, int) else 0
            indexed = [str(m.get("indexed_at")) for m in stored.values() if m.get("indexed_at")]
            infos.append(
                CollectionInfo(
                    name=name,
                    documents=len(stored),
                    chunks=int(meta.get("count", 0)),
                    embedder=meta.get("embedder_id"),
                    bytes=sum(int(m.get("bytes", 0)) for m in stored.values()) + snapshot_bytes,
                    indexed_at=max(indexed) if indexed else None,
                    # an admin's mark is written into "status" too (Engine.mark, re-index)
                    superseded=sum(m.get("status") == "superseded" for m in stored.values()),
                )
            )
        return infos

    # --- writes ---------------------------------------------------------------------------------
    def drop(self, collection: str, lock: BuildLock) -> tuple[int, int]:
        """Delete every key of ``collection`` (documents, snapshots, kept questions, cached answers)
        and every channel or server binding to it, in one transaction while ``lock`` is held.
        Returns (keys deleted, bindings deleted). The lock's own key is left to the lock."""
        lock_key = self.keys.build_lock(collection).encode()
        keys = [
            k
            for k in self.r.scan_iter(match=self.keys.collection_glob(collection), count=500)
            if k != lock_key
        ]
        bound = list(self.r.scan_iter(match=self.keys.binding_glob(), count=500))
        values = cast(list[bytes | None], self.r.mget(bound)) if bound else []
        bindings = [key for key, value in zip(bound, values, strict=True) if value == collection.encode()]
        doomed = keys + bindings
        with self.r.pipeline(transaction=True) as pipe, lock.fenced(pipe):
            for start in range(0, len(doomed), 500):
                pipe.unlink(*doomed[start : start + 500])
            pipe.srem(self.keys.collections, collection)
            pipe.execute()
        self.durability.confirm(self.r, f"Dropping '{collection}'")
        return len(keys), len(bindings)

    def build_lock(
        self,
        collection: str,
        what: str = "build",
        ttl_s: float = BUILD_LOCK_TTL_S,
        on_wait: Callable[[str], None] | None = None,
        check: Callable[[], None] | None = None,
    ) -> BuildLock:
        """Serialises builds of one collection across workers, so two uploads never lose each other.

        The lock dies with its owner (short TTL, renewed while the build runs; see worker.indexes.buildlock).
        """
        return BuildLock(
            self.r,
            self.keys.build_lock(collection),
            owner_name(what),
            ttl_s=ttl_s,
            wait_s=BUILD_LOCK_TIMEOUT_S,
            on_wait=on_wait,
            check=check,
        )

    def publish(
        self,
        snapshot: IndexSnapshot,
        previous_version: str | None,
        put_documents: Iterable[tuple[dict[str, Any], bytes]] = (),
        delete_doc_ids: Iterable[str] = (),
        update_meta: Iterable[dict[str, Any]] = (),
        lock: BuildLock | None = None,
    ) -> None:
        """Atomically store documents, the snapshot, and move the pointer to it.

        With ``lock``, only while that build lock is still held (else ``BuildLockLost``, nothing written).
        """
        collection = snapshot.collection
        with self.r.pipeline(transaction=True) as pipe, lock.fenced(pipe) if lock else nullcontext():
            for meta, data in put_documents:
                pipe.set(self.keys.document_bytes(collection, meta["doc_id"]), data)
                pipe.hset(self.keys.documents(collection), meta["doc_id"], json.dumps(meta))
            for meta in update_meta:
                pipe.hset(self.keys.documents(collection), meta["doc_id"], json.dumps(meta))
            for doc_id in delete_doc_ids:
                pipe.delete(self.keys.document_bytes(collection, doc_id))
                pipe.hdel(self.keys.documents(collection), doc_id)
            pipe.hset(self.keys.snapshot(collection, snapshot.version), mapping=snapshot.to_fields())
            pipe.set(self.keys.current(collection), snapshot.version)
            pipe.sadd(self.keys.collections, collection)
            if previous_version and previous_version != snapshot.version:
                pipe.expire(self.keys.snapshot(collection, previous_version), OLD_SNAPSHOT_GRACE_S)
            pipe.execute()
        self.durability.confirm(self.r, f"The new index of '{collection}'")
