"""worker/query/spelling.py: a typo mended into the collection's word, never a word into another."""

from __future__ import annotations

import pytest

from syllabot.worker.query.spelling import correct_spelling, unknown_words
from syllabot.worker.text.keyword import build_keyword_index

INDEX = build_keyword_index(
    [
        "The binomial distribution has two parameters.",
        "Office: Hale room 208. Geography department.",
        "Each assignment is due on Friday. Re-taking of exams is never permitted.",
        "Shortest paths in road graphs: Djikstra's algorithm.",
        "Splite the data into training and test sets.",
        "Office hours by appointment. Answers typed in class.",
    ]
)


@pytest.mark.parametrize(
    ("typed", "mended"),
    [
        ("what r the params of the binomial distrobution", "what r the params of the binomial distribution"),
        ("goegraphy dept office", "geography dept office"),  # two letters swapped
        ("when is the assignmnet due", "when is the assignment due"),  # a letter dropped
        ("dijkstra is which module", "djikstra is which module"),  # the syllabus's own spelling
        ("Distrobution?", "Distribution?"),  # capitalised stays capitalised
        ("prof ofice hours tuesday only?", "prof office hours tuesday only?"),  # five letters: one dropped
    ],
)
def test_a_typo_is_mended_into_the_collections_word(typed: str, mended: str) -> None:
    assert correct_spelling(typed, INDEX) == mended


@pytest.mark.parametrize(
    "question",
    [
        "whats the zoom link",  # an English word, though "room" is one letter away in the materials
        "do the notes use sqlite",  # q and p are not keys apart: "splite" is another word
        "is the DISTROBUTION table online",  # capitals: an acronym or code, left alone
        "hale roon?",  # under five letters: too many neighbours to guess
        "why do ideas get ppl hyped",  # five letters are never mended by a changed letter ("typed")
        "retake policy for exams",  # the materials' "taking" is no slip away; nothing invented
    ],
)
def test_words_that_are_not_slips_of_a_collection_word_stay(question: str) -> None:
    assert correct_spelling(question, INDEX) == question


def test_only_the_first_unknown_words_are_looked_up() -> None:
    # a pasted wall of unknown words costs a bounded lookup; the typo after the first dozen stays
    from syllabot.worker.query.spelling import MAX_LOOKUPS

    filler = " ".join(f"qwzxv{chr(97 + i)}k" for i in range(MAX_LOOKUPS))
    assert correct_spelling(f"distrobution {filler}", INDEX).startswith("distribution ")
    assert correct_spelling(f"{filler} distrobution", INDEX).endswith(" distrobution")


@pytest.mark.parametrize(
    "question",
    [
        "what does df.distrobution do",
        "call distrobution() on it",
        "mail distrobution@uni.edu",
        "see distrobution.py",
    ],
)
def test_code_and_addresses_are_never_mended(question: str) -> None:
    assert correct_spelling(question, INDEX) == question


def test_a_word_ending_a_sentence_is_mended() -> None:
    assert correct_spelling("params of the distrobution. thx", INDEX) == "params of the distribution. thx"


def test_unknown_words_are_the_rarer_words_the_collection_never_uses() -> None:
    # "instalments" and "tardy" appear nowhere; "exams" and "office" do (any form the index stems
    # alike); "best", "students" and "held" are everyday English, never evidence on their own;
    # "can" and "the" are stopwords
    question = "Can the best tardy students take exams in instalments held at the office?"
    assert unknown_words(question, INDEX) == ("tardy", "instalments")
    assert unknown_words("Distribution of exams", INDEX) == ()
    assert unknown_words("CS101 lab?", INDEX) == ("cs101", "lab")  # codes count
