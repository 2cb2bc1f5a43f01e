"""The structure-aware chunker, on the real syllabi (their known traps) and on small inline samples.

Real syllabi are read from ../shared/data/syllabi and the tests skip when that folder is absent.
"""

from __future__ import annotations

import json
import re
from functools import cache

import pytest
from conftest import shared_data

from syllabot.worker.ingest.chunking import (
    chunk_body,
    chunk_document,
    context_line,
    detect_subject,
    split_sentences,
    split_subject,
)
from syllabot.worker.ingest.families.vtu import link_course_tails
from syllabot.worker.ingest.headings import find_courses, module_label
from syllabot.worker.ingest.loaders import NoTextLayer, load_document
from syllabot.worker.text.documents import Chunk, Document, Page

LIMIT = 20 * 1024 * 1024


@cache
def _load(name: str) -> Document:
    path = shared_data("syllabi", name)
    return load_document(path.read_bytes(), path.name, LIMIT)


def syllabus(name: str) -> list[Chunk]:
    return chunk_document(_load(name))


def modules(chunks: list[Chunk]) -> dict[str, Chunk]:
    found: dict[str, Chunk] = {}
    for c in chunks:
        if c.kind == "module":
            assert c.module not in found, f"{c.module} split although short"
            found[c.module] = c
    return found


def pdf_doc(*pages: str, doc_id: str = "doc", title: str = "Doc") -> Document:
    return Document(
        doc_id=doc_id,
        file=f"{doc_id}.pdf",
        title=title,
        kind="pdf",
        pages=[Page(i, text) for i, text in enumerate(pages, start=1)],
    )


# ------------------------------------------------------------------------------------------------
# real syllabi
# ------------------------------------------------------------------------------------------------


def test_21cs44_module_2_spans_pages_1_to_2() -> None:
    chunks = syllabus("21CS44.pdf")
    mods = modules(chunks)
    assert list(mods) == [f"Module {n}" for n in range(1, 6)]
    m2 = mods["Module 2"]
    assert (m2.page, m2.page_end) == (1, 2)
    for topic in ("Multithreading models", "Scheduling Algorithms", "Peterson", "Semaphores", "Monitors"):
        assert topic in m2.text
    assert "Deadlock" not in m2.text  # Module 3's topics stay in Module 3
    assert m2.text.startswith("21CS44 Operating Systems — Module 2\n")
    assert m2.subject == "21CS44 Operating Systems"
    assert "03092022" not in m2.text  # the running page header is gone


def test_21cs44_sections_are_whole_and_labelled() -> None:
    chunks = syllabus("21CS44.pdf")
    by_kind = {c.kind: c for c in chunks}
    header = by_kind["header"]
    assert "Credits 03" in header.text and "CIE Marks 50" in header.text and "SEE Marks 50" in header.text
    outcomes = [c for c in chunks if c.kind == "outcomes"]
    assert len(outcomes) == 1 and (outcomes[0].page, outcomes[0].page_end) == (2, 3)
    assert all(f"CO {n}." in outcomes[0].text for n in range(1, 6))
    assert "Silberschatz" in by_kind["textbooks"].text and by_kind["textbooks"].page == 3
    assert "Dhamdhere" in by_kind["references"].text and "Stallings" in by_kind["references"].text
    assert "CLO 4" in by_kind["objectives"].text
    assert [c.chunk_id for c in chunks] == [f"21cs44:{i}" for i in range(len(chunks))]
    assert {c.doc_id for c in chunks} == {"21cs44"} and {c.file for c in chunks} == {"21CS44.pdf"}


def test_21cs42_harspool_lands_in_module_4() -> None:
    chunks = syllabus("21CS42.pdf")
    hits = [c for c in chunks if "Harspool" in c.text]
    assert len(hits) == 1
    assert hits[0].module == "Module 4" and hits[0].page == 3
    assert "Warshall" in hits[0].text and "Floyd" in hits[0].text
    m1 = modules(chunks)["Module 1"]
    assert (m1.page, m1.page_end) == (1, 2)  # its lab component runs onto page 2


def test_21cs53_page_1_tail_belongs_to_21cs52() -> None:
    chunks = syllabus("21CS53.pdf")
    header_index = next(i for i, c in enumerate(chunks) if c.kind == "header")
    tail = chunks[:header_index]
    assert tail and all(c.page == 1 for c in tail)
    assert all(c.subject == "21CS52" for c in tail)
    assert all(c.foreign for c in tail)  # another course's pages: the course's own file cites better
    tail_books = next(c for c in tail if c.kind == "textbooks")
    assert "Tanenbaum" in tail_books.text and tail_books.text.startswith("21CS52 — Textbooks\n")
    rest = chunks[header_index:]
    assert all(c.subject == "21CS53 Database Management Systems" and not c.foreign for c in rest)
    own_books = [c for c in rest if c.kind == "textbooks"]
    assert len(own_books) == 1 and "Elmasri" in own_books[0].text and own_books[0].page == 4
    m3 = modules(chunks)["Module 3"]
    assert (m3.page, m3.page_end) == (2, 3) and "JDBC" in m3.text
    assert _load("21CS53.pdf").subject == "21CS53 Database Management Systems"


