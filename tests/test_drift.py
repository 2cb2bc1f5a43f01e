"""An outline's entry against its lecture's own notes (``worker/drift.py``): the syllabus promises
"Databases: SQL(ite) and BigQuery", the notes titled "Lecture 5: Databases" never print SQLite and
open with DuckDB. Both the answer's note and the teacher's list name it, each side cited."""

from __future__ import annotations

from syllabot.shared.config import Settings
from syllabot.shared.schema import AskRequest
from syllabot.worker.answerers.extractive import ExtractiveAnswerer
from syllabot.worker.drift import Drift, asks_about, lecture_drifts, names_in, titled_unit
from syllabot.worker.engine import Engine, disagreements
from syllabot.worker.jobs import answer_question
from syllabot.worker.outlines import read_outline

SYLLABUS = """# Data science: syllabus

## Lecture outline

1. Introduction and software installation
2. Version control with Git(Hub)
3. Learning to love the shell
4. Webscraping: CSS and APIs
5. Databases: SQL(ite) and BigQuery
6. Spark
"""

NOTES = """# Lecture 5: Databases

Contents: Requirements; Databases 101; Getting started: DuckDB; Scaling up: Google BigQuery.

## Databases 101

A database holds tables of rows and columns, much like a list of data frames. Queries are
written in SQL, or translated into SQL for us by dplyr.

## Getting started: DuckDB

Our goal for this section is to create a database on our own computers using the excellent DuckDB
backend, and then to connect to it from R.

## Scaling up: Google BigQuery

BigQuery is a cloud data warehouse; querying the first terabyte each month is free.
"""

WEBSCRAPING = """# Lecture 4: Webscraping

Contents: CSS selectors; APIs.

## CSS selectors

We read a page's CSS selectors with SelectorGadget and fetch what they select.
"""


def test_tools_are_names_printed_with_capitals_inside() -> None:
    assert names_in("5. Databases: SQL(ite) and BigQuery") == ("SQLite", "BigQuery")
    assert names_in("Webscraping: CSS and APIs; Version control with Git(Hub)") == ("CSS", "API", "GitHub")
    assert names_in("Grant R. McDermott, University of Oregon | EC 607") == ()  # a person, a code
    assert titled_unit("EC 607 — Lecture 16: Databases") == ("lecture", 16, frozenset({"database"}))
    assert titled_unit("Data Science for Economists") is None


def _passages(text: str, first: int) -> list[tuple[int, str]]:
    """A document's passages as the chunker gives them: its opening (title and contents), then
    one per section, each after its context line."""
    return [(first + i, f"Data science\n{block}") for i, block in enumerate(text.split("\n## "))]


def test_an_entry_naming_a_tool_its_notes_never_print_is_a_drift() -> None:
    """Lecture 5's entry names SQLite, which its notes never print, and the notes' opening names
    DuckDB, which the entry does not: a drift, quoting the notes' sentence that says it (not the
    contents line, not a list item). Lecture 4's CSS and APIs are in its notes: none."""
    outline = read_outline(_passages(SYLLABUS, 0))
    assert outline is not None
    lectures = [
        ("notes5", "Lecture 5: Databases", _passages(NOTES, 100)),
        ("notes4", "Lecture 4: Webscraping", _passages(WEBSCRAPING, 200)),
    ]
    (drift,) = lecture_drifts([("syllabus", outline, SYLLABUS)], lectures)
    assert (drift.lecture_doc, drift.entry.number, drift.missing, drift.instead) == (
        "notes5",
        5,
        ("SQLite",),
        "DuckDB",
    )
    assert "using the excellent DuckDB backend" in drift.sentence and drift.row == 102
    assert asks_about("which database do we use in the databases lec, sqlite?", drift)
    assert asks_about("what db engine r the database notes built on", drift)
    assert asks_about("do i need to install anything for lecture 5", drift)
    assert not asks_about("do i need to install anything for lecture 4", drift)
    assert not asks_about("do i need to install anything for week 5", drift)
    assert not asks_about("how do i connect to duckdb from r", drift)  # asks the notes, not the outline
    assert not asks_about("whats a database", drift)
    # the entry's lecture must be the one the notes are titled as: number and words
    assert (
        lecture_drifts(
            [("syllabus", outline, SYLLABUS)], [("n", "Lecture 6: Databases", _passages(NOTES, 0))]
        )
        == []
    )


def test_a_tool_spelled_out_or_printed_by_the_outline_itself_is_no_drift() -> None:
    """An acronym the notes spell out ("breadth-first search" for "BFS") is printed there; and a
    name the syllabus prints too (its header's "MIT") is no tool the notes use instead."""
    syllabus = SYLLABUS.replace("5. Databases: SQL(ite) and BigQuery", "5. Graph search: BFS and DFS")
    outline = read_outline(_passages(syllabus, 0))
    assert outline is not None
    notes = (
        "# Lecture 5: Graph search\n\nMIT course notes: searching a graph.\n"
        "\n## Breadth-first search\n\nMIT notes: breadth-first search visits a graph level by level; MIT again.\n"
    )

    def drifts(syllabus_text: str, notes_text: str) -> list[Drift]:
        lectures = [("notes5", "Lecture 5: Graph search", _passages(notes_text, 100))]
        return lecture_drifts([("syllabus", outline, syllabus_text)], lectures)

    (spelled,) = drifts(syllabus, notes)
    assert spelled.missing == ("DFS",) and spelled.instead == "MIT"  # BFS is said in other words
    unspelled = notes.replace("breadth-first search", "level-order search").replace(
        "Breadth-first", "Level-order"
    )
    (drift,) = drifts(syllabus, unspelled)
    assert drift.missing == ("BFS", "DFS")
    assert drifts(syllabus.replace("syllabus\n", "syllabus (MIT)\n", 1), unspelled) == []


async def test_the_answer_and_the_teachers_list_name_both_sides(settings: Settings) -> None:
    engine = Engine(settings)
    files = [("syllabus.md", SYLLABUS), ("05-databases.md", NOTES), ("04-webscraping.md", WEBSCRAPING)]
    engine.ingest("ds", [(name, text.encode()) for name, text in files])

    async def ask(question: str) -> str:
        request = AskRequest(question=question, collection="ds")
        return (await answer_question(engine, ExtractiveAnswerer(settings), request)).text

    answer = await ask("which database do we use in the databases lec, sqlite?")
    assert answer.startswith("Your materials disagree:"), answer
    assert answer.index("excellent DuckDB backend") < answer.index("5. Databases: SQL(ite) and BigQuery"), (
        answer
    )
    assert "The notes never print SQLite." in answer
    assert "disagree" not in await ask("how do i connect to duckdb from r")
    snapshot = engine.snapshot("ds")
    assert snapshot is not None
    (tools,) = [d for d in disagreements(snapshot) if d.kind == "tools"]
    assert tools.topic == "lecture 5: tools" and "never print sqlite" in tools.first[1]
    assert tools.second[1] == "5. Databases: SQL(ite) and BigQuery"
