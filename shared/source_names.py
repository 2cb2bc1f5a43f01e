"""Which indexed document a name designates: its doc_id, else its file name.

One lookup for the CLI (`syllabot remove`, `supersede`, `current`) and both bots' version
commands, so the same words name the same document everywhere.
"""

from __future__ import annotations

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


def mark_said(report: IngestReport, status: str) -> str:
    """What marking a document did, in the engine's words (``describe_mark``), else the status."""
    return report.files[0].warnings[0] if report.files and report.files[0].warnings else status
