"""When the materials disagree: values read (``worker/query/values.py``) and compared
(``worker/indexes/conflicts.py``), the answer that says so citing both, the current one leading when the
materials say which, no note where the values agree, and the teacher's list (`syllabot conflicts`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import shared_data

from syllabot.shared.config import Settings
from syllabot.shared.schema import AskRequest, Hit
from syllabot.worker.answerers.extractive import ExtractiveAnswerer
from syllabot.worker.answerers.notes import render_conflict
from syllabot.worker.answerers.pipeline import answer_question
from syllabot.worker.indexes.conflicts import Candidate, find_conflict, more_to_read
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.indexes.retrieval import disagreements
from syllabot.worker.indexes.search import is_duplicate
from syllabot.worker.query.intent import read_intent
from syllabot.worker.query.values import values_in
from syllabot.worker.text.documents import Chunk
from tests.queue_helpers import cli_in

SYLLABUS = "Marks: 5 × problem sets (16% each) 80% 1 × poster presentations 10% 1 × field log 10%"
SLIDES = "Assessment Item Weight 5 × problem sets (16% each) 80% 2 × poster presentations (5% each) 10%"


#: One marks line in two versions of a handout: the count of poster presentations changed.
HANDOUT_MARKS = (
    "Marks: 5 × problem sets (16% each) 80% 1 × poster presentations 10% 1 × field log 10%",
    "Marks: 5 × problem sets (16% each) 80% 2 × poster presentations (5% each) 10% 1 × field log 10%",
)


def handout(marks: str) -> str:
    """One version of a course handout: the same lines around a marks line of its own."""
    return (
        "# Field course handout\n\nThe course visits three rivers over the spring.\n"
        "Each visit starts at the north car park at nine.\nBring boots, a notebook and a pencil to "
        f"every visit.\n\n{marks}\n\nQuestions go to the course forum, never by email.\n"
    )


def hit(doc_id: str, file: str, text: str, rank: int = 1, label: str | None = None) -> Hit:
    return Hit(
        rank=rank,
        doc_id=doc_id,
        file=file,
        title=file,
        page=2 if file.endswith(".pdf") else None,
        score=0.6,
        cosine=0.6,
        keyword=0.5,
        text=text,
        label=label or f"{file}, p. 2",
    )


def note_of(question: str, hits: list[Hit], kind: str) -> str:
    """The conflict note for ``question`` over ``hits``, which must find a disagreement of ``kind``."""
    conflict = find_conflict(question, hits)
    assert conflict is not None and conflict.kind == kind, conflict
    return render_conflict(conflict)


def _norms(text: str, kind: str) -> list[str]:
    return [v.norm for v in values_in(text) if v.kind == kind]


def test_values_are_normalised_and_labelled_with_what_they_are_of() -> None:
    assert _norms("Journal entries are due by 11:59PM on Mondays", "weekday") == ["monday"]
    assert _norms("Journal entries are due by 11:59PM on Mondays", "time") == ["23:59"]
    assert set(_norms("Journal entry 1 is due May 2, 2025", "weekday")) == {"friday"}  # a dated day
    assert _norms("CIE 50 marks and SEE 50 marks", "marks") == ["cie=50", "see=50"]
    assert _norms("Lamarque & Berg, Packet Switching, 8th Edition", "edition") == ["8"]
    assert _norms("not collected within 14 days", "duration") == ["14 day"]
    counts = {v.norm: v.label for v in values_in(SLIDES) if v.kind == "count"}
    assert "presentation" in counts["2"] and "problem" in counts["5"] and "presentation" not in counts["5"]


def test_a_day_no_calendar_has_is_no_date() -> None:
    """ "February 30" and "April 31" are typing or nonsense, never a due date to quote or compare;
    a leap day with no year printed is one."""
    for text in ("Kiln opening: February 30", "Critique April 31, 2031", "glaze test 2/30", "Feb 29, 2031"):
        assert _norms(text, "date") == [], text
    assert _norms("Critique April 30, 2031", "date") == ["04-30"]
    assert _norms("Kiln opening: Feb 29", "date") == ["02-29"]


def test_two_documents_giving_different_counts_disagree_and_both_are_cited() -> None:
    hits = [hit("syl", "syllabus.pdf", SYLLABUS), hit("intro", "01-Intro.pdf", SLIDES, 2)]
    conflict = find_conflict("how many presentations do we do, 1 or 2?", hits)
    assert conflict is not None and conflict.kind == "count"
    note = render_conflict(conflict)
    assert note.startswith("Your materials disagree:")
    assert "syllabus.pdf, p. 2" in note and "01-Intro.pdf, p. 2" in note
    assert "1 × poster presentations" in note and "2 × poster presentations" in note


def test_agreeing_values_get_no_note_however_worded() -> None:
    hits = [hit("syl", "syllabus.pdf", SYLLABUS), hit("intro", "01-Intro.pdf", SLIDES, 2)]
    # Both say the presentations are 10% in all (one adds "5% each"): agreement.
    assert find_conflict("what percent are the poster presentations worth", hits) is None
    days = [
        hit("a", "syllabus.pdf", "The weekly journal entry is due on Mondays at noon."),
        hit("b", "slides.pdf", "Weekly journal entry due Mon 12:00", 2),
    ]
    assert find_conflict("when is the weekly journal entry due", days) is None
    one_doc = [
        hit("a", "a.pdf", "Journal entries are due Monday."),
        hit("a", "a.pdf", "Journal entries are due Friday.", 2),
    ]
    assert (
        find_conflict("when are journal entries due", one_doc) is None
    )  # one document: not "materials disagree"


def test_the_evidently_current_document_leads_and_says_why() -> None:
    hits = [
        hit("old", "service-booking.md", "Bikes not collected within 14 days may be charged a storage fee."),
        hit(
            "new",
            "service-booking-update-2026.md",
            "Updated: 12 January 2026. Bikes not collected within 7 days may be charged a storage fee.",
            2,
        ),
    ]
    conflict = find_conflict("how many days until the storage fee starts", hits)
    assert conflict is not None and conflict.sides[0].file == "service-booking-update-2026.md"
    note = render_conflict(conflict)
    assert note.startswith(
        "Your materials disagree. The current one looks like service-booking-update-2026.md"
    )
    assert "“update” in its name" in note and note.index("7 days") < note.index("14 days")
    # "when" asks for a time, and "after 14 days" is one: the same disagreement
    when = find_conflict("when does the storage fee kick in", hits)
    assert when is not None and when.kind == "duration" and when.sides[0].file == conflict.sides[0].file


def test_near_identical_passages_with_other_numbers_are_both_kept() -> None:
    """De-duplication must not hide a disagreeing version behind its older copy."""
    a = Chunk("a1", "old", "old.md", "Policy", "Bikes not collected within 14 days are charged storage.")
    b = Chunk("b1", "new", "new.md", "Policy", "Bikes not collected within 7 days are charged storage.")
    tokens = (frozenset(a.text.lower().split()), frozenset(b.text.lower().split()))
    assert not is_duplicate(a, b, 0.99, 0.95, lambda: tokens)
    c = Chunk("c1", "copy", "copy.md", "Policy", a.text)
    assert is_duplicate(a, c, 0.99, 0.95, lambda: (tokens[0], tokens[0]))


async def test_the_answer_leads_with_the_disagreement_citing_both(minilm_settings: Settings) -> None:
    engine = Engine(minilm_settings)
    old = b"# Booking a service\n\nBikes not collected within 14 days of that message may be charged a storage fee of 5 euros per day.\n"
    new = (
        b"# Booking a service (collection update)\n\nUpdated: 12 January 2026.\n\nBikes not collected within "
        b"7 days of that message may be charged a storage fee of 5 euros per day.\n"
    )
    engine.ingest("shop", [("service-booking.md", old), ("service-booking-update-2026.md", new)])
    answer = await answer_question(
        engine,
        ExtractiveAnswerer(minilm_settings),
        AskRequest(question="how many days til storage fees start", collection="shop"),
    )
    assert answer.status != "not_in_materials"
    assert answer.text.startswith("Your materials disagree. The current one looks like"), answer.text
    assert "7 days" in answer.text and "14 days" in answer.text
    agreed = await answer_question(
        engine,
        ExtractiveAnswerer(minilm_settings),
        AskRequest(question="how much is the storage fee per day", collection="shop"),
    )
    assert "disagree" not in agreed.text  # both say 5 euros a day


def test_cli_conflicts_lists_them_for_the_teacher(settings: Settings, tmp_path: Path) -> None:
    """Two versions of one handout (the same lines, one count changed) and an unrelated page: the
    teacher's list is the record of versions, the count the one entry; `syllabot eval` counts the
    notes on conflict questions."""
    (tmp_path / "syllabus.md").write_text(handout(HANDOUT_MARKS[0]))
    (tmp_path / "intro.md").write_text(handout(HANDOUT_MARKS[1]))
    (tmp_path / "other.md").write_text("# Other\n\nThe course uses R and RStudio.\n")
    run = cli_in(settings, tmp_path)

    assert run("index", "syllabus.md", "intro.md", "other.md", "-c", "ec").returncode == 0
    listed = run("conflicts", "-c", "ec")
    assert listed.returncode == 0, listed.stderr
    assert "1 fact(s) on which the documents disagree" in listed.stdout, listed.stdout
    assert "1 × poster presentations" in listed.stdout and "2 × poster presentations" in listed.stdout
    (entry,) = json.loads(run("conflicts", "-c", "ec", "--json").stdout)
    assert entry["kind"] == "count"
    # `syllabot eval` reports the detection rates of questions marked `conflict: true`.
    questions = [
        {"question": "how many poster presentations do we do, 1 or 2?", "file": "intro.md", "conflict": True},
        {"question": "what software does the course use", "file": "other.md"},
    ]
    (tmp_path / "eval.jsonl").write_text("\n".join(json.dumps(q) for q in questions) + "\n")
    evaluated = run("eval", "eval.jsonl", "-c", "ec")
    assert evaluated.returncode == 0, evaluated.stderr
    assert "conflict questions whose answer says the materials disagree: 1.000 (1/1)" in evaluated.stdout
    assert "other questions given a conflict note: 0.000 (0/1)" in evaluated.stdout


async def test_of_two_documents_with_one_title_the_later_upload_leads(minilm_settings: Settings) -> None:
    """No date, no "revised" anywhere: only the upload order says which is current, and it must
    lead whichever file came second, and still after a re-index."""
    engine = Engine(minilm_settings)
    one = b"# Lab policies\n\nLate lab reports lose 10% per day, for at most 3 days.\n"
    two = b"# Lab policies\n\nLate lab reports lose 20% per day, for at most 3 days.\n"
    for collection, first, second in (("lab-a", one, two), ("lab-b", two, one)):
        engine.ingest(collection, [("policies.md", first)])
        time.sleep(1.1)  # upload times are kept to the second
        report = engine.ingest(collection, [("handout.md", second)])
        assert any("same title" in w for f in report.files for w in f.warnings)
        later = "handout.md"
        for _ in ("as uploaded", "after a re-index"):
            answer = await answer_question(
                engine,
                ExtractiveAnswerer(minilm_settings),
                AskRequest(
                    question="how many percent do late lab reports lose per day", collection=collection
                ),
            )
            assert answer.text.startswith("Your materials disagree. The current one looks like"), answer.text
            lead = answer.text.split("): it says", 1)[0]
            assert "uploaded later" in lead and f"({later})" in lead, answer.text
            newer = "20%" if second is two else "10%"
            older = "10%" if second is two else "20%"
            assert answer.text.index(newer) < answer.text.index(older), answer.text
            engine.reindex(collection)


async def test_a_revised_copy_of_a_syllabus_pdf_is_a_version_not_a_pile_of_conflicts(
    minilm_settings: Settings, tmp_path: Path
) -> None:
    """The college re-issues 21CS44's PDF with CIE/SEE 60/40 instead of 50/50 and an admin uploads
    it beside the old one: the teacher's list names exactly the changed facts, each side told apart
    though both files carry one title (the copy repeats every other sentence, so "2 questions from
    each module" against "answer 5 full questions" is two facts of both, not a disagreement), and
    the answer leads with the revised file."""
    from bench.planted_pdfs import build

    original = shared_data("syllabi") / "21CS44.pdf"
    revised = build("21CS44_revised.pdf", tmp_path)
    files = [(original.name, original.read_bytes()), (revised.name, revised.read_bytes())]
    engine = Engine(minilm_settings)
    engine.ingest("os", files)
    snapshot = engine.snapshot("os")
    assert snapshot is not None
    found = disagreements(snapshot)
    assert sorted(e.kind for e in found) == ["marks", "percent"], [(e.kind, e.first_text[:60]) for e in found]
    for entry in found:  # the revised file first, as the current one
        assert entry.first != entry.second and "21CS44_revised.pdf" in entry.first, entry
        assert "“revised” in its name" in entry.current
    answer = await answer_question(
        engine,
        ExtractiveAnswerer(minilm_settings),
        AskRequest(question="how much is the see worth for operating systems", collection="os"),
    )
    assert answer.text.startswith("Your materials disagree. The current one looks like"), answer.text
    lead = answer.text.split(": it says", 1)[0]
    assert "21CS44_revised.pdf" in lead and "“revised” in its name" in lead, answer.text


def test_two_courses_are_never_two_versions_of_one_fact() -> None:
    """A collection of several syllabi: the 2021 and 2022 DBMS courses weigh the lab differently,
    which is two facts of two courses, not a disagreement of one."""
    texts = (
        "The weightage of the practical component (lab) is 40% of the CIE marks.",
        "The weightage of the practical component (lab) is 50% of the CIE marks.",
    )
    question = "what percent of cie is the lab component"
    one_course = [hit("a", "a.pdf", texts[0]), hit("b", "b.pdf", texts[1], 2)]
    assert find_conflict(question, one_course) is not None  # the same course: they disagree
    two_courses = [
        h.model_copy(update={"subject": subject})
        for h, subject in zip(
            one_course,
            ("21CS53 Database Management Systems", "BCS403 Database Management System"),
            strict=True,
        )
    ]
    assert find_conflict(question, two_courses) is None


def test_a_schedule_line_that_differs_between_documents_is_a_disagreement() -> None:
    """Week 5 is "Sample plots" in the syllabus and "landowner permit forms, sample plots" in the
    slides; week 4 is worded differently but is the same plan."""
    syllabus = (
        "The survey runs like this: •Week 4: Choose a site •Week 5: Sample plots •Week 6: Sort specimens"
    )
    slides = "Rough plan •Week 4: choose your site •Week 5: landowner permit forms, sample plots •Week 6: sort specimens"
    hits = [
        hit("syl", "syllabus.pdf", syllabus),
        hit("log", "logistics.pdf", slides, 2, label="Logistics, p. 4"),
    ]
    conflict = find_conflict("wat r we doing in wk 5", hits)
    assert conflict is not None and conflict.kind == "item"
    note = render_conflict(conflict)
    assert "“Week 5: Sample plots”" in note and "“Week 5: landowner permit forms, sample plots”" in note, note
    assert find_conflict("whats the plan for week four", hits) is None  # same plan, other words
    assert find_conflict("what do we do in week 6", hits) is None


def test_a_note_after_a_schedule_line_is_not_part_of_it() -> None:
    """The syllabus's "Week 10: Site reports and wrap up (final map and report due)" is followed
    by "Note: the plan above is only a guide …" on the next line, which the text layer runs on:
    the week is the same plan as the slides' "wrap-up (report and map)"."""
    syllabus = (
        "•Week 10: Site reports and wrap up (final map and report due) Note: the plan above is "
        "only a guide and may shift as the weather allows."
    )
    slides = "•Week 10: site reports and wrap-up (report and map)"
    (week,) = values_in(syllabus)
    assert week.norm == "due final map report sit wrap"
    assert (
        find_conflict(
            "what do we do in week 10",
            [hit("syl", "syllabus.pdf", syllabus), hit("log", "logistics.pdf", slides, 2)],
        )
        is None
    )


SNIPPET_SYLLABUS = (
    "Field Journal (5%) Each week you’ll post a short journal entry that answers these three "
    "questions:\n1.) Which plots did I survey this past week?\n2.) Which plots will I survey in the "
    "coming week?\n3.) What got in the way of my fieldwork? Each entry will be worth 1 point."
)
SNIPPET_SLIDES = (
    "Field journal\n•Short (10 minute) entry, posted on the course site\n•Answer 3 questions (1—3 "
    "lines each):\n•Which plots did you survey last week (first week: leave blank!)\n•Which plots "
    "will you survey next?\n•What slowed you down?"
)


def test_a_question_about_a_lists_items_reads_no_more_of_the_course() -> None:
    """The list check compares the retrieved passages; there is no value to look up elsewhere."""
    asked: list[frozenset[str]] = []

    def passages_with(words: frozenset[str], at_least: int, limit: int) -> list[Candidate]:
        asked.append(words)
        return []

    hits = [hit("syl", "syllabus.pdf", SNIPPET_SYLLABUS)]
    assert more_to_read("what's the 3rd question in the field journal", hits, passages_with) == []
    assert asked == []
    more_to_read("when is the field journal due", hits, passages_with)
    assert asked  # a day is a value other passages may state


def test_the_teachers_list_names_a_list_of_questions_that_differs() -> None:
    """The syllabus's and the slides' journal questions are listed for the teacher, both cited;
    two decks' lists of steps that differ in one step are not (lists that are not questions pair
    windows of one outline and decks' own lists), nor one list of questions said alike."""
    from syllabot.worker.indexes.conflicts import list_disagreements

    found = list_disagreements(
        [("syl", "Syllabus, p. 5", SNIPPET_SYLLABUS), ("log", "Logistics, p. 3", SNIPPET_SLIDES)]
    )
    assert [(e.kind, e.first, e.second) for e in found] == [("list", "Syllabus, p. 5", "Logistics, p. 3")]
    assert found[0].first_text.endswith("3.) What got in the way of my fieldwork?")
    assert found[0].second_text.endswith("• What slowed you down?")
    steps = "Steps\n1. Open the course site\n2. Upload your PDF\n3. Press submit"
    other = "Steps\n1. Open the course site\n2. Upload your PDF\n3. Email the TA"
    assert list_disagreements([("a", "A", steps), ("b", "B", other)]) == []
    same = SNIPPET_SLIDES.replace("What slowed you down?", "What got in the way of your fieldwork?")
    assert (
        list_disagreements([("syl", "Syllabus, p. 5", SNIPPET_SYLLABUS), ("log", "Logistics, p. 3", same)])
        == []
    )


def test_the_teachers_list_is_the_message_it_is_sent_as_and_keeps_its_stored_shape() -> None:
    """One type for a disagreement the teacher reads: the list's entries are the ``ConflictInfo``
    the bots receive (no hand conversion between two types), their documents' ids kept for the
    worker and never sent, and a snapshot stores them as it did before."""
    from syllabot.shared.schema import ConflictInfo
    from syllabot.worker.indexes.conflicts import list_disagreements
    from syllabot.worker.indexes.versions import VersionRecord

    (entry,) = list_disagreements(
        [("syl", "Syllabus, p. 5", SNIPPET_SYLLABUS), ("log", "Logistics, p. 3", SNIPPET_SLIDES)]
    )
    assert isinstance(entry, ConflictInfo) and entry.docs == ("syl", "log")
    assert "docs" not in entry.model_dump(mode="json")
    stored = VersionRecord(listed=(entry,)).to_json()
    first, second = ["Syllabus, p. 5", entry.first_text], ["Logistics, p. 3", entry.second_text]
    assert stored["listed"] == [[entry.topic, "list", first, second, ["syl", "log"], ""]]
    assert VersionRecord.from_json(json.loads(json.dumps(stored))).listed == (entry,)


def test_the_days_a_question_offers_are_the_values_asked_not_its_topic() -> None:
    """ "due monday or friday?": the README's dated rows (Fridays) must still count as about the
    journal, though they never print the word "Friday"."""
    hits = [
        hit("syl", "syllabus.pdf", "Journal entries are due by 11:59PM every Monday."),
        hit("readme", "README.md", "Field journal 1 (2 points), due May 2, 2025.", 2, label="README"),
    ]
    conflict = find_conflict("journal due monday or friday?? 😭", hits)
    assert conflict is not None and conflict.kind == "weekday", conflict
    note = render_conflict(conflict)
    assert "Monday" in note and "May 2, 2025" in note, note


def test_what_a_count_counts_ends_with_its_clause() -> None:
    """ "two things: 1) student presentations" counts things (a word too vague to be asked about,
    so its label is empty), not presentations; the grading table's "1 × poster presentations 10%"
    counts presentations."""
    counts = [
        (v.norm, v.label)
        for v in values_in(f"Friday sessions are kept for two things: 1) student presentations. {SYLLABUS}")
        if v.kind == "count"
    ]
    assert ("2", frozenset()) in counts
    assert not any("presentation" in label for norm, label in counts if norm == "2")
    assert any(norm == "1" and "presentation" in label for norm, label in counts)


def test_questions_that_ask_how_many_without_saying_so() -> None:
    assert "count" in read_intent("wait is it one presentation for the whole quarter or nah").compared
    assert "count" in read_intent("how much is each poster presentation worth % wise").compared
    assert "count" not in read_intent("what percent is the final paper worth").compared


def test_a_document_whose_sentence_retrieval_missed_is_read_for_the_asked_value() -> None:
    """Retrieval brought the slides' grading table and only the syllabus's paragraph *about*
    presentations; the syllabus's grading list is elsewhere in the course, and another course's
    passage with the same words is never read."""
    hits = [
        hit("intro", "01-Intro.pdf", SLIDES),
        hit(
            "syl",
            "syllabus.pdf",
            "Poster presentations: most Friday sessions open with one student's poster presentation.",
            2,
        ),
    ]
    question = "do i have to do 2 poster pres or just one"
    assert find_conflict(question, hits) is None  # the retrieved passages alone do not show it
    passages = [
        Candidate(7, "syl", None, SYLLABUS),
        Candidate(9, "other", "BCS403 Database Management System", "3 × poster presentations 15%"),
        Candidate(3, "syl", None, hits[1].text),  # already retrieved
    ]
    asked: list[tuple[frozenset[str], int]] = []

    def passages_with(words: frozenset[str], at_least: int, limit: int) -> list[Candidate]:
        asked.append((words, at_least))
        return passages

    assert more_to_read(question, hits, passages_with) == [7]
    assert asked == [(frozenset({"poster", "presentation"}), 1)]
    related = hit("syl", "syllabus.pdf", SYLLABUS, 9, label="syllabus.pdf, p. 4")
    conflict = find_conflict(question, [*hits, related], max_hits=3)
    assert conflict is not None and {s.file for s in conflict.sides} == {"syllabus.pdf", "01-Intro.pdf"}
    assert more_to_read("what software does the course use", hits, passages_with) == []  # asks no value


async def test_a_disagreement_outranks_not_in_materials(minilm_settings: Settings) -> None:
    """ "how much is the see worth for os" retrieves the textbook list (the decision says "Not in
    your materials"), but the syllabus and the revision notice each give the SEE marks, and
    differently: the answer is the disagreement, both cited, never "Not in your materials"."""
    original = shared_data("syllabi") / "21CS44.pdf"
    notice = Path(__file__).parents[1] / "bench" / "data" / "planted" / "21CS44_revised_notice.md"
    engine = Engine(minilm_settings)
    engine.ingest("os", [(original.name, original.read_bytes()), (notice.name, notice.read_bytes())])
    answer = await answer_question(
        engine,
        ExtractiveAnswerer(minilm_settings),
        AskRequest(question="how much is the see worth for operating systems", collection="os"),
    )
    assert answer.status == "answered", answer.text
    assert answer.text.startswith("Your materials disagree. The current one looks like"), answer.text
    assert "60" in answer.text and "50" in answer.text
    assert {c.file for c in answer.citations} == {"21CS44.pdf", "21CS44_revised_notice.md"}


async def test_a_notice_of_one_course_never_disagrees_with_another_course(minilm_settings: Settings) -> None:
    """Two syllabi and the revision notice of one of them (a Markdown file of no course): the
    Computer Networks marks are not contradicted by the Operating Systems notice, while the
    Operating Systems marks are."""
    syllabi = shared_data("syllabi")
    notice = Path(__file__).parents[1] / "bench" / "data" / "planted" / "21CS44_revised_notice.md"
    files = [(p.name, p.read_bytes()) for p in (syllabi / "21CS44.pdf", syllabi / "21CS52.pdf", notice)]
    engine = Engine(minilm_settings)
    engine.ingest("vtu", files)
    answerer = ExtractiveAnswerer(minilm_settings)
    for question in ("cie n see marks for computer networks?", "how much is the see worth for cn"):
        answer = await answer_question(engine, answerer, AskRequest(question=question, collection="vtu"))
        assert "disagree" not in answer.text, (question, answer.text)
    os_answer = await answer_question(
        engine, answerer, AskRequest(question="cie see split for os", collection="vtu")
    )
    assert os_answer.text.startswith("Your materials disagree"), os_answer.text


def test_days_of_several_events_in_one_sentence_are_each_labelled_by_their_own_clause() -> None:
    """One deck: sketch a map (Monday), swap maps (Wednesday); the other: swap on Wednesday, print
    the maps on Friday. Monday and Friday are days of different events, not a disagreement."""
    wrangling = (
        "Next week: map-making lab, Each pair will sketch a draft map to show the class "
        "(Monday), You'll swap your maps and review each other's (Wednesday), Then we'll compare notes"
    )
    motivating = (
        "Map-making lab •On Wednesday you'll swap your maps •Everyone will review another "
        "pair's map, and on Friday we'll print the final versions"
    )
    hits = [hit("w", "week3.pdf", wrangling), hit("m", "week4.pdf", motivating, 2)]
    assert find_conflict("what day is the map-making lab", hits) is None
    moved = hit("m", "week4.pdf", motivating.replace("On Wednesday", "On Thursday"), 2)
    assert find_conflict("what day do we swap the maps", [hits[0], moved]) is not None


def test_a_slides_bullets_are_read_together_for_a_question() -> None:
    """ "wk 5 plan for the site report?": the slide's week-5 line alone shares only "week 5" with
    it; read with the slide's other bullets ("Week 10: site reports") it is about it."""
    hits = [
        hit(
            "syl",
            "syllabus.pdf",
            "Teams will write a site report:\n•Week 4: Choose a site\n•Week 5: Sample plots",
        ),
        hit(
            "deck",
            "logistics.pdf",
            "Rough plan\n•Week 4: choose your site\n•Week 5: landowner permit forms, sample plots\n"
            "•Week 10: site reports and wrap-up",
            2,
            label="logistics.pdf, p. 4",
        ),
    ]
    note = note_of("wk 5 plan for the site report?", hits, "item")
    assert "Week 5: Sample plots" in note and "landowner permit forms" in note, note


def test_the_rest_of_the_course_is_searched_for_topic_words_ending_in_e(settings: Settings) -> None:
    """The check's topic words ("lamarque", "course") are looked up in postings spelled by the keyword
    index's own stemmer ("lamarqu", "cours"): unconverted, a word ending in "e" found no passage, so a
    revised syllabus whose textbook line de-duplication had dropped from the hits was never read
    (a PDF's text layer glues "BergHarbour", so "lamarque" was the one word to find it by)."""
    from syllabot.worker.indexes.retrieval import hit_from_chunk, related_hits

    engine = Engine(settings)
    old = b"# Computer networks\n\n## Textbooks\n\nPacket Switching, Lamarque and BergHarbour, 7th Edition.\n"
    new = b"# Computer networks (revised)\n\n## Textbooks\n\nPacket Switching, Lamarque and BergHarbour, 8th Edition.\n"
    engine.ingest("cn", [("cn.md", old), ("cn-revised.md", new)])
    snapshot = engine.snapshot("cn")
    assert snapshot is not None
    row = next(i for i, c in enumerate(snapshot.chunks) if c.doc_id == "cn" and "7th" in c.text)
    question = "which edition of lamarque do we need"
    related = related_hits(snapshot, question, [hit_from_chunk(snapshot.chunks[row], 1, 0.9, 0.9, 0.5)])
    assert [h.doc_id for h in related if "8th" in h.text] == ["cn-revised"], related
    conflict = find_conflict(
        question, [hit_from_chunk(snapshot.chunks[row], 1, 0.9, 0.9, 0.5)], related=related
    )
    assert conflict is not None and {v.norm for s in conflict.sides for v in s.found} == {"7", "8"}


def test_numeric_dates_time_spans_and_day_letters_are_values() -> None:
    """A schedule's "fri 10/9", a table's "11.29.2018", "MW 1:30-3:00pm" (the start takes the end's
    half of the day) and "10-11 am" read as dates, days and times; "10.5 points" is no date."""
    assert _norms("fri 10/9 - field trip", "date") == ["10-09"]
    assert _norms("11.29.2018 Gallery | Final review", "date") == ["11-29"]
    assert _norms("Office hours: MW 1:30-3:00pm @ zoom", "time") == ["13:30", "15:00"]
    assert set(_norms("Office hours: MW 1:30-3:00pm @ zoom", "weekday")) == {"monday", "wednesday"}
    assert _norms("Office hours: Friday 10-11 am", "time") == ["10:00", "11:00"]
    assert _norms("The quiz is worth 10.5 points", "date") == []


def test_two_terms_calendars_are_not_two_versions_of_a_date() -> None:
    """Last year's schedule row "08.22.2017 Workshop | Lidar" against this year's "08.21.2018
    Tutorial | Lidar": the same session in two terms' calendars, no disagreement; the same row
    moved within one term is one."""
    from syllabot.worker.indexes.versions import Unit, differ

    def unit(text: str) -> Unit:
        return Unit(0, text, frozenset({"lidar"}))

    assert differ(unit("08.21.2018 Tutorial | Lidar"), unit("08.22.2017 Workshop | Lidar")) is None
    moved = differ(unit("08.21.2018 Tutorial | Lidar"), unit("08.28.2018 Tutorial | Lidar"))
    assert moved is not None and moved[0] == "date"


async def test_two_homework_sheets_are_no_versions_of_one_due_date(minilm_settings: Settings) -> None:
    """Homework 1 and homework 3 print the same header and rules and different due dates: two
    sheets of a series, not two versions, so no question about a due date gets a conflict note
    (the question-time check compares only documents the index's record calls versions)."""
    sheet = (
        "# BIO 330 Homework {n}\n\nBIO 330, Fall 2025. Homework {n}. Due {due} (11:59 pm) on the course site.\n\n"
        "Cite any sources and collaborators; do not copy.\nShow every step of your working.\n"
        "Answers without units lose half the marks.\n\n## Problems\n\n{problems}\n"
    )
    one = sheet.format(n=1, due="Sep 19", problems="1. Sketch the food web of a pond.").encode()
    three = sheet.format(n=3, due="Oct 24", problems="1. Estimate the carrying capacity.").encode()
    engine = Engine(minilm_settings)
    engine.ingest("bio", [("homework1.md", one), ("homework3.md", three)])
    snapshot = engine.snapshot("bio")
    assert snapshot is not None and not snapshot.versions.related("homework1", "homework3")
    for question in ("when is homework 3 due", "hw1 due date?"):
        answer = await answer_question(
            engine, ExtractiveAnswerer(minilm_settings), AskRequest(question=question, collection="bio")
        )
        assert "disagree" not in answer.text, answer.text


def test_a_room_or_a_course_number_dates_no_document() -> None:
    """Only a year printed as a date or a term says which document is current: "Room 2047" is a
    room, so a syllabus of Fall 2014 in that room is not "dated 2047"."""
    from syllabot.worker.text.currency import how_current_named

    old = how_current_named(
        "pottery-fall", ["Fall 2014 syllabus. Studio: Kiln Hall, Room 2047; lab CER 2040."]
    )
    new = how_current_named("pottery-spring", ["Spring 2015 syllabus. Studio: Kiln Hall, Room 118."])
    assert old[1] == 2014 and new[1] == 2015
    assert how_current_named("deck", ["Office: Room 2047", "CER 2040 meets in Hall 2031"])[1] == 0
