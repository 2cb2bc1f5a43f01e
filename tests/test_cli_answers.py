"""The CLI and the three answer outcomes: `ask`'s plain text and --json, the per-question log line,
and `syllabot eval` answering every question (real Redis, hashing embedder, the sample corpus)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from syllabot import cli, cli_queue
from syllabot.shared.answer_text import with_bold
from syllabot.shared.config import Settings
from syllabot.shared.schema import NOT_IN_MATERIALS, SCHEMA_VERSION, UNCERTAIN_LEAD, Answer, Citation
from syllabot.worker.answerers.notes import DISAGREE_LEAD
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.indexes.retrieval import SearchResult
from syllabot.worker.ops.sample import sample_files


def _citation(n: int) -> Citation:
    return Citation(
        n=n,
        doc_id=f"d{n}",
        file="returns-policy.md",
        title="Returns policy",
        score=0.5,
        snippet="…",
        label=f"Returns policy — Returns, p. {n}",
    )


# --- ask: plain text ----------------------------------------------------------------------------


def test_plain_text_of_each_status() -> None:
    base: dict[str, Any] = {"collection": "shop", "citations": [_citation(1)]}
    answered = cli_queue.render_answer(Answer(text="Within 30 days [1].", status="answered", **base))
    assert answered.splitlines() == [
        "Within 30 days [1].",
        "",
        "Sources:",
        "  [1] Returns policy — Returns, p. 1  (returns-policy.md)",
    ]
    # The worker sends the body; the terminal's text starts with the status's words.
    not_in = cli_queue.render_answer(
        Answer(text="The closest passage I found: returns [1].", in_materials=False, **base)
    )
    assert not_in.startswith(f"{NOT_IN_MATERIALS}. The closest passage I found: returns [1].\n")
    assert "\nSources:\n" in not_in and not_in.count(NOT_IN_MATERIALS) == 1

    uncertain = cli_queue.render_answer(
        Answer(text="returns within 30 days [1].", status="uncertain", **base)
    )
    assert uncertain.splitlines()[0] == (
        "Your materials say: returns within 30 days [1]. — I can't tell whether that answers your question."
    )
    assert UNCERTAIN_LEAD not in uncertain
    assert "\nClosest passages (may not answer it):\n  [1] Returns policy" in uncertain
    assert "Sources:" not in uncertain

    general = cli_queue.render_answer(
        Answer(text="", in_materials=False, general_knowledge="Most shops allow it.", collection="shop")
    )
    assert general.splitlines() == [
        f"{NOT_IN_MATERIALS}.",
        "",
        "General knowledge (not from your course materials):",
        "Most shops allow it.",
    ]


def test_ask_json_text_is_the_full_text_and_body_the_workers() -> None:
    answer = Answer(
        text="The closest passage I found: returns [1].",
        in_materials=False,
        collection="shop",
        citations=[_citation(1)],
    )
    data = json.loads(cli_queue.answer_json(answer))
    assert data["text"] == f"{NOT_IN_MATERIALS}. The closest passage I found: returns [1]."
    assert data["body"] == answer.text and data["schema_version"] == SCHEMA_VERSION
    assert cli_queue.render_answer(answer).startswith(data["text"] + "\n")


# --- ask through the in-process pipeline: --json and the log line -------------------------------------


@pytest.fixture
def shop(settings: Settings) -> Settings:
    """The sample corpus indexed into the 'shop' collection (no worker: the CLI answers in-process)."""
    report = Engine(settings).ingest("shop", sample_files(), who="test")
    assert report.changed
    return settings


def test_ask_json_carries_the_status_and_the_log_line_too(
    shop: Settings, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="syllabot.answers"):
        code = cli_queue.run_ask(shop, "How many days do I have to return a new bike?", "shop", as_json=True)
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["status"] in ("answered", "uncertain", "not_in_materials")
    assert (
        data["text"].startswith(with_bold(data["body"], ""))  # plain text: no bold marks
        if data["status"] == "answered"
        else data["text"] != data["body"]
    )
    assert data["in_materials"] == (data["status"] == "answered")
    [line] = [json.loads(r.getMessage()) for r in caplog.records if r.name == "syllabot.answers"]
    assert line["status"] == data["status"] and line["in_materials"] == data["in_materials"]
    assert line["platform"] == "cli"


# --- eval ------------------------------------------------------------------------------------------

QUESTIONS = [
    {
        "question": "How many days do I have to return a new bike?",
        "file": "returns-policy.md",
        "page": 1,
        "expect": ["30 days"],
    },
    {
        "question": "How long does the battery charge take?",
        "file": "battery-care.md",
        "page": 1,
        "expect": ["a phrase no answer contains"],
    },
    {"question": "What is the RD2-24 recall?", "file": "safety-recalls.md", "page": 1},
    {"question": "Can I pay in instalments?", "file": None, "answerable": False, "expect": []},
]


@pytest.fixture
def eval_file(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def test_eval_json_answers_every_question(
    shop: Settings, eval_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "get_settings", lambda: shop)
    assert cli.main(["eval", str(eval_file), "-c", "shop", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"metrics", "summary", "results"} <= set(data)
    assert data["metrics"]["questions"] == 4 and "recall@1_page" in data["metrics"]  # as before
    results = data["results"]
    assert [r["question"] for r in results] == [q["question"] for q in QUESTIONS]
    for r in results:
        assert {"question", "hits", "in_materials", "status", "answer", "expect_met"} <= set(r)
        assert r["in_materials"] == (r["status"] == "answered")
        assert r["answer"]
        assert set(r["hits"][0]) >= {"file", "page", "module", "score"}
    assert results[0]["expect_met"] is True  # "30 days" is in the extractive answer
    assert results[1]["expect_met"] is False
    assert results[2]["expect_met"] is None and results[3]["expect_met"] is None
    summary = data["summary"]
    assert summary["expect"] == {"n": 2, "met": 1, "rate": 0.5}
    assert summary["totals"] == {"answerable": 3, "unanswerable": 1, "all": 4}
    statuses = [r["status"] for r in results]
    for status in ("answered", "uncertain", "not_in_materials"):
        assert summary["counts"][status]["all"] == statuses.count(status)
    assert {"answerable_not_in_materials", "unanswerable_answered", "uncertain"} <= set(summary)


def test_eval_plain_text_shows_the_table_and_headlines(
    shop: Settings, eval_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "get_settings", lambda: shop)
    assert cli.main(["eval", str(eval_file), "-c", "shop"]) == 0
    out = capsys.readouterr().out
    assert "4 questions (3 answerable, 1 unanswerable)" in out and "R@1" in out
    for row in ("answered", "uncertain", "not_in_materials", "total"):
        assert any(line.startswith(row) for line in out.splitlines())
    assert "answerable told 'Not in your materials':" in out
    assert "unanswerable answered as if from the materials:" in out
    assert "uncertain, of all questions:" in out
    assert "expect met: 0.500 (1/2 questions with an expect)" in out
    assert "missed ['a phrase no answer contains']" in out


class AsyncOnlyAnswerer:
    """An answerer with no ``answer_sync`` (like the LLM one): eval must await it and close it."""

    def __init__(self) -> None:
        self.closed = False
        self.questions: list[str] = []

    async def answer(self, question: str, result: SearchResult, collection: str) -> Answer:
        self.questions.append(question)
        return Answer(text="x.", status="uncertain", collection=collection)

    async def aclose(self) -> None:
        self.closed = True


def test_eval_uses_the_configured_answerer(
    shop: Settings, eval_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stub = AsyncOnlyAnswerer()
    monkeypatch.setattr(cli, "get_settings", lambda: shop)
    monkeypatch.setattr("syllabot.worker.answerers.get_answerer", lambda settings: stub)
    assert cli.main(["eval", str(eval_file), "-c", "shop", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert stub.closed and len(stub.questions) == 4
    assert {r["status"] for r in data["results"]} == {"uncertain"}
    assert data["summary"]["uncertain"] == 1.0
    assert data["metrics"]["answerable_flagged"] == 0.0  # uncertain is not "Not in your materials"


# --- the README's own examples, as a newcomer runs them -------------------------------------------


def readme_sample_questions() -> list[str]:
    """The questions the README asks of the sample collection (``syllabot ask "…"`` without ``-c``)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    return re.findall(r'syllabot ask "([^"]+)"(?![^\n`]*(?:-c|--collection|--thread)\b)', readme)


def test_the_readmes_examples_answer_without_a_false_disagreement(
    minilm_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each README example on the shipped sample, with the default embedder: answered, and no
    "Your materials disagree" where two documents speak of different things (the 30-day return
    window against "expect the bike back within 10 working days" after a recall)."""
    questions = readme_sample_questions()
    assert "How long do I have to return a bike?" in questions and len(questions) >= 3, questions
    Engine(minilm_settings).ingest("readme", sample_files(), who="test")
    for question in questions:
        code = cli_queue.run_ask(minilm_settings, question, "readme", as_json=True)
        out, err = capsys.readouterr()
        assert code == 0, err
        data = json.loads(out)
        assert data["status"] == "answered", (question, data["text"])
        assert DISAGREE_LEAD not in data["text"], (question, data["text"])