def test_21cs52_last_page_ends_with_the_21cs53_header() -> None:
    chunks = syllabus("21CS52.pdf")
    assert _load("21CS52.pdf").subject == "21CS52 Computer Networks"
    headers = [c for c in chunks if c.kind == "header"]
    assert [h.subject for h in headers] == ["21CS52 Computer Networks", "21CS53 Database Management Systems"]
    assert headers[1].page == 3
    assert headers[1].foreign and not headers[0].foreign
    books = next(c for c in chunks if c.kind == "textbooks")
    assert books.subject == "21CS52 Computer Networks" and "Tanenbaum" in books.text
    assert "DATABASE" not in books.text
    last_networks = chunks[chunks.index(headers[1]) - 1]
    assert last_networks.subject == "21CS52 Computer Networks" and "DATABASE" not in last_networks.text
    dbms_objectives = chunks[-1]
    assert dbms_objectives.kind == "objectives" and dbms_objectives.subject.startswith("21CS53")


def test_link_course_tails_replaces_the_guess_with_the_indexed_course() -> None:
    chunks = syllabus("21CS52.pdf") + syllabus("21CS53.pdf")
    linked = link_course_tails(chunks)
    tail = [c for c in linked if c.doc_id == "21cs53" and c.subject and c.subject.startswith("21CS52")]
    assert tail and all(c.subject == "21CS52 Computer Networks" for c in tail)
    books = next(c for c in tail if c.kind == "textbooks")
    assert books.text.startswith("21CS52 Computer Networks — Textbooks\n")
    untouched = [a for a, b in zip(chunks, linked, strict=True) if a is b]
    assert len(untouched) == len(chunks) - len(tail)


def test_bcs403_module_3_is_normalisation_and_bullets_are_outcomes() -> None:
    chunks = syllabus("BCS403.pdf")
    mods = modules(chunks)
    assert list(mods) == [f"Module {n}" for n in range(1, 6)]  # "MODULE-1" .. "MODULE-5"
    assert "Normalization" in mods["Module 3"].text and "Normalization" not in mods["Module 4"].text
    assert mods["Module 2"].page == 2  # heading at the foot of p1, content on p2
    assert "MangoDB" in "".join(c.text for c in chunks)
    outcomes = [c for c in chunks if c.kind == "outcomes"]
    assert len(outcomes) == 1
    assert outcomes[0].text.count("●") == 6 and "NoSQL databases" in outcomes[0].text
    header = next(c for c in chunks if c.kind == "header")
    assert "Credits 04" in header.text and header.subject == "BCS403 Database Management System"
    assert not [c for c in chunks if c.kind == "references"]  # it has none


def test_rvce_units_hyphen_and_en_dash_on_physical_pages() -> None:
    chunks = syllabus("RVCE_CI114TA_AI_Foundations.pdf")
    mods = modules(chunks)
    assert list(mods) == ["Unit I", "Unit II", "Unit III", "Unit IV", "Unit V"]
    assert mods["Unit I"].page == 1 and "Turing test" in mods["Unit I"].text
    assert mods["Unit II"].page == 1 and "Uninformed Search" in mods["Unit II"].text
    refs = next(c for c in chunks if c.kind == "references")
    assert refs.page == 2 and "Russell and Peter Norvig" in refs.text
    assert all(c.subject == "CI114TA AI Foundations for Engineers" for c in chunks)
    assert not any("Page 64" in c.text or "Page 65" in c.text for c in chunks)


REAL = [
    "21CS44.pdf",
    "21CS42.pdf",
    "21CS52.pdf",
    "21CS53.pdf",
    "BCS403.pdf",
    "RVCE_CI114TA_AI_Foundations.pdf",
]


def _all_real_chunks(order: list[str]) -> list[Chunk]:
    return [c for name in order for c in syllabus(name)]


@pytest.mark.parametrize(
    "order",
    [REAL, REAL[::-1], ["21CS42.pdf", "21CS44.pdf", "21CS53.pdf", "BCS403.pdf", "21CS52.pdf"]],
)
def test_21cs53_tail_is_linked_to_21cs52_never_to_a_course_sharing_its_boilerplate(order: list[str]) -> None:
    """The bug: 21CS52's CIE rules on 21CS53 p1 were cited as "21CS42 Design and Analysis of
    Algorithms, p. 1" — every VTU syllabus prints the same CIE/SEE text, and each tail chunk took the
    first course whose boilerplate covered it. The tail is one course's, linked as a whole."""
    linked = link_course_tails(_all_real_chunks(order))
    tail = [c for c in linked if c.doc_id == "21cs53" and c.foreign]
    assert len(tail) == 6
    assert {c.subject for c in tail} == {"21CS52 Computer Networks"}
    assert all(c.text.startswith("21CS52 Computer Networks") for c in tail)
    # The page-1 continuation of 21CS52's CIE rules also gets its section back from 21CS52.pdf.
    first = min(tail, key=lambda c: int(c.chunk_id.split(":")[1]))
    assert "Rubrics for each Experiment" in first.text
    assert first.section == "Continuous Internal Evaluation"
    assert first.text.startswith("21CS52 Computer Networks — Continuous Internal Evaluation\n")
    own = [c for c in linked if c.doc_id == "21cs53" and not c.foreign]
    assert own and {c.subject for c in own} == {"21CS53 Database Management Systems"}


