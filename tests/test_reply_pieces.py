"""What an "I can't tell" reply shows, and lists read on across a passage boundary.

Pure tests over passages of our own writing (no Redis, no model), then one list cut by a page
break through the product's own snapshot and search with the hashing embedder.
"""

from __future__ import annotations

import re

import numpy as np

from syllabot.shared.answer_text import answer_text
from syllabot.shared.config import Settings
from syllabot.worker.answerers.base import emphasise, finalise_citations
from syllabot.worker.answerers.decision import Thresholds
from syllabot.worker.answerers.extractive import PIECE_CHARS, ExtractiveAnswerer, reply_for
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.index import build_snapshot
from syllabot.worker.indexes.retrieval import SearchResult, joined_list, search_snapshot
from syllabot.worker.query.reading import Question, asked
from syllabot.worker.text.documents import Chunk
from tests.queue_helpers import make_hit

#: Bands no evidence clears and none falls under: every general answer is "uncertain".
UNSURE = Thresholds(min_cosine=0.99, min_coverage=1.0, sure_cosine=0.99)

HOMEWORK = make_hit(
    1,
    "Weekly homework. Each homework set practises the week's pottery glazes. "
    "Sets are handed in on paper every other Friday before noon.",
    score=0.9,
    cosine=0.6,
)
GLAZE_LAB = make_hit(
    2,
    "Glaze lab. The homework glaze tests are fired in the small kiln on Thursdays.",
    score=0.8,
    cosine=0.55,
)
GLAZE_LAB_AGAIN = make_hit(
    3,
    "Glaze lab: the homework glaze tests are fired in the small kiln on Thursdays.",
    score=0.78,
    cosine=0.55,
)
STUDIO = make_hit(
    4,
    "Studio hours. The homework studio is open to every enrolled student from 8 am to 10 pm.",
    score=0.7,
    cosine=0.5,
)
KILN_SAFETY = make_hit(
    5,
    "Kiln safety. Homework pieces with thick glaze must dry for two days before firing.",
    score=0.6,
    cosine=0.45,
)


def _reply(question: str, hits: list) -> tuple[str, str]:
    reply = reply_for(asked(Question(question)), hits, False, UNSURE)
    text, _ = finalise_citations(reply.text, hits, brackets=False)
    return reply.status, text


def test_an_unsure_reply_shows_the_best_piece_of_three_passages_best_first() -> None:
    status, text = _reply("when is the homework due", [HOMEWORK, GLAZE_LAB, STUDIO, KILN_SAFETY])
    assert status == "uncertain"
    pieces = text.split("\n\n")
    assert len(pieces) == 3
    # each piece is cited once, in the order shown
    assert [re.findall(r"\[(\d+)\]", p) for p in pieces] == [["1"], ["2"], ["3"]]
    # the sentence the question matched brings the ones beside it: the one that says when
    homework = next(p for p in pieces if "Weekly homework" in p or "homework set" in p)
    assert "every other Friday" in homework
    assert all(len(p) <= PIECE_CHARS + 5 for p in pieces)


def test_a_piece_that_says_again_what_one_before_it_said_is_left_out() -> None:
    _status, text = _reply(
        "where r the homework glaze tests fired", [GLAZE_LAB, GLAZE_LAB_AGAIN, STUDIO, KILN_SAFETY]
    )
    assert text.count("small kiln") == 1
    # the repeat gives its place to the next passage that says something else
    assert len(text.split("\n\n")) == 2 and "[2]" in text


def test_the_whole_unsure_reply_fits_a_chat_message() -> None:
    long = [
        make_hit(i, " ".join(f"Homework rule {i}.{k} says the glaze tests need care." for k in range(30)))
        for i in range(1, 7)
    ]
    hits = [h.model_copy(update={"score": 0.9 - 0.05 * h.rank, "cosine": 0.5}) for h in long]
    result = SearchResult(hits, "v1", 0.0, 0.0, False, "c", "when is the homework due")
    answer = ExtractiveAnswerer(thresholds=UNSURE).answer_sync("when is the homework due", result, "c")
    assert answer.status == "uncertain"
    assert len(answer_text(answer)) <= 1200
    assert answer.citations


def _chunk(i: int, text: str, page: int, doc: str = "plan") -> Chunk:
    return Chunk(
        chunk_id=f"{doc}:{i}", doc_id=doc, file=f"{doc}.pdf", title="Pottery plan", text=text, page=page
    )


def _snapshot(chunks: list[Chunk]):
    embedder = HashingEmbedder(256)
    matrix = embedder.embed_documents([c.text for c in chunks])
    return build_snapshot("v1", "c", embedder.id, embedder.dim, chunks, matrix, "now"), embedder


TOPICS_P1 = "Course topics:\n1. Wedging clay\n2. Centering on the wheel\n3. Pulling walls"
TOPICS_P2 = "4. Trimming a foot\n5. Glaze chemistry\n6. Firing the kiln"
AFTER = "Grading is by portfolio at the end of term."


def test_a_list_cut_by_a_page_break_is_read_on_into_the_next_page() -> None:
    chunks = [_chunk(0, TOPICS_P1, 1), _chunk(1, TOPICS_P2, 2), _chunk(2, AFTER, 2)]
    snapshot, _ = _snapshot(chunks)
    first = make_hit(1, TOPICS_P1, doc_id="plan", file="plan.pdf", page=1)
    joined = joined_list(snapshot, 0, first)
    assert "6. Firing the kiln" in joined.text and "Grading" not in joined.text
    assert (joined.page, joined.page_end) == (1, 2)
    # the citation of a quote from the second half names the page it is on
    assert joined.page_marks and joined.page_marks[-1][1] == 2


