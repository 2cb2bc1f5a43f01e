"""Uploads built to hurt: names with control and format characters, decompression bombs, and
documents that would silently replace another one."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bench.upload_bombs import docx_bomb
from syllabot.shared.config import Settings
from syllabot.shared.formats import clean_name
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ingest.loaders import load_document

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

    from syllabot.worker.ingest.loaders import TooLarge

    bomb = docx_bomb(xml_mb * 1024 * 1024)
    assert len(bomb) < 2 * 1024 * 1024  # well under the 20 MB upload limit
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TooLarge, match=why):
        load_document(bomb, "notes.docx", 20 * 1024 * 1024)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 50  # peak memory: nothing was unpacked


def _lying_docx(xml_bytes: int, declared: int) -> bytes:
    """A DOCX whose word/document.xml really holds ``xml_bytes`` but whose ZIP headers (local and
    central) say ``declared``: the sizes are patched after writing."""
    import struct
    import zipfile

    honest = docx_bomb(200_000)
    source = zipfile.ZipFile(io.BytesIO(honest))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                head, _, tail = data.partition(b"</w:body>")
                filler = b"<w:p><w:r><w:t>padding</w:t></w:r></w:p>"
                data = head + filler * (xml_bytes // len(filler)) + b"</w:body>" + tail
            archive.writestr(item.filename, data)
        target = archive.getinfo("word/document.xml")
    raw = bytearray(out.getvalue())
    struct.pack_into("<I", raw, target.header_offset + 22, declared)  # local header
    central = raw.index(b"PK\x01\x02")
    while raw[central + 46 : central + 46 + len(target.filename)] != target.filename.encode():
        central = raw.index(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", raw, central + 24, declared)  # central directory
    return bytes(raw)


def test_a_docx_whose_headers_understate_its_size_is_refused_within_bounded_memory() -> None:
    import tracemalloc
    import zipfile

    from syllabot.worker.ingest.loaders import TooLarge

    lying = _lying_docx(40 * 1024 * 1024, declared=200_000)
    assert zipfile.ZipFile(io.BytesIO(lying)).getinfo("word/document.xml").file_size == 200_000
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge, match=r"word/document\.xml unpacks to more than the 0\.2 MB"):
            load_document(lying, "notes.docx", 20 * 1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024  # the old loader inflated all 40 MB before "Bad CRC-32"


def test_a_docx_over_the_limit_is_refused_whatever_its_headers_say() -> None:
    from syllabot.worker.ingest.loaders import TooLarge

    lying = _lying_docx(12 * 1024 * 1024, declared=12 * 1024 * 1024)  # honest headers, small limit
    with pytest.raises(TooLarge, match="limit for what a Word document may expand to"):
        load_document(lying, "notes.docx", 20 * 1024 * 1024, max_expanded_bytes=8 * 1024 * 1024)


def test_a_docx_part_compressed_as_word_never_does_is_refused_unread() -> None:
    import zipfile

    from syllabot.worker.ingest.loaders import CorruptFile

    honest = zipfile.ZipFile(io.BytesIO(docx_bomb(200_000)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for item in honest.infolist():  # bzip2 is inflated by zipfile without an output bound
            archive.writestr(item.filename, honest.read(item.filename), compress_type=zipfile.ZIP_BZIP2)
    with pytest.raises(CorruptFile, match="compression method 12, which Word never writes"):
        load_document(out.getvalue(), "notes.docx", 20 * 1024 * 1024)


def test_an_honest_docx_still_loads() -> None:
    doc = load_document(docx_bomb(200_000), "notes.docx", 20 * 1024 * 1024)  # 200 KB of XML: fine
    assert "deadlock" in doc.pages[0].text


def test_text_and_passage_limits_are_settings(settings: Settings) -> None:
    from syllabot.worker.ingest.loaders import TooLarge

    text = ("Deadlocks need four conditions to hold at once. " * 40 + "\n\n") * 50  # ~100k characters
    with pytest.raises(TooLarge, match="SYLLABOT_MAX_TEXT_MB"):
        load_document(text.encode(), "long.txt", 20 * 1024 * 1024, max_text_chars=50_000)
    few = settings.model_copy(update={"max_chunks": 5})
    report = Engine(few).ingest("limits", [("long.txt", text.encode())], who="test")
    assert not report.changed and "SYLLABOT_MAX_CHUNKS" in (report.files[0].error or "")
    assert Engine(settings).ingest("limits", [("long.txt", text.encode())], who="test").changed


# --- no silent replacement -----------------------------------------------------------------------

PLAN_MD = b"# Course plan\n\n## Module 1\n\nDeadlocks and their four conditions.\n"
OTHER_MD = b"---\nid: course-plan\n---\n# Lab rules\n\nBring your own laptop to every lab session.\n"


def test_a_different_file_with_the_same_id_is_refused_naming_both(settings: Settings) -> None:
    engine = Engine(settings)
    assert engine.ingest("os", [("Course Plan.md", PLAN_MD)], who="test").changed
    report = engine.ingest("os", [("course_plan.md", PLAN_MD.replace(b"Deadlocks", b"Paging"))], who="test")
    assert not report.changed
    [line] = report.files
    assert not line.ok and "Course Plan.md" in (line.error or "") and "course_plan.md" in (line.error or "")
    assert "replace" in (line.error or "")
    # a front-matter id another file already has: refused the same way
    report = engine.ingest("os", [("lab-rules.md", OTHER_MD)], who="test")
    assert not report.changed and "Course Plan.md" in (report.files[0].error or "")
    assert [s.file for s in engine.sources("os")] == ["Course Plan.md"]
    assert "Deadlocks" in engine.search("os", "deadlocks").hits[0].text  # the first one is intact


def test_replace_lets_it_through_and_the_same_file_replaces_as_before(settings: Settings) -> None:
    engine = Engine(settings)
    engine.ingest("os", [("Course Plan.md", PLAN_MD)], who="test")
    report = engine.ingest("os", [("course_plan.md", PLAN_MD)], who="test", replace=True)
    assert report.changed and report.files[0].replaced == "Course Plan.md"
    assert [s.file for s in engine.sources("os")] == ["course_plan.md"]
    again = engine.ingest("os", [("course_plan.md", PLAN_MD + b"\nUpdated.\n")], who="test")
    assert again.changed and again.files[0].ok and again.files[0].replaced == "course_plan.md"


def test_two_files_of_one_batch_with_the_same_id_keep_the_first(settings: Settings) -> None:
    report = Engine(settings).ingest(
        "os", [("Course Plan.md", PLAN_MD), ("lab-rules.md", OTHER_MD)], who="test"
    )
    assert report.changed and [f.ok for f in report.files] == [True, False]
    assert "in this batch" in (report.files[1].error or "")


def test_the_cli_refuses_a_collision_with_exit_3_and_replace_lets_it_through(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from syllabot import cli

    monkeypatch.setattr(cli, "get_settings", lambda: settings)
    (tmp_path / "Course Plan.md").write_bytes(PLAN_MD)
    (tmp_path / "course_plan.md").write_bytes(PLAN_MD)
    assert cli.main(["index", str(tmp_path / "Course Plan.md"), "-c", "os"]) == 0
    assert cli.main(["index", str(tmp_path / "course_plan.md"), "-c", "os"]) == 1  # nothing indexed
    assert "ERROR course_plan.md" in capsys.readouterr().out
    assert cli.main(["index", str(tmp_path / "course_plan.md"), "-c", "os", "--replace"]) == 0
    assert "(replaced Course Plan.md)" in capsys.readouterr().out
