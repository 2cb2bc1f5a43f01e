"""Citations name the course and the document's own title, read from its heading or first lines:
never a room, a code alone, a date, a page label or a bare label; the file's name where nothing
better is printed."""

from __future__ import annotations

import pytest

from syllabot.shared.labels import citation_label
from syllabot.worker.ingest.chunking import chunk_document
from syllabot.worker.ingest.doc_titles import cite_title_of, course_code, title_like
from syllabot.worker.ingest.loaders import load_document
from syllabot.worker.text.documents import Document, Page
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
            "GEOG 412 — Remote Sensing of Wetlands",
        ),
        (
            "BIOL 210: Field Methods in Ecology\n(Spring 2025)\nMeeting Times: MWF",
            "BIOL_210.pdf",
            "BIOL 210 — Field Methods in Ecology",
        ),
    ],
)
def test_titles_from_the_first_page(first_page: str, file_name: str, title: str) -> None:
    assert cite_title_of(_pdf(file_name, first_page), first_page) == title


def _pdf(file_name: str, first_page: str) -> Document:
    stem = file_name.rsplit(".", 1)[0]
    return Document(doc_id=stem, file=file_name, title=stem, pages=[Page(1, first_page)], kind="pdf")


def test_a_first_page_without_a_course_is_named_by_its_first_title() -> None:
    page = "Returns policy\nYou may return a bike within 30 days."
    assert cite_title_of(_pdf("returns.pdf", page), page) == "Returns policy"
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


MB = 50 * 1024 * 1024


def test_a_classroom_is_never_the_course() -> None:
    """A summer syllabus names its room like a course code: "IB 335" on the meeting line, or under a
    "Location:" label, is a room, and the course is the code printed elsewhere, or none."""
    summer = make_text_pdf(
        [
            "Ecology of Streams\nSummer Session 2024\nLectures: Mon-Thu 9:00-10:50 am, IB 335\n"
            "Instructor: Dr. Jane Roe (jroe@example.edu)\n\nWe study how streams work.",
            "Grading\nQuizzes 40%, field report 60%.",
        ]
    )
    doc = load_document(summer, "summer-syllabus.pdf", MB)
    assert doc.cite_title == "Ecology of Streams"
    fall = make_text_pdf(["Location:\nIB 335\nBIOL 101: Rivers and People\nFall 2024", "Week 1\nWatersheds."])
    assert load_document(fall, "syllabus.pdf", MB).cite_title == "BIOL 101 — Rivers and People"


def test_a_homework_is_not_called_the_syllabus() -> None:
    """A homework that mentions the syllabus is named by what it prints after its course code."""
    pset = make_text_pdf(
        [
            "MATH 310, Spring 2025\nMATH 310: Problem Set 2\nDue Feb 3 at 5 pm. See the syllabus for the late policy."
        ]
    )
    assert load_document(pset, "pset2.pdf", MB).cite_title == "MATH 310 — Problem Set 2"


def test_an_exporting_programs_mark_is_no_part_of_the_title() -> None:
    deck = make_text_pdf(
        ["Week 3 Notes\nSoil cores and what they show."],
        title="Week 3 Notes - field_vault - Obsidian v1.8.10",
    )
    doc = load_document(deck, "Week 3 Notes.pdf", MB)
    assert doc.cite_title == "Week 3 Notes"
    assert (
        doc.title == "Week 3 Notes - field_vault - Obsidian v1.8.10"
    )  # what the embedded context line carries


def test_markdown_contents_and_labels_are_no_titles() -> None:
    """A table of contents' heading, or a first section named by a label, does not name the notes."""
    notes = b"# Contents\n1. [Soil sampling](#soil-sampling)\n2. [Cores](#cores)\n\n# Soil sampling\nTake a core.\n"
    doc = load_document(notes, "soil.md", MB)
    assert doc.cite_title == "Soil sampling"
    assert doc.title == "Contents"  # the loader's own title, embedded as before
    index = b"# Instructor\nJane Roe, office hours Tue 2-3 pm\n\nGEOG 205: Rivers and People\n\n# Readings\nNone.\n"
    assert load_document(index, "index.md", MB).cite_title == "GEOG 205 — Rivers and People"


def test_slides_without_a_course_are_named_by_their_title_slide_not_their_file() -> None:
    """A date under the title is no part of it; parts of one series keep their number apart."""
    deck = make_text_pdf(["SAMPLING\nDESIGN\n9.14.2024", "Random and stratified samples."])
    assert load_document(deck, "05-sampling-1.pdf", MB).cite_title == "SAMPLING DESIGN (1)"


@pytest.mark.parametrize(
    "line",
    ["IB 335", "Room 2047", "May 2, 2025", "Fall 2018. Design 217.", "Page 1", "1/12", "- Obsidian v1.8.10",
     "Instructor", "Professor Jane Roe", "Online via Zoom", "Where:"],
)  # fmt: skip
def test_lines_that_name_no_document(line: str) -> None:
    from syllabot.worker.ingest.doc_titles import names_nothing

    assert not title_like(line) or names_nothing(line, "notes.md")


def test_one_display_title_for_documents_chunks_and_stored_documents() -> None:
    from syllabot.shared.labels import display_title, title_key

    doc = load_document(b"# Contents\n- [Cores](#cores)\n\n# Cores\nTake one.\n", "cores-notes.md", MB)
    chunk = chunk_document(doc)[0]
    meta = {"file": doc.file, "title": doc.title, "cite_title": doc.cite_title}
    assert display_title(doc) == display_title(chunk) == display_title(meta) == "Cores"
    assert title_key(meta) == "cores"


def test_no_title_found_falls_back_to_the_file_name_as_words() -> None:
    assert load_document(b"- wed 9/2: python\n- fri 9/4: numpy\n", "week_schedule.md", MB).cite_title == (
        "Week schedule"
    )
