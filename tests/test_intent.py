"""What a question asks for: lists, one CO, which module, and the value a fact question needs."""

from __future__ import annotations

import pytest

from syllabot.worker.query.intent import VALUE_PATTERNS, read_intent, section_pattern
from syllabot.worker.query.question import clean_question
from syllabot.worker.query.reading import read_question


@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("what are all the COs for OS", "outcomes"),
        ("course outcomes of computer networks", "outcomes"),
        ("textbook for os? need the author name", "textbooks"),
        ("which books do we follow for DBMS", "textbooks"),
        ("reference books list for operating systems", "references"),
        ("ref books for ada", "references"),
        ("lab programs for dbms", "lab"),
        ("list of experiments in ADA lab", "lab"),
        ("how is the CIE split in CN, how many tests", "marks"),
        ("marks breakup for internals", "marks"),
    ],
)
def test_list_questions_name_the_block_they_want(question: str, section: str) -> None:
    intent = read_intent(clean_question(question))
    assert intent.section == section
    assert intent.is_list


def test_one_course_outcome_is_not_a_list() -> None:
    intent = read_intent(clean_question("wat is CO 3 in os"))
    assert intent.section == "outcomes"
    assert intent.cos == (3,)
    assert not intent.is_list


@pytest.mark.parametrize(
    "question",
    [
        "which module covers deadlocks?",
        "semaphores and monitors come in which mod of os",
        "in which unit is the A* search",
        "linux case study is in wich module in operating systems",
    ],
)
def test_which_module_questions(question: str) -> None:
    intent = read_intent(clean_question(question))
    assert intent.where
    assert intent.section is None


@pytest.mark.parametrize(
    ("question", "wants"),
    [
        ("when is the DBMS exam", "date"),
        ("what date is the final", "date"),
        # who teaches, how to reach them, their office hours: course-card slots, no value kind
        ("what is the professor's email", None),
        ("office hours of the instructor?", None),
        ("who teaches ADA section B", None),
        ("how many credits is OS", "number"),
        ("minimum marks to pass SEE", "number"),
        ("what percentage is the final worth", "number"),
        ("what is deadlock", None),
        ("how long does a deep read of a paper take", "duration"),
        ("how long is the exam", "duration"),
        ("what support is there for students who are struggling with the material", None),
        ("how do i book a meeting? is there a link", None),
    ],
)
def test_value_questions_say_which_value(question: str, wants: str | None) -> None:
    assert read_intent(clean_question(question)).wants == wants


@pytest.mark.parametrize(
    ("question", "wants", "compared"),
    [
        ("how long is the essay", "duration", {"duration"}),
        ("when is the final exam", "date", {"weekday", "date", "time", "duration"}),
        ("how many quizzes are there", "number", {"count"}),
        ("what are the office hours", None, {"time", "weekday"}),
        # a hint the check reads, no value the answer must quote ("due", "edition")
        ("is the essay due on canvas", None, {"weekday", "date", "time", "duration"}),
        ("which edition of the textbook", None, {"edition"}),
    ],
)
def test_the_answer_and_the_conflict_check_read_one_reading(
    question: str, wants: str | None, compared: set[str]
) -> None:
    # one classifier read once: the value the answer quotes and the kinds the check compares
    # come from the same rows, so "how long is the essay" is a duration to both
    read = read_question(question)
    assert read.intent.wants == wants
    assert read.intent.compared == compared


def test_value_patterns_find_the_value_and_not_a_timetable_promise() -> None:
    assert VALUE_PATTERNS["date"].search("The final exam is on May 12 at 9 am.")
    assert not VALUE_PATTERNS["date"].search(
        "The SEE is held by the University on the days its published timetable sets"
    )
    assert VALUE_PATTERNS["number"].search("Credits 04 Exam Hours 03")
    assert VALUE_PATTERNS["duration"].search("Course Duration: 14 weeks")
    assert VALUE_PATTERNS["duration"].search("Target: a few hours (maybe more)")
    assert VALUE_PATTERNS["duration"].search("you'll have two weeks to complete it")
    assert not VALUE_PATTERNS["duration"].search("Read the cover and scan the index")


def test_section_patterns_match_the_chunkers_section_names() -> None:
    assert section_pattern("outcomes").search("Course outcomes")
    assert section_pattern("textbooks").search("Textbooks")
    assert not section_pattern("textbooks").search("Reference books")
    assert section_pattern("references").search("Reference books")
    assert section_pattern("lab").search("Practical component")
    assert section_pattern("marks").search("Continuous Internal Evaluation")
    with pytest.raises(KeyError):
        section_pattern("nonsense")
