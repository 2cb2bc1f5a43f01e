"""What the running worker tells its jobs and heartbeat: typed, instead of loose ``ctx`` strings.

arq hands every job and the startup/shutdown functions one ``ctx`` dict. ``FastWorker``
(``worker/main.py``) knows things they need — whether its claim loop still turns, which jobs it
runs, whether it is shutting down — and :func:`install_hooks` puts them in ``ctx`` as one
:class:`WorkerHooks`. :func:`hooks_of` reads them back, with defaults when none were installed
(stock arq's worker, or a test calling a job directly): always alive, no running jobs to renew,
never stopping, results pushed by the job itself.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WorkerHooks", "hooks_of", "install_hooks"]

#: The ``ctx`` entry that holds the hooks (one entry, so nothing else in ``ctx`` is a hook).
HOOKS_KEY = "syllabot_hooks"


def _always() -> bool:
    return True


def _never() -> bool:
    return False


def _nothing() -> list[str]:
    return []


def _deliver_now(job_id: str, payload: bytes, retry_s: float) -> bool:
    return False


@dataclass(frozen=True)
class WorkerHooks:
    """``claim_loop_alive``: the heartbeat beats only while it is true (a worker whose claim loop
    died or hangs must not look alive). ``running_job_ids``: the jobs whose claims each heartbeat
    renews. ``stopping``: shutting down, so a cancelled job will run again on another worker (its
    asker is not told it failed, and it is not counted as failed here). ``hold_result``: offered a
    finished job's envelope (and how long its delivery may retry through a Redis outage), the
    worker keeps it to push together with arq's end of the job, in one round trip, and says True;
    False means the job pushes it itself now."""

    claim_loop_alive: Callable[[], bool] = field(default=_always)
    running_job_ids: Callable[[], list[str]] = field(default=_nothing)
    stopping: Callable[[], bool] = field(default=_never)
    hold_result: Callable[[str, bytes, float], bool] = field(default=_deliver_now)


#: The hooks of a worker that installed none.
DEFAULT_HOOKS = WorkerHooks()


def install_hooks(ctx: MutableMapping[str, Any], hooks: WorkerHooks) -> None:
    """Give the jobs sharing ``ctx`` these hooks."""
    ctx[HOOKS_KEY] = hooks


def hooks_of(ctx: MutableMapping[str, Any]) -> WorkerHooks:
    """The hooks installed in ``ctx``, or :data:`DEFAULT_HOOKS`."""
    hooks = ctx.get(HOOKS_KEY)
    return hooks if isinstance(hooks, WorkerHooks) else DEFAULT_HOOKS
