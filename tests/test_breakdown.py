"""worker/indexes/breakdown.py: a grading breakdown read from any syllabus's way of printing it."""

from __future__ import annotations

from typing import Any

import pytest

from syllabot.worker.indexes.breakdown import components, grade_breakdown
from syllabot.worker.query.intent import read_intent
from tests.queue_helpers import make_hit
from tests.test_loaders import make_text_pdf


def named(text: str) -> list[tuple[str, float]]:
    return [(c.name, c.weight) for c in components(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a numbered list, an aside inside a name
        (
            "1) Attendance (in person or online) 15%\n2) Engagement – discussion board 15%\n"
            "3) Problem sets 20%\n4) Quizzes 50% (5x, weighted equally)",
            [
                ("Attendance", 15),
                ("Engagement – discussion board", 15),
                ("Problem sets", 20),
                ("Quizzes", 50),
            ],
        ),
        # a table flattened to one line
        (
            "Seminar participation/attendance 10% Weekly Reading Responses 15% Midterm Exam 1 15% "
            "Midterm Exam 2 20% Capstone Project 40%",
            [
                ("Seminar participation/attendance", 10),
                ("Weekly Reading Responses", 15),
                ("Midterm Exam 1", 15),
                ("Midterm Exam 2", 20),
                ("Capstone Project", 40),
            ],
        ),
        # each component heading its own paragraph
        (
            "Drop by my office if anything is unclear. Field Exercises (30%) There are 3 graded outings. "
            "Each write-up counts for 10% (10 points) of the course grade.",
            [("Field Exercises", 30)],
        ),
        # a count before the name, a label before the list
        (
            "Grading: 3 Tests 45 % (15% each) 1 Final Exam 35% Labs 20%",
            [("3 Tests", 45), ("1 Final Exam", 35), ("Labs", 20)],
        ),
        # a grade scale and prose about a weight are no components
        ("92-100% = A 78-81% = B- 64-67% = D+", []),
        ("You will receive this credit by answering 75% of a day's questions.", []),
    ],
)
def test_components_in_the_ways_syllabi_print_them(text: str, expected: list[tuple[str, float]]) -> None:
    assert named(text) == expected


PAGE4 = (
    "If anything is unclear, stop by after class and we can go over it together. Field Exercises "
    "(35%) We'll run 5 graded outings to the reserve. Each write-up will be worth 7% of your grade."
)
PAGE5_A = (
    "Map Portfolio (20%) By the end of term, you'll assemble a portfolio of maps. You'll also show "
    "the portfolio a second time at an open department evening."
)
PAGE5_B = (
    "You'll also show the portfolio a second time at an open department evening. Site Report (35%) "
    "A 10-page site report will tie the term together. Field Journal (10%) During weeks 3-8 you'll write."
)


def test_a_breakdown_over_two_pages_comes_whole_and_in_the_documents_order() -> None:
    # ranked: the page-5 window that runs on from the other first, page 4 last
    hits = [
        make_hit(1, PAGE5_B, page=5, score=0.6, file="s.pdf", doc_id="s"),
        make_hit(2, PAGE4, page=4, score=0.5, file="s.pdf", doc_id="s"),
        make_hit(3, PAGE5_A, page=5, score=0.4, file="s.pdf", doc_id="s"),
    ]
    parts = grade_breakdown(hits, [h.text for h in hits])
    assert parts is not None
    assert [(c.name, c.weight) for c in parts] == [
        ("Field Exercises", 35),
        ("Map Portfolio", 20),
        ("Site Report", 35),
        ("Field Journal", 10),
    ]


def test_weights_that_do_not_add_up_to_100_are_no_breakdown() -> None:
    # a worked example of exam replacement, not how the grade is made up
    text = "Test 1: 68%\nTest 2: 81%\nFinal Exam: 88% so the 68% is dropped in favour of the 88%"
    assert grade_breakdown([make_hit(1, text)], [text]) is None


@pytest.mark.parametrize(
    ("question", "breakdown"),
    [
        ("how is the grade broken down for this class? like % for each thing", True),
        ("whats the grading breakdown", True),
        ("how are grades calculated", True),
        ("Could you sum up the grading scheme for this class?", True),
        ("what % of the grade is the lab report", False),  # one component's weight
        ("CIE marks split for dbms", False),  # VTU's own section
        ("when are grades posted", False),
    ],
)
def test_which_questions_ask_for_the_breakdown(question: str, breakdown: bool) -> None:
    assert read_intent(question).breakdown is breakdown


