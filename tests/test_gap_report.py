"""The teacher's gap report: grouping (pure), the question log's retention and privacy on a real
Redis, the report job through a real worker, and `syllabot report --csv/--json`."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import time
from typing import Any

import numpy as np
import pytest
import redis

from syllabot import cli
from syllabot.shared.config import Settings
from syllabot.shared.feedback import Feedback
from syllabot.shared.gap_report import CSV_FIELDS, GapReport, GapTopic, summary_line, table, to_csv
from syllabot.shared.keys import Keys
from syllabot.shared.queue import QueueClient
from syllabot.shared.redis_conn import async_client
from syllabot.shared.schema import AskRequest
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.gaps import GapQuestion, build_topics, cluster, top_words
from syllabot.worker.ops.question_log import DAY_MS, QuestionLog
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import running_worker

#: Questions the sample help centre does not answer: two planted topics, paraphrased.
FIELD_TRIP = [
    "is there a field trip",
    "when is the field trip",
    "field trip cost",
    "is the field trip compulsory",
]
PARKING = ["parking for exams", "exam day parking spot", "where is exam parking", "parking during exams"]
USER = "discord:424242"


def csv_rows(data: bytes | str) -> list[dict[str, str]]:
    """A report's CSV as rows by column (the report tests of both platforms read their attachments)."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return list(csv.DictReader(io.StringIO(text)))


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


# --- grouping (pure) ------------------------------------------------------------------------------


def test_cluster_finds_planted_directions_and_leaves_an_outlier_alone() -> None:
    rng = np.random.default_rng(7)
    centres = [_unit(rng.normal(size=64)) for _ in range(3)]
    rows, truth = [], []
    for topic, centre in enumerate(centres):
        for _ in range(6):
            rows.append(_unit(centre + 0.25 * rng.normal(size=64) / 8))
            truth.append(topic)
    rows.append(_unit(rng.normal(size=64)))
    truth.append(-1)
    groups = cluster(np.stack(rows), 0.5)
    as_sets = sorted((sorted({truth[i] for i in g}), len(g)) for g in groups)
    assert as_sets == [([-1], 1), ([0], 6), ([1], 6), ([2], 6)]
    assert cluster(np.zeros((0, 4), dtype=np.float32)) == []


def test_topics_are_named_by_their_central_question_and_distinctive_words() -> None:
    base = {"trip": _unit(np.array([1.0, 0, 0, 0])), "park": _unit(np.array([0, 1.0, 0, 0]))}
    texts = {
        "trip": ["is there a field trip", "field trip dates", "field trip to a company"],
        "park": ["parking for exams", "exam parking lot"],
    }
    questions = []
    for name, items in texts.items():
        for i, text in enumerate(items):
            wobble = np.zeros(4)
            wobble[2 + i % 2] = 0.05 * (i + 1)
            questions.append(
                GapQuestion(text, _unit(base[name] + wobble), "not_in_materials", i == 0, f"{name} passage")
            )
    topics = build_topics(questions)
    assert [t.count for t in topics] == [3, 2]
    trip = topics[0]
    assert trip.label == "is there a field trip"  # the least wobbly: the most central
    assert trip.voted_down == 1 and trip.not_in_materials == 3 and trip.closest == "trip passage"
    assert set(trip.examples) == {"field trip dates", "field trip to a company"}
    assert trip.words[:2] == ["field", "trip"]
    words = top_words(["parking for exams", "exam parking lot"], [q.text for q in questions])
    assert set(words[:2]) == {"parking", "exams"} and "lot" not in words  # once only: not distinctive