def test_21cs53_tail_keeps_its_guess_when_21cs52_is_not_indexed() -> None:
    linked = link_course_tails(_all_real_chunks([n for n in REAL if n != "21CS52.pdf"]))
    tail = [c for c in linked if c.doc_id == "21cs53" and c.foreign]
    assert len(tail) == 6 and {c.subject for c in tail} == {"21CS52"}  # not 21CS42, 21CS44 ...
    assert tail[0].section is None  # its block's name is not known


_BOILERPLATE = re.compile(
    r"^(?:03092022|IPCC \(26\.04\.2022\)|\d{1,2}|@# \d+|Courses Common to all Programs Page \d+)$"
)
_MODULE_HEADING = re.compile(r"^(?P<kw>Module|MODULE|Unit)\s*[-–]?\s*(?P<num>\d|[IVX]+)\b")
_AFTER_MODULES = re.compile(r"^(?:Course [Oo]utcomes?\b|PRACTICAL COMPONENT)")


@pytest.mark.parametrize("max_chars", [1200, 400])
@pytest.mark.parametrize("name", REAL)
def test_every_line_inside_a_module_is_in_a_chunk_of_that_module(name: str, max_chars: int) -> None:
    """From a module heading to the block after the last module (outcomes, practical component), every
    printed line — topics, textbook chapters, lab components, teaching-learning and RBT lines, content
    continued on the next page — is cited with its module, also when a module is split into parts."""
    doc = _load(name)
    chunks = chunk_document(doc, max_chars=max_chars)
    current: str | None = None
    checked = 0
    for page in doc.pages:
        for raw in page.text.split("\n"):
            line = " ".join(re.sub("[\ue000-\uf8ff]", "•", raw).split())
            if not line or _BOILERPLATE.match(line):
                continue
            if m := _MODULE_HEADING.match(line):
                current = module_label(m.group("kw"), m.group("num"))
            elif _AFTER_MODULES.match(line):
                current = None
            if current is None:
                continue
            holders = [c for c in chunks if line in chunk_body(c.text)]
            assert any(c.module == current for c in holders), (page.number, line, [c.module for c in holders])
            checked += 1
    assert checked > 20


def test_module_content_on_the_next_page_keeps_its_module() -> None:
    assert (modules(syllabus("21CS44.pdf"))["Module 2"].page_end) == 2
    bcs_m2 = modules(syllabus("BCS403.pdf"))["Module 2"]
    assert (bcs_m2.page, bcs_m2.page_end) == (2, 2) and "Relational Algebra" in bcs_m2.text
    m3 = modules(syllabus("21CS53.pdf"))["Module 3"]
    assert (m3.page, m3.page_end) == (2, 3) and "Case study: The internet Bookshop" in m3.text
    assert "RBT: L1, L2, L3" in bcs_m2.text  # the RBT line printed inside the module's block


@pytest.mark.parametrize(
    ("name", "outcomes", "books"),
    [
        ("21CS44.pdf", [f"CO {n}." for n in range(1, 6)], ["1. Abraham Silberschatz"]),
        (
            "21CS42.pdf",
            [f"CO {n}." for n in range(1, 6)],
            ["1. Introduction to the Design", "2. Computer Algorithms"],
        ),
        ("21CS52.pdf", [f"CO {n}." for n in range(1, 5)], ["1. Computer-Networks", "2. Computer Networking"]),
        (
            "21CS53.pdf",
            [f"CO {n}." for n in range(1, 6)],
            ["1. Fundamentals of Database", "2. Database management"],
        ),
        (
            "BCS403.pdf",
            ["● Describe", "● Design entity", "● Apply", "● Analyse", "● Develop", "● Understand"],
            ["1. Fundamentals of Database", "2. Database management"],
        ),
        ("RVCE_CI114TA_AI_Foundations.pdf", [f"CO{n} " for n in range(1, 5)], []),
    ],
)
def test_outcomes_and_textbooks_are_one_chunk_each_with_every_item(
    name: str, outcomes: list[str], books: list[str]
) -> None:
    own = [c for c in syllabus(name) if not c.foreign]
    (co,) = [c for c in own if c.kind == "outcomes"]
    assert all(item in co.text for item in outcomes)
    assert co.subject == _load(name).subject
    textbooks = [c for c in own if c.kind == "textbooks"]
    assert len(textbooks) == (1 if books else 0)
    assert all(item in textbooks[0].text for item in books)


@pytest.mark.parametrize("name", ["21CS44.pdf", "21CS42.pdf", "21CS52.pdf", "21CS53.pdf"])
def test_cie_marks_split_is_one_chunk(name: str) -> None:
    (cie,) = [c for c in syllabus(name) if c.section == "Continuous Internal Evaluation" and not c.foreign]
    for part in (
        "Three Unit Tests each of 20 Marks",
        "Two assignments each of 10 Marks",
        "scaled down to 50 marks",
    ):
        assert part in cie.text


