"""Course aliases: which courses a question names, on synthetic chunks and on the real VTU syllabi.

Real syllabi are read from ../shared/data/syllabi and those tests skip when that folder is absent.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from conftest import shared_data

from syllabot.worker.ingest.chunking import chunk_document
from syllabot.worker.ingest.courses import Course, CourseCatalog, aliases_for, course_mask
from syllabot.worker.ingest.families import relink as link_course_tails
from syllabot.worker.ingest.families import scheme_year
from syllabot.worker.ingest.loaders import load_document
from syllabot.worker.text.documents import Chunk, Document, Page

OS = "21CS44 Operating Systems"
ADA = "21CS42 Design and Analysis of Algorithms"
CN = "21CS52 Computer Networks"
DBMS21 = "21CS53 Database Management Systems"
DBMS22 = "BCS403 Database Management System"
AI = "CI114TA AI Foundations for Engineers"


def chunk(i: int, subject: str | None) -> Chunk:
    return Chunk(chunk_id=f"d:{i}", doc_id="d", file="d.pdf", title="D", text="x\ny", subject=subject)


def catalog(*subjects: str | None) -> CourseCatalog:
    return CourseCatalog.from_chunks([chunk(i, s) for i, s in enumerate(subjects)])


SYNTHETIC = catalog(OS, ADA, CN, DBMS21, DBMS22, AI, OS, None, "Returns policy")


# ------------------------------------------------------------------------------------------------
# synthetic chunks
# ------------------------------------------------------------------------------------------------


def test_one_course_per_coded_subject() -> None:
    assert [c.key for c in SYNTHETIC] == [OS, ADA, CN, DBMS21, DBMS22, AI]  # no code: not a course
    os_course = SYNTHETIC.get(OS)
    assert isinstance(os_course, Course)
    assert (os_course.code, os_course.title, os_course.scheme) == ("21CS44", "Operating Systems", 2021)
    assert {"21cs44", "operating systems", "os"} <= os_course.aliases
    assert SYNTHETIC.get("Returns policy") is None and len(SYNTHETIC) == 6


@pytest.mark.parametrize(
    ("code", "title", "expected"),
    [
        ("21CS42", "Design and Analysis of Algorithms", {"daa", "ada", "analysis and design of algorithms"}),
        ("21CS44", "Operating Systems", {"os", "operating systems", "21cs44"}),
        ("21CS52", "Computer Networks", {"cn", "computer networks"}),
        ("21CS53", "Database Management Systems", {"dms", "dbms", "database management systems"}),
        ("BCS403", "Database Management System", {"dms", "dbms", "bcs403"}),
        ("CI114TA", "AI Foundations for Engineers", {"ai", "artificial intelligence", "ci114ta"}),
        ("21CS61", "Machine Learning", {"ml", "machine learning"}),
        ("21CS51", "Automata Theory and Computability", {"atc", "toc"}),
        ("21CS32", "Data Structures and Applications", {"ds", "dsa"}),
        ("21CSL55", "DBMS Laboratory with Mini Project", {"dbms"}),
        ("21CS62", "Object Oriented Programming with Java", {"oop", "oops"}),
    ],
)
def test_aliases_from_code_title_initials_and_the_table(code: str, title: str, expected: set[str]) -> None:
    assert expected <= aliases_for(code, title)


def test_no_alias_is_a_stopword_or_syllabus_vocabulary() -> None:
    # "Internet of Things" has the initials "it"; "Computer Organization" has "co" (a course outcome).
    assert "it" not in aliases_for("21IOT1", "Internet of Things") and "iot" in aliases_for(
        "21IOT1", "Internet of Things"
    )
    assert "co" not in aliases_for("21CS34", "Computer Organization") and "coa" in aliases_for(
        "21CS34", "Computer Organization"
    )
    assert not {"is", "it", "a", "in"} & aliases_for("21XX11", "Introduction to IT")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("ADA CO4?", (ADA,)),
        ("what is in DAA module 3", (ADA,)),
        ("daa textbooks", (ADA,)),
        ("Analysis & Design of Algorithms lab", (ADA,)),
        ("which book for design and analysis of algorithm", (ADA,)),
        ("OS module 2", (OS,)),
        ("os syllabus", (OS,)),
        ("how many credits for operating systems?", (OS,)),
        ("Operating-System outcomes", (OS,)),
        ("CN textbooks", (CN,)),
        ("computer network lab programs", (CN,)),
        ("dbms credits", (DBMS21, DBMS22)),
        ("DBMS", (DBMS21, DBMS22)),
        ("database management systems textbooks", (DBMS21, DBMS22)),
        ("AI units", (AI,)),
        ("artificial intelligence outcomes", (AI,)),
        ("21CS44 credits", (OS,)),
        ("21 cs 44 credits", (OS,)),
        ("bcs-403 lab", (DBMS22,)),
        ("compare OS and CN", (OS, CN)),
        ("CN vs OS", (CN, OS)),  # the order they are named in
    ],
)
def test_mentioned(question: str, expected: tuple[str, ...]) -> None:
    assert SYNTHETIC.mentioned(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "he said it was fine",
        "what does it cost",
        "is it",
        "hosts and costs",
        "said the AIs",  # "AIs" is not "AI"
        "chaos",
        "send it in my DMs",  # chat slang, not DBMS's initials
        "what is CO 3",
        "the CIE marks",
        "",
    ],
)
def test_ordinary_words_name_no_course(question: str) -> None:
    assert SYNTHETIC.mentioned(question) == ()


def test_ambiguous_short_forms_need_capitals() -> None:
    cat = catalog("21CS61 Software Engineering", "21CS62 Compiler Design", DBMS21)
    assert cat.mentioned("SE module 1") == ("21CS61 Software Engineering",)
    assert cat.mentioned("se module 1") == ()  # Spanish "se", "se" for "see" ...
    assert cat.mentioned("CD textbooks") == ("21CS62 Compiler Design",)
    assert cat.mentioned("burn a cd") == ()
    assert cat.mentioned("DMS credits") == (DBMS21,)
    assert cat.mentioned("WHAT ARE THE SE TEXTBOOKS") == ()  # all capitals: "SE" is not a signal
    assert cat.mentioned("software engineering credits") == ("21CS61 Software Engineering",)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("new DBMS credits", (DBMS22,)),
        ("latest dbms syllabus", (DBMS22,)),
        ("the new scheme DBMS", (DBMS22,)),
        ("old dbms module 4", (DBMS21,)),
        ("previous DBMS", (DBMS21,)),
        ("DBMS (old scheme) credits", (DBMS21,)),
        ("DBMS new syllabus", (DBMS22,)),
        ("2022 scheme DBMS", (DBMS22,)),
        ("DBMS of the 2021 scheme", (DBMS21,)),
        ("dbms 21 scheme", (DBMS21,)),
        ("BCS403 DBMS credits", (DBMS22,)),
        ("21CS53 dbms", (DBMS21,)),
        ("what's new in DBMS", (DBMS21, DBMS22)),  # "new" not next to the name
        ("old books for DBMS", (DBMS21, DBMS22)),
        ("DBMS 2018 scheme", (DBMS21, DBMS22)),  # no such scheme here: both
    ],
)
def test_scheme_narrows_a_shared_name(question: str, expected: tuple[str, ...]) -> None:
    assert SYNTHETIC.mentioned(question) == expected


def test_scheme_year() -> None:
    assert scheme_year("21CS53") == 2021 and scheme_year("18CS53") == 2018
    assert scheme_year("BCS403") == 2022 and scheme_year("BMATS101") == 2022
    assert scheme_year("CI114TA") is None


def test_code_only_tail_answers_to_its_course_names() -> None:
    """A tail labelled with the guessed code only ("21CS52") is named by "CN" together with 21CS52."""
    cat = catalog(CN, "21CS52", DBMS21)
    assert cat.mentioned("CN textbooks") == (CN, "21CS52")
    assert catalog("21CS52", DBMS21).mentioned("21CS52 books") == ("21CS52",)
    assert catalog("21CS52", DBMS21).mentioned("CN books") == ()  # its title is not known


def test_more_specific_alias_wins_at_one_position() -> None:
    cat = catalog("21CS71 Real Time Operating Systems", OS)
    assert cat.mentioned("real time operating systems credits") == ("21CS71 Real Time Operating Systems",)
    assert cat.mentioned("operating systems credits") == (OS,)


def test_course_mask_and_catalog_mask() -> None:
    chunks = [chunk(i, s) for i, s in enumerate([OS, CN, OS, None, DBMS22, "21CS52"])]
    expected = np.array([True, False, True, False, True, False])
    assert course_mask(chunks, (OS, DBMS22)).tolist() == expected.tolist()
    cat = CourseCatalog.from_chunks(chunks)
    assert cat.mask((OS, DBMS22)).tolist() == expected.tolist()
    assert cat.mask(["nope"]).tolist() == [False] * 6 and course_mask(chunks, ()).dtype == bool
    assert course_mask([], [OS]).shape == (0,)


def test_empty_catalog() -> None:
    cat = CourseCatalog.from_chunks([])
    assert len(cat) == 0 and cat.mentioned("OS credits") == () and cat.mask([OS]).shape == (0,)


def test_mentioned_is_fast() -> None:
    """One regex scan per question, even with many courses."""
    import time

    subjects = [f"21XX{i:02d} Course Number {i} Topics" for i in range(80)] + [
        OS,
        ADA,
        CN,
        DBMS21,
        DBMS22,
        AI,
    ]
    cat = catalog(*subjects)
    start = time.perf_counter()
    for _ in range(200):
        cat.mentioned("how many credits does the new DBMS have compared with operating systems?")
    assert (time.perf_counter() - start) / 200 < 0.002


# ------------------------------------------------------------------------------------------------
# real syllabi
# ------------------------------------------------------------------------------------------------

REAL = [
    "21CS44.pdf",
    "21CS42.pdf",
    "21CS52.pdf",
    "21CS53.pdf",
    "BCS403.pdf",
    "RVCE_CI114TA_AI_Foundations.pdf",
]


@cache
def real_chunks(linked: bool) -> tuple[Chunk, ...]:
    chunks: list[Chunk] = []
    for name in REAL:
        path = shared_data("syllabi", name)
        chunks.extend(chunk_document(load_document(path.read_bytes(), path.name, 20 * 1024 * 1024)))
    return tuple(link_course_tails(chunks) if linked else chunks)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("ADA CO4", (ADA,)),
        ("DAA textbooks", (ADA,)),
        ("daa module 5", (ADA,)),
        ("OS module 2", (OS,)),
        ("os credits", (OS,)),
        ("CN lab programs", (CN,)),
        ("dbms", (DBMS21, DBMS22)),
        ("new DBMS credits", (DBMS22,)),
        ("AI units", (AI,)),
        ("said", ()),
        ("cost", ()),
        ("is it", ()),
        ("how many credits for operating systems?", (OS,)),
    ],
)
def test_real_syllabi(question: str, expected: tuple[str, ...]) -> None:
    cat = CourseCatalog.from_chunks(real_chunks(linked=True))
    assert {c.key for c in cat} == {OS, ADA, CN, DBMS21, DBMS22, AI}
    assert cat.mentioned(question) == expected
    mask = course_mask(real_chunks(linked=True), expected)
    assert mask.any() == bool(expected)
    assert all(c.subject in expected for c, m in zip(real_chunks(linked=True), mask, strict=True) if m)


def test_real_unlinked_tail_is_named_with_its_course() -> None:
    """Before link_course_tails (or without 21CS52.pdf), 21CS53's p1 tail carries "21CS52": "CN"
    still reaches it, and never as 21CS42 or 21CS53."""
    chunks = real_chunks(linked=False)
    cat = CourseCatalog.from_chunks(chunks)
    assert cat.mentioned("CN textbooks") == (CN, "21CS52")
    mask = cat.mask(cat.mentioned("CN textbooks"))
    named = [c for c, m in zip(chunks, mask, strict=True) if m]
    assert {c.doc_id for c in named} == {"21cs52", "21cs53"}
    assert all(c.doc_id == "21cs52" or c.foreign for c in named)


def test_a_document_of_no_course_that_names_one_by_code_is_searched_with_it() -> None:
    """A README or notice whose subject was not detected but which names a course by its code
    belongs to that course: a question naming the course searches it too (its mask), and a
    document naming no course or another's stays out."""
    import dataclasses

    from syllabot.worker.indexes.index import build_snapshot

    def doc(doc_id: str, subject: str | None, text: str, n: int = 2) -> list[Chunk]:
        return [
            dataclasses.replace(chunk(i, subject), chunk_id=f"{doc_id}:{i}", doc_id=doc_id, text=text)
            for i in range(n)
        ]

    chunks = [
        *doc("os", OS, "21CS44 Operating Systems — Module 1\nProcesses"),
        *doc("notice", None, "Revision notice\nThis notice updates the 21CS44 syllabus: CIE 60, SEE 40."),
        *doc("cn-notes", None, "Lab notes\nThe 21CS52 lab uses NS2."),
        *doc("shop", None, "Returns\nBikes may be returned within 30 days."),
        *doc("cn", CN, "21CS52 Computer Networks — Module 1\nLayers"),
    ]
    matrix = np.eye(len(chunks), 16, dtype=np.float32)
    snapshot = build_snapshot("v", "c", "test", 16, chunks, matrix, "now")
    assert snapshot.named_courses() == {"notice": (OS,), "cn-notes": (CN,)}
    mask = snapshot.course_mask([OS])
    assert [c.doc_id for c, kept in zip(chunks, mask, strict=True) if kept] == [
        "os",
        "os",
        "notice",
        "notice",
    ]


def test_document_families_answer_for_their_own_documents_only() -> None:
    """What only VTU booklets need sits behind ``worker.ingest.families``: their short forms and scheme
    years for their codes and titles, nothing for a course from elsewhere, and a collection of
    documents with no booklet tails is relinked to itself."""
    from syllabot.worker.ingest.families import FAMILIES, family_aliases, relink

    assert [f.name for f in FAMILIES] == ["vtu"]
    assert "ada" in family_aliases("21CS42", "design and analysis of algorithms")
    assert family_aliases("HIST330", "history of gardens") == frozenset()
    assert scheme_year("21CS53") == 2021 and scheme_year("BCS403") == 2022 and scheme_year("HIST330") is None
    notes = chunk_document(
        Document(
            "garden-notes",
            "garden-notes.md",
            "Garden notes",
            [Page(1, "# Soil\n\nLoam holds water better than sand.\n\n# Light\n\nMost herbs want sun.")],
            "markdown",
        )
    )
    assert relink(notes) == notes
