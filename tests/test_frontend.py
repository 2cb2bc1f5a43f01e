"""The front-end core (bots/frontend.py): pure, so these tests need neither Redis nor a platform fake."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import redis.exceptions

from syllabot.bots import frontend as fe
from syllabot.shared.queue import (
    JobFailed,
    NoWorker,
    QueueError,
    QueueTimeout,
    RedisUnreachable,
    SchemaMismatch,
)
from syllabot.shared.redis_conn import RedisUnavailable
from syllabot.shared.schema import (
    MAX_QUESTION_CHARS,
    NOT_IN_MATERIALS,
    UNCERTAIN_LEAD,
    Answer,
    AskRequest,
    Citation,
)

REPO = Path(__file__).resolve().parent.parent


# --- questions -----------------------------------------------------------------------------------
def test_one_question_limit_for_every_front_end() -> None:
    assert fe.MAX_QUESTION_CHARS == MAX_QUESTION_CHARS
    assert AskRequest.model_fields["question"].metadata  # the schema enforces the same bound
    ok = "x" * MAX_QUESTION_CHARS
    assert fe.check_question(f"  {ok}\n") == ok
    AskRequest(question=ok)  # what passes the check, the schema accepts


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t"])
def test_empty_questions_are_rejected(text: str | None) -> None:
    with pytest.raises(fe.QuestionRejected) as rejected:
        fe.check_question(text)
    assert rejected.value.kind == "empty"
    assert isinstance(rejected.value, fe.UsageError)


def test_overlong_questions_are_rejected_with_their_length() -> None:
    with pytest.raises(fe.QuestionRejected) as rejected:
        fe.check_question("y" * (MAX_QUESTION_CHARS + 5))
    assert (rejected.value.kind, rejected.value.length, rejected.value.limit) == (
        "too_long",
        MAX_QUESTION_CHARS + 5,
        MAX_QUESTION_CHARS,
    )
    assert str(MAX_QUESTION_CHARS) in str(rejected.value)


# --- failures ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("exc", "kind", "words"),
    [
        (fe.UsageError("that file is too large"), fe.FailureKind.USAGE, "that file is too large"),
        (NoWorker("x"), fe.FailureKind.NO_WORKER, "syllabot worker"),
        (QueueTimeout("x"), fe.FailureKind.TIMEOUT, "took too long"),
        (TimeoutError(), fe.FailureKind.TIMEOUT, "did not answer"),
        (QueueTimeout("x", withdrawn=True, timeout_s=30), fe.FailureKind.WITHDRAWN, "nothing was changed"),
        (RedisUnreachable("x"), fe.FailureKind.UNREACHABLE, "can't reach its database"),
        (RedisUnavailable("x"), fe.FailureKind.UNREACHABLE, "Redis"),
        (redis.exceptions.ConnectionError("x"), fe.FailureKind.UNREACHABLE, "Redis"),
        (ConnectionRefusedError(), fe.FailureKind.UNREACHABLE, "Redis"),
        (JobFailed("built with another embedder"), fe.FailureKind.JOB_FAILED, "another embedder"),
        (QueueError("a reply that does not validate"), fe.FailureKind.QUEUE, "does not validate"),
        (SchemaMismatch(bot=2, worker=1), fe.FailureKind.VERSION, "upgrade the worker"),
        (SchemaMismatch(bot=1, worker=2), fe.FailureKind.VERSION, "upgrade the bot"),
        (ZeroDivisionError("bug"), fe.FailureKind.UNEXPECTED, "unexpected"),
    ],
)
def test_one_taxonomy_maps_every_failure_to_words(
    exc: BaseException, kind: fe.FailureKind, words: str
) -> None:
    failure = fe.classify(exc)
    assert failure.kind is kind
    assert words in failure.detail
    assert failure.title
    assert failure.expected == (kind is not fe.FailureKind.UNEXPECTED) == fe.is_expected(exc)


def test_a_version_mismatch_names_both_versions_for_the_admin() -> None:
    failure = fe.classify(SchemaMismatch(bot=2, worker=1))
    assert "schema v2" in failure.detail and "v1" in failure.detail and "admin" in failure.detail
    assert str(SchemaMismatch(bot=2, worker=1)) == (
        "bot speaks schema v2, worker v1: upgrade the worker so both run the same Syllabot version"
    )


def test_timeouts_say_how_long_was_waited() -> None:
    assert "within 12 s" in fe.classify(QueueTimeout("x"), timeout_s=12).detail
    assert "within 30 s" in fe.classify(QueueTimeout("x", withdrawn=True, timeout_s=30)).detail


def test_withdrawn_is_an_attribute_not_words_in_the_message() -> None:
    assert fe.classify(QueueTimeout("it was withdrawn")).kind is fe.FailureKind.TIMEOUT
    assert fe.classify(QueueTimeout("", withdrawn=True)).kind is fe.FailureKind.WITHDRAWN


# --- splitting -----------------------------------------------------------------------------------
def test_split_prefers_paragraphs_lines_sentences_spaces() -> None:
    para = "One sentence here. " * 8
    text = f"{para.strip()}\n\n{para.strip()}"
    assert fe.split_text(text, 200) == [para.strip(), para.strip()]
    sentences = " ".join(f"Sentence {i} ends." for i in range(40))
    parts = fe.split_text(sentences, 70)
    assert all(len(p) <= 70 and p.endswith(".") for p in parts)
    assert " ".join(parts) == sentences
    assert fe.split_text("", 10) == [] and fe.split_text("  hi  ", 10) == ["hi"]
    with pytest.raises(ValueError):
        fe.split_text("x", 0)


def test_hard_cuts_follow_the_platform_guard() -> None:
    assert fe.split_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    escaped = "y" * 9 + "\\[" + "z" * 5  # a cut at 10 would split the escape pair
    parts = fe.split_text(escaped, 10, guard=fe.keep_escapes)
    assert parts[0] == "y" * 9 and parts[1].startswith("\\[")
    entities = "&amp;" * 10
    parts = fe.split_text(entities, 12, guard=fe.keep_entities)
    assert all(p.endswith(";") and len(p) <= 12 for p in parts) and "".join(parts) == entities


# --- answers -------------------------------------------------------------------------------------
def _cite(n: int) -> Citation:
    return Citation(n=n, doc_id="d", file="f.pdf", title="T", label=f"T — Module {n}", snippet="s", score=0.5)


def test_answer_parts_add_the_status_words_to_the_body_the_worker_sent() -> None:
    answered = fe.answer_parts(
        Answer(
            text=" Within 30 days [1]. ",
            collection="c",
            question=" how   long? ",
            citations=[_cite(2), _cite(1)],
        )
    )
    assert (answered.status, answered.body, answered.question) == (
        "answered",
        "Within 30 days [1].",
        "how long?",
    )
    assert [c.n for c in answered.citations] == [1, 2] and answered.label == "Answer"
    assert answered.lead == "" and answered.text == "Within 30 days [1]."

    missing = fe.answer_parts(
        Answer(text="The closest passage I found: x [1].", status="not_in_materials", collection="c")
    )
    assert missing.body == "The closest passage I found: x [1]." and missing.label == NOT_IN_MATERIALS
    # The exact marker first, then the body: what the terminal, --json and evaluation read.
    assert missing.text == f"{NOT_IN_MATERIALS}. The closest passage I found: x [1]."
    assert (
        fe.answer_text(Answer(text="", status="not_in_materials", collection="c")) == f"{NOT_IN_MATERIALS}."
    )

    unsure = fe.answer_parts(Answer(text="returns [1].", status="uncertain", collection="c"))
    assert unsure.body == "returns [1]." and unsure.label == UNCERTAIN_LEAD
    # The passages first, so the reply is useful before it hedges.
    assert (
        unsure.text == "Your materials say: returns [1]. — I can't tell whether that answers your question."
    )
    assert not unsure.text.startswith(NOT_IN_MATERIALS)

    general = fe.answer_parts(
        Answer(text="", status="not_in_materials", collection="c", general_knowledge=" A mutex is a lock. ")
    )
    assert general.general_knowledge == "A mutex is a lock."
    assert general.text == (f"{NOT_IN_MATERIALS}.\n\n{fe.GENERAL_KNOWLEDGE_LABEL}\nA mutex is a lock.")
    assert fe.answer_parts(Answer(text="x", collection="c", general_knowledge="  ")).general_knowledge == ""


def test_the_body_is_never_stripped_so_a_body_that_quotes_the_marker_stays_whole() -> None:
    """The worker's text is data: a quoted passage that happens to start with the marker's words is
    shown as written, under the status's own lead (no renderer guesses from the text any more)."""
    quoted = "Not in your materials: a heading printed in the syllabus [1]."
    parts = fe.answer_parts(Answer(text=quoted, collection="c"))
    assert parts.body == quoted and parts.text == quoted and parts.status == "answered"