def test_bcs403_lab_experiments_are_one_chunk() -> None:
    chunks = syllabus("BCS403.pdf")
    (lab,) = [c for c in chunks if c.section == "Practical component"]
    assert len(chunk_body(lab.text)) > 1200  # kept whole although longer than max_chars
    for start in (
        "1 Create a table called Employee",
        "2 Create a table",
        "3 Queries using aggregate",
        "4 Create a row level trigger",
        "5 Create cursor",
        "6 Write a PL/SQL block",
        "7 Install an Open Source NoSQL",
    ):
        assert start in lab.text
    parts = [
        c for c in chunk_document(_load("BCS403.pdf"), max_chars=600) if c.section == "Practical component"
    ]
    assert len(parts) > 1 and all(c.kind == "section" for c in parts)  # consecutive parts of one section
    starts = [chunk_body(c.text).split("\n")[0] for c in parts]
    assert all(re.match(r"^(?:PRACTICAL|\d{1,2}\.? )", s) for s in starts), starts  # each part starts an item


def test_21cs52_page_3_ends_with_21cs53_chunks() -> None:
    chunks = syllabus("21CS52.pdf")
    switch = next(i for i, c in enumerate(chunks) if c.subject and c.subject.startswith("21CS53"))
    assert all(not c.foreign and c.subject == "21CS52 Computer Networks" for c in chunks[:switch])
    after = chunks[switch:]
    assert [c.kind for c in after] == ["header", "objectives"]
    assert all(c.foreign and c.subject == "21CS53 Database Management Systems" and c.page == 3 for c in after)


def test_rvce_rubric_heading_keeps_its_table() -> None:
    """ "RUBRIC FOR THE CONTINUOUS INTERNAL EVALUATION (THEORY)" / "# COMPONENTS MARKS": the column row
    under the heading is not a heading of its own (it used to take the block and drop the name)."""
    chunks = syllabus("RVCE_CI114TA_AI_Foundations.pdf")
    rubric = chunks[-1]
    assert rubric.section == "Rubric for the Continuous Internal Evaluation (Theory)"
    assert "QUIZZES" in rubric.text and "MAXIMUM MARKS FOR THE CIE (THEORY) 100" in rubric.text


def test_scanned_syllabus_raises_no_text_layer() -> None:
    path = shared_data("syllabi", "21MATCS41-scanned.pdf")
    with pytest.raises(NoTextLayer):
        load_document(path.read_bytes(), path.name, LIMIT)


@pytest.mark.parametrize("name", ["21CS42.pdf", "21CS44.pdf", "21CS52.pdf", "21CS53.pdf", "BCS403.pdf"])
def test_every_real_chunk_carries_its_metadata(name: str) -> None:
    for c in syllabus(name):
        assert c.page is not None and c.page_end is not None and c.page <= c.page_end
        assert c.kind in {"module", "outcomes", "objectives", "textbooks", "references", "header", "section"}
        assert c.lang == "en" and c.status == "current" and c.subject
        assert len(chunk_body(c.text)) <= 2 * 1200 + 200


# ------------------------------------------------------------------------------------------------
# inline samples
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "label"),
    [
        ("Module-1", "Module 1"),
        ("MODULE-2 No. of Hours: 8", "Module 2"),
        ("Module – 3", "Module 3"),
        ("Module 4", "Module 4"),
        ("Module-V", "Module 5"),
        ("Unit-I 07 Hrs", "Unit I"),
        ("Unit – II 10 Hrs", "Unit II"),
        ("UNIT III", "Unit III"),
        ("Unit –IV", "Unit IV"),
        ("Module 1: Introduction to AI", "Module 1"),
    ],
)
def test_module_heading_forms(line: str, label: str) -> None:
    doc = pdf_doc(f"{line}\nTopic alpha; topic beta.\nModule-9\nOther topics here.")
    first = chunk_document(doc)[0]
    assert first.kind == "module" and first.module == label


@pytest.mark.parametrize(
    "line",
    [
        "Four Unit Tests of 15 Marks each",
        "Unit 3 & Unit 4)",
        "module 2 covers scheduling",
        "course outcomes.",
    ],
)
def test_prose_is_not_a_heading(line: str) -> None:
    doc = pdf_doc(f"Module-1\nIntro topics.\n{line}\nMore intro topics.\nModule-2\nLater topics.")
    chunks = chunk_document(doc)
    assert [c.module for c in chunks] == ["Module 1", "Module 2"]
    assert line in chunks[0].text


def test_module_label_normalisation() -> None:
    assert module_label("MODULE", "03") == "Module 3"
    assert module_label("Module", "IV") == "Module 4"
    assert module_label("unit", "ii") == "Unit II"
    assert module_label("Chapter", "7") == "Chapter 7"


