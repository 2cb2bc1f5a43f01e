"""worker/query/card.py: a course's facts read once into typed slots, answered from there.

Every text here is our own (a pottery course, a birding course), none copied from an evaluation
document."""

from __future__ import annotations

import json
from pathlib import Path

from syllabot.shared.answer_text import answer_text
from syllabot.shared.config import Settings
from syllabot.worker.answerers.extractive import ExtractiveAnswerer
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.indexes.index import IndexSnapshot, build_snapshot
from syllabot.worker.query.card import (
    SLOTS,
    answer_from_card,
    asked_slots,
    card_lines,
    disagreements,
    read_card,
    template,
)
from syllabot.worker.query.reading import read_question
from syllabot.worker.text.documents import Chunk
from tests.queue_helpers import cli_in

HEADER = (
    "CER 210: Wheel-thrown Pottery (Spring 2031)\n"
    "Meeting Times: TTh 9:05 — 10:50AM; Studio: Kiln Hall 114\n"
    "Instructor: Dr. Ada Whitlock; Email: ada.whitlock@clayschool.edu; Office Location: Kiln Hall 2047; "
    "Office Hours: Wed 1:00 — 3:00PM\n"
    "Teaching Assistant: Bo Lindqvist; Email: bo.lindqvist@clayschool.edu; Office Hours: By appointment"
)
RULES = (
    "Late pieces lose one letter grade for each day after the deadline. "
    "You may use ChatGPT to brainstorm glaze names, but every written reflection must be your own. "
    "Students needing disability accommodations should contact the Access Office in week one."
)
GRADING = "Grading\nPortfolio 50%\nGlaze journal 20%\nCritique participation 30%"


def _chunk(i: int, text: str, page: int, doc: str = "syllabus", title: str = "Pottery syllabus") -> Chunk:
    return Chunk(chunk_id=f"{doc}:{i}", doc_id=doc, file=f"{doc}.pdf", title=title, text=text, page=page)


def _snapshot(chunks: list[Chunk]) -> IndexSnapshot:
    embedder = HashingEmbedder(256)
    matrix = embedder.embed_documents([c.text for c in chunks])
    return build_snapshot("v1", "c", embedder.id, embedder.dim, chunks, matrix, "now")


def _course() -> list[Chunk]:
    return [_chunk(0, HEADER, 1), _chunk(1, RULES, 2), _chunk(2, GRADING, 3)]


def test_a_header_record_gives_each_person_their_own_facts_and_a_room_is_never_a_year() -> None:
    card = read_card(_course())
    hours = {f.who: f.text for f in card.of("staff.office_hours")}
    assert hours == {
        "Ada Whitlock": "Office Hours: Wed 1:00 — 3:00PM",
        "Bo Lindqvist": "Office Hours: By appointment",
    }
    assert [f.who for f in card.of("staff.ta")] == ["Bo Lindqvist"]
    assert [f.text for f in card.of("staff.office")] == ["Office Location: Kiln Hall 2047"]
    assert card.terms == {"syllabus": "Spring 2031"}  # the term, not the room "2047"
    assert card.of("staff.phone") == []
    assert any("ChatGPT" in f.text for f in card.of("policy.ai"))
    assert any("Late pieces" in f.text for f in card.of("policy.late"))
    assert all(f.page == 1 for f in card.of("staff.email"))


def test_the_card_is_stored_with_the_snapshot_and_read_back() -> None:
    snapshot = _snapshot(_course())
    again = IndexSnapshot.from_fields({k.encode(): v for k, v in snapshot.to_fields().items()})
    assert again.course_card == snapshot.course_card
    assert again.course_card.facts


