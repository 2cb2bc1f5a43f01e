"""Slides from elsewhere read as their words: plots' marks, legends and tick labels out, symbol-font
footers out (worker/ingest/pdf_figures.py, worker/ingest/pdf_repair.py).

The decks are our own (bench/slide_decks.py; a made-up horticulture course): one built by fpdf2 here,
and a Beamer deck built by pdflatex and committed (tests/fixtures/slides/soil_water.tex, its source).
"""

from __future__ import annotations

import re

import pytest

from bench.extraction import tick_runs
from bench.slide_decks import FOOTER, SAID, beamer_deck, fpdf_deck, r_style_plot
from syllabot.worker.ingest.loaders import load_document
from syllabot.worker.text.documents import Document

_MARK_RUN = re.compile(r"(?:[\u25a0-\u25ff\u2700-\u27bf]\s*){3,}")
_LIMIT = 50 * 2**20


def _text(document: Document) -> str:
    return "\n".join(page.text for page in document.pages)


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module", params=["beamer", "fpdf"])
def deck(request: pytest.FixtureRequest) -> Document:
    data = beamer_deck() if request.param == "beamer" else fpdf_deck()
    return load_document(data, f"lecture05-{request.param}.pdf", _LIMIT)


def test_a_plots_marks_legend_and_ticks_are_left_out_and_counted(deck: Document) -> None:
    text = _text(deck)
    assert _MARK_RUN.search(text) is None, text
    assert "\u25cf" not in text and "\u274d" not in text  # ZapfDingbats' filled and open circles
    assert tick_runs(text) == 0, text
    assert re.search(r"(?m)^\s*(?:0|10|20|30|40)\s*$", text) is None  # no y-axis label on its own
    assert "mulched\n" not in text and "bare\n" not in text  # the legend's entries
    assert deck.dropped["plot_glyphs"] >= 60


def test_the_words_beside_the_plot_stay(deck: Document) -> None:
    text = _flat(_text(deck))
    for said in SAID:
        assert said in text


def test_the_footer_is_left_out_of_every_page(deck: Document) -> None:
    text = _text(deck)
    assert "HORT 210, Autumn 2031" not in text, text
    assert "/ 5" not in text and "/ 6" not in text  # the slide's label after it
    assert deck.dropped["running_lines"] >= len(deck.pages) - 1


def test_a_slides_maths_and_numbered_items_stay_beside_a_plot_deck() -> None:
    text = _text(load_document(beamer_deck(), "lecture05.pdf", _LIMIT))
    # a maths symbol PDFium maps stays where it is, and numbered items keep their numbers
    assert "dry when \u03b8 \u2264 0.2 and the top 5 cm crumble" in text
    assert "1. Probe\n2. Record" in text


def test_dingbat_bullets_before_words_stay_bullets() -> None:
    text = _text(load_document(fpdf_deck(), "lecture05.pdf", _LIMIT))
    assert "\u25c6 Reading a moisture probe\n\u25c6 Drying curves\n\u25c6 When to irrigate" in text


def test_a_plot_on_its_own_page_keeps_its_axis_title_only() -> None:
    text = _flat(_text(load_document(r_style_plot(), "moisture.pdf", _LIMIT)))
    assert text == "Days since watering"


def test_numbers_that_are_no_axis_stay() -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    lines = [
        "Grading: quizzes 10 25 40 percent",  # not one step apart
        "Rooms 101 102 103 104 are booked for the lab",  # one step apart, but words around them
        "Xtrain 1 2 3 5 6",
    ]
    for y, line in enumerate(lines):
        pdf.text(20, 30 + 10 * y, line)
    for y, value in enumerate(["3", "1", "4", "1", "5"]):  # a column of numbers, unevenly stepped
        pdf.text(20, 80 + 8 * y, value)
    text = _text(load_document(bytes(pdf.output()), "numbers.pdf", _LIMIT))
    for line in lines:
        assert line in text
    assert "3\n1\n4\n1\n5" in text
    assert FOOTER not in text