def test_course_switch_mid_page_and_unnumbered_outcomes() -> None:
    page1 = "\n".join(
        [
            "Textbooks:",
            "1. Networks, Fernandez.",
            "Reference Books:",
            "1. Data Communications, Forouzan.",
            "V Semester",
            "COMPILER DESIGN",
            "Course Code: 22CD54 CIE Marks 50",
            "Credits 04 Exam Hours 03",
            "Module-1",
            "Lexical analysis; regular expressions.",
        ]
    )
    page2 = "\n".join(
        [
            "Finite automata.",
            "Course outcomes (Course Skill Set):",
            "● Build a lexer.",
            "● Write a parser.",
            "Text Books",
            "1. Aho, Lam, Sethi, Ullman: Compilers.",
        ]
    )
    chunks = chunk_document(pdf_doc(page1, page2))
    kinds = [(c.kind, c.subject) for c in chunks]
    assert kinds == [
        ("textbooks", "22CD53"),
        ("references", "22CD53"),
        ("header", "22CD54 Compiler Design"),
        ("module", "22CD54 Compiler Design"),
        ("outcomes", "22CD54 Compiler Design"),
        ("textbooks", "22CD54 Compiler Design"),
    ]
    module = chunks[3]
    assert (module.page, module.page_end) == (1, 2) and "Finite automata" in module.text
    assert "Write a parser" in chunks[4].text
    assert detect_subject(pdf_doc(page1, page2).pages) == "22CD54 Compiler Design"


def test_find_courses_title_above_the_code_line() -> None:
    lines = ["VI Semester", "THEORY OF WATER AND WASTE TREATMENT", "Course Code 22EV61 CIE Marks 50"]
    (course,) = find_courses(lines)
    assert (course.code, course.title, course.start_index) == (
        "22EV61",
        "Theory of Water and Waste Treatment",
        0,
    )
    assert course.subject == "22EV61 Theory of Water and Waste Treatment"


def test_long_module_is_split_with_the_same_label() -> None:
    topics = "\n".join(
        f"Topic {i}: a fairly long description of subtopic {i} and its variants." for i in range(80)
    )
    doc = pdf_doc(
        f"Module-1\n{topics[: len(topics) // 2]}", f"{topics[len(topics) // 2 :]}\nModule-2\nShort."
    )
    chunks = chunk_document(doc, max_chars=600)
    parts = [c for c in chunks if c.module == "Module 1"]
    assert len(parts) > 2 and all(c.kind == "module" for c in parts)
    assert all(len(chunk_body(c.text)) <= 600 for c in parts)
    assert "Topic 0:" in parts[0].text  # the heading line never forms a part on its own
    assert parts[0].page == 1 and parts[-1].page_end == 2
    assert all(c.text.startswith("Doc — Module 1\n") for c in parts)
    assert "".join(chunk_body(c.text) for c in parts).count("Topic 79:") == 1  # no overlap, nothing lost


def test_module_up_to_twice_max_chars_stays_whole() -> None:
    body = " ".join(f"topic{i};" for i in range(120))  # about 1,100 characters
    chunks = chunk_document(pdf_doc(f"Module-1\n{body}\nModule-2\nShort."), max_chars=600)
    assert [c.module for c in chunks] == ["Module 1", "Module 2"]


def test_page_header_and_footer_lines_are_dropped() -> None:
    pages = [f"IPCC (26.04.2022)\n{n}\nModule-{n}\nTopic {n} text.\n@# 16032024" for n in (1, 2, 3)]
    chunks = chunk_document(pdf_doc(*pages))
    assert [c.module for c in chunks] == ["Module 1", "Module 2", "Module 3"]
    assert not any("IPCC" in c.text or "@#" in c.text for c in chunks)
    assert all(f"Topic {n} text." in c.text for n, c in enumerate(chunks, start=1))


def test_markdown_sections_with_front_matter() -> None:
    text = (
        "---\nid: kc-returns-v3\ntitle: Returns policy\nversion: 3\nstatus: current\nlang: en\n---\n\n"
        "## At a glance\n\n- A new, unridden bike may be returned within 30 days of delivery.\n\n"
        "## How refunds are paid\n\nRefunds go back to the card you used. They take 5 working days.\n"
    )
    doc = load_document(text.encode(), "returns-policy.md", LIMIT)
    chunks = chunk_document(doc)
    assert [(c.section, c.kind) for c in chunks] == [
        ("At a glance", "section"),
        ("How refunds are paid", "section"),
    ]
    first = chunks[0]
    assert (
        first.text
        == "Returns policy — At a glance\n- A new, unridden bike may be returned within 30 days of delivery."
    )
    assert (first.chunk_id, first.doc_id, first.version, first.status, first.lang, first.page) == (
        "kc-returns-v3:0",
        "kc-returns-v3",
        "3",
        "current",
        "en",
        1,
    )
    assert chunks[1].text.startswith(context_line("Returns policy", "How refunds are paid") + "\n")


def test_long_markdown_section_becomes_windows_that_keep_the_section() -> None:
    sentences = " ".join(f"Rule {i} says the bike must be boxed." for i in range(30))
    doc = Document(
        doc_id="kc",
        file="kc.md",
        title="Returns",
        kind="markdown",
        pages=[Page(1, f"## Returning a bike\n\n{sentences}\n\n## Short\n\nFine.")],
    )
    chunks = chunk_document(doc, max_chars=300)
    windows = [c for c in chunks if c.section == "Returning a bike"]
    assert len(windows) > 1 and all(c.kind == "window" for c in windows)
    assert all(c.text.startswith("Returns — Returning a bike\n") for c in windows)
    assert chunks[-1].section == "Short" and chunks[-1].kind == "section"


