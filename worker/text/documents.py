"""What ingest produces: a loaded document and its chunks.

Plain dataclasses shared by loaders, the chunker, the index and search, so each of those can stay
a pure function of these values.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Page:
    """One physical page (1-based) of extracted text. Non-paged formats have a single page 1."""

    number: int
    text: str


@dataclass
class Document:
    """A loaded source document, before chunking."""

    doc_id: str
    file: str  # basename as uploaded
    title: str
    pages: list[Page]
    kind: str  # "pdf" | "markdown" | "text" | "docx" | "html" | "rst"
    version: str | None = None
    status: str = "current"  # "current" | "superseded" | "draft" ...
    lang: str = "en"
    subject: str | None = None  # course code and title when a loader already knows it
    warnings: list[str] = field(default_factory=list)
    #: What citations call the document when its first page names it better than ``title`` (the
    #: file's own name, which every chunk's embedded context line carries): "BIOL 210 — Sampling
    #: building blocks" (``doc_titles``). Apart from ``title`` because embedding it moved retrieval
    #: (SyllabusQA held-out page R@1 0.825 -> 0.802) and the decision reads ``title``'s words.
    cite_title: str | None = None
    #: What extraction left out of the indexed text, by kind ("plot_glyphs": 120, "running_lines":
    #: 14, ``pdf_repair.Dropped``), for the ingest report.
    dropped: dict[str, int] = field(default_factory=dict)
    #: Symbol-font bullets PDFium read as a letter, each as (page, the glyph and the non-space
    #: characters after it on its line: "IGrading40%"): the chunker finds them in its chunks'
    #: text (``Chunk.bullets``); the text itself keeps the letter (``pdf_figures``).
    bullets: tuple[tuple[int, str], ...] = ()


@dataclass(slots=True)
class Chunk:
    """One retrievable passage with everything a citation needs.

    Slotted: a worker keeps hundreds of thousands of chunks across its cached collections, and a
    per-instance ``__dict__`` of 19 fields cost ~650 bytes of each (``bench.load_collections``).
    """

    chunk_id: str
    doc_id: str
    file: str
    title: str
    text: str
    subject: str | None = None  # "21CS44 Operating Systems"
    module: str | None = None  # "Module 2", "Unit II"
    section: str | None = None  # "Course outcomes", "Textbooks", "Returns window" ...
    page: int | None = None
    page_end: int | None = None
    version: str | None = None
    status: str = "current"
    lang: str = "en"
    kind: str = "body"  # "module" | "outcomes" | "textbooks" | "references" | "header" | "section" | "window"
    #: The document's display name for citations (``Document.cite_title``); None: ``title``.
    cite_title: str | None = None
    #: Belongs to another course than the document's own (a syllabus page that starts with the tail of
    #: the previous course, or ends with the next one's header): the course's own file is the better
    #: citation when both are indexed.
    foreign: bool = False
    #: An admin marked the document superseded (``Engine.mark``): the successor's doc_id, or "" when
    #: none was named; None when no admin marked it. Such a chunk is left out of answers whenever a
    #: current document is indexed, whatever its file's name (``search.superseded_mask``).
    superseded_by: str | None = None
    #: When the document was first uploaded (ISO time, kept through re-index): of two documents with
    #: the same title that disagree, the later upload is likely the current one (``worker.indexes.conflicts``).
    uploaded_at: str | None = None
    #: Where each page after ``page`` begins in ``text``, for a passage over several pages: (non-space
    #: characters before it, page). An answer cites the page its quoted sentence is on
    #: (``answerers.base.narrowed``); empty for a passage on one page.
    page_marks: tuple[tuple[int, int], ...] = ()
    #: Symbol-font bullets in ``text`` (non-space characters before each), shown as "•" to a
    #: student (``worker.text.display.shown``); the text the embedder and the keyword index read
    #: keeps the letter PDFium read ("I"): reading "•" there cost held-out answers.
    bullets: tuple[int, ...] = ()
    #: The text is Markdown as the index reads it (a Markdown, web page or reStructuredText source,
    #: ``markdown_text``): a student reads it rendered (``markdown_text.rendered``).
    markdown: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict, shared: dict[str, str] | None = None) -> Chunk:
        """The chunk ``to_dict`` wrote. With ``shared`` (one dict for a whole load), a short string
        value met before is that same object: a document's file, title, course, status and the
        like are one string for all its chunks instead of one per chunk."""
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if "page_marks" in fields:  # JSON gives lists
            fields["page_marks"] = tuple((int(at), int(page)) for at, page in fields["page_marks"])
        if "bullets" in fields:
            fields["bullets"] = tuple(int(at) for at in fields["bullets"])
        if shared is not None:
            for name, value in fields.items():
                if name != "text" and type(value) is str:
                    fields[name] = shared.setdefault(value, value)
        return cls(**fields)