def test_a_passage_that_ends_in_prose_or_is_followed_by_prose_is_not_joined() -> None:
    chunks = [_chunk(0, TOPICS_P1, 1), _chunk(1, AFTER, 2)]
    snapshot, _ = _snapshot(chunks)
    first = make_hit(1, TOPICS_P1, doc_id="plan", file="plan.pdf", page=1)
    assert joined_list(snapshot, 0, first) == first
    prose = make_hit(2, AFTER, doc_id="plan", file="plan.pdf", page=2)
    assert joined_list(snapshot, 1, prose) == prose


def test_search_returns_a_cut_list_whole(settings: Settings) -> None:
    chunks = [_chunk(0, TOPICS_P1, 1), _chunk(1, TOPICS_P2, 2), _chunk(2, AFTER, 2, doc="rules")]
    snapshot, embedder = _snapshot(chunks)
    question = "what are the course topics"
    vector = np.asarray(embedder.embed_query(question))
    _selection, hits = search_snapshot(snapshot, vector, question, settings)
    top = next(h for h in hits if h.text.startswith("Course topics"))
    assert all(f"{n}." in top.text for n in range(1, 7))


def test_items_an_overlapping_window_repeats_are_read_on_once() -> None:
    repeat = "2. Centering on the wheel\n3. Pulling walls\n" + TOPICS_P2
    chunks = [_chunk(0, TOPICS_P1, 1), _chunk(1, repeat, 2)]
    snapshot, _ = _snapshot(chunks)
    first = make_hit(1, TOPICS_P1, doc_id="plan", file="plan.pdf", page=1)
    joined = joined_list(snapshot, 0, first)
    assert joined.text.count("Pulling walls") == 1
    assert "6. Firing the kiln" in joined.text


# --- the likely answer first, and shorter ------------------------------------------------------

CLAY_NOTES = make_hit(
    2,
    "Clay notes. Reclaimed clay is wedged before use. The homework log lists every pot you threw "
    "this week, with its clay body, the glaze you chose for it and the day it went into the kiln. "
    "Stoneware shrinks about twelve percent in the kiln. Porcelain needs a slower drying rack.",
    score=0.85,
    cosine=0.5,
)
UNRELATED = make_hit(3, "Parking permits are sold at the campus office on weekdays.", score=0.2, cosine=0.1)


def test_a_later_piece_is_the_run_that_holds_its_question_words_not_its_whole_passage() -> None:
    status, text = _reply("when is the weekly homework set due", [HOMEWORK, CLAY_NOTES, STUDIO, UNRELATED])
    assert status == "uncertain"
    first, *later = text.split("\n\n")
    # the first piece is read whole around the sentence that matched: the one that says when
    assert "every other Friday" in first
    # a later piece is the sentence about homework, not the clay notes around it
    log = next(p for p in later if "homework log" in p)
    assert "Porcelain" not in log and "Reclaimed" not in log
    # a passage that ranks far below the first is not shown at all
    assert "Parking" not in text


def result(hits: list) -> SearchResult:
    return SearchResult(hits, "v1", 1.0, 1.0, False, "c", "q")


def test_the_asked_value_is_in_bold_wherever_the_reply_quotes_it() -> None:
    exam = make_hit(
        1,
        "The midterm exam is on Tuesday, March 3 from 10:00 am - 11:30 am in Room 2047.",
        score=0.9,
        cosine=0.9,
    )
    answer = ExtractiveAnswerer().answer_sync("when is the midterm exam", result([exam]), "c")
    assert "**Tuesday, March 3**" in answer.text
    assert "**10:00 am - 11:30 am**" in answer.text
    # a room number is not a date, and the citation keeps its own brackets
    assert "**2047" not in answer.text and "[1]" in answer.text and "**[" not in answer.text
    # a question that asks no value gets no bold
    plain = ExtractiveAnswerer().answer_sync("where is the midterm exam", result([exam]), "c")
    assert "**" not in plain.text


def test_a_count_read_loosely_is_never_emphasised() -> None:
    text = "Monday, April 16 No class. [1]"
    assert emphasise(text, frozenset({"count", "date", "weekday"})) == "**Monday, April 16** No class. [1]"


# --- lists read whole -----------------------------------------------------------------------------


GOALS_WINDOW_1 = (
    "The studio meets twice a week. By the end of term, every potter should be able to:\n"
    "\u2022 wedge clay by hand\n\u2022 center a pot on the wheel\n\u2022 pull walls of even thick"
)
GOALS_WINDOW_2 = (
    "By the end of term, every potter should be able to:\n\u2022 wedge clay by hand\n"
    "\u2022 center a pot on the wheel\n\u2022 pull walls of even thickness\n\u2022 trim a foot ring"
)


def test_an_overlapping_window_that_repeats_the_lead_in_still_continues_the_list() -> None:
    chunks = [_chunk(0, GOALS_WINDOW_1, 1), _chunk(1, GOALS_WINDOW_2, 1), _chunk(2, AFTER, 2)]
    snapshot, _ = _snapshot(chunks)
    joined = joined_list(snapshot, 0, make_hit(1, GOALS_WINDOW_1, doc_id="plan", file="plan.pdf", page=1))
    assert "trim a foot ring" in joined.text
    # the item the first window cut is read whole, once
    assert "pull walls of even thickness" in joined.text and "even thick\n" not in joined.text
    assert joined.text.count("wedge clay by hand") == 1


def test_a_slide_under_the_same_title_does_not_continue_the_list_before_it() -> None:
    first = "Final exam:\n- posted on the last day\n- open book"
    second = "Final exam:\n- due a week later\n- no late work"
    snapshot, _ = _snapshot([_chunk(0, first, 1), _chunk(1, second, 2)])
    hit = make_hit(1, first, doc_id="plan", file="plan.pdf", page=1)
    assert joined_list(snapshot, 0, hit) == hit