def test_bangla_sentences_split_on_danda() -> None:
    text = "নতুন সাইকেল ৩০ দিনের মধ্যে ফেরত দেওয়া যায়। ডেলিভারি ফি শুধু ক্ষতিগ্রস্ত হলে ফেরত দেওয়া হয়। টাকা ফেরত যায়।"
    assert split_sentences(text) == [
        "নতুন সাইকেল ৩০ দিনের মধ্যে ফেরত দেওয়া যায়।",
        "ডেলিভারি ফি শুধু ক্ষতিগ্রস্ত হলে ফেরত দেওয়া হয়।",
        "টাকা ফেরত যায়।",
    ]
    body = " ".join(f"বাক্য নম্বর {i} ফেরত নীতির কথা বলে।" for i in range(12))
    doc = Document(
        doc_id="kc-bn",
        file="returns.bn.md",
        title="ফেরত নীতি",
        kind="markdown",
        lang="bn",
        pages=[Page(1, f"## এক নজরে\n\n{body}\n")],
    )
    chunks = chunk_document(doc, max_chars=200, window_sentences=3, overlap_sentences=1)
    assert len(chunks) > 1 and all(c.lang == "bn" and c.section == "এক নজরে" for c in chunks)
    for c in chunks:
        assert chunk_body(c.text).endswith("।")  # windows end on sentence boundaries


def test_unstructured_text_falls_back_to_overlapping_windows() -> None:
    text = " ".join(f"Fact {i} is stated here." for i in range(1, 13))
    doc = Document(doc_id="notes", file="notes.txt", title="Notes", kind="text", pages=[Page(1, text)])
    chunks = chunk_document(doc, window_sentences=5, overlap_sentences=2)
    bodies = [chunk_body(c.text) for c in chunks]
    assert bodies[0] == " ".join(f"Fact {i} is stated here." for i in range(1, 6))
    assert bodies[1].startswith("Fact 4 is stated here. Fact 5 is stated here. Fact 6")  # 2 sentences overlap
    assert bodies[-1].endswith("Fact 12 is stated here.")
    assert all(c.kind == "window" and c.section is None and c.module is None for c in chunks)
    assert all(c.text.startswith("Notes\n") for c in chunks)
    assert [c.chunk_id for c in chunks] == [f"notes:{i}" for i in range(len(chunks))]


def test_windows_never_cross_a_page_break() -> None:
    # A student opens the page a citation names: a window of pp. 1-2 would cite p. 1 for Gamma.
    doc = pdf_doc("Alpha is first. Beta is second.", "Gamma is third. Delta is fourth.")
    chunks = chunk_document(doc, window_sentences=3, overlap_sentences=1)
    assert [(c.page, c.page_end) for c in chunks] == [(1, 1), (2, 2)]
    assert "Gamma" not in chunks[0].text and "Alpha" not in chunks[1].text


def test_a_sentence_running_over_the_break_stays_whole_on_its_first_page() -> None:
    doc = pdf_doc("Alpha is first. Beta runs", "over the page. Gamma is third.")
    chunks = chunk_document(doc, window_sentences=3, overlap_sentences=1)
    assert [(c.page, c.page_end) for c in chunks] == [(1, 2), (2, 2)]
    assert "Beta runs over the page." in chunks[0].text


def test_slides_without_full_stops_break_at_every_page() -> None:
    """Slides end without a full stop: a new page that does not go on in lower case starts a new
    sentence, so no window cites p. 1 for a fact on p. 3."""
    doc = pdf_doc(
        "Field journal\n•Short entry, posted on the course site\n•Worth 2 points",
        "Final project\n•Groups of 3 to 5 people",
        "Office hours\n•Drop in on Thursdays",
    )
    chunks = chunk_document(doc, window_sentences=5, overlap_sentences=1)
    assert [(c.page, c.page_end) for c in chunks] == [(1, 1), (2, 2), (3, 3)]
    assert "Thursdays" in chunks[2].text and "Thursdays" not in chunks[0].text


def test_a_passage_over_two_pages_knows_where_the_second_begins() -> None:
    """A syllabus block kept whole over a page break records where p. 2 starts, so an answer can
    cite the page its quoted sentence is on (``answerers.base.narrowed``)."""
    from syllabot.worker.answerers.base import narrowed
    from syllabot.worker.indexes.retrieval import hit_from_chunk

    chunks = syllabus("21CS44.pdf")
    spanning = [c for c in chunks if c.page_end and c.page != c.page_end]
    assert spanning and all(c.page_marks for c in spanning)
    chunk = spanning[0]
    (at, page) = chunk.page_marks[0]
    flat = "".join(chunk.text.split())
    later = flat[at : at + 40]  # the opening words of the later page, as an answer would quote them
    hit = hit_from_chunk(chunk, 1, 0.5, 0.5, 0.5)
    cited = narrowed(hit, [later])
    assert (cited.page, cited.page_end) == (page, page) and cited.label.endswith(f", p. {page}")
    first = narrowed(hit, [flat[: max(1, at)][-40:]])  # the last words before the break
    assert (first.page, first.page_end) == (chunk.page, chunk.page)
    assert narrowed(hit, ["words that are nowhere in the passage at all"]) == hit
    restored = Chunk.from_dict(json.loads(json.dumps(chunk.to_dict())))
    assert restored.page_marks == chunk.page_marks  # survives the snapshot's JSON


