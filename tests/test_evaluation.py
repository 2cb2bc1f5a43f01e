"""The pure metrics behind `syllabot eval`: expected strings, the status × answerable table, the
eval file's ``expect`` field. No Redis, no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from syllabot.shared.schema import Answer
from syllabot.worker.ops.evaluation import (
    EvalFileError,
    EvalRow,
    LabelledQuestion,
    expect_met,
    expect_summary,
    load_questions,
    metrics,
    status_table,
    summarise,
)
from tests.queue_helpers import make_hit

# --- expect_met --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("Deadlocks are in Module 3 [1].", ["module 3"]),  # case
        ("Deadlocks are in MODULE-3 [1].", ["Module 3"]),  # a printed label with a hyphen
        ("It is Unit – II of the syllabus.", ["Unit II"]),  # spaced en dash
        ("It is in Module\n3, p. 2 [1].", ["Module 3"]),  # the answer's own line-wrap
        ("Memory manage-\nment is covered [1].", ["memory management"]),  # a hyphenated wrap
        ("Credits:   03\n", ["03"]),  # whitespace collapsed, the number as printed
        ("Module 2: semaphores and monitors [1]", ["Module 2", "semaphores", "monitors"]),  # all
        ("The ﬁle system unit.", ["file system"]),  # PDF ligature
        ("Peterson’s solution [2]", ["Peterson's solution"]),  # curly apostrophe
        ("L:T:P 3-0-0", ["3-0-0"]),
        ("below -5 °C", ["-5"]),  # a leading minus sign stays part of the string
        ("Office Hours: TuTh 3:30PM - 5PM", ["3:30"]),  # a number runs into its unit
        ("A 15-page paper in 12pt font", ["15", "12"]),
        ("anything", []),  # nothing required
        ("anything", ["  "]),  # blank strings are ignored
    ],
)
def test_expect_met(text: str, expect: list[str]) -> None:
    assert expect_met(text, expect)


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("It is in Unit II [1].", ["Unit I"]),  # whole token: "Unit II" does not satisfy "Unit I"
        ("Unit III and Unit IV.", ["Unit I"]),
        ("It is in Module 30.", ["Module 3"]),
        ("It is in Submodule 3.", ["Module 3"]),  # the start is a token boundary too
        ("In the year 2003.", ["03"]),
        ("Module 2: semaphores [1]", ["Module 2", "monitors"]),  # one missing is a miss
        ("Module 23", ["Module 2"]),
        ("Modules 3", ["Module 3"]),
        ("Office Hours: 11:305", ["11:30"]),  # never into more digits
    ],
)
def test_expect_not_met(text: str, expect: list[str]) -> None:
    assert not expect_met(text, expect)


def test_unit_labels_are_told_apart_in_one_answer() -> None:
    text = "Search is in Unit II [1]; logic is in Unit IV [2]."
    assert expect_met(text, ["Unit II", "Unit IV"])
    assert not expect_met(text, ["Unit I"])
    assert expect_met(text + " Agents: Unit I [3].", ["Unit I"])


# --- status_table ------------------------------------------------------------------------------


def test_status_table_counts_rates_and_headlines() -> None:
    rows = (
        [(True, "answered")] * 6
        + [(True, "uncertain")] * 2
        + [(True, "not_in_materials")] * 2
        + [(False, "answered")]
        + [(False, "uncertain")]
        + [(False, "not_in_materials")] * 2
    )
    table = status_table(rows)
    assert table["totals"] == {"answerable": 10, "unanswerable": 4, "all": 14}
    assert table["counts"]["answered"] == {"answerable": 6, "unanswerable": 1, "all": 7}
    assert table["counts"]["uncertain"] == {"answerable": 2, "unanswerable": 1, "all": 3}
    assert table["counts"]["not_in_materials"] == {"answerable": 2, "unanswerable": 2, "all": 4}
    assert table["rates"]["answered"]["answerable"] == 0.6
    assert table["rates"]["not_in_materials"]["unanswerable"] == 0.5
    for column in ("answerable", "unanswerable", "all"):  # each column's rates sum to 1
        assert sum(table["rates"][s][column] for s in table["rates"]) == pytest.approx(1.0)
    assert table["answerable_not_in_materials"] == 0.2
    assert table["unanswerable_answered"] == 0.25
    assert table["uncertain"] == round(3 / 14, 4)
    json.dumps(table)  # goes straight into `eval --json`


def test_status_table_empty_columns_give_no_rate_not_zero() -> None:
    table = status_table([(True, "answered")])
    assert table["unanswerable_answered"] is None
    assert table["rates"]["answered"]["unanswerable"] is None
    assert table["answerable_not_in_materials"] == 0.0
    assert status_table([])["uncertain"] is None


def test_status_table_refuses_an_unknown_status() -> None:
    with pytest.raises(ValueError, match="maybe"):
        status_table([(True, "maybe")])


def test_expect_summary_counts_only_questions_with_an_expect() -> None:
    assert expect_summary([True, False, None, True, None]) == {"n": 3, "met": 2, "rate": 0.6667}
    assert expect_summary([None]) == {"n": 0, "met": 0, "rate": None}


def test_summarise_rows() -> None:
    q_mod = LabelledQuestion("which module has deadlocks?", "os.pdf", [2], True, expect=["Module 3"])
    q_none = LabelledQuestion("exam date?", None, [], False)
    rows = [
        EvalRow(q_mod, [], "answered", "Module 3 of Operating Systems, p. 2 [1]."),
        EvalRow(q_mod, [], "uncertain", "I can't tell whether your materials answer this. Module 30 [1]."),
        EvalRow(q_none, [], "not_in_materials", "Not in your materials."),
    ]
    assert [r.expect_met for r in rows] == [True, False, None]
    assert [r.in_materials for r in rows] == [True, False, False]
    summary = summarise(rows)
    assert summary["expect"] == {"n": 2, "met": 1, "rate": 0.5}
    assert summary["counts"]["not_in_materials"]["unanswerable"] == 1
    assert summary["unanswerable_answered"] == 0.0


def test_expect_is_matched_in_the_full_text_with_the_status_lead() -> None:
    """The worker's body has no marker; an ``expect`` naming it still matches, because a row holds
    the whole answer as the asker reads it."""
    q = LabelledQuestion("exam date?", None, [], False, expect=["Not in your materials", "timetable"])
    body = "The closest passage I found: exams follow the timetable [1]."
    row = EvalRow.of(q, [], Answer(text=body, status="not_in_materials", collection="c"))
    assert row.text == f"Not in your materials. {body}" and row.expect_met is True
    unsure = LabelledQuestion(
        "q", None, [], False, expect=["I can't tell whether that answers your question"]
    )
    assert EvalRow.of(unsure, [], Answer(text="x [1].", status="uncertain", collection="c")).expect_met
    assert EvalRow.of(q, [], Answer(text=body, status="answered", collection="c")).expect_met is False


def test_legacy_flag_rates_still_work_from_a_status() -> None:
    q = LabelledQuestion("q", "a.pdf", [1], True)
    hit = make_hit(1, "text", file="a.pdf", page=1)
    statuses = ["uncertain", "not_in_materials"]  # `syllabot eval` flags only "not in" replies
    out = metrics([(q, [hit], status != "not_in_materials") for status in statuses])
    assert out["recall@1_page"] == 1.0
    assert out["answerable_flagged"] == 0.5


# --- the eval file -----------------------------------------------------------------------------


def test_load_questions_reads_expect(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    lines = [
        {"question": "which module has deadlocks", "file": "21CS44.pdf", "page": 2, "expect": ["Module 3"]},
        {"question": "credits?", "file": "21CS44.pdf", "page": 1, "expect": "03", "course": "21CS44"},
        {"question": "exam date?", "file": None, "answerable": False, "expect": []},
        {"question": "no expect", "file": "a.pdf"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    questions = load_questions(path)
    assert [q.expect for q in questions] == [["Module 3"], ["03"], [], []]
    assert questions[1].extra == {"course": "21CS44"}  # expect is a field, not an extra
    assert not questions[2].answerable


def test_load_questions_refuses_a_malformed_expect(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"question": "q", "file": "a.pdf", "expect": [3]}) + "\n")
    with pytest.raises(EvalFileError, match=r"q\.jsonl:1: 'expect' must be a list of strings"):
        load_questions(path)