def test_csv_and_table_of_a_report() -> None:
    topic = GapTopic(
        label="is there a field trip, really?",
        words=["field", "trip"],
        count=3,
        not_in_materials=2,
        uncertain=1,
        examples=["when is the field trip", 'field "trip" cost'],
        closest="Cloud Computing — Module 1, p. 1",
    )
    report = GapReport(
        collection="cs", days=7, since="2026-11-24T00:00:00+00:00", until="2026-12-01T00:00:00+00:00",
        keep_days=30, questions=10, gaps=3, topics=[topic],
    )  # fmt: skip
    rows = list(csv.reader(io.StringIO(to_csv(report))))
    assert tuple(rows[0]) == CSV_FIELDS
    assert rows[1] == [
        "1", "is there a field trip, really?", "3", "2", "1", "0", "field trip",
        'when is the field trip | field "trip" cost', "Cloud Computing — Module 1, p. 1",
    ]  # fmt: skip
    assert "1  3  2/1/0" in table(report)
    assert summary_line(report).startswith("Collection 'cs', the last 7 days: 3 of 10 questions")
    off = report.model_copy(update={"keep_days": 0, "questions": 0, "gaps": 0, "topics": []})
    assert "SYLLABOT_KEEP_QUESTIONS_DAYS is 0" in summary_line(off)


# --- the question log: retention and privacy -------------------------------------------------------


async def test_records_older_than_the_retention_are_gone(settings: Settings) -> None:
    keys = Keys(settings.key_prefix)
    client = async_client(settings)
    try:
        log = QuestionLog(client, keys, keep_days=2)
        key = keys.questions("cs")
        now_ms = int(time.time() * 1000)
        for age_days in (5, 3, 1):  # written by hand with their old stream ids
            await client.xadd(
                key,
                {"q": f"asked {age_days} days ago", "status": "uncertain"},
                id=f"{now_ms - age_days * DAY_MS}-0",
            )
        vector = _unit(np.ones(8))
        await log.record("cs", "hi, is there a field trip? 🙏", "not_in_materials", vector, "M1", "v1")
        _, records = await log.read("cs", days=30)
        assert [r.text for r in records] == ["asked 1 days ago", "is there a field trip?"]
        assert np.allclose(records[-1].vector, vector) and records[-1].closest == "M1"
        assert 0 < await client.pttl(key) <= 2 * DAY_MS  # an unused stream goes as a whole
        _, week = await log.read("cs", days=1)
        assert [r.text for r in week] == ["is there a field trip?"]
    finally:
        await client.aclose()


async def _ask_all(client: QueueClient, questions: list[str]) -> None:
    for q in questions:
        await client.ask(AskRequest(question=q, collection="shop", platform="discord", user=USER))


async def test_nothing_is_stored_when_keeping_is_off(settings: Settings) -> None:
    assert settings.keep_questions_days == 0  # the default
    async with running_worker(settings), QueueClient(settings) as client:
        await client.ingest_many("shop", sample_files(), who="admin")
        await _ask_all(client, FIELD_TRIP)
        report = await client.report("shop", 7)
    sync = redis.Redis.from_url(settings.redis_url or "")
    assert not sync.exists(Keys(settings.key_prefix).questions("shop"))
    stored = b" ".join(sync.dump(k) or b"" for k in sync.scan_iter(match=f"{settings.key_prefix}*"))
    assert b"field trip" not in stored
    assert report.questions == 0 and report.topics == [] and report.keep_days == 0


async def test_report_job_groups_gaps_and_never_names_who_asked(settings: Settings) -> None:
    keeping = settings.model_copy(update={"keep_questions_days": 7})
    keys = Keys(settings.key_prefix)
    async with running_worker(keeping), QueueClient(keeping) as client:
        await client.ingest_many("shop", sample_files(), who="admin")
        await _ask_all(client, FIELD_TRIP + PARKING)
        answered = await client.ask(
            AskRequest(question="How many days do I have to return a new bike?", collection="shop", user=USER)
        )
        assert answered.status == "answered"
        redis_client = async_client(keeping)
        try:
            feedback = Feedback(redis_client, keys)
            answer_id = await feedback.record_answer(answered, "discord", USER)
            await feedback.vote(answer_id, USER, "down")
        finally:
            await redis_client.aclose()
        report = await client.report("shop", 7)
    assert report.questions == 9 and report.keep_days == 7
    statuses = {t.label: t for t in report.topics}
    trip = next(t for t in report.topics if "field trip" in t.label)
    park = next(t for t in report.topics if "parking" in t.label or "exam" in t.label)
    assert trip.count == 4 and park.count == 4, [(t.label, t.count) for t in report.topics]
    assert trip.not_in_materials + trip.uncertain == 4 and "trip" in trip.words
    down = [t for t in report.topics if t.voted_down]
    assert len(down) == 1 and down[0].count == 1 and "return" in down[0].label and statuses
    text = report.model_dump_json()
    assert "424242" not in text and USER not in text


