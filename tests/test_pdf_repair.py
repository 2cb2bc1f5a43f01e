"""What real PDFs lose or add in their text layer, repaired before chunking (worker/pdf_repair.py)."""

from __future__ import annotations

import pytest
from conftest import shared_data

from syllabot.worker.pdf_repair import drop_layout_debris, repair_ligatures, repair_page_text


@pytest.mark.parametrize(
    ("broken", "repaired"),
    [
        ("an (approved) \x00nal presentation", "an (approved) final presentation"),  # pypdf's NUL slot
        ("Project work\x00ow and automation", "Project workflow and automation"),  # compound: work+flow
        ("the quarter-speci\x00c course org", "the quarter-specific course org"),
        ("skills that will bene\x00t you", "skills that will benefit you"),
        ("O\x00ce Hours: by appointment", "Office Hours: by appointment"),
        ("coin \x00ips", "coin flips"),  # an inflected form the vocabulary lacks as such
        ("the di\x00erence", "the difference"),
        ("O ce Hours", "Office Hours"),  # extractors that leave the glyph's gap as a space
        ("quarter-speci c course", "quarter-specific course"),
        ("an (approved)  nal presentation", "an (approved) final presentation"),
    ],
)
def test_dropped_ligatures_come_back_as_words(broken: str, repaired: str) -> None:
    assert repair_ligatures(broken) == repaired


@pytest.mark.parametrize(
    "text",
    [
        "Late work is not accepted at all.",  # "a at" would make no word; "is not" neither
        "Download R and RStudio; see ggplot2 and dplyr.",
        "Module-3 covers deadlocks in 21CS44 (Sta~ is data).",
        "I will see you at the office in a day or two.",
    ],
)
def test_text_without_the_defect_is_left_alone(text: str) -> None:
    assert repair_ligatures(text) == text


def test_layout_debris_is_dropped_but_ellipses_and_r_output_stay() -> None:
    toc = "Contents\nRequirements . . . . . . . . . . . . 2\nGetting started: DuckDB . . . . . . 3\n"
    assert drop_layout_debris(toc) == "Contents\nRequirements \nGetting started: DuckDB \n"
    assert drop_layout_debris("Scatter ● ● ● ● ● plot") == "Scatter plot"
    assert drop_layout_debris("Grading\nHomework 80%\n8 / 48", page=8) == "Grading\nHomework 80%"
    assert drop_layout_debris("Schedule\nQuiz 1\n2/6", page=6) == "Schedule\nQuiz 1\n2/6"  # a date
    assert drop_layout_debris("Week 1\n3 / 48\nIntro", page=3) == "Week 1\n3 / 48\nIntro"  # not last
    assert drop_layout_debris("Wait... and .. ..$ name : chr") == "Wait... and .. ..$ name : chr"
    assert drop_layout_debris("Text\nffi\nfi\nTh") == "Text"


def test_the_real_vtu_syllabi_pass_through_unchanged() -> None:
    folder = shared_data("syllabi")
    from pypdf import PdfReader

    for path in sorted(folder.glob("*.pdf")):
        for page in PdfReader(str(path)).pages:
            text = page.extract_text() or ""
            assert repair_page_text(text) == text, path.name


def test_the_real_slide_deck_reads_final_and_benefit() -> None:
    folder = shared_data("courses") / "ec607-data-science"
    from syllabot.worker.loaders import load_document

    path = folder / "01-Intro.pdf"
    if not path.exists():
        pytest.skip("ec607 course not in ../shared/data")
    doc = load_document(path.read_bytes(), path.name, 50 * 1024 * 1024)
    text = " ".join(p.text for p in doc.pages)
    assert "final presentation" in text and "benefit" in text and "workflow" in text
    assert "\x00" not in text and "8 / 48" not in text
