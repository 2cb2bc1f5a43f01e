"""The build side's pure helpers: an admin's marks, upload times, collisions and per-file reports.

What ``Engine`` (``worker.indexes.engine``, the façade) does around a build — ingest, re-index, remove,
mark — reads and writes stored metadata through these small functions, kept apart so the façade
holds the flow and locking, and each rule (a name collision, a mark that outlives a re-parse, a
document's first upload time) is one testable function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from syllabot.shared.labels import title_key
from syllabot.shared.schema import FileReport, IngestReport
from syllabot.worker.indexes.index import IndexSnapshot
from syllabot.worker.text.documents import Chunk, Document


class NothingToIndex(ValueError):
    """A reindex or remove found nothing to work on."""


class UnknownCollection(NothingToIndex):
    """A command named a collection that does not exist (the message names the ones that do)."""


#: The marks an admin can set on a document (``Engine.mark``).
MARKS = ("superseded", "current")


def _marked(chunk: Chunk, status: str, by: str | None) -> Chunk:
    """``chunk`` with an admin's mark: superseded (``superseded_by`` the successor's id, or "" when
    none is named) or current (the mark cleared)."""
    if status == "superseded":
        return dataclasses.replace(chunk, status="superseded", superseded_by=by or "")
    return dataclasses.replace(chunk, status="current", superseded_by=None)


def mark_fields(status: str, by: str | None = None) -> dict[str, Any]:
    """What an admin's mark writes into a document's stored metadata: the status, and for
    "superseded" the successor's id (``by``; None for "current")."""
    return {"marked": status, "status": status, "superseded_by": by if status == "superseded" else None}


def marks_of(meta: dict[str, Any]) -> dict[str, Any]:
    """The admin's mark kept in a document's stored metadata (empty when it has none)."""
    if not meta.get("marked"):
        return {}
    return {"marked": meta["marked"], "superseded_by": meta.get("superseded_by"), "status": meta["marked"]}


def apply_mark(document: Document, chunks: list[Chunk], meta: dict[str, Any]) -> list[Chunk]:
    """A re-parsed document's chunks with the admin's stored mark (it wins over front matter)."""
    mark = marks_of(meta)
    if not mark:
        return chunks
    document.status = mark["status"]
    return [_marked(c, mark["status"], mark["superseded_by"]) for c in chunks]


def describe_mark(meta: dict[str, Any], docs: dict[str, dict[str, Any]]) -> str:
    """One line on a document's mark, for the admin who set it and for ``sources``."""
    if meta.get("marked") == "superseded":
        by = meta.get("superseded_by")
        successor = f" by {docs[by]['file']}" if by and by in docs else ""
        return f"marked superseded{successor}: left out of answers while a current document is indexed"
    return "marked current: answers use it"


def with_upload_times(chunks: list[Chunk], stored: dict[str, dict[str, Any]], now: str) -> list[Chunk]:
    """``chunks`` carrying their document's first upload time (the stored one, else ``now`` for a
    new document): a chunk copied only when its time changes, so a kept 100k-chunk index is not."""
    out = []
    for chunk in chunks:
        when = stored.get(chunk.doc_id, {}).get("uploaded_at") or chunk.uploaded_at or now
        out.append(chunk if chunk.uploaded_at == when else dataclasses.replace(chunk, uploaded_at=when))
    return out


def _collision(document: Document, other: str, where: str) -> str:
    """Why ``document`` is refused: its id is ``other``'s (a different file)."""
    return (
        f"{document.file} has the document id '{document.doc_id}' of {other}, {where}; it would replace "
        f"{other}. Rename the file (or change its front-matter id), or upload it again with replace "
        f"to replace {other}"
    )


def _require_document(docs: dict[str, dict[str, Any]], doc_id: str, collection: str) -> None:
    """:class:`NothingToIndex` naming the collection's documents when ``doc_id`` is not one."""
    if doc_id not in docs:
        known = ", ".join(sorted(docs)) or "none"
        raise NothingToIndex(f"no document '{doc_id}' in collection '{collection}' (documents: {known})")


def _one_document_report(
    snapshot: IndexSnapshot, total: int, meta: dict[str, Any], chunks: int, warnings: Sequence[str] = ()
) -> IngestReport:
    """The report of a change to one stored document (removed, marked): the new index version."""
    return IngestReport(
        collection=snapshot.collection,
        index_version=snapshot.version,
        total_chunks=total,
        changed=True,
        files=[
            FileReport(
                file=meta["file"],
                doc_id=meta["doc_id"],
                ok=True,
                pages=meta.get("pages", 0),
                chunks=chunks,
                warnings=list(warnings),
            )
        ],
    )


def _note_same_titles(
    stored: dict[str, dict[str, Any]],
    parsed: dict[str, tuple[Document, list[Chunk], bytes]],
    report: IngestReport,
    replace: bool,
) -> list[tuple[str, str]]:
    """A new file titled like an indexed document of another name is likely its new version. Without
    ``replace`` say so, with the commands that make it count, rather than guess (both are used
    until an admin says); with it, the upload is the admin's word: the (old, new) doc-id pairs
    returned are marked superseded by the caller, and the report says so."""
    by_title = {title_key(m): (doc_id, m) for doc_id, m in stored.items() if doc_id not in parsed}
    pairs = []
    for document, _chunks, _data in parsed.values():
        found = by_title.get(title_key(document))
        if found is None or not title_key(document):
            continue
        old_id, older = found
        if replace:
            pairs.append((old_id, document.doc_id))
            note = (
                f"has the same title as {older['file']}, already indexed: {older['file']} is marked "
                f"superseded by it (left out of answers; `syllabot current {older['file']}` undoes it)"
            )
        else:
            note = (
                f"has the same title as {older['file']}, already indexed; both are used in answers. If it "
                f"replaces {older['file']}: upload it again with replace (`syllabot index --replace`, "
                f'Discord replace: True, Slack "replace" in the mention) or `syllabot supersede '
                f"{older['file']} --by {document.file}` (Discord /supersede, Slack /syllabot-supersede)"
            )
        for entry in report.files:
            if entry.doc_id == document.doc_id and entry.ok:
                entry.warnings.append(note)
    return pairs


def _check_collisions(
    stored: dict[str, dict[str, Any]],
    parsed: dict[str, tuple[Document, list[Chunk], bytes]],
    report: IngestReport,
    replace: bool,
) -> None:
    """Refuse (drop from ``parsed``, mark in ``report``) each document whose id belongs to a stored
    document of another file name, unless ``replace``; note ``replaced`` on each that replaces one."""
    lines = {(f.doc_id, f.file): f for f in report.files if f.ok}
    for doc_id, (document, _, _) in list(parsed.items()):
        other = stored.get(doc_id)
        line = lines.get((doc_id, document.file))
        if other is None or line is None:
            continue
        if other["file"] != document.file and not replace:
            del parsed[doc_id]
            line.ok, line.error = False, _collision(document, other["file"], "already indexed")
            line.pages = line.chunks = 0
            line.modules = []
            continue
        line.replaced = other["file"]
