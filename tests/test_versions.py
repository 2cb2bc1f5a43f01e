"""Which version of a document counts, for every format: an admin's mark (``Engine.mark``,
`syllabot supersede` / `syllabot current`) is stored with the index, outlives a re-index, keeps the
old version out of answers (except a question about the change, cited as an earlier version) and is
shown by `sources`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from syllabot.shared.config import Settings
from syllabot.worker.indexes.engine import Engine, NothingToIndex
from syllabot.worker.indexes.retrieval import EARLIER_VERSION
from syllabot.worker.query.intent import asks_about_a_change
from tests.queue_helpers import cli_in

OLD = b"# Course policy\n\nLate homework is accepted up to two days late with a ten percent penalty.\n"
NEW = b"# Course policy, revised\n\nLate homework will not be accepted at all this term.\n"
QUESTION = "is late homework accepted"


def _files(result) -> list[str]:  # a SearchResult
    return [h.file for h in result.hits]


def test_a_superseded_document_is_left_out_until_marked_current_and_the_mark_outlives_a_reindex(
    settings: Settings,
) -> None:
    engine = Engine(settings)
    engine.ingest("pol", [("policy.md", OLD), ("policy-2026.md", NEW)])
    assert "policy.md" in _files(engine.search("pol", QUESTION))  # two names, no family: both count

    report = engine.mark("pol", "policy", "superseded", by="policy-2026")
    assert report.changed and "marked superseded by policy-2026.md" in report.files[0].warnings[0]
    assert _files(engine.search("pol", QUESTION)) == ["policy-2026.md"]
    sources = {s.file: s for s in engine.sources("pol")}
    assert sources["policy.md"].status == "superseded" and sources["policy.md"].superseded_by == "policy-2026"

    engine.reindex("pol")  # re-parsed from the stored bytes: the admin's mark wins again
    assert _files(engine.search("pol", QUESTION)) == ["policy-2026.md"]
    assert {s.file: s.status for s in engine.sources("pol")}["policy.md"] == "superseded"

    # Asked about the change, the old version answers too, cited as what it is.
    changed = engine.search("pol", "did the late homework policy change?")
    labels = {h.file: h.label for h in changed.hits}
    assert labels["policy.md"].endswith(EARLIER_VERSION) and not labels["policy-2026.md"].endswith(
        EARLIER_VERSION
    )

    engine.mark("pol", "policy", "current")
    assert "policy.md" in _files(engine.search("pol", QUESTION))
    assert engine.sources("pol")[0].superseded_by is None


def test_marks_refuse_unknown_documents_and_self_supersession(settings: Settings) -> None:
    engine = Engine(settings)
    engine.ingest("pol", [("policy.md", OLD), ("policy-2026.md", NEW)])
    with pytest.raises(NothingToIndex, match="no document 'nope'"):
        engine.mark("pol", "nope", "superseded")
    with pytest.raises(NothingToIndex, match="no document 'ghost'"):
        engine.mark("pol", "policy", "superseded", by="ghost")
    with pytest.raises(ValueError, match="cannot supersede itself"):
        engine.mark("pol", "policy", "superseded", by="policy")
    with pytest.raises(ValueError, match="status must be one of"):
        engine.mark("pol", "policy", "draft")


def test_a_lone_superseded_document_still_answers_rather_than_nothing(settings: Settings) -> None:
    engine = Engine(settings)
    engine.ingest("pol", [("policy.md", OLD)])
    engine.mark("pol", "policy", "superseded")
    hits = engine.search("pol", QUESTION).hits
    assert [h.file for h in hits] == ["policy.md"] and hits[0].label.endswith(EARLIER_VERSION)


@pytest.mark.parametrize(
    ("question", "about_change"),
    [
        ("did the grading change?", True),
        ("what was the old syllabus's deadline", True),
        ("is the syllabus updated", True),
        ("what did it say previously", True),
        ("when is the midterm", False),
        ("how many labs are there", False),
    ],
)
def test_which_questions_ask_about_a_change(question: str, about_change: bool) -> None:
    assert asks_about_a_change(question) is about_change


def test_cli_supersede_current_and_sources(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_bytes(OLD)
    (tmp_path / "policy-2026.md").write_bytes(NEW)
    run = cli_in(settings, tmp_path)

    assert run("index", "policy.md", "policy-2026.md", "-c", "pol").returncode == 0
    done = run("supersede", "policy.md", "--by", "policy-2026.md", "-c", "pol")
    assert done.returncode == 0, done.stderr
    assert "marked superseded by policy-2026.md" in done.stdout
    listing = run("sources", "-c", "pol").stdout
    assert "superseded by policy-2026.md" in listing
    (pol,) = json.loads(run("collections", "--json").stdout)
    assert pol["documents"] == 2 and pol["superseded"] == 1
    assert re.search(r"^pol\s+2\s.*\s1$", run("collections").stdout, re.MULTILINE)
    from syllabot.bots.frontend import collection_line
    from syllabot.shared.schema import CollectionInfo

    assert "2 documents (1 superseded)," in collection_line(CollectionInfo.model_validate(pol))
    asked = run("ask", QUESTION, "-c", "pol")
    assert "policy-2026.md" in asked.stdout and "(policy.md)" not in asked.stdout, asked.stdout
    unknown = run("supersede", "nope.md", "-c", "pol")
    assert unknown.returncode == 2 and "no document 'nope.md'" in unknown.stderr
    assert run("current", "policy.md", "-c", "pol").returncode == 0
    assert "superseded" not in run("sources", "-c", "pol").stdout
    assert json.loads(run("collections", "--json").stdout)[0]["superseded"] == 0


def test_a_new_file_titled_like_an_indexed_one_is_flagged_with_the_supersede_command(
    settings: Settings,
) -> None:
    engine = Engine(settings)
    engine.ingest("pol", [("policy.md", OLD)])
    same_title = b"# Course policy\n\nLate homework will not be accepted at all this term.\n"
    report = engine.ingest("pol", [("policy-v2-final.md", same_title)])
    (entry,) = report.files
    assert entry.ok and any("same title as policy.md" in w for w in entry.warnings), entry.warnings
    assert any("syllabot supersede policy.md --by policy-v2-final.md" in w for w in entry.warnings)
    other = engine.ingest("pol", [("grading.md", b"# Grading\n\nHomework is 40 percent.\n")])
    assert not any("same title" in w for w in other.files[0].warnings)
    assert any("upload it again with replace" in w for w in entry.warnings)
    assert "policy.md" in _files(engine.search("pol", "is late homework accepted"))  # both still count


def test_uploading_a_same_title_file_with_replace_supersedes_the_old_one(settings: Settings) -> None:
    """The upload is the admin's word: the old version is marked superseded by the new one (kept,
    left out of answers), the report says so and how to undo it, and the mark outlives a re-index."""
    engine = Engine(settings)
    engine.ingest("pol", [("policy.md", OLD)])
    same_title = b"# Course policy\n\nLate homework will not be accepted at all this term.\n"
    report = engine.ingest("pol", [("policy-v2-final.md", same_title)], replace=True)
    (entry,) = report.files
    assert entry.ok and report.changed
    assert any("policy.md is marked superseded by it" in w for w in entry.warnings), entry.warnings
    assert any("syllabot current policy.md" in w for w in entry.warnings)
    sources = {s.file: s for s in engine.sources("pol")}
    assert sources["policy.md"].status == "superseded"
    assert sources["policy.md"].superseded_by == sources["policy-v2-final.md"].doc_id
    snapshot = engine.snapshot("pol")
    assert snapshot is not None and report.index_version == snapshot.version
    assert _files(engine.search("pol", QUESTION)) == ["policy-v2-final.md"]
    engine.reindex("pol")
    assert _files(engine.search("pol", QUESTION)) == ["policy-v2-final.md"]


def test_a_same_title_upload_with_replace_supersedes_also_when_the_upload_re_embeds_everything(
    settings: Settings, minilm_settings: Settings
) -> None:
    """A collection built with another embedder is rebuilt whole by the upload: the supersession
    is part of that same build."""
    Engine(settings).ingest("pol", [("policy.md", OLD)])  # the hashing embedder
    engine = Engine(minilm_settings)
    same_title = b"# Course policy\n\nLate homework will not be accepted at all this term.\n"
    report = engine.ingest("pol", [("policy-v2-final.md", same_title)], replace=True)
    assert report.changed and any(
        "policy.md is marked superseded by it" in w for w in report.files[0].warnings
    )
    snapshot = engine.snapshot("pol")
    assert snapshot is not None and snapshot.embedder_id == engine.embedder.id
    sources = {s.file: s for s in engine.sources("pol")}
    assert sources["policy.md"].status == "superseded"
    assert sources["policy.md"].superseded_by == sources["policy-v2-final.md"].doc_id
    assert _files(engine.search("pol", QUESTION)) == ["policy-v2-final.md"]


def test_cli_index_replace_supersedes_a_same_title_document(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_bytes(OLD)
    (tmp_path / "policy-v2.md").write_bytes(b"# Course policy\n\nLate homework will not be accepted.\n")
    run = cli_in(settings, tmp_path)
    assert run("index", "policy.md", "-c", "pol").returncode == 0
    done = run("index", "policy-v2.md", "--replace", "-c", "pol")
    assert done.returncode == 0, done.stderr
    assert "policy.md is marked superseded by it" in done.stdout + done.stderr
    assert "superseded by policy-v2.md" in run("sources", "-c", "pol").stdout


# Two terms of one course, written for these tests: the office hours, the grading weights and the
# final project's due date were revised, everything else was kept.
TERM = """# GEOL 214 Field Hydrology, Spring {year}