def _field_methods_syllabus() -> bytes:
    """A three-page syllabus of its own: the grading paragraph on page 2 among policies, a letter
    grade scale on page 3 (ranges that must never read as weights)."""
    pages = [
        [
            "BIOL 210 Field Methods in Ecology",
            "Instructor: Dr. Rowan Ellery. Office hours: Tuesdays 2-3 pm, Hale 114.",
            "Course description",
            "Students design a field survey, collect samples at the Marsh Creek station and write up their data.",
        ],
        [
            "Assessment",
            "Your grade is made up of four parts.",
            "Lab reports 35%",
            "Midterm exam 20%",
            "Field notebook 15%",
            "Final project 30%",
            "Late work loses 10% per day unless an extension was agreed in advance.",
        ],
        [
            "Grade scale",
            "A 94-100%, A- 90-93%, B+ 87-89%, B 84-86%, B- 80-83%, C 70-79%, F below 70%.",
            "Academic integrity",
            "Copying another student's field data is plagiarism and is reported.",
        ],
    ]
    return make_text_pdf(["\n\n".join(lines) for lines in pages])


def test_a_syllabus_pdf_breakdown_is_answered_whole() -> None:
    """Through the loader, the chunker, the MiniLM search and the answerer: the four weights, in
    the syllabus's order, each cited; the grade scale's ranges and the late-work rule are not parts."""
    from syllabot.shared.config import Settings
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.indexes.embedders import get_embedder
    from syllabot.worker.indexes.index import build_snapshot
    from syllabot.worker.indexes.retrieval import SearchResult, search_snapshot
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import load_document
    from syllabot.worker.query.reading import read_question

    settings = Settings(embedder="minilm", _env_file=None)
    embedder: Any = get_embedder(settings)
    chunks = chunk_document(load_document(_field_methods_syllabus(), "biol210.pdf", 50 * 2**20))
    matrix = embedder.embed_documents([c.text for c in chunks])
    snapshot = build_snapshot("v1", "biol", embedder.id, embedder.dim, chunks, matrix, "now")
    question = "how is the grade broken down for this class? like % for each thing"
    query = read_question(question, snapshot)
    selection, hits = search_snapshot(snapshot, embedder.embed_query(query.text), query, settings)
    result = SearchResult(hits, "v1", 0, 0, selection.fallback, "biol", question, query)
    answer = ExtractiveAnswerer(settings).answer_sync(question, result, "biol")
    assert answer.status == "answered", answer.text
    lines = answer.text.splitlines()
    assert lines[0] == "The grade is made up of (together 100%):"
    assert [line.split(" [")[0] for line in lines[1:]] == [
        "- Lab reports: 35%",
        "- Midterm exam: 20%",
        "- Field notebook: 15%",
        "- Final project: 30%",
    ]


REVISED = make_hit(
    1, "Grading\nHomework 20%\nMidterm exam 20%\nFinal exam 60%", file="syllabus-revised.pdf", doc_id="syl"
)
FIRST_WEEK = make_hit(
    2,
    "Grading\n\u2022Homework 40%\n\u2022Midterm exam 30%\n\u2022Final project 20%\n\u2022Participation 10%",
    file="lecture1.pdf",
    doc_id="l1",
)


def ask_breakdown(hits: list[Any]) -> Any:
    """The worker's answer to "whats the grading breakdown" from these hits, conflict note included."""
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.indexes.retrieval import SearchResult

    question = "whats the grading breakdown"
    result = SearchResult(hits, "v", 0, 0, False, "c", question)
    return ExtractiveAnswerer().answer_sync(question, result, "c")


@pytest.mark.parametrize("revised_first", [True, False])
def test_two_documents_breaking_the_grade_down_differently(revised_first: bool) -> None:
    """A syllabus revised mid-term (20/20/60) beside the first-week slides (40/30/20/10): the answer
    says the materials disagree, the revised one first, and the breakdown it quotes is the revised
    one's, whichever document ranks first."""
    from syllabot.shared.answer_text import answer_text

    answer = ask_breakdown([REVISED, FIRST_WEEK] if revised_first else [FIRST_WEEK, REVISED])
    text = answer_text(answer)
    assert answer.status == "answered"
    assert text.startswith("Your materials disagree.") and "“revised” in its name" in text
    body = text.split("\n\n", 1)[1]
    assert "- Final exam: 60%" in body and "Participation" not in body
