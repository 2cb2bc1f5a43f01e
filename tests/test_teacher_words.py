"""Words a teacher or an operator can act on (issue 63): the index report's counts and what it left
out, `doctor` on a Redis with no collection, `sources` with long document ids, progress that counts
what is stored, expected outcomes logged in one line, and a cancel seen within a second."""

from __future__ import annotations

import io
import logging
import re

import pytest

from syllabot import cli
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.redis_conn import sync_client_at
from syllabot.shared.schema import FileReport, IngestReport
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.doctor import check_collections
from tests.fakes import SlowEmbedder

# --- the index report -------------------------------------------------------------------------


def test_the_index_report_counts_in_the_singular_and_says_what_was_left_out_in_plain_words() -> None:
    report = IngestReport(
        collection="os",
        files=[
            FileReport(
                file="one-pager.pdf",
                ok=True,
                pages=1,
                chunks=1,
                dropped={"running_lines": 9, "page_labels": 1, "unmended_marks": 1},
            ),
            FileReport(file="notes.pdf", ok=True, pages=12, chunks=30, dropped={"unmended_marks": 3}),
        ],
        index_version="v1",
        total_chunks=31,
        changed=True,
    )
    out = io.StringIO()
    cli.print_ingest_report(report, out)
    text = out.getvalue()
    lines = [line.strip() for line in text.splitlines()]
    assert "ok    one-pager.pdf: 1 page, 1 chunk" in lines
    assert "left out of the index: 9 header and footer lines repeated on most pages, 1 slide number" in lines
    assert "read by a guess: 1 word the PDF lost a letter of" in lines
    assert "read by a guess: 3 words the PDF lost letters of" in lines
    for jargon in (r"\b1 pages", r"\b1 chunks", "running lines", "unmended", "page labels", r"\b1 marks"):
        assert not re.search(jargon, text), jargon
    # a file whose only count is a guess has nothing "left out of the index"
    assert sum(line.startswith("left out of the index") for line in lines) == 1
    one = IngestReport(
        collection="os", files=report.files[:1], index_version="v1", total_chunks=1, changed=True
    )
    out = io.StringIO()
    cli.print_ingest_report(one, out)
    assert out.getvalue().splitlines()[-1] == "collection 'os': 1 chunk, index version v1"


# --- doctor with no collection ----------------------------------------------------------------


def test_doctor_with_no_collection_says_what_ask_and_the_bots_really_do(settings: Settings) -> None:
    """`syllabot ask` answers from the samples while nothing of the teacher's is indexed (README),
    and a bot's question is told nothing is indexed: no question gets "Not in your materials"."""
    client = sync_client_at(settings.redis_url or "")
    try:
        (check,) = check_collections(client, Keys(settings.key_prefix), None)
    finally:
        client.close()
    assert check.status == "warn"
    assert "not in your materials" not in check.detail.lower()
    assert "`syllabot ask` answers from the bundled samples" in check.detail
    assert "'sample'" in check.detail and "syllabot index PATH -c NAME" in check.detail


# --- sources -----------------------------------------------------------------------------------


