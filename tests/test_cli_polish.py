"""Small things a terminal user reads (issue 49): the version, counts that agree with their
number, progress that moves past "0/N", a header over `sources`, and a report column cut between
words."""

from __future__ import annotations

import io

import pytest

from syllabot import cli
from syllabot.cli_queue import _ProgressLine
from syllabot.shared.config import Settings
from syllabot.shared.gap_report import GapReport, GapTopic, summary_line, table
from syllabot.shared.wording import clip, plural
from syllabot.worker.indexes.engine import Engine


def _report(days: int, questions: int, topic: GapTopic) -> GapReport:
    """A report of ``questions`` kept questions, all in ``topic``, over ``days`` days."""
    return GapReport(
        collection="cs",
        days=days,
        since="2026-11-27T00:00:00+00:00",
        until="2026-12-04T00:00:00+00:00",
        keep_days=7,
        questions=questions,
        gaps=questions,
        topics=[topic],
    )


def test_version_names_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as stopped:
        cli.main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"syllabot {version('syllabot')}\n"


def test_one_helper_counts_in_the_singular_for_one() -> None:
    assert [plural(n, "question") for n in (0, 1, 2)] == ["0 questions", "1 question", "2 questions"]
    report = _report(1, 1, GapTopic(label="is there a lab on friday", count=1, not_in_materials=1))
    assert summary_line(report) == (
        "Collection 'cs', the last 1 day: 1 of 1 question was not answered by the materials or "
        "voted 👎, in 1 topic."
    )


def test_plain_progress_says_when_a_stage_is_complete_not_only_its_0_of_n() -> None:
    out = io.StringIO()  # not a terminal: plain lines
    clock = iter([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]).__next__
    line = _ProgressLine(out, every_s=5.0, clock=clock)
    for stage, done, total in [
        ("reading", 0, 1),
        ("reading", 1, 1),
        ("embedding", 0, 20),
        ("embedding", 10, 20),
        ("embedding", 20, 20),
        ("embedding", 20, 20),  # the final count written twice: said once
        ("done", 1, 1),
    ]:
        line.update(stage, done, total)
    assert out.getvalue().splitlines() == [
        "reading 0/1 files",
        "reading 1/1 files",
        "embedding 0/20 chunks",
        "embedding 20/20 chunks",
    ]


def test_sources_has_a_header_row(env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    Engine(env).ingest("os", [("notes.md", b"# OS\n\n## Module 3\n\nDeadlocks.\n")], who="test")
    assert cli.main(["sources", "-c", "os"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["doc_id", "file", "pages", "chunks", "indexed", "status"]
    assert row.split()[:4] == ["notes", "notes.md", "1", "1"]
    assert row.index("notes.md") == header.index("file")


def test_the_reports_closest_passage_column_is_cut_between_words() -> None:
    label = "21CS44 Operating Systems — Module 2, p. 4"
    assert clip(label, 32) == "21CS44 Operating Systems…"
    assert clip("Supercalifragilisticexpialidocious", 10) == "Supercali…"  # one long word: cut inside
    report = _report(7, 3, GapTopic(label="when is the deadlock quiz", count=3, uncertain=3, closest=label))
    assert table(report).splitlines()[1].endswith("21CS44 Operating Systems…")