def test_questions_name_their_slot_as_students_type_them() -> None:
    assert asked_slots(read_question("prof office hrs??").text)[0] == "staff.office_hours"
    assert asked_slots(read_question("whats the TA's email").text)[0] == "staff.email"
    assert asked_slots(read_question("is there extra credit").text) == ("policy.extra_credit",)
    assert asked_slots(read_question("which room r we in").text)[0] == "meeting.place"
    # who teaches and who assists: the card's people, whose fields answer "their email" too
    assert asked_slots(read_question("ok so who is the TA for the glaze lab").text)[0] == "staff.ta"
    assert asked_slots(read_question("who teaches this class").text)[0] == "staff.instructor"
    # a topic question that happens to say "when" or "weights" asks no course fact
    assert asked_slots(read_question("when do we cover correlation").text) == ()
    assert asked_slots(read_question("importance sampling - what are the weights").text) == ()
    # a curve and a generative model of the lectures are no grading curve and no AI rule
    assert asked_slots(read_question("what does the area under an ROC curve mean").text) == ()
    assert asked_slots(read_question("which slides cover generative glaze design").text) == ()
    assert asked_slots(read_question("is this class curved").text) == ("grading.scale",)
    assert asked_slots(read_question("can we use gen AI for the reflections").text)[0] == "policy.ai"


def _ask(snapshot: IndexSnapshot, question: str) -> tuple[str, str]:
    from syllabot.worker.indexes.retrieval import result_of, search_snapshot

    read = read_question(question, snapshot)
    embedder = HashingEmbedder(256)
    settings = Settings(embedder="hashing", _env_file=None)
    selection, hits = search_snapshot(snapshot, embedder.embed_query(read.text), read, settings)
    result = result_of(snapshot, hits, [], selection.fallback, "c", question, read)
    answer = ExtractiveAnswerer().answer_sync(question, result, "c")
    return answer.status, answer_text(answer)


def test_a_filled_slot_is_answered_from_the_card_with_its_page() -> None:
    snapshot = _snapshot(_course())
    status, text = _ask(snapshot, "when r bo lindqvist's office hrs")
    assert status == "answered"
    assert "By appointment" in text and "Wed 1:00" not in text  # the TA's own, not the instructor's
    status, text = _ask(snapshot, "where is the prof's office")
    assert status == "answered" and "Kiln Hall 2047" in text


def test_a_weight_asked_by_name_is_answered_with_that_weight_alone() -> None:
    # the named weights are all facts of the slot; the one the question names is the answer
    weights = "Kiln Logs (30%) Keep a log of every firing.\nGlaze Tests (45%) Twelve test tiles.\nStudio Upkeep (25%) Sweep."
    status, text = _ask(_snapshot([*_course(), _chunk(3, weights, 4)]), "how much are the glaze tests worth")
    assert status == "answered" and "45%" in text and "Kiln Logs" not in text, text


def test_a_slot_no_document_fills_is_not_in_your_materials_with_the_closest_fact() -> None:
    snapshot = _snapshot(_course())
    status, text = _ask(snapshot, "whats the prof's phone number")
    assert status == "not_in_materials"
    assert text.startswith("Not in your materials")
    assert "I found no phone number in your materials" in text and "@clayschool.edu" in text


def test_credits_recordings_and_hand_in_are_slots_read_answered_and_honestly_absent() -> None:
    """ "how many credits" and "are lectures recorded" are asked of every course: answered from the
    sentence that states them, and "Not in your materials" where the read syllabus never says;
    "1000 units" of a modelling slide is no credit value and "extra credit" asks no credits."""
    facts = (
        "CER 210 is a three credit hour studio course. "
        "Studio demonstrations will be recorded and posted to the course site the same evening."
    )
    slide = _chunk(0, "Scale the glaze model\nMove the light 1000 units up before you render.", 9, doc="deck")
    snapshot = _snapshot([*_course(), _chunk(3, facts, 2), slide])
    card = snapshot.current_card
    assert [f.text for f in card.of("course.credits")] == ["CER 210 is a three credit hour studio course."]
    assert asked_slots("is there extra credit") == ("policy.extra_credit",)
    status, text = _ask(snapshot, "how many credits is this class")
    assert status == "answered" and "three credit hour" in text, text
    status, text = _ask(snapshot, "r the demos recorded??")
    assert "will be recorded and posted" in text, text
    # where work is handed in: answered where a sentence says; its emptiness proves nothing
    hand_in = _snapshot(
        [*_course(), _chunk(3, "All glaze journals are submitted via Canvas by the due date.", 2)]
    )
    status, text = _ask(hand_in, "where do we submit the glaze journal")
    assert status == "answered" and "submitted via Canvas" in text, text
    assert answer_from_card(read_card(_course()), ("course.submission",), "where do we submit work") is None
    bare = _snapshot(_course())
    for question in ("are lectures recorded", "how many credits is this course"):
        status, text = _ask(bare, question)
        assert status == "not_in_materials" and text.startswith("Not in your materials"), (question, text)


