"""The fence around arq's internals.

``FastWorker`` (worker/main.py) overrides three methods of arq's ``Worker`` (two private ones, and
``finish_job``, whose Redis writes its ``FINISH_AND_PUSH`` script repeats) and reads or writes its
private state. arq does not promise any of it, so pyproject pins ``arq`` below its next minor
version, and this test says exactly what changed when a new arq (or a widened pin) breaks the deal.
"""

from __future__ import annotations

import asyncio
import inspect
from importlib.metadata import version
from typing import Any

import pytest
from arq.worker import Worker, func

from syllabot.worker.main import FastWorker

# method -> the parameters FastWorker calls it with or overrides it with (besides self)
METHODS: dict[str, list[str]] = {
    "_poll_iteration": [],
    "_release_sem_dec_counter_on_complete": [],
    "run_job": ["job_id", "score"],
    "finish_job": [
        "job_id",
        "finish",
        "result_data",
        "result_timeout_s",
        "keep_result_forever",
        "incr_score",
        "keep_in_progress",
    ],
    "heart_beat": [],
    "close": [],
}
ASYNC = {"_poll_iteration", "run_job", "finish_job", "heart_beat", "close"}
# attribute -> the type FastWorker relies on
ATTRIBUTES: dict[str, type | tuple[type, ...]] = {
    "sem": asyncio.BoundedSemaphore,
    "job_counter": int,
    "tasks": dict,
    "max_jobs": int,
    "allow_pick_jobs": bool,
    "queue_name": str,
    "queue_read_limit": int,
    "burst": bool,
    "allow_abort_jobs": bool,
    "ctx": dict,
    "loop": asyncio.AbstractEventLoop,
}


def _fence(what: str) -> str:
    return (
        f"arq {version('arq')}: {what}. FastWorker (worker/main.py) relies on this private part of "
        "arq.worker.Worker; adapt FastWorker before widening the arq pin in pyproject.toml."
    )


@pytest.mark.parametrize("name", sorted(METHODS))
def test_the_arq_methods_fastworker_relies_on_keep_their_signature(name: str) -> None:
    method = getattr(Worker, name, None)
    assert method is not None, _fence(f"Worker.{name} is gone")
    params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    assert required == METHODS[name], _fence(f"Worker.{name}{inspect.signature(method)} changed")
    assert inspect.iscoroutinefunction(method) == (name in ASYNC), _fence(
        f"Worker.{name} is {'no longer' if name in ASYNC else 'now'} a coroutine function"
    )


def test_fastworker_overrides_with_the_same_shape() -> None:
    for name in ("_poll_iteration", "_release_sem_dec_counter_on_complete", "finish_job"):
        ours = inspect.signature(getattr(FastWorker, name))
        theirs = inspect.signature(getattr(Worker, name))
        assert list(ours.parameters) == list(theirs.parameters), _fence(
            f"Worker.{name}{theirs} vs ours{ours}"
        )


async def test_the_arq_attributes_fastworker_touches_exist() -> None:
    async def noop(ctx: dict[str, Any]) -> None:
        return None

    worker = Worker(functions=[func(noop, name="noop")], handle_signals=False)
    for name, kind in ATTRIBUTES.items():
        assert hasattr(worker, name), _fence(f"Worker instances have no {name!r}")
        assert isinstance(getattr(worker, name), kind), _fence(
            f"Worker.{name} is a {type(getattr(worker, name)).__name__}, not {kind}"
        )
    assert hasattr(worker, "main_task"), _fence("Worker instances have no 'main_task'")


def test_arq_is_pinned_below_its_next_minor() -> None:
    from importlib.metadata import requires

    (spec,) = [r for r in requires("syllabot") or [] if r.replace(" ", "").startswith("arq")]
    assert "<" in spec, f"arq must be pinned below its next minor version (found {spec!r})"


