"""The front-end core: what Discord, Slack and the terminal share, free of I/O and platform types.

- **Questions**: :func:`check_question` (one length limit, :data:`MAX_QUESTION_CHARS` from
  ``shared/schema.py``, the bound :class:`AskRequest` enforces too).
- **Failures**: one taxonomy (:class:`FailureKind`); :func:`classify` turns any exception into a
  :class:`Failure` with user-facing words (title and detail) that each bot renders its own way.
  :func:`is_expected` says whether a failure is part of the taxonomy (log it in one line) or a bug
  (log it with its traceback).
- **Text**: :func:`split_text`, one splitter parametrised by the platform's limit and by what a hard
  cut must not separate (a Markdown escape on Discord, an HTML entity on Slack).
- **Answers**: :func:`answer_parts` gives renderers the status, its label and plain-text lead, the
  body (``Answer.text``: the worker writes no marker or lead), the citations and the general
  knowledge (no label); :func:`answer_text` the whole answer as plain text, starting with the
  exact "Not in your materials" marker or the uncertain lead (``shared/answer_text.py``).
- **The ask flow's replies**: acknowledge, progress, *partial*, final, failure. :func:`ask_streamed`
  asks and shows the answer while an LLM writes it: each bot passes only its platform's edit call
  (``show``), and this core decides when to call it (at most once per
  ``SYLLABOT_STREAM_EDIT_EVERY_S``, the final edit included) and :func:`clip_partial` how much fits.

Imports only ``syllabot.shared`` (tests/test_layout.py). Tests need neither Redis nor a platform fake.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import re
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from syllabot.shared.answer_text import (
    GENERAL_KNOWLEDGE_LABEL,
    STATUS_LABELS,
    AnswerParts,
    answer_parts,
    answer_text,
    status_lead,
    with_bold,
)
from syllabot.shared.bindings import InvalidCollectionName, validate_collection_name
from syllabot.shared.formats import clean_name
from syllabot.shared.gap_report import WEEKLY_CHECK_S, conflict_lines
from syllabot.shared.partials import Partial
from syllabot.shared.queue import (
    JobFailed,
    NoWorker,
    QueueError,
    QueueTimeout,
    RedisRefused,
    RedisUnreachable,
    SchemaMismatch,
)
from syllabot.shared.redis_conn import (
    REDIS_ERRORS,
    NotReplicated,
    RedisUnavailable,
    redis_trouble,
    through_failover,
)
from syllabot.shared.schema import (
    MAX_QUESTION_CHARS,
    Answer,
    AskRequest,
    CollectionInfo,
    ConflictInfo,
    DropReport,
    IngestReport,
    SourceInfo,
)
from syllabot.shared.source_names import (
    UnknownDocument,
    VersionGone,
    find_with_successor,
    mark_said,
    seen_versions,
)

log = logging.getLogger("syllabot.frontend")
_T = TypeVar("_T")


async def before_queueing(
    lookup: Callable[[], Awaitable[_T]], sentinel: bool, budget_s: float, doing: str
) -> _T:
    """A Redis lookup a question needs before it is queued -- the asker's rate limit, the channel's
    collection -- waited out through a Sentinel failover within ``budget_s`` (what is left of the
    question's deadline), by the queue's own rule (``redis_conn.through_failover``).

    Why: docs/RELIABILITY.md promises a question asked during a failover waits for it, and the queue
    did; but these lookups come first, so without this the bots refused 4-5 questions each at once
    in the ~2.5 s of a failover. A single Redis (``sentinel`` False) still fails at once."""
    return await through_failover(
        lookup,
        sentinel,
        budget_s,
        on_lost=lambda exc: log.info("Redis lost while %s (%s); waiting for the failover", doing, exc),
    )


__all__ = [
    "GENERAL_KNOWLEDGE_LABEL",
    "MAX_QUESTION_CHARS",
    "STATUS_LABELS",
    "AnswerParts",
    "Failure",
    "FailureKind",
    "QuestionRejected",
    "UsageError",
    "answer_parts",
    "answer_text",
    "ask_streamed",
    "check_question",
    "classify",
    "clip_partial",
    "is_expected",
    "repeat_weekly_post",
    "split_text",
    "status_lead",
    "with_bold",
]


# --- questions -----------------------------------------------------------------------------------
class UsageError(Exception):
    """Something the user (or admin) must fix: a bad file, a missing permission, an unknown document.
    The message is shown as it is (each bot escapes or formats it for its platform)."""


class QuestionRejected(UsageError):
    """A question that is not sent to a worker: ``kind`` is ``"empty"`` or ``"too_long"``."""

    def __init__(self, kind: str, length: int) -> None:
        self.kind = kind
        self.length = length
        self.limit = MAX_QUESTION_CHARS
        if kind == "empty":
            message = "The question is empty: type a question."
        else:
            message = f"That question has {length} characters; please keep it under {MAX_QUESTION_CHARS}."
        super().__init__(message)


def shown_question(text: str) -> str:
    """The asker's question as a title or heading shows it: without NUL, other C0/C1 controls,
    bidi overrides and zero-width characters, its spaces collapsed -- the one cleaning file names
    and titles get (``shared.formats.clean_name``). Why: the question comes back as the embed's
    title, and a U+202E in it reversed the rest of the bot's own heading. Both bots show a question
    only through this."""
    return clean_name(text, "")


def check_question(text: str | None) -> str:
    """The question to send (surrounding whitespace dropped), or :class:`QuestionRejected`."""
    question = (text or "").strip()
    if not question:
        raise QuestionRejected("empty", 0)
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionRejected("too_long", len(question))
    return question


# --- failures ------------------------------------------------------------------------------------
class FailureKind(enum.Enum):
    USAGE = "usage"  # the user must change something; the message says what
    NO_WORKER = "no_worker"  # nothing runs jobs: an admin must start `syllabot worker`
    TIMEOUT = "timeout"  # a worker took the job, no result in time (it may still finish)
    WITHDRAWN = "withdrawn"  # no worker started the job in time; it was withdrawn, nothing changed
    UNREACHABLE = "unreachable"  # Redis does not answer
    REFUSED = "refused"  # Redis answers but refuses (full, read-only, loading): an admin must fix it
    JOB_FAILED = "job_failed"  # the worker ran the job and it raised; the message is the worker's
    VERSION = "version"  # the bot and the worker speak different schema versions: an admin upgrades one
    QUEUE = "queue"  # another queue error (e.g. a reply that does not validate)
    UNEXPECTED = "unexpected"  # a bug: logged with its traceback


@dataclass(frozen=True)
class Failure:
    """What to tell a user about an exception: ``title`` (a short heading) and ``detail`` (what
    happened and what to do). ``detail`` may contain a message from the worker or the user's own
    input, so renderers escape it."""

    kind: FailureKind
    title: str
    detail: str

    @property
    def expected(self) -> bool:
        return self.kind is not FailureKind.UNEXPECTED


def is_expected(exc: BaseException) -> bool:
    """Whether ``exc`` is one of the taxonomy's failures (else a bug, worth a traceback in the log)."""
    return classify(exc).expected


def _waited(timeout_s: float | None) -> str:
    return f" within {timeout_s:.0f} s" if timeout_s else ""


def classify(exc: BaseException, *, timeout_s: float | None = None) -> Failure:
    """The one mapping of exceptions to words. ``timeout_s``: how long the caller waited, if known."""
    if isinstance(exc, UsageError):
        return Failure(FailureKind.USAGE, "Syllabot can't do that", str(exc))
    if isinstance(exc, NoWorker):
        return Failure(
            FailureKind.NO_WORKER,
            "No Syllabot worker is running",
            "No Syllabot worker is running, so nobody can answer right now. "
            "Please ask an admin to start one (`syllabot worker`), then try again.",
        )
    if isinstance(exc, QueueTimeout) and exc.withdrawn:
        return Failure(
            FailureKind.WITHDRAWN,
            "No worker was free",
            f"Syllabot did not answer{_waited(timeout_s or exc.timeout_s)}: no worker was free to start "
            "(all busy?), so the request was withdrawn and nothing was changed. Please try again later.",
        )
    if isinstance(exc, QueueTimeout | TimeoutError):
        return Failure(
            FailureKind.TIMEOUT,
            "No answer in time",
            f"That took too long: the worker did not answer{_waited(timeout_s)}. "
            "It may be busy; please try again in a minute.",
        )
    if isinstance(exc, NotReplicated):  # done on the primary, not yet safe from its failure
        return Failure(FailureKind.REFUSED, "Saved, but not yet copied to a replica", str(exc))
    trouble = exc.args[0] if isinstance(exc, RedisRefused) and exc.args else redis_trouble(exc)
    if trouble:
        return Failure(
            FailureKind.REFUSED,
            "Syllabot's database is refusing requests",
            f"{trouble}. Nothing you sent was lost; please try again once that is fixed.",
        )
    if isinstance(exc, (RedisUnreachable, RedisUnavailable, *REDIS_ERRORS)):
        return Failure(
            FailureKind.UNREACHABLE,
            "Syllabot can't reach its database",
            "Syllabot can't reach its database (Redis) right now, so questions cannot be passed to a "
            "worker. Please try again later or tell an admin; this usually fixes itself once Redis is back.",
        )
    if isinstance(exc, SchemaMismatch):
        older = "bot" if exc.bot < exc.worker else "worker"
        return Failure(
            FailureKind.VERSION,
            "Syllabot needs an upgrade",
            f"This Syllabot bot and its worker are different versions (the bot speaks schema v{exc.bot}, "
            f"the worker v{exc.worker}), so they cannot understand each other. Please tell an admin: "
            f"upgrade the {older} so both run the same Syllabot version.",
        )
    if isinstance(exc, JobFailed):
        return Failure(FailureKind.JOB_FAILED, "The worker could not do that", str(exc))
    if isinstance(exc, QueueError):
        return Failure(FailureKind.QUEUE, "Syllabot could not do that", str(exc))
    return Failure(
        FailureKind.UNEXPECTED,
        "Something went wrong",
        f"Something unexpected went wrong ({type(exc).__name__}). It has been logged; please try "
        "again, or tell an admin.",
    )


# --- splitting text ------------------------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")

#: A hard cut at ``cut`` in ``text`` moved (left) so it does not separate what belongs together.
CutGuard = Callable[[str, int], int]


def keep_escapes(text: str, cut: int) -> int:
    """Never separate a backslash from the character it escapes (Markdown): the next part would start
    with a live ``[`` (or ``*``, ``_`` …). An odd run of backslashes before the cut ends with the first
    half of an escape pair."""
    run = len(text[:cut]) - len(text[:cut].rstrip("\\"))
    return cut - 1 if run % 2 and cut > 1 else cut


def keep_entities(text: str, cut: int) -> int:
    """Never cut inside an HTML entity such as ``&amp;`` (Slack's escaping)."""
    amp = text.rfind("&", max(0, cut - 7), cut)
    if amp > 0 and ";" not in text[amp:cut]:
        return amp
    return cut


def _cut_point(text: str, limit: int, guard: CutGuard | None) -> int:
    """Where to cut ``text`` so the first part is at most ``limit`` characters.

    Prefers, in order, a paragraph break, a line break, a sentence end, a space; the break must be
    in the second half of the window so a stray early newline does not make a tiny part.
    """
    window = text[: limit + 1]
    floor = limit // 2
    for sep in ("\n\n", "\n"):
        pos = window.rfind(sep, floor, limit + 1)
        if pos > 0:
            return pos
    ends = [m.start() for m in _SENTENCE_END.finditer(window) if floor <= m.start() <= limit]
    if ends:
        return ends[-1]  # just after the sentence's punctuation
    pos = window.rfind(" ", floor, limit + 1)
    if pos > 0:
        return pos
    return guard(text, limit) if guard is not None else limit


def split_text(text: str, limit: int, *, guard: CutGuard | None = None) -> list[str]:
    """Split ``text`` into parts of at most ``limit`` characters at the cleanest boundary found.

    Joining the parts with a separator gives the original text back apart from the whitespace at
    each cut, so nothing the answerer wrote is lost. ``guard`` adjusts hard cuts (no boundary
    found) for the platform's escaping: :func:`keep_escapes`, :func:`keep_entities`.
    """
    if limit <= 0:
        raise ValueError("limit must be positive")
    text = text.strip()
    parts: list[str] = []
    while len(text) > limit:
        cut = _cut_point(text, limit, guard)
        if cut <= 0:  # a guard that cannot move left: cut hard rather than loop
            cut = limit
        head, text = text[:cut].rstrip(), text[cut:].lstrip()
        if head:
            parts.append(head)
    if text:
        parts.append(text)
    return parts


# --- answers ---------------------------------------------------------------------------------
# The parts and the full text of an answer are composed in shared/answer_text.py (the worker's
# evaluation matches expected strings in the same full text); they are part of this core.


# --- partial answers (the ask flow's "partial" reply) ---------------------------------------------
#: Ends a partial answer cut to fit a platform's limit (the rest follows in the final answer).
CLIPPED = " …"


def clip_partial(text: str, limit: int, *, guard: CutGuard | None = None) -> str:
    """A partial answer (already escaped for the platform) cut to at most ``limit`` characters at a
    clean boundary: the beginning stays put while the answer grows, so an edit never jumps."""
    if len(text) <= limit:
        return text
    return split_text(text, limit - len(CLIPPED), guard=guard)[0] + CLIPPED


class LiveAsker(Protocol):
    """What :func:`ask_streamed` needs of a queue (``shared.queue.QueueClient.ask_live``): partials
    that pile up while the consumer is busy are collapsed to the newest, and the answer comes last."""

    def ask_live(
        self, request: AskRequest, timeout: float | None = None
    ) -> AsyncGenerator[Partial | Answer, None]: ...


#: A platform's edit call: show this partial answer text (unescaped) in place of the last one.
ShowPartial = Callable[[str], Awaitable[None]]


async def ask_streamed(
    queue: LiveAsker, request: AskRequest, *, timeout: float, show: ShowPartial, every_s: float
) -> Answer:
    """Ask, call ``show`` with the answer's text while it is written, and return the final answer.

    The pace is the platform's: after an edit ends, nothing more happens for ``every_s`` (so the
    platform never sees two edits closer than that, however long an edit takes), then the newest
    text is shown -- ``ask_live`` keeps only the newest while we wait -- and the final answer,
    should it come meanwhile, is returned at the end of that wait, so the caller's final edit keeps
    the same pace. An edit that fails is logged and the flow goes on: partials are a nicety, the
    answer is not. Failures of the question itself are raised as :meth:`QueueClient.ask` raises them.
    """
    shown: str | None = None
    async with contextlib.aclosing(queue.ask_live(request, timeout)) as updates:
        async for update in updates:
            if isinstance(update, Answer):
                return update
            if not update.text or update.text == shown:
                continue
            shown = update.text
            try:
                await show(shown)
            except Exception as exc:  # a failed edit must not lose the answer
                log.warning("could not show a partial answer: %s", exc, exc_info=not is_expected(exc))
            await asyncio.sleep(every_s)
    raise QueueError("the queue ended without an answer")


# --- the weekly gap report (both bots) ------------------------------------------------------------
async def repeat_weekly_post(post_once: Callable[[], Awaitable[bool]]) -> None:
    """A bot's scheduled task: try ``post_once`` every :data:`WEEKLY_CHECK_S`; a failure is logged and
    the next check tries again (the week's claim was released)."""
    while True:
        try:
            await post_once()
        except Exception as exc:
            log.warning("weekly gap report not posted: %s", exc, exc_info=not is_expected(exc))
        await asyncio.sleep(WEEKLY_CHECK_S)


# --- collections (admins: list and drop) ---------------------------------------------------------

#: Most collections a chat reply lists (a message has a size limit; the CLI lists them all).
COLLECTIONS_SHOWN = 25


def size_text(n: int) -> str:
    """Bytes as a person reads them: 812 B, 45.3 kB, 12.1 MB (the CLI's wording too)."""
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def collection_line(info: CollectionInfo) -> str:
    """One collection in a chat list: name, documents, chunks, size, last indexed (a day)."""
    when = f", last indexed {info.indexed_at[:10]}" if info.indexed_at else ""
    old = f" ({info.superseded} superseded)" if info.superseded else ""
    return (
        f"{info.name}: {info.documents} documents{old}, {info.chunks} chunks, {size_text(info.bytes)}{when}"
    )


def collections_text(infos: list[CollectionInfo]) -> list[str]:
    """The lines of a chat reply listing collections (at most :data:`COLLECTIONS_SHOWN`)."""
    if not infos:
        return ["No collections yet: upload a document to start one."]
    lines = [collection_line(i) for i in infos[:COLLECTIONS_SHOWN]]
    if len(infos) > COLLECTIONS_SHOWN:
        lines.append(f"… and {len(infos) - COLLECTIONS_SHOWN} more (`syllabot collections` lists all)")
    return lines


def drop_question(info: CollectionInfo) -> str:
    """What dropping would delete, asked before anything is deleted."""
    return (
        f"This deletes {collection_line(info)} for good, with its kept questions and every channel "
        "bound to it. Run the command again with confirm to drop it."
    )


def dropped_text(report: DropReport) -> str:
    """The confirmation after a drop."""
    bound = (
        f" {report.bindings} channel or server bindings to it were removed: those channels now "
        "answer from their server's collection."
        if report.bindings
        else ""
    )
    return (
        f"Dropped {report.dropped.name} ({report.dropped.documents} documents, "
        f"{report.dropped.chunks} chunks).{bound}"
    )


def unknown_collection_text(name: str, infos: list[CollectionInfo]) -> str:
    known = ", ".join(i.name for i in infos[:COLLECTIONS_SHOWN]) or "none"
    return f"There is no collection {name}. Collections: {known}."


@dataclass(frozen=True)
class AdminReply:
    """An admin command's reply in platform-free words: each bot renders title and lines its way."""

    title: str
    lines: list[str]
    ok: bool = True

    def body(self, escape: Callable[[str], str] = str) -> str:
        """The lines as one message body, bulleted when there are several, each through ``escape``
        (the platform's own: Slack's mrkdwn escaping; Discord's notice neutralises by itself)."""
        if len(self.lines) == 1:
            return escape(self.lines[0])
        return "\n".join(f"• {escape(line)}" for line in self.lines)


def report_preposition(action: str) -> str:
    """ "Removed from “C”", "Uploaded into “C”": the word between an ingest report's action and its
    collection, for both platforms' summaries."""
    return "from" if action == "Removed" else "into"


async def list_collections(queue: CollectionAdmin, timeout: float | None = None) -> AdminReply:
    """``/collection list`` (Discord), ``/syllabot-collections`` (Slack). Queue errors propagate."""
    infos = await queue.collections(timeout=timeout)
    return AdminReply("Collections", collections_text(infos))


async def drop_collection(
    queue: CollectionAdmin, name: str, confirm: bool, who: str, timeout: float | None = None
) -> AdminReply:
    """Drop ``name`` when ``confirm``; without it, say what would be deleted and delete nothing."""
    try:
        name = validate_collection_name(name)
    except InvalidCollectionName as exc:
        return AdminReply("Invalid collection name", [str(exc)], ok=False)
    infos = await queue.collections(timeout=timeout)
    info = next((i for i in infos if i.name == name), None)
    if info is None:
        return AdminReply(f"No collection “{name}”", [unknown_collection_text(name, infos)], ok=False)
    if not confirm:
        return AdminReply(f"Drop “{name}”?", [drop_question(info)], ok=False)
    report = await queue.drop(name, who, timeout=timeout)
    return AdminReply(f"Dropped “{name}”", [dropped_text(report)])


class VersionAdmin(Protocol):
    """What the version commands need of the queue client."""

    async def sources(self, collection: str, timeout: float | None = None) -> list[SourceInfo]: ...

    async def mark(
        self,
        collection: str,
        doc_id: str,
        status: str,
        who: str,
        by: str | None = None,
        timeout: float | None = None,
        seen: dict[str, str] | None = None,
    ) -> IngestReport: ...


async def mark_document(
    queue: VersionAdmin,
    collection: str,
    name: str,
    status: str,
    who: str,
    by: str | None = None,
    sources_command: str = "/sources",
    timeout: float | None = None,
) -> AdminReply:
    """``/supersede`` and ``/current`` (Discord), ``/syllabot-supersede`` and ``/syllabot-current``
    (Slack): an admin says which version of a document counts. Queue errors propagate.

    The mark names the versions looked up here (doc_id and content hash): one another admin has
    replaced in between is refused, and the reply names the file the worker actually marked."""
    sources = await queue.sources(collection, timeout=timeout)
    try:
        document, successor = find_with_successor(sources, name, by, collection, f"see {sources_command}")
    except UnknownDocument as exc:
        raise UsageError(str(exc)) from exc
    try:
        report = await queue.mark(
            collection,
            document.doc_id,
            status,
            who,
            by=successor.doc_id if successor else None,
            timeout=timeout,
            seen=seen_versions(document, successor),
        )
    except VersionGone as exc:
        return AdminReply(f"Nothing marked: {document.file} was replaced", [f"{exc}."], ok=False)
    marked = report.files[0].file if report.files else document.file
    return AdminReply(f"{marked} in “{collection}”", [f"{marked} is {mark_said(report, status)}."])


class ConflictAdmin(Protocol):
    async def conflicts(self, collection: str, timeout: float | None = None) -> list[ConflictInfo]: ...


async def list_conflicts(queue: ConflictAdmin, collection: str, timeout: float | None = None) -> AdminReply:
    """``/conflicts`` (Discord), ``/syllabot-conflicts`` (Slack), like `syllabot conflicts`: the
    facts on which the collection's documents disagree, for the teacher to fix. Queue errors
    propagate."""
    entries = await queue.conflicts(collection, timeout=timeout)
    if not entries:
        return AdminReply(
            f"No disagreements found in “{collection}”",
            [
                "No two documents give different counts, percentages, days, times, dates or editions for the same thing."
            ],
        )
    return AdminReply(f"Where the documents of “{collection}” disagree", conflict_lines(entries))


class CardAdmin(Protocol):
    async def card(self, collection: str, timeout: float | None = None) -> list[str]: ...


#: The card reply's last line: how a teacher corrects what the card read.
CARD_CORRECTION = (
    "To correct or add a fact: fill in the course-facts document that `syllabot card --template` "
    "prints and index it; its facts win for their slots."
)


def card_reply_lines(lines: list[str]) -> list[str]:
    """The card's lines (``card_lines``, as `syllabot card` prints them: a slot's heading, its facts
    indented under it) as one line per fact, each led by its slot, for a chat's bulleted reply; a
    heading with nothing under it ("phone number: not stated in any document") stays one line."""
    out: list[str] = []
    heading = ""
    for line in lines:
        if line[:1].isspace() and heading:  # a fact, or "… and 3 more", of the heading above it
            out.append(f"{heading.removesuffix(':')} — {line.strip().removeprefix('- ')}")
        elif line.strip():
            heading = line.strip()
            if not heading.endswith(":"):
                out.append(heading)
    return out


async def show_card(queue: CardAdmin, collection: str, timeout: float | None = None) -> AdminReply:
    """``/card`` (Discord), ``/syllabot-card`` (Slack), like `syllabot card`: the collection's course
    card, each fact with the document and page it was read from, the slots no document fills and the
    disagreements by slot, for the teacher to check. Queue errors propagate."""
    lines = await queue.card(collection, timeout=timeout)
    return AdminReply(f"The course card of “{collection}”", [*card_reply_lines(lines), CARD_CORRECTION])


class CollectionAdmin(Protocol):
    """What the collection commands need of the queue client (a fake in tests)."""

    async def collections(self, timeout: float | None = None) -> list[CollectionInfo]: ...

    async def drop(self, collection: str, who: str, timeout: float | None = None) -> DropReport: ...
