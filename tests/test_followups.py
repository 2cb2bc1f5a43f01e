"""Follow-ups resolved against the conversation: the pure rules (worker/query/conversation.py), the Redis
store (shared/threads.py, real Redis), and the answering pipeline and CLI on the sample corpus."""

from __future__ import annotations

import json
import time

import pytest
import redis.asyncio as aioredis

from syllabot import cli, cli_queue
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.schema import AskRequest
from syllabot.shared.threads import ThreadStore, Turn, thread_id
from syllabot.worker.answerers import get_answerer
from syllabot.worker.answerers.llm import build_messages
from syllabot.worker.answerers.pipeline import answer_question
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files
from syllabot.worker.query.conversation import EXPIRED_NOTE, follow_up, turn_for
from syllabot.worker.query.reading import read_question

ML = "22AI205 Machine Learning"
CC = "21CS47 Cloud Computing"
ML_FILE = "KCAI205-machine-learning.pdf"


def _known(key: str) -> bool:
    return key in (ML, CC)


# --- the rules (pure) ----------------------------------------------------------------------------
def test_a_follow_up_takes_the_previous_course_module_and_topic() -> None:
    previous = Turn("which unit of ML has SVM?", (ML,), ("Unit III",), "which unit has SVM", 0.0)
    follow = follow_up("what lab do we do for that", "what lab do we do for that", [previous], _known)
    assert follow is not None
    assert follow.courses == (ML,)
    assert follow.carried == ("Unit III", "SVM")  # "which unit" asks: left behind
    assert follow.text == "what lab do we do for that Unit III SVM"


def test_words_that_ask_for_something_are_not_carried() -> None:
    """After "how many credits", "how many hours is the exam" still asks for hours, not credits."""
    previous = Turn("how many credits is 21CS47", (CC,), (), "how many credits is", 0.0)
    follow = follow_up("how many hours is the exam", "how many hours is the exam", [previous], _known)
    assert follow is not None and follow.carried == () and follow.courses == (CC,)


def test_a_course_gone_from_the_index_is_not_carried_and_nothing_is_none() -> None:
    gone = Turn("q", ("99XX00 Gone",), (), "", 0.0)
    assert follow_up("and the textbooks?", "and the textbooks?", [gone], _known) is None
    assert follow_up("and the textbooks?", "and the textbooks?", [], _known) is None


def test_a_turn_without_a_named_course_records_its_best_passage() -> None:
    from syllabot.shared.schema import Hit

    hit = Hit(
        rank=1, doc_id="d", file=ML_FILE, title="t", subject=ML, module="Unit IV", page=3,
        score=0.9, cosine=0.9, keyword=0.5, text="k-means",
    )  # fmt: skip
    turn = turn_for(
        "where is k-means taught", "where is k-means taught", (), "where is k-means taught", [hit], 5.0
    )
    assert turn.courses == (ML,) and turn.modules == ("Unit IV",) and turn.at == 5.0
    assert "k-means" in turn.topic and "where" not in turn.topic


def test_the_llm_sees_earlier_questions_outside_the_fence() -> None:
    messages = build_messages("and the lab?", [], nonce="n0", earlier=["which unit of ML has SVM?"])
    user = messages[1]["content"]
    assert "Earlier questions in this conversation" in user
    assert (
        user.index("<<<END MATERIALS n0>>>")
        < user.index("which unit of ML has SVM?")
        < user.index("Question:")
    )


# --- the store (real Redis) ----------------------------------------------------------------------
@pytest.fixture
async def store(settings: Settings) -> ThreadStore:
    client = aioredis.Redis.from_url(settings.redis_url or "")
    yield ThreadStore(client, Keys(settings.key_prefix), ttl_s=3600, max_turns=3)
    await client.aclose()


async def test_the_store_keeps_the_last_turns_and_expires_idle_threads(store: ThreadStore) -> None:
    thread = thread_id("cli", "revision")
    assert thread == "cli:revision"
    assert not await store.exists(thread)
    for i in range(5):
        await store.record(thread, Turn(f"q{i}", at=1000.0 + i))
    context = await store.load(thread, now=1010.0)
    assert [t.question for t in context.turns] == ["q2", "q3", "q4"] and not context.expired
    assert 3600 < await store.redis.ttl(store.keys.thread(thread)) <= 7200  # kept twice the TTL

    late = await store.load(thread, now=1004.0 + 3601)
    assert late.turns == () and late.expired
    await store.record(thread, Turn("fresh", at=9000.0), restart=True)
    assert [t.question for t in (await store.load(thread, now=9001.0)).turns] == ["fresh"]
    assert (await store.load(thread)).turns == ()  # at the real clock, "fresh" (at 9000 s) is long expired