def test_the_arq_names_and_job_format_the_queue_protocol_relies_on() -> None:
    """shared/queue_protocol.py's scripts write arq's own keys (the claim script builds
    ``arq:in-progress:<id>`` itself) and shared/queue.py stores jobs as arq's ``enqueue_job`` would,
    so arq's worker reads them: the key prefixes and the job format are part of the deal too."""
    from arq import constants
    from arq.jobs import deserialize_job, serialize_job

    assert constants.in_progress_key_prefix == "arq:in-progress:", _fence(
        "the in-progress key prefix changed"
    )
    assert constants.job_key_prefix == "arq:job:", _fence("the job key prefix changed")
    job = deserialize_job(serialize_job("ask", ({"question": "q"},), {}, None, 1_700_000_000_123))
    assert (job.function, job.args, job.kwargs) == ("ask", ({"question": "q"},), {}), _fence(
        "serialize_job/deserialize_job no longer round-trip a job"
    )
    assert job.enqueue_time.timestamp() == 1_700_000_000.123, _fence("the enqueue time is stored differently")


def test_fastworker_hands_its_jobs_typed_hooks() -> None:
    """The heartbeat and the jobs read FastWorker's state through worker/runtime/hooks.py, not ctx strings;
    without FastWorker (stock arq, a test calling a job) they get the defaults."""
    from syllabot.shared.config import Settings
    from syllabot.worker.main import build_worker
    from syllabot.worker.runtime.hooks import DEFAULT_HOOKS, hooks_of

    settings = Settings(redis_url="redis://127.0.0.1:6379/0", _env_file=None)
    worker = build_worker(settings, handle_signals=False)
    hooks = hooks_of(worker.ctx)
    assert hooks is not DEFAULT_HOOKS
    assert hooks.claim_loop_alive() is False  # not running: it must not advertise itself
    assert hooks.running_job_ids() == [] and hooks.stopping() is True
    assert hooks_of({}) is DEFAULT_HOOKS and DEFAULT_HOOKS.claim_loop_alive() and not DEFAULT_HOOKS.stopping()
    assert not [k for k in worker.ctx if k in ("claim_loop_alive", "running_job_ids", "worker_stopping")]


async def test_finish_and_push_ends_a_job_exactly_as_arqs_finish_job_does(settings: Any) -> None:
    """FastWorker replaces arq's end of a finished job (no result kept) with its own script: on a real
    Redis, arq's ``finish_job`` and ``finish_and_push`` must leave the same keys behind."""
    from arq.connections import ArqRedis

    from syllabot.shared.keys import Keys
    from syllabot.shared.queue_protocol import FINISH_AND_PUSH, finish_and_push

    async def noop(ctx: dict[str, Any]) -> None:
        return None

    keys = Keys(settings.key_prefix)
    pool = ArqRedis.from_url(settings.redis_url)
    worker = Worker(
        functions=[func(noop, name="noop")], handle_signals=False, redis_pool=pool, queue_name=keys.queue
    )

    async def state(job: str) -> dict[str, Any]:
        names = [f"arq:job:{job}", f"arq:retry:{job}", f"arq:in-progress:{job}", f"arq:result:{job}"]
        return {
            "keys": [bool(await pool.exists(n)) for n in names],
            "queued": await pool.zscore(keys.queue, job) is not None,
            "aborting": await pool.zscore("arq:abort", job) is not None,
        }

    async def a_running_job(job: str) -> None:
        await pool.zadd(keys.queue, {job: 1})
        await pool.zadd("arq:abort", {job: 1})
        await pool.set(f"arq:job:{job}", b"job")
        await pool.set(f"arq:retry:{job}", 1)
        await pool.set(f"arq:in-progress:{job}", 1)

    try:
        await a_running_job("by-arq")
        await Worker.finish_job(worker, "by-arq", True, None, 0, False, None, None)
        await a_running_job("by-us")
        assert await finish_and_push(pool.register_script(FINISH_AND_PUSH), keys, keys.queue, "by-us", b"{}")
        assert (
            await state("by-us")
            == await state("by-arq")
            == {
                "keys": [False, False, False, False],
                "queued": False,
                "aborting": False,
            }
        ), _fence("finish_job ends a job differently from FINISH_AND_PUSH")
    finally:
        await pool.delete(keys.queue, keys.result_list("by-us"), keys.delivered("by-us"))
        await pool.zrem("arq:abort", "by-arq", "by-us")
        await pool.aclose()
