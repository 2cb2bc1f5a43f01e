"""The messages front-ends and workers exchange.

Front-ends render only these; workers produce only these.  They cross Redis as plain dicts
(``model_dump(mode="json")``) so a bot and a worker of different versions fail with a validation
error that names the field instead of an unpickling error. A question and its answer also carry
:data:`SCHEMA_VERSION`: a worker refuses a question of another version, and a bot an answer of
another version, each with an error that says which side to upgrade (:func:`version_mismatch`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from syllabot.shared.wording import plural

#: The version of the messages between bots and workers. Version 2: ``Answer.text`` is the body
#: only (lead, marker and general-knowledge label are added by ``shared/answer_text.py``). Raise it
#: whenever a field changes meaning, not only shape; messages of version 1 carry no number.
SCHEMA_VERSION = 2

#: The exact words a reply starts with when the materials do not answer the question (added to the
#: body by ``shared/answer_text.py``, never written by a worker).
NOT_IN_MATERIALS = "Not in your materials"
#: How an ``uncertain`` reply starts: the closest passages follow, plainly not claimed as an answer.
#: Deliberately unlike :data:`NOT_IN_MATERIALS`, so neither can be mistaken for the other.
UNCERTAIN_LEAD = "I can't tell whether your materials answer this"

#: The three outcomes of answering (docs/ANSWERING.md):
#: ``answered`` — the cited passages answer it; ``uncertain`` — the closest passages are about it but
#: may not answer it; ``not_in_materials`` — the reply starts with :data:`NOT_IN_MATERIALS`.
#: The longest question any front-end sends (AskRequest enforces it; bots check it first for words).
MAX_QUESTION_CHARS = 2000

AnswerStatus = Literal["answered", "uncertain", "not_in_materials"]
ANSWER_STATUSES: tuple[AnswerStatus, ...] = ("answered", "uncertain", "not_in_materials")


class Passage(BaseModel):
    """Where a retrieved passage comes from: what a hit and a citation both carry."""

    doc_id: str
    file: str
    title: str
    subject: str | None = None
    module: str | None = None
    section: str | None = None
    page: int | None = None
    page_end: int | None = None
    score: float
    label: str = Field(default="", description='"Subject — Module N, p. P", ready to print.')


class Hit(Passage):
    """One retrieved chunk with its scores; `SEARCH_HIT_FIELDS` is its `syllabot search --json` form."""

    rank: int
    cosine: float
    keyword: float
    text: str
    version: str | None = None
    status: str | None = None
    lang: str | None = None
    #: The document's display title and first upload time: a later upload of the same title leads
    #: when two documents disagree (``worker.indexes.conflicts``).
    cite_title: str | None = None
    uploaded_at: str | None = None
    #: A passage over several pages: where each page after ``page`` begins in ``text`` (non-space
    #: characters before it, page), so a citation names the page its quote is on.
    page_marks: list[tuple[int, int]] = Field(default_factory=list)
    #: Symbol-font bullets in ``text`` (non-space characters before each): shown to a student as
    #: "•" (``worker.text.display``), kept as extracted in the text the index reads.
    bullets: list[int] = Field(default_factory=list)
    #: ``text`` is Markdown as the index reads it: a student reads it rendered (``Chunk.markdown``).
    markdown: bool = False


#: The fields of `syllabot search --json`, in order: a contract operators' scripts rely on.
SEARCH_HIT_FIELDS = (
    "rank", "doc_id", "file", "title", "subject", "module", "section", "page", "page_end",
    "score", "cosine", "keyword", "text",
)  # fmt: skip


class Citation(Passage):
    """A numbered source of an answer: [n] in the text refers to it."""

    n: int
    snippet: str


class Timings(BaseModel):
    """Milliseconds spent in each stage of answering one question."""

    embed: float = 0.0
    search: float = 0.0
    answer: float = 0.0
    total: float = 0.0
    queue: float | None = None
    cached: bool = Field(
        default=False,
        description="True when the worker reused the answer it computed for the same question on the "
        "same index version (worker/answerers/answer_cache.py); the other stages are then 0.",
    )


def wire_version(payload: object) -> int:
    """The schema version a message (a JSON object) was written in: 1 when it names none."""
    version = payload.get("schema_version", 1) if isinstance(payload, dict) else 1
    return version if isinstance(version, int) else 0


def version_mismatch(bot: int, worker: int) -> str:
    """What to tell an admin when a bot and a worker speak different schema versions: which side
    to upgrade (the older one)."""
    older = "bot" if bot < worker else "worker"
    return (
        f"bot speaks schema v{bot}, worker v{worker}: upgrade the {older} so both run the same "
        "Syllabot version"
    )


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    collection: str = "default"
    user: str | None = Field(
        default=None, description="Who asked, e.g. 'discord:1234' (for logs and feedback)."
    )
    platform: Literal["cli", "discord", "slack", "test"] = "cli"
    k: int | None = None
    deadline_ms: int | None = Field(
        default=None,
        description="When the asker stops waiting: ms since the epoch on the Redis server's clock "
        "(shared/deadline.py). Set by QueueClient.ask; a worker never answers a question past it.",
    )
    thread: str | None = Field(
        default=None,
        max_length=200,
        description="The conversation this question belongs to, e.g. 'slack:C1:1712.5' (shared/threads.py): "
        "the worker resolves a follow-up against its earlier turns. None: a question on its own.",
    )
    schema_version: int = SCHEMA_VERSION

    stream: bool = Field(
        default=False,
        description="The asker shows the answer while it is written: a worker streaming from an LLM "
        "publishes partial texts (shared/partials.py) before the final answer. Set by QueueClient.",
    )


class Answer(BaseModel):
    """What a worker sends back. ``status`` is the outcome; ``in_materials`` is true only for
    ``answered`` (kept for older readers). Give either; the other is derived, and a contradiction
    is an error rather than a guess.

    ``text`` is the body only: no "Not in your materials" marker, no uncertain lead (the status
    says which, and ``shared/answer_text.py`` words it); ``general_knowledge`` carries no label."""

    text: str = Field(description="The body: what the answer says, without the status's lead or marker.")
    status: AnswerStatus = "answered"
    in_materials: bool = True
    citations: list[Citation] = Field(default_factory=list)
    general_knowledge: str | None = Field(
        default=None, description="LLM's general answer, only when in_materials is false; no label."
    )
    note: str | None = Field(default=None, description="One-line operator note, e.g. 'LLM unavailable'.")
    collection: str
    index_version: str | None = None
    question: str = ""
    timings: Timings = Field(default_factory=Timings)
    schema_version: int = SCHEMA_VERSION

    @model_validator(mode="before")
    @classmethod
    def _status_and_flag(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        status, flag = data.get("status"), data.get("in_materials")
        if status is None and flag is not None:
            data = {**data, "status": "answered" if flag else "not_in_materials"}
        elif status is not None and flag is None:
            data = {**data, "in_materials": status == "answered"}
        elif status is not None and bool(flag) != (status == "answered"):
            raise ValueError(f"in_materials={flag!r} contradicts status={status!r}")
        return data


#: ``FileReport.dropped``'s kinds as a teacher reads them: (one, many). A kind not named here is
#: shown by its key ("new_kind" -> "2 new kinds").
LEFT_OUT_WORDS: dict[str, tuple[str, str]] = {
    "plot_glyphs": ("character of a chart or plot", "characters of charts and plots"),
    "page_labels": ("slide number", "slide numbers"),
    "dot_leaders": ("dotted line of a table of contents", "dotted lines of tables of contents"),
    "running_lines": (
        "header or footer line repeated on most pages",
        "header and footer lines repeated on most pages",
    ),
    "hidden_chars": ("hidden character (text no reader sees)", "hidden characters (text no reader sees)"),
    "undecoded_runs": (
        "word in a font the PDF gives no letters for",
        "words in a font the PDF gives no letters for",
    ),
}
#: Kinds of ``FileReport.dropped`` that are kept in the text, read by a guess, not left out.
GUESSED_KINDS = ("unmended_marks",)


class FileReport(BaseModel):
    """What indexing one file produced, or why it could not be used."""

    file: str
    doc_id: str | None = None
    ok: bool
    pages: int = 0
    chunks: int = 0
    modules: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    dropped: dict[str, int] = Field(
        default_factory=dict,
        description="What extraction left out of the indexed text, by kind: plot_glyphs (characters of "
        "plots: marks, legends, tick labels), page_labels, dot_leaders, running_lines, hidden_chars (text no reader sees), "
        "undecoded_runs (words in a font without a usable map: glyph numbers, not letters), unmended_marks.",
    )
    error: str | None = None
    replaced: str | None = Field(
        default=None, description="The file name of the document this upload replaced (same id)."
    )

    def left_out(self) -> str:
        """What extraction left out, in words a teacher can check against the PDF, for every front-end
        ("46 slide numbers, 1 header or footer line repeated on most pages"); "" when none. Marks read
        by a guess are kept in the text, so :meth:`guessed` says them apart."""
        return ", ".join(
            plural(n, *LEFT_OUT_WORDS.get(kind, (kind.replace("_", " "), None)))
            for kind, n in self.dropped.items()
            if n and kind not in GUESSED_KINDS
        )

    def guessed(self) -> str:
        """The words extraction kept but could only read by a guess, shown after "read by a guess:"
        ("1 word the PDF lost a letter of"); "" when none."""
        n = sum(self.dropped.get(kind, 0) for kind in GUESSED_KINDS)
        if not n:
            return ""
        return f"{plural(n, 'word')} the PDF lost {'a letter' if n == 1 else 'letters'} of"


class IngestReport(BaseModel):
    collection: str
    files: list[FileReport] = Field(default_factory=list)
    index_version: str | None = None
    total_chunks: int = 0
    changed: bool = Field(default=False, description="False when nothing succeeded and the old index stays.")


class ConflictInfo(BaseModel):
    """A fact on which two documents of a collection disagree (`syllabot conflicts`): the one type of
    the teacher's list, which the worker builds at index time, stores with the index and sends."""

    topic: str = Field(description="The words both passages share: what the fact is about.")
    kind: str = Field(description="count, percent, weekday, time, date, duration, edition, marks or version")
    first: str = Field(description="The first document's citation label.")
    first_text: str
    second: str
    second_text: str
    current: str = Field(
        default="",
        description="Why the first document is the current one; empty when the materials do not say.",
    )
    #: The two documents' ids, the first's then the second's: the worker's own (which entries are
    #: between versions, which are newest), never sent (``exclude``), so the message is unchanged.
    docs: tuple[str, str] = Field(default=("", ""), exclude=True)


class CollectionInfo(BaseModel):
    """One collection as `syllabot collections` and the bots' collection lists show it."""

    name: str
    documents: int
    chunks: int
    embedder: str | None = Field(default=None, description="The embedder its index was built with.")
    bytes: int = Field(default=0, description="Stored documents plus the index snapshot, in bytes.")
    indexed_at: str | None = Field(default=None, description="When a document was last indexed.")
    superseded: int = Field(
        default=0,
        description="Of its documents, those marked superseded (by an admin, or by their own front matter).",
    )


class DropReport(BaseModel):
    """What `drop` removed: the collection as it was, its Redis keys and the bindings to it."""

    dropped: CollectionInfo
    keys: int
    bindings: int


class SourceInfo(BaseModel):
    doc_id: str
    file: str
    title: str
    pages: int
    chunks: int
    indexed_at: str
    version: str | None = None
    status: str | None = None
    bytes: int = 0
    superseded_by: str | None = Field(
        default=None, description="An admin marked it superseded by this doc_id ('' when none was named)."
    )
    sha256: str | None = Field(
        default=None,
        description="The stored file's content hash: the version a version command names (None from "
        "a worker before issue 49).",
    )