def test_facts_of_the_asked_slot_are_never_not_in_your_materials() -> None:
    """The card holds the asked slot's facts, none surely the answer, and the passages read as far
    off (a fallback search): the verdict is "I can't tell", quoting the facts, never "Not in your
    materials". Where the passages do answer, the card changes nothing."""
    from syllabot.worker.answerers.decision import Evidence, Finding, Reading, Signals, decide

    speaks = Finding("speaks", "card", "Readings: Breath and the Gather [1]")
    far = Signals(Evidence(True, 0.1, 0.1, 0.0, 3))
    assert decide(Reading(True, far)).status == "not_in_materials"
    verdict = decide(Reading(True, far, (speaks,)))
    assert (verdict.status, verdict.reason) == ("uncertain", "card")
    near = Signals(Evidence(False, 0.9, 0.9, 1.0, 3))
    assert decide(Reading(False, near, (speaks,))) == decide(Reading(False, near))
    # end to end: a reading list the card read, asked for as a list, is quoted, not denied
    snapshot = _snapshot([*_course(), _chunk(3, LISTS, 2, doc="glass", title="Glassblowing basics")])
    status, text = _ask(snapshot, "whats the reading list")
    assert status != "not_in_materials" and "Breath and the Gather" in text, text


def test_an_empty_slot_says_nothing_where_the_card_read_no_syllabus() -> None:
    # slides alone: no staff, no grading read, so an empty slot is no evidence
    slides = [_chunk(0, "Centering the clay\nKeep your elbows braced on your thighs.", 4, doc="deck")]
    card = read_card(slides)
    answer = answer_from_card(card, ("staff.phone",), "whats the prof's phone number")
    assert answer is None or not answer.read


def test_the_older_terms_facts_never_answer_for_the_current_one() -> None:
    old = "CER 210: Wheel-thrown Pottery (Fall 2030)\nMeeting Times: MWF 8:00 — 8:50AM; Studio: Kiln Hall 009"
    chunks = [*_course(), _chunk(0, old, 1, doc="syllabus-old", title="Old pottery syllabus")]
    card = read_card(chunks)
    assert [f.text for f in card.of("meeting.time")] == ["Meeting Times: TTh 9:05 — 10:50AM"]
    assert any(f.older and "MWF" in f.text for f in card.of("meeting.time", current=False))
    assert disagreements(card) == []  # last term's hours are no disagreement with this term's


def test_two_current_documents_that_differ_on_a_slot_are_a_disagreement_with_both_sides() -> None:
    slides = "Office Hours: Fri 10:00 — 11:00AM"
    chunks = [*_course(), _chunk(0, f"Welcome\nInstructor: Dr. Ada Whitlock; {slides}", 2, doc="intro-deck")]
    found = [d for d in disagreements(read_card(chunks)) if d.slot == "staff.office_hours"]
    assert found and {found[0].first.doc_id, found[0].second.doc_id} == {"syllabus", "intro-deck"}
    assert any("disagree" in line.lower() for line in card_lines(read_card(chunks)))


