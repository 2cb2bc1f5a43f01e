"""A long unit's quote shows the stretch about the question (``answerers.focus``)."""

from __future__ import annotations

from syllabot.worker.answerers.base import narrowed
from syllabot.worker.answerers.decision import Thresholds
from syllabot.worker.answerers.extractive import ExtractiveAnswerer
from syllabot.worker.answerers.focus import ELLIPSIS, focus_window
from syllabot.worker.indexes.retrieval import SearchResult
from syllabot.worker.text.keyword import keyword_stem as stem
from tests.queue_helpers import make_hit

#: A slide's table as a PDF's text layer flattens it: one run of words, no full stop.
TABLE = (
    "Common distributions Distribution name Parameter(s) Values it produces Sample draws "
    "Poisson (Counts) Rate of events Whole numbers 3, 0, 7, 2, 5, 11 Exponential "
    "Rate of arrivals Waiting times between events 0.41, 2.9, 0.07, 1.33, 0.8 Beta Two shape "
    "values, one for successes and one for failures A proportion between 0 and 1 "
    "0.12, 0.87, 0.5, 0.33, 0.61 Gamma Shape and scale, both positive The total waiting time over "
    "several events, always positive [4.2, 0.91], [13.6, 2.25, 7] Triangular Lower, upper and peak "
    "points (Real numbers) A number between the lower and upper points 1.4, 2.75, 0.0031 Wrapped "
    "Cauchy Circular centre and spread Angles 2.1, 274"
)


def test_a_short_unit_is_shown_whole() -> None:
    assert focus_window("Late homework is not accepted.", {"late": 1.0}) == "Late homework is not accepted."


def test_a_flattened_table_is_shown_from_the_row_asked_about() -> None:
    shown = focus_window(TABLE, {"triangular": 1.0, "distribution": 0.3})
    assert shown.startswith(ELLIPSIS) and "Triangular Lower, upper and peak points" in shown
    assert len(shown) <= 360
    assert "Poisson" not in shown  # the table's head is not what was asked


def test_the_rarest_word_picks_the_row_over_a_header_holding_more_words() -> None:
    """The header names "Distribution" and "Parameter(s)", two of the question's words; the row
    asked about holds one, the rarest: "if my data r angles which distribution n what params"."""
    shown = focus_window(TABLE, {stem("angles"): 2.6, stem("distribution"): 1.2, stem("parameters"): 1.6})
    assert "Wrapped Cauchy Circular centre and spread Angles" in shown
    assert "Poisson" not in shown


def test_a_unit_whose_start_holds_the_words_is_left_to_the_usual_clip() -> None:
    assert focus_window(TABLE, {stem("poisson"): 1.0, stem("distribution"): 0.5}) == TABLE


def test_of_two_stretches_with_the_same_words_the_one_they_start_wins() -> None:
    text = (
        ("Course Title: Soil Microbiology Course Code: AGR5120 " * 9)
        + ("Prerequisites: (Course Code and Title) None Corequisites: (Course Code and Title) None ")
        + ("Teaching hours per week: 3 lecture, 0 tutorial, 2 practical. " * 5)
    )
    shown = focus_window(text, {stem("prerequisites"): 1.0, stem("course"): 0.2})
    assert "Prerequisites: (Course Code and Title) None" in shown
    assert shown.index("Prerequisites") < 60


def test_a_stretch_at_the_end_keeps_the_words_before_it() -> None:
    text = "Filler words about nothing in particular here. " * 10 + "Office hours are on Zoom."
    shown = focus_window(text, {"zoom": 1.0})
    assert shown.startswith(ELLIPSIS) and shown.endswith("on Zoom.")
    assert len(shown) > 300  # filled back to the limit, not "…are on Zoom."


def test_the_answer_quotes_the_row_and_cites_its_page() -> None:
    """The answerer shows the row; a citation of a passage over two pages finds a quote that starts
    with "…" and names the page it is on."""
    second = TABLE.index("Beta Two shape")  # p. 10 starts two rows before the one asked about
    flat_at = len("".join(TABLE[:second].split()))
    hit = make_hit(1, TABLE, page=9, page_end=10, page_marks=[(flat_at, 10)], label="Stats, pp. 9–10")
    # a second passage on distributions makes "triangular" the rarer, heavier word, as in a real index
    other = make_hit(2, "A sampling distribution is the distribution of a statistic.", page=12)
    answer = ExtractiveAnswerer(thresholds=Thresholds(0.0, 0.0, 0.0)).answer_sync(
        "whats the triangular distribution controlled by",
        SearchResult([hit, other], "v1", 0.9, 0.9, False, "c", "q"),
        "c",
    )
    assert "Triangular Lower, upper and peak points" in answer.text
    cited = narrowed(hit, [answer.text.split(" [")[0]])
    assert (cited.page, cited.page_end) == (10, 10)
