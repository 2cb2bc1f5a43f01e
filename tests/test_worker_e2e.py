"""The worker end to end on a real Redis with the real engine (hashing embedder, for speed): the
queue, ingest with progress, answers with citations, re-indexing under load, several worker
processes, and the CLI's queue-or-in-process paths."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from syllabot import cli_queue
from syllabot.shared.config import Settings
from syllabot.shared.queue import EmptyCollection, QueueClient
from syllabot.shared.queue_protocol import IN_PROGRESS_TTL_S
from syllabot.shared.schema import Answer, AskRequest
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import (
    NEW_DOC,
    NEW_QUESTION,
    collecting_progress,
    queue_keys_left,
    running_worker,
    wait_for_workers,
    worker_processes,
)


async def _ask(client: QueueClient, question: str, collection: str = "shop") -> Answer:
    return await client.ask(AskRequest(question=question, collection=collection, platform="test"))


async def test_ask_end_to_end_through_arq(settings: Settings) -> None:
    seen, progress = collecting_progress()
    async with running_worker(settings), QueueClient(settings) as client:
        report = await client.ingest_many("shop", sample_files(), who="admin", progress=progress)
        assert report.changed and report.total_chunks > 50
        answer = await _ask(client, "How many days do I have to return a new bike?")
        sources = await client.sources("shop")
        assert {s.file for s in sources} >= {"returns-policy.md", "shipping.md"}
        assert answer.in_materials, answer.text
        assert answer.index_version == report.index_version
        assert answer.citations and answer.citations[0].file.startswith("returns-policy")
        assert "30 days" in answer.text
        assert answer.timings.embed > 0 and answer.timings.total >= answer.timings.search
        assert answer.timings.queue is not None and answer.timings.queue < 1000
        # An ask on a collection with no documents is an error saying what to check, not an answer.
        with pytest.raises(EmptyCollection, match="'nothing-here' has no indexed documents"):
            await _ask(client, "Anything?", collection="nothing-here")
        # Removing a document through the queue takes it out of the answers at once.
        removed = await client.remove("shop", "kc-returns-v2", who="admin")
        assert removed.changed
        after = await _ask(client, "How many days do I have to return a new bike?")
        assert after.index_version == removed.index_version
        assert all(c.doc_id != "kc-returns-v2" for c in after.citations)
    assert seen and seen[-1]["done"] == seen[-1]["total"]
    assert queue_keys_left(settings) == 0


async def test_reindex_under_load_never_exposes_a_half_built_index(settings: Settings) -> None:
    """Questions keep flowing while a document is added and the collection re-indexed: every answer
    comes from one complete snapshot, versions only move forward, and the old snapshot never cites
    the new document."""
    async with (
        running_worker(settings.model_copy(update={"worker_max_jobs": 8})),
        QueueClient(settings) as client,
    ):
        first = await client.ingest_many("shop", sample_files(), who="admin")
        stop = asyncio.Event()
        answers: list[list[Answer]] = [[] for _ in range(6)]

        async def asker(slot: int) -> None:
            questions = [
                NEW_QUESTION,
                "How many days do I have to return a new bike?",
                "Is the battery covered?",
            ]
            i = 0
            while not stop.is_set():
                answers[slot].append(await _ask(client, questions[(slot + i) % len(questions)]))
                i += 1

        askers = [asyncio.create_task(asker(slot)) for slot in range(len(answers))]
        await asyncio.sleep(0.3)
        added = await client.ingest("shop", *NEW_DOC, who="admin")
        await asyncio.sleep(0.3)
        rebuilt = await client.reindex("shop", who="admin")
        await asyncio.sleep(0.3)
        stop.set()
        await asyncio.gather(*askers)

        final = await _ask(client, NEW_QUESTION)

    order = [first.index_version, added.index_version, rebuilt.index_version]
    assert len(set(order)) == 3
    total = sum(len(a) for a in answers)
    assert total > 30, "too few questions were answered during the re-index to prove anything"
    for stream in answers:
        positions = [order.index(a.index_version) for a in stream]  # raises if a version is unknown
        assert positions == sorted(positions), "an answer came from an older index after a newer one"
        for a in stream:
            assert a.citations, a.text
            if a.index_version == first.index_version:
                assert all(c.doc_id != "kc-moonlight-club-v1" for c in a.citations)
    served = {a.index_version for stream in answers for a in stream}
    assert served >= {first.index_version, rebuilt.index_version}
    assert final.index_version == rebuilt.index_version
    assert final.citations[0].doc_id == "kc-moonlight-club-v1"


def _answer_lines(log_path: Path) -> list[dict]:
    lines = []
    for raw in log_path.read_text(errors="replace").splitlines():
        if '"event": "answer"' in raw:
            lines.append(json.loads(raw[raw.index("{") :]))
    return lines


@pytest.mark.slow
async def test_two_worker_processes_serve_the_new_version_after_reindex(
    settings: Settings, tmp_path: Path
) -> None:
    names = ["w0", "w1"]
    logs = [tmp_path / name / "worker.log" for name in names]
    with worker_processes(settings, tmp_path, names, SYLLABOT_WORKER_MAX_JOBS="1"):
        await wait_for_workers(settings, 2)
        async with QueueClient(settings) as client:
            assert await client.worker_count() == 2
            first = await client.ingest_many("shop", sample_files(), who="admin")

            async def burst(n: int = 40) -> list[Answer]:
                return await asyncio.gather(
                    *(_ask(client, f"Is the battery covered? ({i})") for i in range(n))
                )

            before = await burst()
            assert {a.index_version for a in before} == {first.index_version}
            marks = [len(_answer_lines(log)) for log in logs]

            added = await client.ingest("shop", *NEW_DOC, who="admin")
            rebuilt = await client.reindex("shop", who="admin")
            after = await burst()
            assert {a.index_version for a in after} == {rebuilt.index_version}
            assert added.index_version != rebuilt.index_version
            new = await _ask(client, NEW_QUESTION)
            assert new.citations[0].doc_id == "kc-moonlight-club-v1"
        time.sleep(0.2)  # let the log lines reach the files
        for log, mark in zip(logs, marks, strict=True):
            lines = _answer_lines(log)[mark:]
            assert lines, f"{log} served no question after the re-index"
            assert {line["index_version"] for line in lines} == {rebuilt.index_version}
    async with QueueClient(settings) as client:
        assert await client.worker_count() == 0  # both deregistered on SIGTERM


@pytest.mark.slow
async def test_job_of_a_killed_worker_is_answered_by_another(settings: Settings, tmp_path: Path) -> None:
    """SIGKILL the worker in the middle of a question: another worker claims it again once the dead
    worker's claim lapses (IN_PROGRESS_TTL_S, not arq's 30 min) and the client still gets its answer.

    The job is made slow by a stand-in LLM endpoint that holds the first request; each worker calls
    it under its own path, so the test knows which worker holds the job."""
    release = threading.Event()
    holder: list[str] = []

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if not holder:
                holder.append(self.path.split("/")[1])
                release.wait(30)
            self.send_response(500)  # the answerer falls back to its extractive answer
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    Engine(settings).ingest("default", sample_files())
    try:
        with worker_processes(
            settings,
            tmp_path,
            ["a", "b"],
            SYLLABOT_ANSWERER="openai",
            SYLLABOT_LLM_BASE_URL=f"{base}/{{name}}/v1",
            SYLLABOT_LLM_TIMEOUT_S="30",
        ) as procs:
            await wait_for_workers(settings, 2)
            async with QueueClient(settings) as client:
                question = AskRequest(
                    question="How many days do I have to return a new bike?", collection="default"
                )
                asking = asyncio.create_task(client.ask(question, timeout=40))
                deadline = time.monotonic() + 10
                while not holder and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert holder, "no worker called the LLM endpoint"
                victim = procs[holder[0]]
                os.kill(victim.pid, signal.SIGKILL)
                victim.wait()
                killed = time.monotonic()
                answer = await asking
            assert answer.in_materials and "30 days" in answer.text
            assert time.monotonic() - killed < IN_PROGRESS_TTL_S + 5
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()


# --- the CLI's queue-or-in-process paths ------------------------------------------------------------


def test_cli_ask_on_a_fresh_machine_runs_in_process_on_embedded_redis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh = Settings(
        redis_url=None,
        data_dir=tmp_path / "fresh",
        embedder="hashing",
        key_prefix="syllabot:",
        _env_file=None,
    )
    code = cli_queue.run_ask(fresh, "How many days do I have to return a new bike?", "sample", as_json=False)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "sample corpus" in err
    assert "30 days" in out and "Sources:" in out and "[1]" in out
    assert (tmp_path / "fresh" / "redis").is_dir()  # the embedded Redis lives under the data directory

    # Second time: already seeded, nothing said about it; --json prints the Answer.
    code = cli_queue.run_ask(fresh, "Can I pay with a gift card?", "sample", as_json=True)
    out, err = capsys.readouterr()
    assert code == 0 and "sample corpus" not in err
    answer = Answer.model_validate_json(out)
    assert answer.collection == "sample" and answer.index_version


@pytest.mark.slow
def test_cli_index_and_ask_go_through_a_running_worker(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "w" / "worker.log"
    with worker_processes(settings, tmp_path, ["w"]):
        asyncio.run(wait_for_workers(settings, 1))
        report = cli_queue.run_index(settings, "default", sample_files())
        assert report.changed
        code = cli_queue.run_ask(
            settings, "How many days do I have to return a new bike?", "default", as_json=True
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "through the running worker" in err
        answer = Answer.model_validate_json(out)
        assert answer.in_materials and answer.index_version == report.index_version
        time.sleep(0.2)
        assert any(line["platform"] == "cli" for line in _answer_lines(log))
    # `syllabot worker` keeps its snapshots out of full garbage collections (worker/indexes/heap.py).
    assert "snapshots frozen after each load" in log.read_text(encoding="utf-8")


def test_cli_ask_reports_unreachable_redis(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    dead = settings.model_copy(update={"redis_url": "redis://127.0.0.1:9/0"})
    assert cli_queue.run_ask(dead, "Hello?", "default", as_json=False) == 1
    assert "unreachable" in capsys.readouterr().err