# --- the pipeline on the sample corpus ------------------------------------------------------------
@pytest.fixture
def sample(settings: Settings) -> Settings:
    report = Engine(settings).ingest("default", sample_files(), who="test")
    assert report.changed
    return settings


async def test_a_follow_up_is_answered_from_the_previous_questions_course(sample: Settings) -> None:
    engine, answerer = Engine(sample), get_answerer(sample)
    client = aioredis.Redis.from_url(sample.redis_url or "")
    threads = ThreadStore.from_settings(client, sample)
    try:
        thread = thread_id("test", "t1")
        first = AskRequest(question="which unit of machine learning covers SVM?", thread=thread)
        await answer_question(engine, answerer, first, threads=threads)
        follow = AskRequest(question="and the reference books?", thread=thread)
        answer = await answer_question(engine, answerer, follow, threads=threads)
        assert answer.citations and {c.file for c in answer.citations} == {ML_FILE}
        assert answer.note is None

        alone = await answer_question(engine, answerer, AskRequest(question="and the reference books?"))
        assert {c.file for c in alone.citations} != {ML_FILE}  # on its own it is ambiguous

        # Idle past the TTL: it starts fresh, and says so.
        key = Keys(sample.key_prefix).thread(thread)
        old = [json.loads(t) for t in await client.lrange(key, 0, -1)]
        await client.delete(key)
        for turn in old:
            await client.rpush(key, json.dumps({**turn, "at": time.time() - 25 * 3600}))
        late = await answer_question(engine, answerer, follow, threads=threads)
        assert late.note == EXPIRED_NOTE
        assert [json.loads(t)["question"] for t in await client.lrange(key, 0, -1)] == [follow.question]
    finally:
        await client.aclose()


def test_cli_ask_thread_resolves_the_follow_up(sample: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli_queue.run_ask(sample, "what are the cloud computing course outcomes?", "default", True, "rev")
        == 0
    )
    capsys.readouterr()
    assert cli_queue.run_ask(sample, "and the textbooks?", "default", True, "rev") == 0
    data = json.loads(capsys.readouterr().out)
    assert {c["file"] for c in data["citations"]} == {"KC21CS47-cloud-computing.pdf"}


def test_cli_thread_must_name_a_conversation(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ask", "and the textbooks?", "--thread", " "]) == 2
    assert "--thread" in capsys.readouterr().err


def test_prepare_query_starts_over_when_the_follow_up_names_a_course(sample: Settings) -> None:
    snapshot = Engine(sample).snapshot("default")
    previous = Turn("which unit of ML has SVM", (ML,), ("Unit III",), "which unit has SVM", 0.0)
    query = read_question("what are the COs of cloud computing?", snapshot, [previous])
    assert query.courses == (CC,) and query.carried == ()  # its own question: nothing carried


def test_a_follow_up_naming_only_another_course_asks_the_same_of_it(sample: Settings) -> None:
    # "what about for DBMS?" after "textbooks for OS?": the textbooks of the other course, not its
    # module (modules are numbered per course) and not the old course.
    snapshot = Engine(sample).snapshot("default")
    previous = Turn("ML textbooks", (ML,), ("Unit II",), "textbooks", 0.0)
    query = read_question("and for cloud computing?", snapshot, [previous])
    assert query.courses == (CC,) and query.carried == ("textbooks",)
    assert "textbooks" in query.text and "Unit II" not in query.text


def test_the_benchmark_conversations_follow_their_rules() -> None:
    """bench/data/followups.jsonl: ≥ 20 conversations, split dev/test, second turns naming no module
    and no course of the sample corpus."""
    from bench.followups import load_conversations
    from syllabot.worker.query.question import references

    conversations = load_conversations()
    assert len(conversations) >= 20
    assert {c["split"] for c in conversations} == {"dev", "test"}
    for c in conversations:
        _, second = c["turns"]
        assert not references(second).modules, second
        lowered = f" {second.lower()} "
        names = ("21cs47", "22ai205", "cloud", " cc ", " ml ", "machine learning")
        assert not any(name in lowered for name in names), second
        assert c["file"].endswith(".pdf") and c["pages"]
