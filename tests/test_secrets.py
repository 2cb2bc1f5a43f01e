"""Secrets and internals never reach a student: the LLM's URL and credentials stay out of answer
notes, and out of every log line and `doctor --json`, whatever fails."""

from __future__ import annotations

import json
import logging

import pytest

from syllabot import cli
from syllabot.shared.config import Settings
from syllabot.shared.redis_conn import describe
from syllabot.worker.answerers import get_answerer
from syllabot.worker.answerers.llm import LLM_UNAVAILABLE_NOTE
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files
from tests.fake_openai import StreamingLLM

SECRET = "hunter2planted"
QUESTION = "How many days do I have to return a new bike?"


@pytest.mark.parametrize(
    "url",
    [
        f"redis://admin:{SECRET}@cache:6379/0",
        f"redis://cache:6379/0?password={SECRET}",
        f"rediss://cache/0?db=1&password={SECRET}&ssl_cert_reqs=none",
        f"http://student:{SECRET}@llm.internal/v1",
        f"https://llm.internal/v1?api_key={SECRET}",
        f"https://llm.internal/v1?token={SECRET}#x",
    ],
)
def test_every_credential_form_is_masked(url: str) -> None:
    shown = describe(url)
    assert SECRET not in shown and "***" in shown


async def _answer_with(settings: Settings) -> str | None:
    engine = Engine(settings)
    engine.ingest("shop", sample_files(), "test")
    answerer = get_answerer(settings)
    try:
        answer = await answerer.answer(QUESTION, engine.search("shop", QUESTION), "shop")
    finally:
        await answerer.aclose()  # type: ignore[attr-defined]
    assert answer.in_materials and "30 days" in answer.text  # the extractive answer, from the materials
    return answer.note


@pytest.mark.parametrize("failure", ["unreachable", "http-500"])
async def test_an_llm_failure_shows_no_url_host_or_credential(
    settings: Settings, caplog: pytest.LogCaptureFixture, failure: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="syllabot")
    llm = await StreamingLLM().start()
    try:
        host = llm.url.split("://", 1)[1].split("/", 1)[0]
        if failure == "unreachable":
            host = "127.0.0.1:9"  # nothing listens there
            base = f"http://student:{SECRET}@{host}/v1"
        else:
            base = f"http://student:{SECRET}@{host}/nothing-here/v1?api_key={SECRET}"  # a 404 page
        bad = settings.model_copy(
            update={"answerer": "openai", "llm_base_url": base, "llm_api_key": None, "llm_timeout_s": 3.0}
        )
        note = await _answer_with(bad)
    finally:
        await llm.stop()
    assert note == LLM_UNAVAILABLE_NOTE
    assert host not in note and "http" not in note
    lines = [record.getMessage() for record in caplog.records]
    assert any("falling back" in line for line in lines)  # the cause is logged, for the operator
    assert not [line for line in lines if SECRET in line]


def test_doctor_never_prints_a_redis_password_from_the_url(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = settings.model_copy(
        update={
            "redis_url": f"{settings.redis_url}?password={SECRET}",
            "llm_base_url": f"http://student:{SECRET}@127.0.0.1:9/v1",
            "answerer": "openai",
        }
    )
    monkeypatch.setattr(cli, "get_settings", lambda: planted)
    cli.main(["doctor", "--json"])
    out, err = capsys.readouterr()
    json.loads(out)
    assert SECRET not in out and SECRET not in err