# --- the CLI ------------------------------------------------------------------------------------------


def test_cli_report_csv_and_json(settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    keeping = settings.model_copy(update={"keep_questions_days": 7})
    engine = Engine(keeping)
    engine.ingest("shop", sample_files(), "admin")

    async def keep_some() -> None:  # as a worker keeps them
        client = async_client(keeping)
        try:
            log = QuestionLog(client, Keys(keeping.key_prefix), 7)
            for q in FIELD_TRIP:
                found = engine.search("shop", q)
                await log.record(
                    "shop", q, "not_in_materials", found.vector, found.hits[0].label, found.index_version
                )
        finally:
            await client.aclose()

    asyncio.run(keep_some())
    monkeypatch.setattr(cli, "get_settings", lambda: keeping)
    assert cli.main(["report", "-c", "shop", "--days", "7", "--csv"]) == 0
    rows = csv_rows(capsys.readouterr().out)
    assert tuple(rows[0]) == CSV_FIELDS and len(rows) == 1 and rows[0]["count"] == "4"
    assert cli.main(["report", "-c", "shop", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == list(GapReport.model_fields) and data["days"] == 7 and data["gaps"] == 4
    assert list(data["topics"][0]) == list(GapTopic.model_fields)
    assert cli.main(["report", "-c", "shop"]) == 0
    assert "4 of 4 questions" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        cli.main(["report", "-c", "shop", "--days", "0"])
    assert exited.value.code == 2
    assert "--days" in capsys.readouterr().err


def test_vectors_of_an_earlier_embedder_are_left_out() -> None:
    from syllabot.worker.ops.report import same_dimension

    new = [GapQuestion(f"q{i}", _unit(np.ones(8)), "uncertain") for i in range(3)]
    old = [GapQuestion("old", _unit(np.ones(4)), "uncertain")]
    assert same_dimension(new + old) == new
    assert same_dimension(new) == new


def test_questions_asked_in_the_terminal_without_a_worker_are_kept_too(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """A class that only uses the CLI: `syllabot ask` answers in-process and keeps the question
    under the worker's rules, so `syllabot report` is not empty."""
    keeping = settings.model_copy(update={"keep_questions_days": 7})
    Engine(keeping).ingest("shop", sample_files(), "admin")
    monkeypatch.setattr(cli, "get_settings", lambda: keeping)
    for q in FIELD_TRIP:
        assert cli.main(["ask", q, "-c", "shop"]) == 0
    capsys.readouterr()
    assert cli.main(["report", "-c", "shop", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["questions"] == len(FIELD_TRIP) and data["gaps"] == len(FIELD_TRIP)

    off = settings.model_copy(update={"key_prefix": settings.key_prefix + "off:"})
    Engine(off).ingest("shop", sample_files(), "admin")
    monkeypatch.setattr(cli, "get_settings", lambda: off)
    assert cli.main(["ask", FIELD_TRIP[0], "-c", "shop"]) == 0
    capsys.readouterr()
    assert cli.main(["report", "-c", "shop", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["questions"] == 0  # keeping is off by default


# --- conflicting materials in the report --------------------------------------------------------


def test_the_report_lists_where_the_materials_disagree_on_every_front_end() -> None:
    from syllabot.bots.discord_render import render_gap_report as discord_report
    from syllabot.bots.slack_render import render_gap_report as slack_report
    from syllabot.shared.gap_report import disagreements
    from syllabot.shared.schema import ConflictInfo

    fact = ConflictInfo(
        topic="poster presentations",
        kind="count",
        first="Syllabus, p. 2",
        first_text="1 × poster presentations 10% @everyone",
        second="Lecture 1 slides, p. 5",
        second_text="2 × poster presentations (5% each) 10%",
    )
    quiet = GapReport(
        collection="ec", days=7, since="s", until="u", keep_days=7, questions=0, gaps=0, topics=[]
    )
    loud = quiet.model_copy(update={"conflicts": [fact] * 7})
    assert disagreements(quiet) == []
    lines = disagreements(loud, limit=5)
    assert lines[0] == "Your materials disagree on 7 facts (fix them before students ask):"
    assert len(lines) == 7 and lines[-1] == "… and 2 more: syllabot conflicts -c ec"
    assert (
        "Syllabus, p. 2 says “1 × poster presentations" in lines[1] and "Lecture 1 slides, p. 5" in lines[1]
    )
    embed = discord_report(loud).embeds[0]
    assert "disagree on 7 facts" in (embed.description or "") and "@everyone" not in (embed.description or "")
    assert "disagree" not in (discord_report(quiet).embeds[0].description or "")
    slack = json.dumps(slack_report(loud)["blocks"], ensure_ascii=False)
    assert "disagree on 7 facts" in slack and "Lecture 1 slides, p. 5" in slack and "<!everyone>" not in slack
    assert "disagree" not in json.dumps(slack_report(quiet)["blocks"])


def _disagreeing_files() -> list[tuple[str, bytes]]:
    """Two versions of one handout, giving two counts of presentations."""
    from tests.test_conflicts import HANDOUT_MARKS, handout

    return [
        ("syllabus.md", handout(HANDOUT_MARKS[0]).encode()),
        ("intro.md", handout(HANDOUT_MARKS[1]).encode()),
    ]


async def test_report_job_names_the_facts_the_documents_disagree_on(settings: Settings) -> None:
    files = _disagreeing_files()
    async with running_worker(settings), QueueClient(settings) as client:
        await client.ingest_many("ec", files, who="admin")
        report = await client.report("ec", 7)
        empty = await client.report("nothing-indexed", 7)
    (fact,) = report.conflicts
    assert fact.kind == "count" and fact.first != fact.second
    assert "1 × poster presentations" in fact.first_text + fact.second_text
    assert "2 × poster presentations" in fact.first_text + fact.second_text
    assert empty.conflicts == []


def test_cli_report_prints_the_disagreements(settings: Settings, capsys: Any) -> None:
    files = _disagreeing_files()
    Engine(settings).ingest("ec", files, "admin")
    printed = cli.cmd_report(cli.build_parser().parse_args(["report", "-c", "ec"]), settings)
    out = capsys.readouterr().out
    assert printed == 0 and "Your materials disagree on 1 fact (fix them before students ask):" in out
    assert "2 × poster presentations" in out


def test_greetings_and_thanks_get_a_hello_and_are_counted_apart(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """ "hi", "thanks!" and "ty" are answered with a short hello (not "Not in your materials" and
    a random passage), search nothing, and the report counts them apart from the gaps."""
    keeping = settings.model_copy(update={"keep_questions_days": 7})
    Engine(keeping).ingest("shop", sample_files(), "admin")
    monkeypatch.setattr(cli, "get_settings", lambda: keeping)
    for message in ("hi", "thanks!", "ty 🙏"):
        assert cli.main(["ask", message, "-c", "shop", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["status"] == "answered" and data["citations"] == [], data
        assert "Not in your materials" not in data["text"]
        assert data["text"].startswith(("Hi!", "You're welcome")), data["text"]
    assert cli.main(["ask", FIELD_TRIP[0], "-c", "shop"]) == 0  # a real gap beside them
    capsys.readouterr()
    assert cli.main(["report", "-c", "shop", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["questions"], report["gaps"], report["social"]) == (4, 1, 3)
    assert "3 more were only greetings or thanks" in summary_line(GapReport.model_validate(report))
