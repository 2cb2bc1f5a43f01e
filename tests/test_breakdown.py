"""worker/answerers/breakdown.py: a grading breakdown read from any syllabus's way of printing it."""

from __future__ import annotations

from typing import Any

import pytest

from syllabot.worker.answerers.breakdown import components, grade_breakdown
from syllabot.worker.intent import read_intent
from tests.queue_helpers import make_hit


def named(text: str) -> list[tuple[str, float]]:
    return [(c.name, c.weight) for c in components(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a numbered list, an aside inside a name
        (
            "1) Attendance (iClicker or asynchronous) 10%\n2) Participation – forum posts 20%\n"
            "3) Homework 10%\n4) Exams 60% (4x, weighted equally)",
            [("Attendance", 10), ("Participation – forum posts", 20), ("Homework", 10), ("Exams", 60)],
        ),
        # a table flattened to one line
        (
            "Class participation/attendance 10% Weekly Discussion Posts 10% Midterm Exam 1 20% "
            "Midterm Exam 2 20% Final Project 40%",
            [
                ("Class participation/attendance", 10),
                ("Weekly Discussion Posts", 10),
                ("Midterm Exam 1", 20),
                ("Midterm Exam 2", 20),
                ("Final Project", 40),
            ],
        ),
        # each component heading its own paragraph
        (
            "Just email me to set up a time. Lab Exercises (40%) We'll do a total of 4 graded labs. "
            "Each report will be worth 10% (10 points) of your final grade.",
            [("Lab Exercises", 40)],
        ),
        # a count before the name, a label before the list
        (
            "Grading: 2 Exams 40 % (20% each) 1 Final Exam 30% Quizzes 30%",
            [("2 Exams", 40), ("1 Final Exam", 30), ("Quizzes", 30)],
        ),
        # a grade scale and prose about a weight are no components
        ("94-100% = A 80-82% = B- 66-69% = D+", []),
        ("You will receive this credit by answering 75% of a day's questions.", []),
    ],
)
def test_components_in_the_ways_syllabi_print_them(text: str, expected: list[tuple[str, float]]) -> None:
    assert named(text) == expected


PAGE4 = (
    "If you have questions, just send me an email and we can set up a time to discuss. Lab Exercises "
    "(40%) We'll do a total of 4 graded in-class labs. Each report will be worth 10% of your grade."
)
PAGE5_A = (
    "Poster Presentation (15%) At the end of the course, you'll create a poster. You'll also present "
    "your poster a second time during a public poster session."
)
PAGE5_B = (
    "You'll also present your poster a second time during a public poster session. Final Paper (40%) "
    "A 15-page final paper will serve as a focal point. Weekly Snippets (5%) During weeks 5-9 you'll write."
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
        ("Lab Exercises", 40),
        ("Poster Presentation", 15),
        ("Final Paper", 40),
        ("Weekly Snippets", 5),
    ]


def test_weights_that_do_not_add_up_to_100_are_no_breakdown() -> None:
    # a worked example of exam replacement, not how the grade is made up
    text = "Exam 1: 75%\nExam 2: 85%\nFinal Exam: 90% I will replace the 75% with a 90%"
    assert grade_breakdown([make_hit(1, text)], [text]) is None


@pytest.mark.parametrize(
    ("question", "breakdown"),
    [
        ("how is the grade broken down for this class? like % for each thing", True),
        ("whats the grading breakdown", True),
        ("how are grades calculated", True),
        ("Can you summarize the grading schedule for this class?", True),
        ("what % of the grade is the final exam", False),  # one component's weight
        ("CIE marks split for dbms", False),  # VTU's own section
        ("when are grades posted", False),
    ],
)
def test_which_questions_ask_for_the_breakdown(question: str, breakdown: bool) -> None:
    assert read_intent(question).breakdown is breakdown


def _field_methods_syllabus() -> bytes:
    """A three-page syllabus of its own: the grading paragraph on page 2 among policies, a letter
    grade scale on page 3 (ranges that must never read as weights)."""
    from fpdf import FPDF

    pdf = FPDF()
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
            "A 93-100%, A- 90-92%, B+ 87-89%, B 83-86%, B- 80-82%, C 70-79%, F below 70%.",
            "Academic integrity",
            "Copying another student's field data is plagiarism and is reported.",
        ],
    ]
    for lines in pages:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        for line in lines:
            pdf.multi_cell(0, 7, line, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    return bytes(pdf.output())


def test_a_syllabus_pdf_breakdown_is_answered_whole() -> None:
    """Through the loader, the chunker, the MiniLM search and the answerer: the four weights, in
    the syllabus's order, each cited; the grade scale's ranges and the late-work rule are not parts."""
    from syllabot.shared.config import Settings
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.chunking import chunk_document
    from syllabot.worker.embedders import get_embedder
    from syllabot.worker.index import build_snapshot
    from syllabot.worker.loaders import load_document
    from syllabot.worker.reading import read_question
    from syllabot.worker.retrieval import SearchResult, search_snapshot

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
    from syllabot.worker.retrieval import SearchResult

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
