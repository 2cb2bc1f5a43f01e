"""Citations name the course and the document's own title, read from its first page."""

from __future__ import annotations

import pytest

from syllabot.shared.labels import citation_label
from syllabot.worker.ingest.doc_titles import course_code, document_title
from tests.test_loaders import make_text_pdf


@pytest.mark.parametrize(
    ("first_page", "file_name", "title"),
    [
        (
            "Archives for Historians\nLecture 6: Geocoding (1)\nDana R. Reyes\n"
            "Northfield College | HIST 330\nContents",
            "06-geocoding.pdf",
            "HIST 330 — Lecture 6: Geocoding (1)",
        ),
        (  # pypdf glues a deck's title to the course line under it
            "Sampling\nbasicsBIOL 210: Field Methods in Ecology\nDana Reyes\ndana@northfield.edu",
            "sampling_basics.pdf",
            "BIOL 210 — Sampling basics",
        ),
        (
            "Syllabus for GEOG 412\nRemote Sensing of Wetlands\nTerm: Fall 2023",
            "geog.pdf",
            "GEOG 412 — Syllabus",
        ),
        (
            "BIOL 210: Field Methods in Ecology\n(Spring 2025)\nMeeting Times: MWF",
            "BIOL_210.pdf",
            "BIOL 210 — Field Methods in Ecology",
        ),
    ],
)
def test_titles_from_the_first_page(first_page: str, file_name: str, title: str) -> None:
    assert document_title(first_page, "stem", file_name) == title


def test_a_first_page_without_a_course_keeps_the_fallback() -> None:
    assert document_title("Returns policy\nYou may return a bike within 30 days.", "returns") == "returns"
    assert course_code("Spring 2023, Week 5, Room 302") is None
    assert course_code("Northfield College | HIST 330") == "HIST 330"


def _logistics_deck() -> bytes:
    """A slide deck of its own: a title slide naming the course and the deck, two slides after it."""
    slides = [
        ["Notices and reminders", "BIOL 210: Field Methods in Ecology", "Week 5"],
        ["This week", "Field trip to Marsh Creek on Thursday; bring boots and a notebook."],
        ["Reminders", "Lab report 2 is due Friday at 5 pm on the course site."],
    ]
    return make_text_pdf(["\n".join(lines) for lines in slides])


def test_a_slide_deck_is_cited_by_course_and_title() -> None:
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import load_document

    doc = load_document(_logistics_deck(), "notices_week_5.pdf", 50 * 1024 * 1024)
    assert doc.cite_title == "BIOL 210 — Notices and reminders"
    assert doc.title == "notices_week_5"  # what the embedded context line carries
    chunk = chunk_document(doc)[-1]
    assert citation_label(chunk).startswith("BIOL 210 — Notices and reminders, p. ")
    assert chunk.page == chunk.page_end  # one slide, one page
