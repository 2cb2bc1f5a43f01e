"""Which document is current: one rule (``worker.text.currency``) for the conflict note, the record
of versions, the grading breakdown, the outline answer and the course card.

Where the places that decided it used to disagree, the rule takes the reading that is right for a
student; each such choice is tested here with text of our own."""

from __future__ import annotations

from syllabot.worker.text.currency import (
    claims_revision,
    current_first,
    how_current_named,
    latest_year,
    term_of,
    term_order,
)


def test_a_first_version_mark_is_no_revision_and_a_later_one_leads() -> None:
    """ "v1" names a first version: of "lab-notes-v1" and "lab-notes-v2" the second is the revision
    (the conflict note counted any "v" and a number, so both were "revised" and neither led)."""
    first = how_current_named("lab-notes-v1.md", ["Lab meets in the greenhouse."])
    second = how_current_named("lab-notes-v2.md", ["Lab meets in the field station."])
    assert first[0] == 0 and second[0] == 1
    assert current_first((first, "lab notes", ""), (second, "lab notes", "")) == (1, "“v2” in its name")
    assert how_current_named("field guide v12", [])[0] == 1


def test_a_document_that_says_in_words_that_it_revises_the_others_is_current() -> None:
    """ "This document revises …" makes a document current for the note as it already made it a
    version of the others for the record (the note read only "this notice updates")."""
    said = how_current_named(
        "kiln-rules.md", ["This document revises the firing schedule handed out in week 1."]
    )
    assert said == (1, 0, "it says it updates the others")


def test_a_word_that_only_titles_or_mentions_a_change_is_no_revision() -> None:
    """A title's "New" or "Current" ("Current topics in soil science") and a sentence that says some
    other thing "replaces" one are no claim about the document (the note read both as one)."""
    assert how_current_named("Current topics in soil science", [])[0] == 0
    assert how_current_named("New methods", [])[0] == 0
    assert claims_revision("glaze-notes.md", ["A wood kiln replaces the gas kiln in week 9."]) == ""
    assert claims_revision("glaze-notes.md", ["Revised: 4 March 2026"]) == "it says it is revised"
    assert how_current_named("old-glaze-notes.md", [])[0] == -1


def test_years_are_read_only_as_dates_in_one_range() -> None:
    """A year is read where it dates something (a date, a term, a copyright), in one range for every
    pattern; a room or a course number never dates a document."""
    assert latest_year(["© 1975 Kiln Press"]) == 1975  # the note read 1980–2049 only
    assert latest_year(["© 1975 Kiln Press", "Spring 2026 syllabus"]) == 2026
    assert latest_year(["Room 2047", "CER 2040"]) == 0


def test_terms_are_ordered_by_year_then_season() -> None:
    fall, spring = term_of("Fall 2018 syllabus"), term_of("Spring semester 2018")
    assert fall is not None and spring is not None
    assert term_order(fall) > term_order(spring)
    assert term_of("Room 2018") is None


def test_one_pattern_of_a_numbered_things_number_reads_a_third_digit() -> None:
    """A numbered thing's number is one to three digits everywhere (``value_shapes.THING_NUMBER``):
    a long course's "Lecture 104" is a lecture as the record's "Homework 104" is a homework (the
    values read units to two digits only), while a year after a unit word numbers nothing."""
    from syllabot.worker.query.values import unit_tokens, values_in

    assert unit_tokens("Lecture 104: studio critique") == {"lecture104"}
    (item,) = values_in("Lecture 104: studio critique")
    assert item.kind == "item" and item.label == {"lecture104"}
    assert unit_tokens("Week 2024") == frozenset()
