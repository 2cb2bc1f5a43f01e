"""Uploads built to hurt: names with control and format characters, decompression bombs, and
documents that would silently replace another one."""

from __future__ import annotations

import pytest

from bench.upload_bombs import docx_bomb
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


# --- decompression bombs -------------------------------------------------------------------------


@pytest.mark.parametrize(("xml_mb", "why"), [(25, "decompression bomb"), (400, "unpacks to")])
def test_a_docx_bomb_is_refused_before_it_is_parsed(xml_mb: int, why: str) -> None:
    import resource

    from syllabot.worker.loaders import TooLarge

    bomb = docx_bomb(xml_mb * 1024 * 1024)
    assert len(bomb) < 2 * 1024 * 1024  # well under the 20 MB upload limit
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TooLarge, match=why):
        load_document(bomb, "notes.docx", 20 * 1024 * 1024)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 50  # peak memory: nothing was unpacked


def test_an_honest_docx_still_loads() -> None:
    doc = load_document(docx_bomb(200_000), "notes.docx", 20 * 1024 * 1024)  # 200 KB of XML: fine
    assert "deadlock" in doc.pages[0].text


def test_text_and_passage_limits_are_settings(settings: Settings) -> None:
    from syllabot.worker.loaders import TooLarge

    text = ("Deadlocks need four conditions to hold at once. " * 40 + "\n\n") * 50  # ~100k characters
    with pytest.raises(TooLarge, match="SYLLABOT_MAX_TEXT_MB"):
        load_document(text.encode(), "long.txt", 20 * 1024 * 1024, max_text_chars=50_000)
    few = settings.model_copy(update={"max_chunks": 5})
    report = Engine(few).ingest("limits", [("long.txt", text.encode())], who="test")
    assert not report.changed and "SYLLABOT_MAX_CHUNKS" in (report.files[0].error or "")
    assert Engine(settings).ingest("limits", [("long.txt", text.encode())], who="test").changed