def test_a_slot_disagreement_is_named_in_the_answer_and_the_teachers_list_and_rewording_is_none() -> None:
    """The syllabus says Wednesday, the first day's deck (naming the instructor without her
    title) says Friday: the answer says the materials disagree, quoting and citing both, and
    `syllabot conflicts` lists it. Two sentences that say where slides go in other words, and
    a deck that repeats the syllabus's hours, are no disagreement."""
    from syllabot.worker.indexes.retrieval import disagreements as teachers_list

    deck = "Welcome to CER 210\nInstructor: Ada Whitlock\nOffice Hours: Fri 10:00 — 11:00AM"
    chunks = [*_course(), _chunk(0, deck, 2, doc="intro-deck", title="Day one")]
    snapshot = _snapshot(chunks)
    status, text = _ask(snapshot, "when are the prof's office hours")
    assert status == "answered", text
    assert text.startswith("Your materials disagree"), text
    assert "Wed 1:00" in text and "Fri 10:00" in text
    listed = teachers_list(snapshot)
    assert any(
        "Wed 1:00" in e.first_text + e.second_text and "Fri 10:00" in e.first_text + e.second_text
        for e in listed
    )
    # the same hours said again, and a website worded two ways: nothing to name
    same = "Instructor: Ada Whitlock\nOffice Hours: Wed 1:00 — 3:00PM. Slides go on the course site."
    calm = [
        *_course(),
        _chunk(0, "Slides are posted on the course website after class.", 4),
        _chunk(0, same, 2, doc="deck"),
    ]
    assert disagreements(read_card(calm)) == []


def test_a_teachers_course_facts_win_and_nonsense_fills_nothing() -> None:
    facts = (
        "# Course facts\n\nOffice hours: Thu 4:00 — 5:00PM\nEmail: not-an-address\nGrading: Portfolio 120%"
    )
    chunks = [*_course(), _chunk(0, facts, 1, doc="course-facts", title="Course facts")]
    card = read_card(chunks)
    instructor_hours = [f.text for f in card.of("staff.office_hours")]
    assert instructor_hours == ["Office hours: Thu 4:00 — 5:00PM"]
    assert not any("not-an-address" in f.text for f in card.facts)
    assert not any("120%" in f.text for f in card.facts)
    # a date no calendar has states no exam date; a day and an hour are no classroom
    nonsense = "# Course facts\n\nFinal exam: February 30\nMidterm: April 31, 2031\nLectures: Tuesdays 9:00 — 10:15AM"
    card = read_card([_chunk(0, nonsense, 1, doc="course-facts", title="Course facts")])
    assert card.of("dates.exam") == [] and card.of("meeting.place") == []
    assert [f.text for f in card.of("meeting.time")] == ["Lectures: Tuesdays 9:00 — 10:15AM"]
    # a sentence that opens with a label word is no colon-less label: its value must come first
    prose = read_card(
        [
            _chunk(
                0,
                "When you book a wheel slot, say whether you will throw in person or over Zoom. Slots open on Mondays at 9am.",
                2,
                doc="s",
            )
        ]
    )
    assert prose.of("meeting.time") == [] and prose.of("meeting.place") == []
    header = read_card([_chunk(0, "When Tue & Thu, 10:15–11:45\nWhere Kiln Hall 114", 1, doc="s")])
    assert any(f.text.startswith("When Tue & Thu, 10:15–11:45") for f in header.of("meeting.time"))
    # the unfilled template states nothing
    blank = read_card([_chunk(0, template(), 1, doc="blank", title="Course facts")])
    assert blank.facts == ()