Instructor: Dr. Mara Quist. Office hours: {hours} in Harlan 112.

## Course description

This course introduces the measurement of streams, wells and rainfall in the field.
You will learn to plan a sampling campaign and to report uncertainty honestly.
Each week we spend one session outdoors and one in the lab.

## Grading

- Field notebooks {notebooks}
- Lab reports {reports}
- Final project {project}

## Deadlines

The field notebook is due on March 14.
The final project report is due on {due}.

## Policies

Bring waterproof boots to every field session.
Questions go to the course forum rather than by email.
"""
OLD_TERM = TERM.format(
    year=2025, hours="Tuesdays 2:00-3:30pm", notebooks="30%", reports="30%", project="40%", due="May 2"
).encode()
NEW_TERM = TERM.format(
    year=2026, hours="Thursdays 1:00-2:30pm", notebooks="25%", reports="25%", project="50%", due="May 8"
).encode()


async def test_two_terms_syllabi_are_aligned_at_index_their_revisions_listed_and_answered(
    minilm_settings: Settings, tmp_path: Path
) -> None:
    """Where last term's syllabus and this term's differ (office hours, weights, a due date) the
    record built with the index says so, current side first; it is stored with the snapshot (a new
    process reads it back), `syllabot conflicts` lists it, and an answer quoting either side leads
    with "Your materials disagree", the current term first, both cited."""
    from syllabot.shared.schema import AskRequest
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.answerers.pipeline import answer_question

    Engine(minilm_settings).ingest(
        "geol", [("geol214-spring2025.md", OLD_TERM), ("geol214-spring2026.md", NEW_TERM)]
    )
    run = cli_in(minilm_settings, tmp_path)

    snapshot = Engine(minilm_settings).snapshot("geol")  # a new engine: the record read from Redis
    assert snapshot is not None
    entries = snapshot.versions.entries
    changed = {side.text for entry in entries for side in entry.sides}
    assert "Office hours: Thursdays 1:00-2:30pm in Harlan 112." in changed, changed
    assert {"- Field notebooks 25%", "- Field notebooks 30%", "- Final project 50%"} <= changed, changed
    assert "The final project report is due on May 8." in changed, changed
    assert not any("March 14" in text or "boots" in text for text in changed)  # what agrees is no entry
    for entry in entries:
        assert entry.sides[0].doc_id == "geol214-spring2026" and "2026" in entry.current_reason, entry

    listed = run("conflicts", "-c", "geol")
    assert listed.returncode == 0, listed.stderr
    assert "(current: it is dated 2026, the other 2025)" in listed.stdout, listed.stdout
    assert "Thursdays 1:00-2:30pm" in listed.stdout and "Tuesdays 2:00-3:30pm" in listed.stdout

    engine = Engine(minilm_settings)
    answer = await answer_question(
        engine,
        ExtractiveAnswerer(minilm_settings),
        AskRequest(question="when are office hours", collection="geol"),
    )
    assert answer.text.startswith("Your materials disagree. The current one looks like"), answer.text
    assert answer.text.index("Thursdays") < answer.text.index("Tuesdays"), answer.text
    assert {c.file for c in answer.citations} == {"geol214-spring2025.md", "geol214-spring2026.md"}


def test_two_versions_that_agree_record_nothing(settings: Settings) -> None:
    """A re-issue that only rewords (the same hours, weights and dates, written otherwise) is a
    version of the syllabus with nothing to record."""
    reworded = (
        OLD_TERM.replace(b"Spring 2025", b"Spring 2025 (reissued)")
        .replace(b"Tuesdays 2:00-3:30pm", b"Tue 2-3:30 pm")
        .replace(b"May 2.", b"May 2nd.")
    )
    engine = Engine(settings)
    engine.ingest("geol", [("geol214.md", OLD_TERM), ("geol214-reissued.md", reworded)])
    snapshot = engine.snapshot("geol")
    assert snapshot is not None
    assert snapshot.versions.related("geol214", "geol214-reissued")  # aligned as versions
    assert snapshot.versions.entries == () and snapshot.versions.listed == ()


def test_unrelated_documents_are_never_aligned(settings: Settings) -> None:
    """A syllabus and a lab handout of other numbers share words but no statements: they are no
    versions of each other, and nothing between them is recorded or compared."""
    handout = (
        b"# Lab 3: Measuring stream discharge\n\nWade to the middle of the stream at 10:00am.\n"
        b"Measure the depth every 30 cm across the channel.\nRecord the velocity at 60% of the depth.\n"
        b"Repeat the transect 3 times and average the discharge.\n"
    )
    engine = Engine(settings)
    engine.ingest("geol", [("geol214.md", OLD_TERM), ("lab3.md", handout)])
    snapshot = engine.snapshot("geol")
    assert snapshot is not None
    assert snapshot.versions.pairs == frozenset() and snapshot.versions.entries == ()


def test_a_value_after_its_label_is_a_value_not_the_name_of_a_numbered_thing(settings: Settings) -> None:
    """ "CIE Marks 50" against a revised copy's "CIE Marks 60": the number after "Marks" is the
    value, so the two lines are aligned and recorded, the revised file first; "Lecture 3" and
    "Lecture 4" stay two lectures."""
    from syllabot.worker.indexes.versions import _words

    course = (
        "# HIST 210 Archives\n\nCourse Code HIST210 CIE Marks {cie} SEE Marks 50\n\nCredits 03 Exam Hours 03\n\n"
        "## Outcomes\n\nRead a finding aid.\nDate a letter from its paper and hand.\nCite an archive.\n"
    )
    engine = Engine(settings)
    engine.ingest(
        "hist",
        [
            ("hist210.md", course.format(cie=50).encode()),
            ("hist210_revised.md", course.format(cie=60).encode()),
        ],
    )
    snapshot = engine.snapshot("hist")
    assert snapshot is not None
    (entry,) = snapshot.versions.entries
    assert entry.kind == "marks" and entry.sides[0].doc_id == "hist210-revised", entry
    assert "lecture3" in _words("Lecture 3: reading hands") and "lecture4" in _words(
        "Lecture 4: reading hands"
    )