def test_sources_columns_stay_in_line_whatever_the_length_of_a_doc_id(
    env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = Engine(env)
    long_id = "21cs44-operating-systems-lecture-notes-2026-revised"
    engine.ingest(
        "os",
        [
            ("a.md", b"# OS\n\n## Module 3\n\nDeadlocks.\n"),
            ("notes.md", f"---\nid: {long_id}\n---\n# OS notes\n\n## Module 1\n\nProcesses.\n".encode()),
        ],
        who="test",
    )
    assert cli.main(["sources", "-c", "os"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 2 and any(row.startswith(long_id + " ") for row in rows)
    file_at = header.index("file")
    pages_end = header.index("pages") + len("pages")
    chunks_end = header.index("chunks") + len("chunks")
    indexed_at = header.index("indexed")
    for row, (file, pages, chunks) in zip(rows, [("a.md", "1", "1"), ("notes.md", "1", "1")], strict=True):
        assert row[file_at:].startswith(file + " "), row
        assert row[:pages_end].endswith(" " + pages), row
        assert row[:chunks_end].endswith(" " + chunks), row
        assert row[indexed_at - 1] == " " and row[indexed_at].isdigit(), row


# --- progress counts what is stored -----------------------------------------------------------


def test_embedding_progress_ends_on_the_number_of_chunks_the_index_stores(settings: Settings) -> None:
    """Two passages of the same text (embedded once, stored twice) and, on the second upload, the
    chunks the index keeps with their vectors: the last "embedding" count is the index's chunks."""
    engine = Engine(settings)
    same = b"# Late work policy\n\nLate work loses ten percent per day, up to three days.\n"
    for files in (
        [
            ("section-a.md", same),
            ("section-b.md", same),
            ("notes.md", b"# OS\n\n## Module 3\n\nDeadlocks.\n"),
        ],
        [("extra.md", b"# Labs\n\n## Lab 1\n\nThe shell and its pipes.\n")],
    ):
        events: list[tuple[str, int, int]] = []
        report = engine.ingest("os", files, "test", lambda s, d, t, seen=events: seen.append((s, d, t)))
        embedding = [(d, t) for s, d, t in events if s == "embedding"]
        assert report.changed and embedding[-1] == (report.total_chunks, report.total_chunks), embedding
    snapshot = engine.snapshot("os")
    assert snapshot is not None and len({c.text for c in snapshot.chunks}) < len(snapshot)


# --- expected outcomes in the worker's log ----------------------------------------------------


def _one_line_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records, once none is at ERROR and none carries a traceback."""
    records = caplog.records
    assert not [r for r in records if r.levelno >= logging.ERROR], [r.getMessage() for r in records]
    assert not [r for r in records if r.exc_info or r.exc_text], [r.getMessage() for r in records]
    assert all("\n" not in r.getMessage() for r in records)
    return records


async def test_a_build_its_client_cancelled_is_logged_in_one_line_at_info(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    from syllabot.shared.queue import JobCancelled, QueueClient, Stop
    from syllabot.worker.ops.sample import sample_files
    from tests.queue_helpers import running_worker

    stop = Stop()
    embedder = SlowEmbedder(2e-4, on_call=lambda n: n == 3 and stop.press())  # ~0.1 s a passage
    engine = Engine(settings, embedder=embedder)
    caplog.set_level(logging.INFO)
    async with running_worker(settings, engine=engine), QueueClient(settings) as client:
        with pytest.raises(JobCancelled, match="nothing was published"):
            await client.ingest_many("shop", sample_files(), "teacher", stop=stop)
        assert engine.store.current_version("shop") is None
    records = _one_line_records(caplog)
    said = [r for r in records if "cancelled by its client" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.INFO
    assert not [r for r in records if "failed" in r.getMessage() and "ingest" in r.getMessage()]


async def test_a_mark_that_lost_a_race_is_logged_in_one_line_as_a_warning(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    from syllabot.shared.queue import QueueClient
    from syllabot.shared.source_names import VersionGone
    from tests.queue_helpers import running_worker

    caplog.set_level(logging.INFO)
    async with running_worker(settings), QueueClient(settings) as client:
        await client.ingest_many("shop", [("warranty.md", b"# Warranty\n\nOne year on the frame.\n")], "a")
        with pytest.raises(VersionGone, match="nothing was changed"):
            # the version admin A looked up is not the one stored: admin B replaced it meanwhile
            await client.mark("shop", "warranty", "superseded", "admin-a", seen={"warranty": "0" * 64})
    records = _one_line_records(caplog)
    said = [r for r in records if "nothing was changed" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING


# --- a cancel is seen within a second ---------------------------------------------------------


def test_a_cancel_mid_embedding_waits_for_one_call_sized_by_time_not_a_whole_batch(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of 64 passages (an operator's SYLLABOT_EMBED_BATCH_SIZE) on an embedder at ~0.02 s
    a passage: one such call took over a second, and a cancel waited for it. Now every call is cut
    to what the embedder does in CHECK_EVERY_S at the speed measured so far, and the cancel is
    checked before each: the cancel waits for the one call in flight, and that call is a short one.
    No clock is read here: SlowEmbedder notes each call's size and its (slept) time."""
    from syllabot.worker.indexes import pipeline
    from syllabot.worker.indexes.cancel import Cancelled, CancelToken
    from syllabot.worker.ops.sample import sample_files

    budget = 0.2
    monkeypatch.setattr(pipeline, "CHECK_EVERY_S", budget)
    token = CancelToken()
    embedder = SlowEmbedder(
        4e-5, cancelled=lambda: token.cancelled, on_call=lambda n: n == 2 and token.cancel()
    )
    engine = Engine(settings.model_copy(update={"embed_batch_size": 64}), embedder=embedder, cancel=token)
    with pytest.raises(Cancelled):
        engine.ingest("shop", sample_files(), "test")
    assert engine.store.current_version("shop") is None
    calls = embedder.calls
    assert len(calls) == 2  # none started once the build was cancelled
    (in_flight,) = [c for c in calls if c.cancelled_after]
    assert not in_flight.cancelled_before
    # every call (but one of a single passage, the least there is) fits the budget
    assert all(c.size == 1 or c.seconds <= budget for c in calls), calls


def test_a_cancel_while_the_snapshot_is_built_is_noticed_inside_the_steps_that_read_every_passage() -> None:
    # the course card and the record of versions read every passage after the embedding: a build of
    # 12,000 passages spent ~10 s there, with no check until it published
    import numpy as np

    from syllabot.worker.indexes.cancel import Cancelled
    from syllabot.worker.indexes.index import build_snapshot
    from syllabot.worker.text.documents import Chunk

    chunks = [
        Chunk(
            chunk_id=f"d{d}:{i}",
            doc_id=f"d{d}",
            file=f"d{d}.pdf",
            title="Pottery",
            text=f"Glaze note {d}.{i}.",
        )
        for d in range(3)
        for i in range(40)
    ]
    matrix = np.eye(len(chunks), 8, dtype=np.float32)
    matrix[8:, 0] = 1.0  # unit rows for every passage
    calls: list[int] = []
    build_snapshot("v1", "c", "e", 8, chunks, matrix, "now", check=lambda: calls.append(1))
    assert len(calls) >= len(chunks)  # checked per passage, not once per step

    def cancel_soon() -> None:
        calls.append(1)
        if len(calls) > 5:
            raise Cancelled("cancelled before anything was published")

    calls.clear()
    with pytest.raises(Cancelled):
        build_snapshot("v1", "c", "e", 8, chunks, matrix, "now", check=cancel_soon)
    assert len(calls) == 6
