"""The versioned wire format (shared/schema.py ``SCHEMA_VERSION``), both directions, on a real Redis
with a real worker: a bot and a worker of different versions say which one to upgrade instead of
showing an answer one of them misreads (version 2 changed what ``Answer.text`` holds)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from arq.worker import func

from syllabot.bots import frontend
from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient, SchemaMismatch
from syllabot.shared.queue_protocol import JOB_ASK, push_result
from syllabot.shared.schema import SCHEMA_VERSION, AskRequest
from syllabot.worker.main import worker_kwargs
from tests.queue_helpers import StandInEngine, running_worker


def _request(**changes: Any) -> dict[str, Any]:
    payload = AskRequest(question="What is a deadlock?", collection="os", platform="test").model_dump(
        mode="json"
    )
    payload.update(changes)
    return {k: v for k, v in payload.items() if v is not None}


async def test_an_older_bot_is_told_by_the_worker_to_upgrade(settings: Settings) -> None:
    """A version-1 bot sends a question without ``schema_version``: the worker answers nothing and
    replies with a failure naming both versions (an old bot shows it as the worker's message)."""
    assert SCHEMA_VERSION == 2
    engine = StandInEngine()
    old = _request()
    del old["schema_version"]
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        with pytest.raises(SchemaMismatch) as raised:
            await client._call(JOB_ASK, old, timeout=10)
        # The same worker still answers a bot of its own version.
        answer = await client.ask(AskRequest(question="What is a deadlock?", collection="os"))
    assert str(raised.value) == (
        "bot speaks schema v1, worker v2: upgrade the bot so both run the same Syllabot version"
    )
    assert engine.calls == [("search", ("os", "What is a deadlock?"))]  # only the v2 question
    assert answer.schema_version == SCHEMA_VERSION


async def test_a_newer_bot_is_told_to_upgrade_the_worker(settings: Settings) -> None:
    engine = StandInEngine()
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        with pytest.raises(SchemaMismatch) as raised:
            await client._call(JOB_ASK, _request(schema_version=SCHEMA_VERSION + 1), timeout=10)
    assert raised.value.worker == SCHEMA_VERSION
    assert str(raised.value) == (
        "bot speaks schema v3, worker v2: upgrade the worker so both run the same Syllabot version"
    )
    assert engine.calls == []


async def _version_1_ask(ctx: dict[str, Any], request: dict[str, Any]) -> None:
    """What a version-1 worker replied: the marker inside the text, no ``schema_version`` anywhere."""
    answer = {
        "text": "Not in your materials. The closest passage I found: deadlocks [1].",
        "status": "not_in_materials",
        "in_materials": False,
        "citations": [],
        "collection": request["collection"],
        "question": request["question"],
    }
    envelope = json.dumps({"ok": True, "result": answer}).encode()
    await push_result(ctx["redis"], ctx["keys"], ctx["job_id"], envelope)


async def test_a_newer_bot_refuses_an_older_workers_answer_with_a_typed_error(settings: Settings) -> None:
    functions = [f for f in worker_kwargs(settings)["functions"] if f.name != JOB_ASK]
    functions.append(func(_version_1_ask, name=JOB_ASK))
    async with (
        running_worker(settings, worker_overrides={"functions": functions}, engine=StandInEngine()),
        QueueClient(settings) as client,
    ):
        with pytest.raises(SchemaMismatch) as raised:
            await client.ask(AskRequest(question="What is a deadlock?", collection="os"), timeout=10)
    assert (raised.value.bot, raised.value.worker) == (SCHEMA_VERSION, 1)
    failure = frontend.classify(raised.value)
    assert failure.kind is frontend.FailureKind.VERSION and failure.expected
    assert "schema v2" in failure.detail and "v1" in failure.detail
    assert "upgrade the worker" in failure.detail and "admin" in failure.detail
