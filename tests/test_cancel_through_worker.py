"""Ctrl-C of a `syllabot index` that a worker runs for the terminal cancels the worker's build.

Before issue 49 the terminal said "interrupted" and exited 130 -- documented as "nothing was
published" -- while the worker went on and published every file about 1.3 s later. These drills
send a real SIGINT to a real `syllabot index` subprocess whose build runs in a real worker process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from syllabot.shared.config import Settings
from tests.queue_helpers import wait_for_workers, worker_processes
from tests.test_cli_processes import _big_notes, _interrupt_when_embedding


def _env(settings: Settings, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYLLABOT_", "REDIS_"))}
    env.update(
        {
            "REDIS_URL": settings.redis_url or "",
            "SYLLABOT_KEY_PREFIX": settings.key_prefix,
            "SYLLABOT_DATA_DIR": str(folder / "data"),
            "SYLLABOT_EMBEDDER": settings.embedder,
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syllabot", *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_ctrl_c_of_an_index_a_worker_runs_cancels_the_workers_build(
    minilm_settings: Settings, tmp_path: Path
) -> None:
    env = _env(minilm_settings, tmp_path)
    small = tmp_path / "small.md"
    small.write_text("# Course\n\n## Module 1\n\nDeadlocks and their four conditions.\n")
    with worker_processes(minilm_settings, tmp_path, ["w"]) as procs:
        asyncio.run(wait_for_workers(minilm_settings, 1, timeout=120))
        done = _run(env, "index", str(small), "-c", "os")
        assert done.returncode == 0 and "through the running worker" in done.stderr, done.stderr
        before = _run(env, "sources", "-c", "os", "--json").stdout
        for sections in (1500, 6000, 24000):  # a machine that embeds faster gets a longer build
            notes = _big_notes(tmp_path / f"long-{sections}.md", sections)
            proc = subprocess.Popen(
                [sys.executable, "-m", "syllabot", "index", str(notes), "-c", "os"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            took, err = _interrupt_when_embedding(proc, signal.SIGINT)
            if proc.returncode == 0 and "already publishing" in err:
                continue  # the embedding finished before the signal: too fast for this size
            break
        assert proc.returncode == 130, err
        assert took < 5.0, took
        assert err.strip().splitlines()[-1] == (
            "syllabot: cancelled: the worker stopped the build; nothing was published; "
            "the index of 'os' is as it was"
        ), err
        time.sleep(3.0)  # the build published ~1.3 s after the terminal exited, before the fix
        assert _run(env, "sources", "-c", "os", "--json").stdout == before
        assert procs["w"].poll() is None  # the worker lives on and serves the next build
        again = _run(env, "index", str(small), "-c", "os")
        assert again.returncode == 0, again.stderr


async def test_a_cancelled_job_still_queued_is_withdrawn_and_nothing_runs(settings: Settings) -> None:
    from syllabot.shared.keys import Keys
    from syllabot.shared.queue import JobCancelled, QueueClient, Stop
    from syllabot.shared.queue_protocol import beat
    from syllabot.shared.redis_conn import async_client_at

    raw = async_client_at(settings.redis_url or "")
    keys = Keys(settings.key_prefix)
    await beat(raw, keys, "a-worker-that-claims-nothing")  # alive, but busy: the job stays queued
    stop = Stop()
    stop.press()  # Ctrl-C as the job is being sent
    async with QueueClient(settings) as client:
        with pytest.raises(JobCancelled, match="withdrawn before any worker started it"):
            await client.ingest_many("os", [("a.md", b"# A\n\ntext\n")], "t", stop=stop)
        assert await raw.zcard(keys.queue) == 0
    await raw.aclose()


async def test_a_worker_that_does_not_confirm_the_cancel_is_said_to_maybe_publish(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that never checks its token (a stand-in engine): the client cannot promise nothing
    was published, so it says the build may still publish (the CLI exits 1, not 130)."""
    from syllabot.shared import queue
    from syllabot.shared.queue import CancelUnconfirmed, QueueClient, Stop
    from tests.queue_helpers import StandInEngine, running_worker

    monkeypatch.setattr(queue, "CANCEL_CONFIRM_S", 0.5)
    gate = threading.Event()
    engine = StandInEngine(ingest_gate=gate)
    try:
        async with running_worker(settings, engine=engine), QueueClient(settings) as client:
            stop = Stop()
            job = asyncio.create_task(client.ingest_many("os", [("a.md", b"x")], "t", stop=stop))
            while not engine.calls:
                await asyncio.sleep(0.02)
            stop.press()
            with pytest.raises(
                CancelUnconfirmed, match=r"did not confirm within 0\.5 s: the build may still"
            ):
                await job
            gate.set()
    finally:
        gate.set()
