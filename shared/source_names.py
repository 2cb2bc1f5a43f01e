"""Which indexed document a name designates: its doc_id, else its file name.

One lookup for the CLI (`syllabot remove`, `supersede`, `current`) and both bots' version
commands, so the same words name the same document everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syllabot.shared.schema import IngestReport, SourceInfo


class UnknownDocument(LookupError):
    """A command named no document of the collection, or several (a usage error)."""


def find_document(
    sources: list[SourceInfo], name: str, collection: str, listing: str | None = None
) -> SourceInfo:
    """The document ``name`` designates: its doc_id, else its file name (a path's last part, any case).

    ``listing``: what the user can run to see the names (default: ``syllabot sources``).
    """
    name = name.strip()
    wanted = name.replace("\\", "/").rsplit("/", 1)[-1]
    for matches in (
        [s for s in sources if s.doc_id == name],
        [s for s in sources if s.file == wanted],
        [s for s in sources if s.file.lower() == wanted.lower()],
    ):
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            ids = ", ".join(s.doc_id for s in matches)
            raise UnknownDocument(
                f"'{name}' names several documents in '{collection}' ({ids}); give the doc_id"
            )
    hint = listing or f"`syllabot sources -c {collection}` lists its doc_ids and file names"
    raise UnknownDocument(f"no document '{name}' in collection '{collection}'; {hint}")


def find_with_successor(
    sources: list[SourceInfo], name: str, by: str | None, collection: str, listing: str | None = None
) -> tuple[SourceInfo, SourceInfo | None]:
    """The document ``name`` designates and the one ``by`` does (None without ``by``), for the
    version commands; the named one is looked up first, so its error comes first."""
    document = find_document(sources, name, collection, listing)
    return document, find_document(sources, by, collection, listing) if by else None


class VersionGone(ValueError):
    """A version command named a document version that is no longer stored: another admin replaced
    (or removed) it between the lookup and the write. Nothing was changed."""


def seen_versions(*documents: SourceInfo | None) -> dict[str, str]:
    """doc_id -> sha256 of the versions a command looked up, for the write to check
    (:func:`check_seen`); a document listed without a hash (an older worker) is not checked."""
    return {d.doc_id: d.sha256 for d in documents if d is not None and d.sha256}


def check_seen(
    docs: Mapping[str, Mapping[str, Any]], seen: Mapping[str, str] | None, collection: str
) -> None:
    """:class:`VersionGone` unless every document in ``seen`` is still stored with the hash seen.

    Called by the write under the collection's build lock: two admins, one marking ``warranty.md``
    superseded while the other uploads ``warranty-2026.md`` with the same id (``replace``), must
    not end with the first told "warranty.md is marked" while the mark landed on the new upload.
    """
    for doc_id, sha256 in (seen or {}).items():
        meta = docs.get(doc_id)
        if meta is None:
            raise VersionGone(
                f"nothing was changed: document '{doc_id}' was removed from '{collection}' after you "
                "looked it up"
            )
        if meta.get("sha256") and meta["sha256"] != sha256:
            who = meta.get("uploaded_by") or "someone"
            raise VersionGone(
                f"nothing was changed: the version of document '{doc_id}' you looked up (sha256 "
                f"{sha256[:12]}) is gone; {who} has since replaced it with {meta.get('file', '?')} "
                f"(indexed {meta.get('indexed_at') or '?'}); look again and name the document you mean"
            )


def mark_said(report: IngestReport, status: str) -> str:
    """What marking a document did, in the engine's words (``describe_mark``), else the status."""
    return report.files[0].warnings[0] if report.files and report.files[0].warnings else status
