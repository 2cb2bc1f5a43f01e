"""`syllabot index` splits a large folder into several ingest jobs: pure helpers."""

from __future__ import annotations

from syllabot.cli_queue import batches_by_size, merge_reports
from syllabot.shared.schema import FileReport, IngestReport


def test_batches_keep_order_and_respect_the_limit() -> None:
    files = [("a", b"x" * 40), ("b", b"x" * 40), ("c", b"x" * 100), ("d", b"x" * 10)]
    batches = batches_by_size(files, 90)
    assert [[name for name, _ in batch] for batch in batches] == [["a", "b"], ["c"], ["d"]]
    assert all(sum(len(d) for _, d in batch) <= 90 or len(batch) == 1 for batch in batches)


def test_merged_report_lists_every_file_and_the_last_version() -> None:
    first = IngestReport(
        collection="c",
        files=[FileReport(file="a", ok=True)],
        changed=True,
        index_version="v1",
        total_chunks=3,
    )
    second = IngestReport(collection="c", files=[FileReport(file="b", ok=False, error="bad")])
    third = IngestReport(
        collection="c",
        files=[FileReport(file="c", ok=True)],
        changed=True,
        index_version="v2",
        total_chunks=5,
    )
    merged = merge_reports("c", [first, second, third])
    assert [f.file for f in merged.files] == ["a", "b", "c"]
    assert merged.changed and merged.index_version == "v2" and merged.total_chunks == 5
    assert not merge_reports("c", [second]).changed
