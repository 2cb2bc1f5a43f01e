"""Uploads built to hurt: names with control and format characters, decompression bombs, and
documents that would silently replace another one."""

from __future__ import annotations

import pytest

from syllabot.shared.config import Settings
from syllabot.shared.formats import clean_name
from syllabot.worker.engine import Engine
from syllabot.worker.loaders import load_document

NOTES = "# Operating systems{title}\n\n## Module 3\n\nDeadlocks: prevention, avoidance and detection.\n"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("syllabus\u202efdp.md", "syllabusfdp.md"),  # shows as "syllabusdm.pdf" in a chat
        ("sylla\x00bus.md", "syllabus.md"),
        ("plan\u200b\u200d\ufeff.md", "plan.md"),
        ("week\n1\t notes.md", "week 1 notes.md"),
        ("\u202e\u200b", "document"),
    ],
)
def test_control_and_format_characters_never_reach_a_name(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


def test_a_hostile_name_and_title_are_stored_clean(settings: Settings) -> None:
    data = NOTES.format(title="\u202e \u200bevil\u0007").encode()
    doc = load_document(data, "../../sylla\x00bus\u202efdp.md", 10_000_000)
    assert doc.file == "syllabusfdp.md" and doc.doc_id == "syllabusfdp"
    assert doc.title == "Operating systems evil"
    Engine(settings).ingest("hostile", [("sylla\x00bus\u202efdp.md", data)], who="test")
    [source] = Engine(settings).sources("hostile")
    assert source.file == "syllabusfdp.md" and "\u202e" not in source.title and "\x00" not in source.title
    hit = Engine(settings).search("hostile", "deadlocks").hits[0]
    assert "\u202e" not in hit.label and "\u200b" not in hit.label
