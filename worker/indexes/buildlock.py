"""A collection's build lock that dies with its owner.

A build (ingest, reindex, remove) holds one Redis key per collection. The key lives only
``ttl_s`` (10 s by default, ``SYLLABOT_BUILD_LOCK_TTL_S``) and a thread renews it every third of
that while the build runs, the way a worker's heartbeat renews its job claims. So:

* a build killed with SIGKILL (a worker, or a CLI indexing in-process) leaves a key that expires
  within ``ttl_s``, and the next build of that collection starts then, not half an hour later;
* release is owner-checked (compare-and-delete in Lua): a build that lost its lock (paused longer
  than the TTL) can never delete the lock of the build that took over;
* the publish of a build is fenced (:meth:`BuildLock.fenced`): it happens only while the key still
  holds this build's token, so a build that lost its lock cannot overwrite a newer index;
* a build that has to wait says so, and for whom (``on_wait(owner)``, and a log line), because the
  key's value names its owner ("reindex on host:pid").
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import cast

import redis

from syllabot.shared.redis_conn import REDIS_ERRORS

log = logging.getLogger("syllabot.build")

#: Default lifetime of an unrenewed build lock (seconds).
BUILD_LOCK_TTL_S = 10.0
#: How often a waiting build looks at the lock again.
WAIT_POLL_S = 0.2

# KEYS: lock. ARGV: token. Deletes the lock only when it is still ours.
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
# KEYS: lock. ARGV: token, ttl ms. Extends the lock only when it is still ours.
_RENEW = (
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
    "return 0"
)


class BuildLockTimeout(RuntimeError):
    """Another live build held the collection for longer than this build would wait."""


class BuildLockLost(RuntimeError):
    """This build's lock expired or was taken over before it could publish; nothing was written."""


def owner_name(what: str) -> str:
    """How a lock names its holder: "reindex on host:1234"."""
    return f"{what} on {socket.gethostname()}:{os.getpid()}"


class BuildLock:
    """Context manager: acquire (waiting as long as a live owner builds), renew, release."""

    def __init__(
        self,
        client: redis.Redis,
        key: str,
        owner: str,
        ttl_s: float = BUILD_LOCK_TTL_S,
        wait_s: float = 1800.0,
        on_wait: Callable[[str], None] | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        """``check``: called while waiting (a cancelled build raises from it and stops waiting)."""
        self.r = client
        self.check = check
        self.key = key
        self.owner = owner
        self.ttl_s = ttl_s
        self.wait_s = wait_s
        self.on_wait = on_wait
        self.token = f"{owner}|{uuid.uuid4().hex}".encode()
        self.lost = False
        self._stop = threading.Event()
        self._mutex = threading.Lock()  # renewal and the fenced publish never interleave
        self._renewer: threading.Thread | None = None

    @property
    def ttl_ms(self) -> int:
        return max(1, int(self.ttl_s * 1000))

    def holder(self) -> str | None:
        """Who holds the lock now (None when nobody does)."""
        value = cast(bytes | None, self.r.get(self.key))
        if value is None:
            return None
        return value.decode(errors="replace").rsplit("|", 1)[0]

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_s
        started = time.monotonic()
        announced: str | None = None
        while not self.r.set(self.key, self.token, nx=True, px=self.ttl_ms):
            holder = self.holder()
            if holder is not None and holder != announced:
                log.info("build of %s waits for the lock held by %s", self.key, holder)
                if self.on_wait is not None:
                    self.on_wait(holder)
                announced = holder
            if time.monotonic() > deadline:
                raise BuildLockTimeout(
                    f"another build ({announced or 'unknown'}) is still running after {self.wait_s:g} s; "
                    "try again when it has finished"
                )
            time.sleep(WAIT_POLL_S)
            if self.check is not None:
                self.check()
        if announced is not None:
            log.info("build of %s got the lock after %.1f s", self.key, time.monotonic() - started)
        self._renewer = threading.Thread(target=self._renew_loop, name="syllabot-lock-renew", daemon=True)
        self._renewer.start()

    def _renew_loop(self) -> None:
        script = self.r.register_script(_RENEW)
        while not self._stop.wait(self.ttl_s / 3):
            try:
                with self._mutex:
                    ours = script(keys=[self.key], args=[self.token, self.ttl_ms])
            except REDIS_ERRORS as exc:  # Redis blip: try again; the publish fence decides
                log.warning("could not renew the build lock %s: %s", self.key, exc)
                continue
            if not ours:
                self.lost = True
                log.error("the build lock %s expired under this build; it will not publish", self.key)
                return

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
            self._renewer = None
        with contextlib.suppress(*REDIS_ERRORS):
            self.r.eval(_RELEASE, 1, self.key, self.token)  # type: ignore[arg-type]  # bytes are fine

    @contextlib.contextmanager
    def fenced(self, pipe: redis.client.Pipeline) -> Iterator[None]:
        """Inside: ``pipe`` WATCHes the lock, which is still ours; EXEC fails if it changes hands.

        Renewal pauses meanwhile (a PEXPIRE of our own would abort the transaction too).
        """
        with self._mutex:
            pipe.watch(self.key)
            if self.lost or pipe.get(self.key) != self.token:
                pipe.reset()
                raise BuildLockLost(
                    f"the build lock {self.key} expired before the build could publish "
                    "(a pause longer than the lock's lifetime?); nothing was written, run it again"
                )
            pipe.multi()
            try:
                yield
            except redis.exceptions.WatchError as exc:
                raise BuildLockLost(f"the build lock {self.key} changed hands; nothing was written") from exc

    def __enter__(self) -> BuildLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()