def test_chunking_is_deterministic_and_validates_arguments() -> None:
    doc = pdf_doc("Module-1\nTopics.\nModule-2\nMore topics.")
    assert chunk_document(doc) == chunk_document(doc)
    with pytest.raises(ValueError):
        chunk_document(doc, window_sentences=2, overlap_sentences=2)
    assert (
        chunk_document(Document(doc_id="e", file="e.txt", title="E", kind="text", pages=[Page(1, "  ")]))
        == []
    )


def _with_subject(doc: Document) -> Document:
    doc.subject = detect_subject(doc.pages)  # as the loaders do
    return doc


def _tail_doc(doc_id: str, code: str, title: str, tail: str) -> Document:
    header = f"V Semester\n{title.upper()}\nCourse Code: {code} CIE Marks 50\nCredits 03 Exam Hours 03"
    return _with_subject(pdf_doc(f"{tail}\n{header}\nModule-1\nOwn topics of {title}.", doc_id=doc_id))


_SEE = (
    "Semester End Examination:\nThe theory SEE is held by the University on the days its published timetable"
    " sets, with one question paper for every college (duration 03 hours)\n"
    "1. The paper has ten questions. Each one carries 20 marks."
)


def _course_doc(doc_id: str, code: str, title: str, body: str) -> Document:
    header = f"V Semester\n{title.upper()}\nCourse Code: {code} CIE Marks 50\nCredits 03 Exam Hours 03"
    return _with_subject(pdf_doc(f"{header}\nModule-1\n{body}\n{_SEE}", doc_id=doc_id))


def test_link_course_tails_ignores_shared_boilerplate_and_uses_distinctive_passages() -> None:
    books = "Textbooks:\n1. Compilers: Principles, Techniques and Tools, Aho, Lam, Sethi and Ullman, Pearson, 2nd edition."
    other = _course_doc(
        "22cd50", "22CD50", "Graph Theory", "Graphs, trees, colourings and planar embeddings."
    )
    owner = _course_doc("22cd51", "22CD51", "Compiler Design", f"Lexers and parsers.\n{books}")
    # 22CD53's p1 starts with 22CD51's tail, but the guess (22CD52) is not indexed: only 22CD51's
    # textbooks (not the SEE rules all three print) say whose tail it is.
    tail_doc = _tail_doc("22cd53", "22CD53", "Data Mining", f"{_SEE}\n{books}")
    chunks = [c for d in (other, owner, tail_doc) for c in chunk_document(d)]
    tail = [c for c in chunks if c.doc_id == "22cd53" and c.subject == "22CD52"]
    assert [c.section for c in tail] == ["Semester End Examination", "Textbooks"]
    linked = [c for c in link_course_tails(chunks) if c.doc_id == "22cd53" and c.foreign]
    assert [c.subject for c in linked] == ["22CD51 Compiler Design"] * 2
    # Boilerplate alone is no evidence: without the textbooks the guess stays.
    bare = _tail_doc("22cd53", "22CD53", "Data Mining", _SEE)
    chunks = [c for d in (other, owner, bare) for c in chunk_document(d)]
    assert {c.subject for c in link_course_tails(chunks) if c.doc_id == "22cd53" and c.foreign} == {"22CD52"}
    # A file's own course printed without a title is never given to another course by its content.
    untitled = _with_subject(
        pdf_doc(f"Course Code: 22CD60 CIE Marks 50\nModule-1\nParsing.\n{books}\nModule-2\nMore.", doc_id="x")
    )
    chunks = chunk_document(untitled) + chunk_document(owner)
    assert {c.subject for c in chunks if c.doc_id == "x"} == {"22CD60"}
    assert {c.subject for c in link_course_tails(chunks) if c.doc_id == "x"} == {"22CD60"}


def test_link_course_tails_completes_the_guessed_code_with_its_title() -> None:
    owner = _course_doc("22cd52", "22CD52", "Compiler Design", "Lexers and parsers.")
    tail_doc = _tail_doc("22cd53", "22CD53", "Data Mining", "Reference Books:\n1. Some book on compilers.")
    linked = link_course_tails(chunk_document(owner) + chunk_document(tail_doc))
    (ref,) = [c for c in linked if c.kind == "references"]
    assert ref.subject == "22CD52 Compiler Design" and ref.foreign
    assert ref.text.startswith("22CD52 Compiler Design — Reference books\n")


def test_split_subject() -> None:
    assert split_subject("21CS44 Operating Systems") == ("21CS44", "Operating Systems")
    assert split_subject("21CS52") == ("21CS52", "")
    assert split_subject("CI114TA AI Foundations for Engineers") == (
        "CI114TA",
        "AI Foundations for Engineers",
    )
    assert split_subject("Returns policy") == (None, "Returns policy")
    assert split_subject(None) == (None, "")