def test_the_core_has_no_io_and_no_platform_types() -> None:
    tree = ast.parse((REPO / "bots" / "frontend.py").read_text(encoding="utf-8"))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    forbidden = ("discord", "slack_bolt", "slack_sdk", "aiohttp", "httpx", "redis.asyncio", "socket")
    assert not [m for m in imported if m.startswith(forbidden)], imported
    assert all(m.startswith("syllabot.shared") or "." not in m or m == "collections.abc" for m in imported)


class _CardQueue:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    async def card(self, collection: str, timeout: float | None = None) -> list[str]:
        return self.lines


async def test_the_card_reply_leads_each_fact_with_its_slot_for_both_bots() -> None:
    """``show_card``: `syllabot card`'s lines (a heading, its facts indented under it) as one
    bulleted line per fact, led by its slot; empty slots and the disagreements kept; how to correct last."""
    lines = [
        "office hours:",
        "  - Mira Osei: Office Hours: Tue 10-11am [loom-syllabus.pdf, p. 1]",
        "  - Mira Osei: office hours are Wed 2-3pm [loom-notes.pdf, p. 4]",
        "  … and 2 more",
        "phone number: not stated in any document",
        "",
        "Disagreements (1):",
        "  - office hours (Mira Osei): “Tue 10-11am” [loom-syllabus.pdf, p. 1] vs “Wed 2-3pm” [loom-notes.pdf, p. 4]",
    ]
    reply = await fe.show_card(_CardQueue(lines), "loom-101")
    assert reply.ok and reply.title == "The course card of “loom-101”"
    assert reply.lines == [
        "office hours — Mira Osei: Office Hours: Tue 10-11am [loom-syllabus.pdf, p. 1]",
        "office hours — Mira Osei: office hours are Wed 2-3pm [loom-notes.pdf, p. 4]",
        "office hours — … and 2 more",
        "phone number: not stated in any document",
        "Disagreements (1) — office hours (Mira Osei): “Tue 10-11am” [loom-syllabus.pdf, p. 1] vs “Wed 2-3pm” "
        "[loom-notes.pdf, p. 4]",
        fe.CARD_CORRECTION,
    ]
