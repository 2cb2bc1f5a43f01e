"""The course question corpus's labels hold against the documents' text (``bench.corpus_labels``).

The checker is proven on a PDF of our own (a wrong page, a misquoted evidence, an expect the page
does not print, a lost ligature it must see through); then every course present under
``../shared/data/courses/`` with its question file is checked label by label, with the corpus's
size and share of unanswerable questions. A fresh clone without the data checks the checker only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fpdf import FPDF

from bench import corpus_labels
from bench.corpus_labels import check_question, fold, found, variants


def _pdf(path: Path, pages: list[str]) -> Path:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    return path


@pytest.fixture()
def course(tmp_path: Path) -> Path:
    _pdf(
        tmp_path / "outline.pdf",
        [
            "Welcome to Orchard Studies. Meetings are on Tuesdays in the greenhouse.",
            "Grading: pruning journal 30%, grafting practical 70%. Late journals lose 5% a day.",
        ],
    )
    (tmp_path / "notes.md").write_text("# Soil\n\nLoam holds water better than sand.\n", encoding="utf-8")
    return tmp_path


def _q(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {"question": "q", "answerable": True, "course": "x", "kind": "logistics"}
    return {**base, **fields}


def test_a_right_label_passes(course: Path) -> None:
    q = _q(
        file="outline.pdf",
        page=2,
        pages=[2],
        expect=["30%", "grafting practical"],
        evidence="pruning journal 30%,  grafting\npractical 70%",
    )
    assert check_question(course, q) == []
    md = _q(file="notes.md", page=None, pages=None, expect=["sand"], evidence="Loam holds water better")
    assert check_question(course, md) == []


def test_a_wrong_page_a_misquote_and_a_missing_expect_are_caught(course: Path) -> None:
    wrong_page = _q(file="outline.pdf", page=1, pages=[1], expect=["30%"], evidence="pruning journal 30%")
    problems = check_question(course, wrong_page)
    assert any("evidence not on pages [1]" in p for p in problems)
    assert any("expect '30%' not on pages [1]" in p for p in problems)
    misquote = _q(file="outline.pdf", page=2, pages=[2], expect=["70%"], evidence="pruning diary 30%")
    assert any("evidence not on" in p for p in check_question(course, misquote))
    assert any("outside 1..2" in p for p in check_question(course, _q(file="outline.pdf", pages=[3])))
    assert any("not in" in p for p in check_question(course, _q(file="gone.pdf", pages=[1])))


def test_unanswerable_questions_carry_no_answer(course: Path) -> None:
    ok = {"question": "q", "answerable": False, "course": "x", "kind": "unanswerable", "file": None}
    assert check_question(course, ok) == []
    assert check_question(course, {**ok, "file": "outline.pdf", "expect": ["30%"]})


def test_folding_sees_through_spacing_and_a_lost_ligature() -> None:
    assert fold("Office  Hours:\n Tue 2–3") == "officehourstue23"
    text = [v for v in variants(fold("the \ufffenal exam and the work\ufffeow"))]
    assert found("final exam", text)
    assert found("workflow", [v for v in variants(fold("work\ufffeow"))])
    assert not found("final quiz", text)


def test_every_course_present_is_labelled_and_large_enough() -> None:
    """Each course whose documents and questions are both here: every label holds, at least 80
    questions, at least 20% unanswerable (the corpus's targets)."""
    for slug in corpus_labels.available():
        n, problems = corpus_labels.check_course(slug)
        assert problems == [], (slug, problems[:5])
        questions = [
            json.loads(line)
            for line in corpus_labels.questions_path(slug).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        unanswerable = sum(1 for q in questions if not q["answerable"])
        assert n >= 80, (slug, n)
        assert unanswerable / n >= 0.2, (slug, unanswerable, n)
        assert {q.get("split") for q in questions} == {corpus_labels.COURSE_FOLDERS[slug][1]}, slug
