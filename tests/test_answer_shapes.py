"""The answer a student reads: whole lists, one CO, module first, values required, no course mix.

Pure tests over synthetic hits (no Redis, no model), then the real VTU syllabi through the
product's own search and answerer (skipped cleanly when ../shared/data is absent).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from syllabot.shared.schema import NOT_IN_MATERIALS, UNCERTAIN_LEAD
from syllabot.worker.answerers.base import finalise_citations
from syllabot.worker.answerers.decision import Thresholds
from syllabot.worker.answerers.extractive import ExtractiveAnswerer, reply_for
from syllabot.worker.query.reading import Question, asked
from tests.queue_helpers import make_hit

LOOSE = Thresholds(0.0, 0.0, 0.0)

CN_OUTCOMES = make_hit(
    1,
    "21CS52 Computer Networks — Course outcomes\nCourse Outcomes\n"
    "On finishing this course a student can:\n"
    "CO 1. Describe how a message travels through a layered protocol stack.\n"
    "CO 2. Compare the framing and error-control schemes of a link.\n"
    "CO 3. Configure and troubleshoot the routing tables of a small office\n"
    "CO 4. Plan a campus network for the traffic its users expect.",
    subject="21CS52 Computer Networks",
    section="Course outcomes",
    file="21CS52.pdf",
    page=2,
)
CN_TEXTBOOKS = make_hit(
    2,
    "21CS52 Computer Networks — Textbooks\nTextbooks:\n"
    "1. Packet-Switching- Maria L. Fernandez and Omar K. Haddad, Northfield Press, 3rd-\nEdition.\n"
    "2. Routing From the Wire Up -Priya R. Natarajan and Tomas J. BergHarbour\nHouse 2nd Edition.",
    subject="21CS52 Computer Networks",
    section="Textbooks",
    file="21CS52.pdf",
    page=3,
)
OS_OUTCOMES = make_hit(
    3,
    "21CS44 Operating Systems — Course outcomes\nCourse outcomes:\n"
    "CO 1. Describe how a kernel is layered.\nCO 2. Apply scheduling.\nCO 3. Analyse deadlocks.",
    subject="21CS44 Operating Systems",
    section="Course outcomes",
    file="21CS44.pdf",
    page=3,
)
DB_HEADER = make_hit(
    4,
    "21CS53 Database Management Systems — Course details\nCourse Code 21CS53 CIE Marks 40\n"
    "Teaching Hours/Week (L:T:P: S) 2:2:0:0 SEE Marks 60\nCredits 04 Exam Hours 03",
    subject="21CS53 Database Management Systems",
    section="Course details",
    file="21CS53.pdf",
    page=1,
)
SEE_RULES = make_hit(
    5,
    "21CS53 Database Management Systems — Semester End Examination\nSemester End Examination:\n"
    "The theory SEE is held by the University on the days its published timetable sets, with one "
    "question paper for every college.",
    subject="21CS53 Database Management Systems",
    section="Semester End Examination",
    file="21CS53.pdf",
    page=4,
    cosine=0.8,
    score=0.8,
)


def read(question: str, named: tuple[str, ...] = (), topic: str = "") -> Question:
    """The question as read once, with the courses it names (as ``read_question`` finds them)."""
    return asked(Question(question, named, topic or question))


def _text(question: str, hits: list, named: tuple[str, ...] = (), topic: str = "") -> tuple[str, str]:
    reply = reply_for(read(question, named, topic), hits, False, LOOSE)
    text, _ = finalise_citations(reply.text, hits, brackets=False)
    return reply.status, text


def test_a_list_question_gets_the_whole_list_in_order() -> None:
    status, text = _text(
        "what are the course outcomes of CN", [CN_OUTCOMES, CN_TEXTBOOKS], ("21CS52 Computer Networks",)
    )
    assert status == "answered"
    lines = text.splitlines()
    assert lines[0] == "Course outcomes of 21CS52 Computer Networks:"
    assert [line[:4] for line in lines[1:]] == ["CO 1", "CO 2", "CO 3", "CO 4"]
    assert "Plan a campus network for the traffic its users expect. [1]" in text


def test_textbooks_keep_authors_initials() -> None:
    status, text = _text("textbooks for CN", [CN_TEXTBOOKS, CN_OUTCOMES], ("21CS52 Computer Networks",))
    assert status == "answered"
    assert "Maria L. Fernandez and Omar K. Haddad" in text
    assert "Priya R. Natarajan and Tomas J." in text
    assert "Outcomes" not in text


def test_one_course_outcome_is_its_line_and_a_missing_one_is_not_in_the_materials() -> None:
    status, text = _text("what is CO3 of CN", [CN_OUTCOMES], ("21CS52 Computer Networks",))
    assert status == "answered"
    assert text.startswith("21CS52 Computer Networks, CO 3. Configure and troubleshoot")
    assert "CO 1" not in text
    status, text = _text("what is CO5 of CN", [CN_OUTCOMES], ("21CS52 Computer Networks",))
    assert status == "not_in_materials"
    assert text.startswith("The course outcomes of 21CS52 Computer Networks list 4 outcomes, not CO5.")
    assert NOT_IN_MATERIALS not in text  # the status says it; the front-end words it


def test_a_list_question_naming_no_course_is_answered_per_course_never_mixed() -> None:
    status, text = _text("what are the course outcomes", [CN_OUTCOMES, OS_OUTCOMES])
    assert status == "answered"
    cn, os_ = text.index("of 21CS52 Computer Networks:"), text.index("of 21CS44 Operating Systems:")
    assert cn < text.index("Plan a campus network") < os_ < text.index("Analyse deadlocks")


def test_a_value_question_gets_the_row_that_holds_the_value() -> None:
    status, text = _text("how many credits is dbms", [DB_HEADER, SEE_RULES], topic="how many credits is")
    assert status == "answered"
    assert text == "Credits 04 Exam Hours 03. [1]"


def test_a_number_about_something_else_does_not_answer_a_value_question() -> None:
    """The passages are about CopyScan, but the only sentence with a number is about a bonus task:
    quoting it as the count asked for would be confidently wrong."""
    hits = [
        make_hit(1, "CopyScan checks every essay and is quick to flag sentences lifted from other writers."),
        make_hit(2, "The bonus reflection task is worth up to 1 point on the student's final grade."),
    ]
    question = "how many students has copyscan caught cheating"
    reply = reply_for(read(question), hits, False, LOOSE)
    assert reply.status == "uncertain"
    # the floor is what holds it back: without it the bands alone would answer with the number
    anything = reply_for(read(question), hits, False, Thresholds(0.0, 0.0, 0.0, value_floor=0.0))
    assert anything.status == "answered" and "1 point" in anything.text


def test_the_slide_titled_with_the_asked_term_is_quoted_before_a_list_that_names_it() -> None:
    strategies = make_hit(
        1,
        "Heuristics:\n- Hanlon's razor\n- Check the sample size\n- Sketch a timeline\n- Ask a second reader",
    )
    razor = make_hit(
        2,
        "Hanlon's razor:\n- A saying passed around by engineers: do not assume malice where a mistake will do\n"
        "- Given two accounts that fit the facts equally well, prefer the less sinister one",
    )
    question = "whats hanlon's razor, it came up in lec"
    reply = reply_for(read(question), [strategies, razor], False, LOOSE)
    assert reply.text.startswith("Hanlon's razor:\n- A saying passed around"), reply.text


def test_the_passage_holding_the_asked_value_counts_as_evidence_wherever_it_ranks() -> None:
    """Three assessment passages first, the course header with its credits fourth: the header is
    read as evidence too, so the question is not told "Not in your materials"."""
    filler = [
        make_hit(k, f"Assessment task {k}: presentations and reports are weighted against the outcomes.")
        for k in (1, 2, 3)
    ]
    header = make_hit(4, "Course Title: Soil Microbiology. Course Code: AGR5120. Credit Units: 3 credits.")
    strict = Thresholds(0.0, 0.95, 0.99, floor_cosine=0.0, floor_coverage=0.2)
    question = "how many credits do i get for passing this course"
    reply = reply_for(read(question), [*filler, header], False, strict)
    assert reply.status != "not_in_materials", reply


def test_a_list_run_on_after_an_announcing_colon_is_quoted_as_a_list() -> None:
    paper = make_hit(
        1,
        "Field Report (40%) A 12-page field report will anchor the term's fieldwork. "
        "Your report should include the following sections: cover page, summary, site description, "
        "sampling methods, findings, discussion, and references.",
    )
    question = "what sections r required in the field report"
    reply = reply_for(read(question), [paper], False, LOOSE)
    assert "Your report should include the following sections:\n- cover page\n- summary" in reply.text
    assert "\n- references" in reply.text
    # a colon after no announcing word stays a sentence
    note = make_hit(1, "Note: the exam is on Monday, bring a pen, and arrive early.")
    assert "\n- " not in reply_for(read("when is the exam"), [note], False, LOOSE).text


def test_an_exam_date_is_not_answered_by_a_timetable_promise() -> None:
    status, text = _text("when is the dbms exam date", [SEE_RULES, DB_HEADER], topic="when is the exam date")
    assert status != "answered"
    assert not text.startswith((NOT_IN_MATERIALS, UNCERTAIN_LEAD))  # the body only: no lead


def test_which_module_names_the_module_of_the_topic_not_of_the_top_hit() -> None:
    m3 = make_hit(
        1,
        "21CS44 Operating Systems — Module 3\nModule-3\nDeadlocks: System model; Deadlock prevention.",
        subject="21CS44 Operating Systems",
        module="Module 3",
        file="21CS44.pdf",
        page=2,
    )
    m4 = make_hit(
        2,
        "21CS44 Operating Systems — Module 4\nModule-4\nVirtual Memory Management: Demand paging; Thrashing.",
        subject="21CS44 Operating Systems",
        module="Module 4",
        file="21CS44.pdf",
        page=2,
    )
    status, text = _text("which module has paging", [m3, m4])
    assert status == "answered"
    assert text.startswith("Module 4 of 21CS44 Operating Systems, p. 2. [1]")


# --- the real syllabi ---------------------------------------------------------------------------

SYLLABI = Path(__file__).resolve().parents[2] / "shared" / "data" / "syllabi"


@pytest.fixture(scope="module")
def vtu() -> Any:
    if not SYLLABI.exists():
        pytest.skip(f"real syllabi not found at {SYLLABI}")
    from syllabot.shared.config import Settings
    from syllabot.worker.indexes.embedders import get_embedder
    from syllabot.worker.indexes.index import build_snapshot
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.families import relink
    from syllabot.worker.ingest.loaders import IngestError, load_document

    settings = Settings(embedder="minilm", _env_file=None)
    embedder = get_embedder(settings)
    chunks = []
    for path in sorted(SYLLABI.glob("*.pdf")):
        try:
            chunks += chunk_document(load_document(path.read_bytes(), path.name, 50 * 2**20))
        except IngestError:
            continue  # the scanned PDF: its refusal is tested in test_loaders
    chunks = relink(chunks)
    matrix = embedder.embed_documents([c.text for c in chunks])
    snapshot = build_snapshot("v1", "vtu", embedder.id, embedder.dim, chunks, matrix, "now")
    return settings, embedder, snapshot


def _ask(vtu: Any, question: str) -> Any:
    from syllabot.worker.indexes.retrieval import SearchResult, search_snapshot
    from syllabot.worker.query.reading import read_question

    settings, embedder, snapshot = vtu
    query = read_question(question, snapshot)
    selection, hits = search_snapshot(snapshot, embedder.embed_query(query.text), query, settings)
    result = SearchResult(hits, "v1", 0, 0, selection.fallback, "vtu", question, query)
    return ExtractiveAnswerer(settings).answer_sync(question, result, "vtu")


@pytest.mark.slow
@pytest.mark.parametrize(
    "question",
    [
        "which module covers paging?",
        "🤔 which module has paging?? 🙏",
        "hi, quick question please: which module covers paging? thanks a lot!!",
        "which module covers paging? <@123456789>",
    ],
)
def test_politeness_emoji_and_mentions_do_not_flip_the_answer(vtu: Any, question: str) -> None:
    answer = _ask(vtu, question)
    assert answer.status == "answered"
    # a module of the operating-systems course that prints paging, whatever the politeness around it
    assert re.match(r"Module [34] of 21CS44 Operating Systems, p\. 2\.", answer.text), answer.text
    assert "paging" in answer.text.lower()


@pytest.mark.slow
def test_a_misspelt_topic_is_read_as_the_syllabus_spells_it(vtu: Any) -> None:
    # The student types "horspool"; the ADA syllabus prints "Harspool's algorithm" (Module 4).
    answer = _ask(vtu, "horspool is which module in ada")
    assert answer.status == "answered"
    assert answer.text.startswith("Module 4 of 21CS42")


def test_a_course_abbreviation_scopes_the_answer_to_that_course(vtu: Any) -> None:
    answer = _ask(vtu, "wat is CO4 in ADA")
    assert answer.status == "answered"
    assert answer.text.startswith("21CS42 Design and Analysis of Algorithms, CO 4.")
    assert {c.file for c in answer.citations} == {"21CS42.pdf"}


@pytest.mark.slow
def test_networks_textbooks_come_whole_from_the_networks_course(vtu: Any) -> None:
    answer = _ask(vtu, "textbooks for computer networks")
    assert answer.status == "answered"
    assert "Andrew S. Tanenbaum" in answer.text and "James F. Kurose" in answer.text
    assert all(c.subject == "21CS52 Computer Networks" for c in answer.citations)


@pytest.mark.slow
def test_the_exam_date_is_not_in_the_syllabus(vtu: Any) -> None:
    answer = _ask(vtu, "when is the DBMS exam")
    assert answer.status != "answered"


def test_which_module_names_the_module_that_holds_the_topic() -> None:
    m3 = make_hit(
        1,
        "21CS44 Operating Systems — Module 3\nMemory management: Swapping; Paging; Segmentation.",
        module="Module 3",
        page=2,
        file="21CS44.pdf",
    )
    m4 = make_hit(
        2,
        "21CS44 Operating Systems — Module 4\nVirtual memory: Demand paging; Thrashing.",
        module="Module 4",
        page=2,
        file="21CS44.pdf",
    )
    reply = reply_for(read("which module covers swapping"), [m4, m3], False)
    text, citations = finalise_citations(reply.text, [m4, m3], brackets=False)
    assert reply.status == "answered"
    assert text.startswith("Module 3 of 21CS44 Operating Systems, p. 2. [1]")
    assert [c.module for c in citations] == ["Module 3"]
    only = reply_for(read("which module covers thrashing"), [m4, m3], False)
    assert only.text.startswith("Module 4 of 21CS44 Operating Systems, p. 2.")


def test_a_list_too_long_to_show_whole_says_how_many_items_it_leaves_out_and_where() -> None:
    """A course outcomes block of 40 long outcomes over two pages: the reply shows what fits and
    ends "… and N more on p. P", cited, never a bare "…" that reads like the end of the list."""
    outcome = "Plan and justify a layered network for the traffic its users expect, with costs and risks"
    first = "\n".join(f"CO {n}. {outcome} ({n})." for n in range(1, 21))
    second = "\n".join(f"CO {n}. {outcome} ({n})." for n in range(21, 41))
    hits = [
        make_hit(
            1,
            f"Course Outcomes\n{first}",
            subject="21CS52 Computer Networks",
            section="Course outcomes",
            file="21CS52.pdf",
            page=2,
        ),
        make_hit(
            2,
            f"Course Outcomes\n{second}",
            subject="21CS52 Computer Networks",
            section="Course outcomes",
            file="21CS52.pdf",
            page=3,
        ),
    ]
    status, text = _text("what are the course outcomes of CN", hits, ("21CS52 Computer Networks",))
    assert status == "answered"
    shown = [line for line in text.splitlines() if line.startswith("CO ")]
    last = text.splitlines()[-1]
    match = re.fullmatch(r"… and (\d+) more on p\. (\d) \[(\d)\]", last)
    assert match is not None, last
    assert len(shown) + int(match.group(1)) == 40
    assert match.group(2) == "3" if len(shown) >= 20 else match.group(2) == "2"
