"""What real PDFs lose or add in their text layer, repaired before chunking (worker/ingest/pdf_repair.py).

The broken strings are written here, in the shapes PDFium gives (U+FFFE for a glyph it could not
map); no course's text is copied.
"""

from __future__ import annotations

import pytest
from conftest import shared_data

from syllabot.worker.ingest.pdf_repair import (
    Dropped,
    document_words,
    drop_layout_debris,
    drop_running_lines,
    mend_marks,
    repair_pages,
)

M = "\ufffe"


@pytest.mark.parametrize(
    ("broken", "repaired"),
    [
        (f"the {M}nal exam is on Friday", "the final exam is on Friday"),
        (f"a data work{M}ow for the lab", "a data workflow for the lab"),  # compound: work+flow
        (f"the term-speci{M}c reading list", "the term-specific reading list"),
        (f"practice that will bene{M}t your grade", "practice that will benefit your grade"),
        (f"O{M}ce Hours: by appointment", "Office Hours: by appointment"),
        (f"coin {M}ips", "coin flips"),  # an inflected form the vocabulary lacks as such
        (f"the di{M}erence", "the difference"),
        (f"conflicting ob{M}jectives", "conflicting objectives"),  # a line-end hyphen PDFium joined
        (f"the documen{M}\ntation says", "the documentation says"),  # the mark at the line's end
        ("the documen\u00ad\ntation says", "the documentation says"),  # a soft hyphen
        ("the documen-\ntation says", "the documentation says"),  # a printed hyphen, a known word
        ("a well-\nknown result", "a well-\nknown result"),  # two words: the hyphen is the author's
        (f"the p{M}value is small", "the p-value is small"),  # a compound no word joins
        (f"the Poincar{M}Bendixson theorem", "the Poincar-Bendixson theorem"),
        (f"P, NP and NP{M}Complete problems", "P, NP and NP-Complete problems"),
        (f"{M} Call: lm(mpg ~ wt)", " Call: lm(mpg ~ wt)"),  # a mark alone: a listing's prompt
    ],
)
def test_marks_are_read_back_into_words(broken: str, repaired: str) -> None:
    assert mend_marks(broken)[0] == repaired


def test_a_name_the_document_spells_whole_elsewhere_is_joined() -> None:
    pages = [f"Office hours with Prof. Zarkowitz{M}ianu on Fridays.", "Contact: Prof. Zarkowitzianu"]
    assert mend_marks(pages[0])[1] == 1  # a guess without the document's words
    own = document_words(pages)
    assert mend_marks(pages[0], own) == ("Office hours with Prof. Zarkowitzianu on Fridays.", 0)


def test_marks_no_word_explains_are_counted() -> None:
    assert mend_marks(f"see qwzx{M}vbnm and {M}nal")[1] == 1
    assert mend_marks(f"run git {M}version, then git config {M}global")[1] == 0  # a symbol by a word


@pytest.mark.parametrize(
    "text",
    [
        "Late work is not accepted at all.",
        "Download R and RStudio; see ggplot2 and dplyr.",
        "Module-3 covers deadlocks in 21CS44 (Sta~ is data).",
        "I will see you at the office in a day or two.",
        "Marks: 10 20 35 50",  # not ticks: a row of numbers with words before them
        "Scores 3 1 4 1 5",
    ],
)
def test_text_without_the_defect_is_left_alone(text: str) -> None:
    assert mend_marks(text) == (text, 0)
    assert drop_layout_debris(text) == (text, Dropped())


def test_layout_debris_is_dropped_and_counted_but_ellipses_and_r_output_stay() -> None:
    toc = "Contents\nRequirements . . . . . . . . . . . . 2\nGetting started: SQLite . . . . . . 3\n"
    assert drop_layout_debris(toc) == (
        "Contents\nRequirements \nGetting started: SQLite \n",
        Dropped(dot_leaders=2),
    )
    assert drop_layout_debris("Grading\nHomework 80%\n8 / 48", page=8) == (
        "Grading\nHomework 80%",
        Dropped(page_labels=1),
    )
    assert drop_layout_debris("Schedule\nQuiz 1\n2/6", page=6)[0] == "Schedule\nQuiz 1\n2/6"  # a date
    assert drop_layout_debris("Week 1\n3 / 48\nIntro", page=3)[0] == "Week 1\n3 / 48\nIntro"  # not last
    assert drop_layout_debris("Wait... and .. ..$ name : chr")[0] == "Wait... and .. ..$ name : chr"


def test_a_header_and_footer_on_most_pages_are_dropped_and_counted() -> None:
    topics = ["sampling", "estimation", "testing", "regression", "review"]
    pages = [
        f"STAT 101 Introductory Statistics\nAbout {t}\nWhat {t} is for.\nPage {n} of 5"
        for n, t in enumerate(topics, 1)
    ]
    kept, dropped = drop_running_lines(pages)
    assert dropped == 10
    assert kept[2] == "About testing\nWhat testing is for."


