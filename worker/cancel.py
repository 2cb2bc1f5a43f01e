"""Cancelling a build: a token the terminal sets on Ctrl-C or SIGTERM, and the build checks.

A build (index, re-index, remove) checks its token between files, pages and embedding batches, so
it stops within a fraction of a second, and once more at the one point that matters: just before
it publishes. :meth:`CancelToken.commit` and :meth:`CancelToken.cancel` decide, under one lock,
which of the two happened first, so the terminal never says "nothing was published" about a
build that was already publishing (it then waits for the publish and says so instead).
"""

from __future__ import annotations

import threading


class Cancelled(Exception):
    """The build was cancelled before it published anything: the previous index is unchanged."""


class CancelToken:
    """Set once by whoever cancels; checked by the build."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._committed = False
        #: Set when a build in this process uses the token: only then does a signal cancel through
        #: it (work a worker does for the terminal is not stopped by the terminal's token).
        self.armed = False

    def cancel(self) -> bool:
        """Cancel the build; False when it had already started publishing (it then completes)."""
        with self._lock:
            if self._committed:
                return False
            self._cancelled = True
            return True

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def check(self) -> None:
        """Raise :class:`Cancelled` once the build was cancelled."""
        if self._cancelled:
            raise Cancelled("cancelled before anything was published")

    def commit(self) -> None:
        """Called just before publishing: raise :class:`Cancelled`, or from now on refuse to cancel."""
        with self._lock:
            self.check()
            self._committed = True
