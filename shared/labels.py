"""The one citation label ("Subject — Module N, p. P") and the citation an answer carries.

Shared by the worker (which fills ``Hit.label``/``Citation.label``) and the front-ends (which fall
back to it for an answer from an older worker that sent no label), so every place prints the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from syllabot.shared.schema import Citation, Hit, Passage

#: How much of a cited chunk a citation's snippet shows.
SNIPPET_CHARS = 240


class Citable(Protocol):
    subject: str | None
    title: str
    file: str
    module: str | None
    section: str | None
    page: int | None
    page_end: int | None


def display_title(item: object) -> str:
    """What citations call a document ("BIOL 210 — Sampling a meadow"): the display title ingest
    read from its heading or first lines (``cite_title``, ``worker.ingest.doc_titles``), else its
    own title, else its file's name. ``item``: a document, chunk or hit, or a stored document's
    metadata. The one reading of it: labels, the source list and the same-title checks of versions
    and conflicts all call this."""
    if isinstance(item, Mapping):
        return str(item.get("cite_title") or item.get("title") or item.get("file") or "")
    read: Any = item
    return str(getattr(read, "cite_title", None) or read.title or read.file)


def title_key(item: object) -> str:
    """:func:`display_title` as compared: two documents with one key are called the same."""
    return display_title(item).strip().lower()


def citation_head(item: Citable) -> str:
    """The document a label names first: its subject, else its display title."""
    return item.subject or display_title(item)


def citation_label(item: Citable) -> str:
    """What a student needs to find the passage in their own copy.

    Pages are cited only for PDFs: Markdown, text and DOCX have no page a reader could turn to.
    An already filled ``label`` attribute wins.
    """
    ready = getattr(item, "label", "")
    if ready:
        return ready
    head = citation_head(item)
    module = item.module
    if module and not module.lower().startswith(("module", "unit", "chapter", "part")):
        module = f"Module {module}"  # a bare "3" from an older worker or a hand-made citation
    where = module or item.section
    label = f"{head} — {where}" if where and where != head else head
    if item.page is not None and item.file.lower().endswith(".pdf"):
        if item.page_end and item.page_end != item.page:
            return f"{label}, pp. {item.page}–{item.page_end}"
        return f"{label}, p. {item.page}"
    return label


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """A one-line excerpt of a chunk, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return f"{cut}…"


#: What a citation carries over from the hit it cites.
_CITED_FIELDS = set(Passage.model_fields) - {"label"}


def citation(n: int, hit: Hit) -> Citation:
    """Citation ``n`` of an answer: the hit's place, its label and a one-line snippet of its text."""
    return Citation(
        n=n, snippet=snippet(hit.text), label=citation_label(hit), **hit.model_dump(include=_CITED_FIELDS)
    )