def test_syllabot_card_prints_the_card_and_its_template(settings: Settings, tmp_path: Path) -> None:
    syllabus = tmp_path / "pottery.md"
    syllabus.write_text(f"# Pottery syllabus\n\n{HEADER}\n\n{RULES}\n", encoding="utf-8")
    Engine(settings).ingest("pottery", [(syllabus.name, syllabus.read_bytes())])
    syllabot = cli_in(settings, tmp_path)
    run = syllabot("card", "-c", "pottery", "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    slots = {f["slot"] for f in data["facts"]}
    assert {"staff.office_hours", "staff.email", "policy.ai"} <= slots
    assert all(f["file"] == "pottery.md" for f in data["facts"])
    run = syllabot("card", "--template")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# Course facts")


def test_the_teachers_card_leaves_out_a_document_marked_as_an_earlier_version(
    settings: Settings, tmp_path: Path
) -> None:
    """What `syllabot card` shows is what students are answered from: once the first syllabus is
    marked superseded, its office hours are on neither the card nor its disagreements."""
    first = tmp_path / "pottery-first.md"
    first.write_text(
        "# Pottery syllabus, first draft\n\nOffice Hours: Mon 9:00 — 10:00AM\n", encoding="utf-8"
    )
    revised = tmp_path / "pottery-revised.md"
    revised.write_text(
        f"# Pottery syllabus, revised\n\nOffice Hours: Thu 2:00 — 3:00PM\n\n{RULES}\n", encoding="utf-8"
    )
    engine = Engine(settings)
    engine.ingest("pottery", [(first.name, first.read_bytes()), (revised.name, revised.read_bytes())])
    docs = {f.file: f.doc_id for f in engine.card("pottery").facts}
    assert len(disagreements(engine.card("pottery"))) == 1  # both current: they disagree
    engine.mark("pottery", docs["pottery-first.md"], "superseded", by=docs["pottery-revised.md"])
    card = engine.card("pottery")
    assert [f.text for f in card.of("staff.office_hours")] == ["Office Hours: Thu 2:00 — 3:00PM"]
    assert disagreements(card) == []
    run = cli_in(settings, tmp_path)("card", "-c", "pottery")
    assert run.returncode == 0, run.stderr
    assert "Mon 9:00" not in run.stdout and "Thu 2:00" in run.stdout, run.stdout


LISTS = (
    "Glassblowing basics — Course team\n"
    "* **Semester**: Autumn 2032\n"
    "* **Class time and location**: Tuesdays 9:00 am – 10:15 am, Larkspur Hall 120\n"
    "TA\n"
    "* Mina Okafor\n"
    "* office hours: Thursdays 3:00 – 4:00 pm\n"
    "Readings:\n"
    "• Vance, T. 2019. Breath and the Gather. Furnace Press\n"
    "• Ito, R., and K. Moss. 2021. Annealing for Beginners. Ember Books"
)


def test_lists_under_a_lead_markdown_fields_and_joined_labels_are_read() -> None:
    card = read_card([_chunk(0, LISTS, 1, doc="glass-syllabus", title="Glassblowing basics")])
    assert any("Autumn 2032" in f.text for f in card.of("course.term"))
    assert any("Tuesdays" in f.text for f in card.of("meeting.time"))
    assert any("Larkspur Hall 120" in f.text for f in card.of("meeting.place"))
    assert [(f.who, f.role) for f in card.of("staff.ta")] == [("Mina Okafor", "staff.ta")]
    assert [f.who for f in card.of("staff.office_hours")] == ["Mina Okafor"]  # the TA's, from the list
    question = read_question("who r the TAs?").text
    answer = answer_from_card(card, asked_slots(question), question)
    assert answer is not None and answer.strong and [f.who for f in answer.facts] == ["Mina Okafor"]
    books = " ".join(f.text for f in card.of("materials.textbook"))
    assert "Breath and the Gather" in books and "Annealing for Beginners" in books


def test_named_weights_that_make_the_whole_grade_are_grading_weights() -> None:
    text = (
        "Kiln Logs (30%) Keep a log of every firing.\n"
        "Glaze Tests (45%) Twelve test tiles.\n"
        "Studio Upkeep (25%) Sweep and wedge."
    )
    card = read_card([_chunk(0, text, 4)])
    assert {f.text for f in card.of("grading.weight")} == {
        "Kiln Logs (30%)",
        "Glaze Tests (45%)",
        "Studio Upkeep (25%)",
    }


def test_a_header_names_the_role_of_the_names_after_it_and_an_exam_is_no_class_meeting() -> None:
    """A first page's header block read by value type: the name before an email is the
    instructor's until a piece names another role ("Teaching Assistants"), at the end of a run of
    fields too; a name printed before an email never takes its label ("Whitlock Email"); and a
    header's dated exam is no time the class meets."""
    header = read_card([_chunk(0, "Teaching Assistants\n• Bo Lindqvist (bo@clayschool.edu)", 1)])
    assert header.of("staff.instructor") == [] and {f.role for f in header.of("staff.email")} == {"staff.ta"}
    run = read_card(
        [_chunk(0, "Office Hours: Wed 1-3 pm Teaching Assistants\n• Bo Lindqvist (bo@clayschool.edu)", 1)]
    )
    assert run.of("staff.instructor") == [] and {f.role for f in run.of("staff.email")} == {"staff.ta"}
    table = read_card([_chunk(0, "Dr. Ada Whitlock\nEmail\nada.whitlock@clayschool.edu", 1)])
    assert [f.who for f in table.of("staff.email")] == ["Ada Whitlock"]
    exam = read_card([_chunk(0, "CER 210 Syllabus\nThe final exam is on Thursday, May 9, 9:00–11:00 am.", 1)])
    assert exam.of("meeting.time") == [] and exam.of("dates.exam")


def test_a_slides_words_that_look_like_a_rule_are_no_rule() -> None:
    slides = "Collaborative filtering\nItem-based collaborative filtering ranks neighbours.\nBonus 2 Bonus Is boosting a good idea?"
    card = read_card([_chunk(0, slides, 7, doc="recsys-deck", title="Recommender systems")])
    assert card.of("policy.collaboration") == [] and card.of("policy.extra_credit") == []


def test_any_rule_no_document_states_is_not_in_your_materials_once_the_syllabus_was_read() -> None:
    card = read_card(_course())
    answer = answer_from_card(card, ("policy.regrade",), "how do regrade requests work")
    assert answer is not None and answer.read and not answer.facts
    assert answer.closest is None  # another rule (the late one) is no stand-in for the regrade rule
    # a due date may sit in a schedule the card cannot read: its emptiness proves nothing
    assert answer_from_card(card, ("dates.due",), "when is the glaze journal due") is None


def test_chat_words_for_a_role_pick_that_persons_fact() -> None:
    # "profs email" is the instructor's, not the TA's; a repeated sentence with the same address is
    # still one address
    chunks = [*_course(), _chunk(3, "Questions? Write to me at ada.whitlock@clayschool.edu any day.", 4)]
    card = read_card(chunks)
    for question in ("whats the profs email", "professors email?", "prof's email?"):
        answer = answer_from_card(card, asked_slots(question), question)
        assert answer is not None and answer.strong, question
        assert all("bo.lindqvist" not in f.text for f in answer.facts)


def test_where_lecture_notes_are_posted_is_no_meeting_place() -> None:
    card = read_card([*_course(), _chunk(3, "Class location: Kiln Hall 114", 1, doc="info")])
    where = "where is the class held"
    assert answer_from_card(card, asked_slots(where), where).strong  # type: ignore[union-attr]
    for question in ("where do the lecture notes get posted", "where are the class slides posted"):
        answer = answer_from_card(card, asked_slots(question), question)
        assert answer is None or not answer.strong, question


def test_two_facts_that_state_one_value_are_one_answer() -> None:
    # the syllabus and the first day's slides both give the whole grade, in their own words
    chunks = [
        _chunk(0, HEADER, 1),
        _chunk(1, "The grade is made of a portfolio (50%), a glaze journal (20%) and critique (30%).", 2),
        _chunk(
            2,
            "Your grade: 3 portfolio pieces (50%), the glaze journal (20%) and critique (30%).",
            1,
            doc="day1",
        ),
    ]
    card = read_card(chunks)
    question = "how much is the glaze journal worth"
    answer = answer_from_card(card, asked_slots(question), question)
    assert answer is not None and len(answer.facts) == 2 and answer.strong


STAFF_LINES = (
    "Staff\n"
    "Instructor: Dr. Ada Whitlock\nEmail: ada.whitlock@clayschool.edu\nOffice Hours: Wed 1:00 — 3:00PM\n"
    "Teaching Assistant: Bo Lindqvist\nEmail: bo.lindqvist@clayschool.edu\nOffice Hours: Fri 9:00 — 10:00AM\n"
    "Teaching Assistant: Cy Marsh\nEmail: cy.marsh@clayschool.edu\nOffice Hours: By appointment"
)


def test_a_staff_block_one_field_a_line_gives_each_person_their_fields_even_cut_between_passages() -> None:
    """The chunker keeps a header block's "Label: value" lines one a line; the fields after a name
    are that person's until the next name, also where the block runs on into the next passage
    (whose window repeats the last lines of the one before)."""
    lines = STAFF_LINES.split("\n")
    whole = read_card([_chunk(0, HEADER.split("\n")[0] + "\n" + STAFF_LINES, 1)])
    cut = read_card(
        [
            _chunk(0, "\n".join(lines[:6]), 1),
            _chunk(1, "\n".join(lines[4:]), 1),  # repeats "Teaching Assistant: Bo …" and his email
        ]
    )
    for card in (whole, cut):
        hours = {f.who: f.text for f in card.of("staff.office_hours")}
        assert hours == {
            "Ada Whitlock": "Office Hours: Wed 1:00 — 3:00PM",
            "Bo Lindqvist": "Office Hours: Fri 9:00 — 10:00AM",
            "Cy Marsh": "Office Hours: By appointment",
        }
        emails = {f.who: f.text for f in card.of("staff.email")}
        assert emails["Cy Marsh"] == "Email: cy.marsh@clayschool.edu"
        assert {f.role for f in card.of("staff.email")} == {"staff.instructor", "staff.ta"}
    # prose ends a person's fields: a later line is nobody's
    after = read_card(
        [_chunk(0, STAFF_LINES + "\nQuestions go to the course forum.\nOffice Hours: Mon 4PM", 1)]
    )
    assert [f.who for f in after.of("staff.office_hours")][-1] == ""


def test_a_rule_read_twice_is_quoted_once() -> None:
    # the next window repeats the labelled rule with the following heading run into it
    late = "Late work: pieces lose one letter grade for each day late."
    chunks = [*_course(), _chunk(3, late, 2), _chunk(4, f"{late} 6 Studio safety", 2)]
    card = read_card(chunks)
    question = "whats the late policy"
    answer = answer_from_card(card, asked_slots(question), question)
    assert answer is not None
    assert sum("one letter grade for each day late" in f.text for f in answer.facts) == 1


def test_an_answer_quoting_last_terms_syllabus_says_so_first() -> None:
    old = (
        "CER 210: Wheel-thrown Pottery (Fall 2030)\n"
        "The raku firing day is held on the campus lawn on October 12 from 9:00 AM to 4:00 PM."
    )
    chunks = [*_course(), _chunk(3, old, 1, doc="syllabus-2030", title="Pottery syllabus 2030")]
    snapshot = _snapshot(chunks)
    assert snapshot.course_card.older_terms() == {"syllabus-2030": ("Fall 2030", "Spring 2031")}
    _status, text = _ask(snapshot, "when is the raku firing day on the lawn")
    assert "October 12" in text
    assert "(From syllabus-2030.pdf, Fall 2030. Your materials also hold Spring 2031 documents" in text
    # an answer from this term's syllabus carries no such line
    _status, text = _ask(snapshot, "when r bo lindqvist's office hrs")
    assert "Your materials also hold" not in text


def test_a_question_whose_words_name_no_slot_asks_the_slot_nearest_in_meaning(
    minilm_settings: Settings,
) -> None:
    """ "how does my final grade get calculated" matches no slot's question words; read by the
    shipped embedder it is nearest the grading-weight examples, and the card answers it."""
    from syllabot.worker.indexes.embedders import get_embedder
    from syllabot.worker.indexes.retrieval import result_of, search_snapshot
    from syllabot.worker.query.card import slot_meanings

    embedder = get_embedder(minilm_settings)
    weights = "The grade is made of a portfolio (50%), a glaze journal (20%) and critique (30%)."
    chunks = [*_course(), _chunk(3, weights, 3)]
    matrix = embedder.embed_documents([c.text for c in chunks])
    snapshot = build_snapshot("v1", "c", embedder.id, embedder.dim, chunks, matrix, "now")
    question = "how does my final grade get calculated"
    read = read_question(question, snapshot)
    assert read.slots == ()
    vector = embedder.embed_query(read.text)
    selection, hits = search_snapshot(snapshot, vector, read, minilm_settings)
    meanings = slot_meanings(embedder.id, embedder.embed_queries)
    result = result_of(
        snapshot, hits, [], selection.fallback, "c", question, read, vector=vector, meanings=meanings
    )
    assert result.read is not None and result.read.slots == ("grading.weight",)
    assert result.card is not None and {f.page for f in result.card.facts} == {3}
    answer = ExtractiveAnswerer().answer_sync(question, result, "c")
    assert answer.status == "answered" and "20%" in answer.text
    # an unrelated question stays unrouted
    other = read_question("what glaze chemistry do we cover in week 3", snapshot)
    routed = result_of(
        snapshot,
        hits,
        [],
        False,
        "c",
        other.text,
        other,
        vector=embedder.embed_query(other.text),
        meanings=meanings,
    )
    assert routed.read is not None and routed.read.slots == ()


def test_a_document_marked_as_an_earlier_version_fills_no_slot() -> None:
    """The revised syllabus replaces the first one (an admin marked it superseded): its office
    hours answer, the first one's do not, and the two are no disagreement."""
    old = "Instructor: Dr. Ada Whitlock\nOffice Hours: Mon 9:00 — 10:00AM"
    new = "Instructor: Dr. Ada Whitlock\nOffice Hours: Thu 2:00 — 3:00PM"
    chunks = [
        Chunk(
            chunk_id="first:0",
            doc_id="first",
            file="syllabus.pdf",
            title="Pottery syllabus",
            text=old,
            page=1,
            status="superseded",
            superseded_by="revised",
        ),
        _chunk(0, new, 1, doc="revised", title="Pottery syllabus, revised"),
        _chunk(1, RULES, 2, doc="revised", title="Pottery syllabus, revised"),
    ]
    snapshot = _snapshot(chunks)
    assert {f.doc_id for f in snapshot.current_card.of("staff.office_hours")} == {"revised"}
    assert disagreements(snapshot.current_card) == []
    _, text = _ask(snapshot, "when are the prof's office hours")
    assert "Thu 2:00" in text and "Mon 9:00" not in text, text


def test_a_starting_worker_embeds_the_slot_examples_before_its_first_question(settings: Settings) -> None:
    """The worker's engine is loaded with the embedder and the slot examples embedded, so the
    first question pays for neither (``jobs.load_engine``)."""
    from syllabot.worker.runtime.jobs import load_engine

    engine = load_engine(settings)
    meanings = engine._meanings[engine.embedder.id]
    assert len(meanings.names) == sum(len(slot.examples) for slot in SLOTS) > 0
    assert engine.slot_meanings(engine.embedder) is meanings  # embedded once