def test_long_lab_list_is_split_between_items() -> None:
    items = "\n".join(
        f"{i}. Write a program that solves problem {i} and measures its running time for growing n,\n"
        f"plotting the time taken against n."
        for i in range(1, 13)
    )
    doc = pdf_doc(f"Module-1\nTopics.\nList of experiments\n{items}\nCourse outcomes\nCO1 Do things.")
    chunks = chunk_document(doc, max_chars=300)
    parts = [c for c in chunks if c.section == "Lab programs"]
    assert len(parts) > 2 and all(len(chunk_body(c.text)) <= 300 for c in parts)
    for c in parts[1:]:
        assert re.match(r"^\d{1,2}\. Write", chunk_body(c.text)), chunk_body(c.text)[:40]
    assert chunks[0].module == "Module 1" and "List of experiments" not in chunks[0].text
    assert "".join(chunk_body(c.text) for c in parts).count("problem 12 ") == 1


def test_lab_list_up_to_twice_max_chars_stays_whole() -> None:
    items = "\n".join(f"{i}. Implement algorithm number {i} in C and test it." for i in range(1, 15))
    doc = pdf_doc(f"Module-1\nTopics.\nModule-2\nMore topics.\nPractical component of IPCC\n{items}")
    (lab,) = [c for c in chunk_document(doc, max_chars=500) if c.section == "Practical component"]
    assert 500 < len(chunk_body(lab.text)) <= 1000 and "14. Implement" in lab.text


def test_lab_component_inside_a_module_stays_in_the_module() -> None:
    doc = pdf_doc(
        "Module-1\nSorting.\nLaboratory Component:\n1. Sort numbers.\nTeaching-Learning Process Worked examples on the board\n"
        "RBT: L1, L2\nModule-2\nGraphs.\nLab programs:\n1. Traverse a graph."
    )
    chunks = chunk_document(doc)
    assert [c.module for c in chunks] == ["Module 1", "Module 2"]
    assert "Sort numbers" in chunks[0].text and "RBT: L1, L2" in chunks[0].text
    assert "Traverse a graph" in chunks[1].text


def test_prose_headings_close_a_textbook_section() -> None:
    """US-style syllabi: an unnamed ALL-CAPS or short heading ends "TEXTBOOK:" instead of joining it."""
    page = "\n".join(
        [
            "TEXTBOOK:",
            "Calculus, Stewart, 8th edition.",
            "",
            "HOMEWORK\tPOLICY",
            "Homework is due every Friday.",
            "",
            "Exam policies",
            "No calculators are allowed.",
            "Course outcomes",
            "• Compute double integrals.",
        ]
    )
    chunks = chunk_document(pdf_doc(page, title="Math 233"))
    assert [(c.kind, c.section) for c in chunks] == [
        ("textbooks", "Textbooks"),
        ("section", "Homework Policy"),
        ("section", "Exam policies"),
        ("outcomes", "Course outcomes"),
    ]
    assert "Friday" not in chunks[0].text and chunks[1].text.startswith("Math 233 — Homework Policy\n")


def test_slide_bullets_without_a_space_keep_their_sentence_but_each_gets_its_own_line() -> None:
    # Keynote and PowerPoint exports write "•Quick", no space: one sentence for the windows (a
    # slide is not cut into fragments), one line per bullet for the answerer, which reads lines.
    doc = pdf_doc(
        "Field journal\n•Short (10 minute) entry, posted on the course site \n•Worth 2 points \n"
        "•Answer 3 prompts (1-3 lines each): \n•Which plots did you survey last week (first week: leave \n"
        "blank!) \n•Which plots will you survey next?",
        "Grading\n•Labs 40%",
    )
    chunks = chunk_document(doc)
    assert chunks[0].text.splitlines()[1:] == [
        "Field journal",
        "•Short (10 minute) entry, posted on the course site",
        "•Worth 2 points",
        "•Answer 3 prompts (1-3 lines each):",
        "•Which plots did you survey last week (first week: leave blank!)",
        "•Which plots will you survey next?",
    ]


def test_a_window_puts_each_line_of_a_header_block_on_its_own_line() -> None:
    # whose each field is, the course card reads (tests/test_card.py); joined by spaces, a whole
    # staff block was one "sentence", quoted cut off before the asked hours
    doc = pdf_doc(
        "Meeting Times: TuTh 9:40 - 11:05AM\nClassroom: Hale 112\nStaff\n"
        "Instructor: Dr. Ada Lovelace\nEmail: ada@example.edu\nOffice Hours: By appointment\n"
        "Teaching Assistant: Sam Okafor\nEmail: sam@example.edu\nOffice Hours: TuTh 3:30PM - 5PM"
    )
    lines = [line for chunk in chunk_document(doc) for line in chunk.text.splitlines()]
    for line in (
        "Teaching Assistant: Sam Okafor",
        "Email: sam@example.edu",
        "Office Hours: TuTh 3:30PM - 5PM",
    ):
        assert line in lines


def test_a_single_label_line_is_prose_and_bullets_continue_a_field() -> None:
    from syllabot.worker.ingest.chunking import _lines, _sentences

    doc = pdf_doc("Who: Dana Reyes\n• dana@example.edu\n• Tue & Fri, 13:00-14:30\nWhere: Room 4B")
    sentences = [s.text for s in _sentences(_lines(doc.pages), 1200)]
    assert sentences == ["Who: Dana Reyes, dana@example.edu, Tue & Fri, 13:00-14:30", "Where: Room 4B"]
    one = pdf_doc("Note: the schedule may change. Read it weekly.")
    assert _sentences(_lines(one.pages), 1200)[0].text == "Note: the schedule may change. Read it weekly."