def test_a_footer_naming_the_page_number_twice_is_dropped_on_that_page_too() -> None:
    # "Lecture 5" on page 5: the footer's own "5 / 6" is the page's number, not the lecture's
    topics = ["loam", "clay", "sand", "peat", "silt", "chalk"]
    pages = [
        f"About {t}\nHow {t} holds water.\nLecture 5: Soil water {n} / 6" for n, t in enumerate(topics, 1)
    ]
    kept, dropped = drop_running_lines(pages)
    assert dropped == 6
    assert kept[4] == "About silt\nHow silt holds water."


def test_a_line_a_short_document_repeats_is_kept() -> None:
    pages = ["Title\nbody one", "Title\nbody two", "Title\nbody three"]
    assert drop_running_lines(pages) == (pages, 0)


def test_repair_pages_counts_everything_for_the_ingest_report() -> None:
    pages = [f"Course notes\nThe {M}nal exam, part {w}\n{n} / 4" for n, w in enumerate("ABCD", 1)]
    repaired, dropped = repair_pages(pages)
    assert repaired[0] == "The final exam, part A"
    assert dropped.as_report() == {"page_labels": 4, "running_lines": 4}


def test_the_real_vtu_syllabi_pass_through_unchanged() -> None:
    folder = shared_data("syllabi")
    from syllabot.worker.ingest.pdf_repair import drop_layout_debris as debris
    from syllabot.worker.ingest.pdf_text import read_pdf

    for path in sorted(folder.glob("2*.pdf")):
        if "scanned" in path.name:
            continue
        for number, text in enumerate(read_pdf(path.read_bytes(), path.name, on_page=int).pages, 1):
            assert mend_marks(text) == (text.replace(M, "-"), 0), path.name  # "NP-Complete"
            assert debris(text, number)[0] == text, path.name


_SLIDES = [
    ("Why sample", "A census of every plant in the marsh is too slow for one season."),
    ("Transects", "Lay a tape from the creek bank to the road and walk along it."),
    ("Quadrats", "Quadrats are placed at random along each transect."),
    ("Counting", "Count every stem rooted inside the frame, not those leaning in."),
    ("Cover", "Estimate percent cover by eye in steps of five."),
    ("Voucher specimens", "Press one specimen of each species you cannot name in the field."),
    ("Data sheets", "Write the date, the transect number and the weather on each sheet."),
    ("Errors", "Two people counting the same quadrat rarely agree on small seedlings."),
    ("Replication", "Three transects per habitat give a rough estimate of spread."),
    ("Safety", "Work in pairs near the water and carry a radio."),
    ("Entering data", "Type the sheets into the shared spreadsheet the same evening."),
    ("Next week", "We compare the marsh counts with last year's survey."),
]


def _numbered_deck() -> bytes:
    """A deck of its own whose every slide ends with its label, "3 / 12", as slide software prints it."""
    from fpdf import FPDF

    pdf = FPDF(orientation="L")
    pdf.set_auto_page_break(False)  # the label sits in the bottom margin, on its own slide
    for number, (title, body) in enumerate(_SLIDES, 1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=24)
        pdf.multi_cell(0, 12, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=14)
        pdf.multi_cell(0, 8, body, new_x="LMARGIN", new_y="NEXT")
        pdf.set_y(-20)
        pdf.cell(0, 8, f"{number} / {len(_SLIDES)}", align="R")
    return bytes(pdf.output())


def test_a_decks_slide_labels_are_dropped_and_counted() -> None:
    from syllabot.worker.ingest.loaders import load_document

    doc = load_document(_numbered_deck(), "sampling.pdf", 50 * 1024 * 1024)
    text = " ".join(p.text for p in doc.pages)
    assert "Quadrats are placed at random" in text
    assert "3 / 12" not in text and "12 / 12" not in text
    assert doc.dropped.get("page_labels", 0) >= 10


def test_a_slide_label_after_a_frame_title_is_dropped() -> None:
    text, dropped = drop_layout_debris("Bias and variance 4/27\nThe error splits in two.", page=4)
    assert (text, dropped.page_labels) == ("Bias and variance\nThe error splits in two.", 1)
    assert drop_layout_debris("Seats 4/27 left", page=4)[0] == "Seats 4/27 left"  # not at the end
    assert drop_layout_debris("Deadline 3/27\nbody", page=4)[0] == "Deadline 3/27\nbody"  # a date


def test_furniture_lines_never_reach_a_quote() -> None:
    from syllabot.worker.ingest.pdf_repair import is_furniture, without_furniture

    names = ("lecture07", "Soil water")
    text = "lecture07\nSoil holds water in its pores.\n7 / 30\n\u25cf \u25cf \u25cf\n| 10 | 20 |\n9:00-10:15"
    assert without_furniture(text, names) == "Soil holds water in its pores.\n| 10 | 20 |\n9:00-10:15"
    assert is_furniture("Soil water 12", names) and is_furniture("Page 3 of 12")
    assert not is_furniture("Soil water holds nutrients", names)
    assert without_furniture("Nothing to drop here.", names) == "Nothing to drop here."
