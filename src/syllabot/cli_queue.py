"""The CLI's side of the queue: `syllabot ask`, `index`, `remove` and `worker`.

``ask``, ``index`` and ``remove`` go through a worker when one is running (so a running worker
serves the new index at once and the CLI loads no model), and otherwise run the very same code in
this process — on the embedded Redis when ``REDIS_URL`` is unset — so `syllabot ask "..."` answers
on a fresh machine with nothing else started. While nothing of the user's is indexed, `ask`
answers from the ``sample`` collection, seeded on first use from the sample corpus shipped in the
distribution, and the terminal says so (on stderr, so ``--json`` output stays clean).

Imports of the queue (arq), the engine (numpy) and the model are made where they are needed: a
question answered in-process on an embedded Redis this process started never needs the queue,
and a question answered by a worker never needs the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from syllabot.shared.answer_text import answer_parts, answer_text
from syllabot.shared.bindings import SAMPLE_COLLECTION
from syllabot.shared.config import Settings
from syllabot.shared.gap_report import GapReport
from syllabot.shared.redis_conn import RedisUnavailable, embedded_running, started_here
from syllabot.shared.schema import Answer, AskRequest, IngestReport
from syllabot.shared.source_names import find_with_successor, seen_versions
from syllabot.worker.indexes.cancel import Cancelled, CancelToken

if TYPE_CHECKING:
    from syllabot.shared.queue import QueueClient, Stop
    from syllabot.shared.schema import SourceInfo
    from syllabot.worker.indexes.embedders.base import Embedder
    from syllabot.worker.indexes.engine import Engine

T = TypeVar("T")


def _say(message: str) -> None:
    print(f"syllabot: {message}", file=sys.stderr)


def _user() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):  # no login name in some containers
        return "cli"


#: Plain progress lines (stderr not a terminal: systemd, a pipe, a log file): at most one per this
#: many seconds within a stage, plus one whenever a stage starts.
PROGRESS_EVERY_S = 5.0

#: What each stage counts, for the plain lines ("embedding 120/875 chunks").
PROGRESS_UNITS = {"reading": "files", "embedding": "chunks"}


class _ProgressLine:
    """Ingest progress on stderr: a bar redrawn in place on a terminal; elsewhere plain lines
    ("embedding 120/875 chunks") when a stage starts and then every :data:`PROGRESS_EVERY_S`
    seconds, so a 7-minute build under systemd or in a pipe is never silent and never floods."""

    def __init__(
        self,
        stream: TextIO | None = None,
        every_s: float = PROGRESS_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # sys.stderr as it is now, not as it was at import (a test's capture may have closed that one)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty()
        self.drawn = False
        self.said: str | None = None
        self.every_s = every_s
        self.clock = clock
        self.stage: str | None = None
        self.last_line = 0.0
        self.last_done = -1

    def update(self, stage: str, done: int, total: int) -> None:
        if stage.startswith("waiting"):  # "waiting for another build (reindex on host:pid)": say it once
            if stage != self.said:
                self.close()
                self.drawn = False
                _say(stage)
                self.said = stage
            return
        if self.enabled:
            width = 30
            filled = int(width * done / total) if total else 0
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r{stage:<10} [{bar}] {done}/{total}   ")
            self.stream.flush()
            self.drawn = True
        else:
            self._plain(stage, done, total)

    def _plain(self, stage: str, done: int, total: int) -> None:
        """A line when a stage starts, every :data:`PROGRESS_EVERY_S` within it, and when it is
        complete (done == total), so a short stage does not end on the "0/N" it started with."""
        if stage == "done":
            return
        now = self.clock()
        finished = bool(total) and done >= total and (stage, done) != (self.stage, self.last_done)
        if stage == self.stage and now - self.last_line < self.every_s and not finished:
            return
        self.last_done = done
        self.stage, self.last_line = stage, now
        unit = PROGRESS_UNITS.get(stage)
        counted = f" {done}/{total} {unit}" if unit and total else ""
        self.stream.write(f"{stage}{counted}\n")
        self.stream.flush()

    async def from_queue(self, state: dict) -> None:
        self.update(str(state.get("stage", "")), int(state.get("done", 0)), int(state.get("total", 0)))

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()


# --- the model, loaded alongside the embedded Redis's start ------------------------------------


class _Preload:
    """The embedder, loading in a thread: its ~0.3 s (onnxruntime, tokenizer, weights) overlaps the
    embedded Redis's start and the engine's imports instead of following them."""

    def __init__(self, settings: Settings) -> None:
        self.embedder_name = settings.embedder
        self.result: Any = None
        self.error: BaseException | None = None
        # Not a daemon: interpreter exit waits for it, as onnxruntime aborts the process when it is torn
        # down mid-initialisation (a command that fails early, e.g. on an unknown collection).
        self.thread = threading.Thread(target=self._load, args=(settings,), name="preload-model")
        self.thread.start()

    def _load(self, settings: Settings) -> None:
        try:
            from syllabot.worker.indexes.embedders import get_embedder

            self.result = get_embedder(settings)
        except BaseException as exc:  # noqa: BLE001  # re-raised in the thread that uses the model
            self.error = exc

    def get(self) -> Any:
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.result


_preload: _Preload | None = None


def preload_embedder(settings: Settings) -> None:
    """Start loading the model now when this command will surely need it in this process: the
    embedded Redis is not running yet, so no worker can answer and the work is done here."""
    global _preload
    if _preload is None and not settings.redis_url and not embedded_running(settings.data_dir):
        _preload = _Preload(settings)


def preloaded_embedder(settings: Settings) -> Embedder | None:
    """The model :func:`preload_embedder` loaded (waiting for it), or None to load it as usual."""
    if _preload is None or _preload.embedder_name != settings.embedder:
        return None
    embedder: Embedder = _preload.get()
    return embedder


# --- ask --------------------------------------------------------------------------------------


def run_ask(
    settings: Settings, question: str, collection: str, as_json: bool, thread: str | None = None
) -> int:
    """Answer one question and print it; 0 when an answer (even "Not in your materials") was shown,
    1 on an error -- including a collection with nothing indexed (:class:`EmptyCollection`).
    ``thread``: the conversation (``--thread ID``) a follow-up belongs to."""
    from syllabot.shared.queue import QueueError
    from syllabot.shared.threads import thread_id

    request = AskRequest(
        question=question,
        collection=collection,
        platform="cli",
        user=_user(),
        thread=thread_id("cli", thread) if thread else None,
    )
    try:
        answer = asyncio.run(ask(settings, request))
    except (QueueError, RedisUnavailable) as exc:
        _say(str(exc))  # the terminal is for admins: the queue's own message names the URL to check
        return 1
    print(answer_json(answer) if as_json else render_answer(answer))
    return 0


def answer_json(answer: Answer) -> str:
    """``ask --json``: the answer's fields, with ``text`` the whole answer as plain text (what the
    command prints without ``--json``, up to the sources: it starts with "Not in your materials"
    or the uncertain lead) and ``body`` the worker's own text (``Answer.text``)."""
    data = answer.model_dump(mode="json")
    body = data.pop("text")
    return json.dumps({"text": answer_text(answer), "body": body, **data}, indent=2, ensure_ascii=False)


async def ask(settings: Settings, request: AskRequest) -> Answer:
    """Through a worker when one is alive, else in this process (same pipeline, same answer)."""
    if _no_worker_possible(settings):
        return await ask_in_process(settings, request)
    from syllabot.shared.queue import EmptyCollection, NoWorker, QueueClient

    client = QueueClient(settings)
    try:
        try:
            return await client.ask(request)
        except EmptyCollection:
            # The sample collection on first use: seed it through the worker, ask again.
            if request.collection != SAMPLE_COLLECTION:
                raise
            if not await _seed_via_queue(client, request.collection):
                raise
            return await client.ask(request)
    except NoWorker:
        pass  # nothing would run the job: do it here
    # RedisUnreachable propagates: the engine needs Redis just as much as the queue does.
    finally:
        await client.close()
    return await ask_in_process(settings, request)


def _no_worker_possible(settings: Settings) -> bool:
    """True on an embedded Redis this process started: no worker can be serving it (see
    :func:`syllabot.shared.redis_conn.started_here`), so the queue -- and its wait for workers on a
    Redis that has just started -- is skipped."""
    if settings.redis_url:
        return False
    from syllabot.shared.redis_conn import resolve_redis_url

    resolve_redis_url(settings)
    return started_here(settings.data_dir)


async def ask_in_process(settings: Settings, request: AskRequest) -> Answer:
    """The worker's ``ask`` job, run here: engine, optional sample seeding, answerer; the question
    is kept for the gap report under the worker's rules (``SYLLABOT_KEEP_QUESTIONS_DAYS``), so a
    class that only uses the terminal still gets a report."""
    from syllabot.shared.keys import Keys
    from syllabot.shared.redis_conn import async_client
    from syllabot.worker.answerers import get_answerer
    from syllabot.worker.answerers.pipeline import answer_question
    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.ops.question_log import QuestionLog

    engine = Engine(settings, embedder=preloaded_embedder(settings))
    if request.collection == SAMPLE_COLLECTION:
        await asyncio.to_thread(_seed_locally, engine, request.collection)
    answerer = get_answerer(settings)
    redis_client = None
    threads = questions = None
    if request.thread or settings.keep_questions_days:
        redis_client = async_client(settings)
        questions = QuestionLog(redis_client, Keys(settings.key_prefix), settings.keep_questions_days)
    if request.thread and redis_client is not None:
        from syllabot.shared.threads import ThreadStore

        threads = ThreadStore.from_settings(redis_client, settings)
    try:
        return await answer_question(engine, answerer, request, threads=threads, questions=questions)
    finally:
        close = getattr(answerer, "aclose", None)
        if close is not None:
            await close()
        if questions is not None:
            await questions.flush()  # the append runs in a task: it must land before the command exits
        if redis_client is not None:
            await redis_client.aclose()


def _seed_locally(engine: object, collection: str) -> None:
    from syllabot.worker.ops.sample import seed_if_empty

    line = _ProgressLine()
    try:
        report = seed_if_empty(engine, collection, progress=line.update)  # type: ignore[arg-type]
    finally:
        line.close()
    if report is not None:
        _announce_seed(report)


async def _seed_via_queue(client: QueueClient, collection: str) -> bool:
    from syllabot.worker.ops.sample import sample_files

    line = _ProgressLine()
    try:
        report = await client.ingest_many(
            collection, sample_files(), who="sample-corpus", progress=line.from_queue
        )
    finally:
        line.close()
    _announce_seed(report)
    return report.changed


def _announce_seed(report: IngestReport) -> None:
    documents = sum(1 for f in report.files if f.ok)
    _say(
        f"the '{report.collection}' collection now holds the sample corpus shipped with Syllabot "
        f"({documents} documents, {report.total_chunks} passages); it is never mixed with yours "
        "(`syllabot drop -c sample --yes` removes it)"
    )


#: Heading of the numbered sources, by status: an uncertain answer lists passages, not sources.
SOURCES_HEADING = {
    "answered": "Sources:",
    "uncertain": "Closest passages (may not answer it):",
    "not_in_materials": "Sources:",
}


def render_answer(answer: Answer) -> str:
    """Plain text for a terminal: the answer, any labelled general knowledge, numbered sources.

    The text is the front-end core's :attr:`~syllabot.shared.answer_text.AnswerParts.text`, chosen by
    ``answer.status``: it starts with its status's words ("Not in your materials", or "Your
    materials say:" with the uncertain hedge after the passages), so a terminal never shows closest
    passages as if they were an answer.
    """
    parts = answer_parts(answer)
    lines = [parts.text]
    if parts.citations:
        lines += ["", SOURCES_HEADING[parts.status]]
        for c in parts.citations:
            where = f"  ({c.file})" if c.file and c.file not in c.label else ""
            lines.append(f"  [{c.n}] {c.label or c.title}{where}")
    if parts.note:
        lines += ["", f"Note: {parts.note}"]
    return "\n".join(lines)


# --- index ------------------------------------------------------------------------------------


def run_index(
    settings: Settings, collection: str, files: list[tuple[str, bytes]], replace: bool = False
) -> IngestReport:
    """Index through a running worker (with progress), or in this process when none runs.

    Queue failures are raised as ``ValueError`` (the CLI prints those as one line and exits 1);
    Redis being unreachable as :class:`RedisUnavailable`; a build here cancelled by Ctrl-C or
    SIGTERM as :class:`Cancelled` (nothing published).
    """
    return _run_write(
        lambda stops: index(settings, collection, files, cancel=stops.token, replace=replace, stops=stops),
        collection,
    )


class _Stops:
    """What SIGINT and SIGTERM stop during a write: a build in this process (``token``, armed when
    it starts) or one a worker runs for this terminal (``remote``, handed to the queue client by
    :meth:`through_worker`, which asks the worker to cancel the job: ``QueueClient`` ``Stop``)."""

    def __init__(self) -> None:
        self.token = CancelToken()
        self.remote: Stop | None = None

    def through_worker(self) -> Stop:
        """From now on a signal cancels the worker's job, not this process."""
        from syllabot.shared.queue import Stop

        if self.remote is None:
            self.remote = Stop()
        return self.remote

    def completed_anyway(self) -> None:
        """A worker's write that returned although a signal asked to cancel it: it was publishing."""
        if self.remote is not None and self.remote.presses:
            _say("the worker was already publishing the new index when it was asked to cancel; it completed")


def _run_write(work: Callable[[_Stops], Awaitable[T]], collection: str) -> T:
    """Run a write (index, reindex, remove, mark), cancellable by SIGINT/SIGTERM through what it
    is given (:func:`_cancel_on_signals`), and map failures as :func:`run_index` says: a build
    cancelled here or by its worker is :class:`Cancelled` (exit 130: nothing published); a worker
    that did not confirm the cancel is a ``ValueError`` saying the build may still publish (exit 1)."""
    from syllabot.shared.queue import CancelUnconfirmed, JobCancelled, QueueError, RedisUnreachable

    async def run(stops: _Stops) -> T:
        return await work(stops)

    try:
        with _cancel_on_signals() as stops:
            return asyncio.run(run(stops))
    except Cancelled as exc:
        raise Cancelled(
            f"cancelled: nothing was published; the index of '{collection}' is as it was"
        ) from exc
    except JobCancelled as exc:
        raise Cancelled(f"cancelled: {exc}; the index of '{collection}' is as it was") from exc
    except CancelUnconfirmed as exc:
        raise ValueError(
            f"interrupted: {exc}; `syllabot sources -c {collection}` shows what is indexed"
        ) from exc
    except RedisUnreachable as exc:
        raise RedisUnavailable(str(exc)) from exc
    except QueueError as exc:
        raise ValueError(str(exc)) from exc


@contextlib.contextmanager
def _cancel_on_signals() -> Iterator[_Stops]:
    """SIGINT and SIGTERM cancel the write: a build in this process through its token, a worker's
    build through the queue (the first signal asks the worker to cancel and waits for its word,
    up to ``CANCEL_CONFIRM_S``; a second stops waiting).

    Without this, Ctrl-C interrupted only the event loop, which then waited for the build's thread
    to finish -- and publish; and a worker's build went on and published after the terminal said
    "interrupted". Before either kind of build starts, the signals act as they did:
    KeyboardInterrupt, or the CLI's SIGTERM exit.
    """
    stops = _Stops()
    token = stops.token
    if threading.current_thread() is not threading.main_thread():
        yield stops
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def handle(signum: int, frame: FrameType | None) -> None:
        if stops.remote is not None:
            stops.remote.press()
            if stops.remote.presses == 1:
                _say("cancelling: asking the worker to stop the build (again to stop waiting)")
            return
        if not token.armed:
            token.cancel()  # a build about to start here must not start (and publish) after this
            before = previous[signal.Signals(signum)]
            if callable(before):
                before(signum, frame)
                return
            raise KeyboardInterrupt
        if not token.cancel():
            _say("the new index was already being published; it completes")

    for sig in previous:
        signal.signal(sig, handle)
    try:
        yield stops
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


#: Most file bytes sent in one ingest job: the files travel inside the job through Redis, and arq
#: renders a job's arguments as text on the worker's event loop, so a whole folder in one job would
#: stall the worker and could exceed Redis's 512 MB bulk-string limit.
JOB_PAYLOAD_BYTES = 48 * 1024 * 1024


def batches_by_size(files: list[tuple[str, bytes]], limit: int) -> list[list[tuple[str, bytes]]]:
    """Consecutive groups of files of at most ``limit`` bytes each (a larger file goes alone)."""
    batches: list[list[tuple[str, bytes]]] = []
    size = 0
    for item in files:
        if not batches or size + len(item[1]) > limit:
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += len(item[1])
    return batches


def merge_reports(collection: str, reports: list[IngestReport]) -> IngestReport:
    """One summary for several batches: the last index version that changed, every file's line."""
    merged = IngestReport(collection=collection)
    for report in reports:
        merged.files.extend(report.files)
        if report.changed:
            merged.changed = True
            merged.index_version = report.index_version
            merged.total_chunks = report.total_chunks
    return merged


async def index(
    settings: Settings,
    collection: str,
    files: list[tuple[str, bytes]],
    who: str | None = None,
    cancel: CancelToken | None = None,
    replace: bool = False,
    stops: _Stops | None = None,
) -> IngestReport:
    who = who or _user()
    if _no_worker_possible(settings):
        return await asyncio.to_thread(_index_locally, settings, collection, files, who, cancel, replace)
    from syllabot.shared.queue import CancelUnconfirmed, JobCancelled, NoWorker, QueueClient

    line = _ProgressLine()
    client = QueueClient(settings)
    try:
        if await client.worker_count():
            _say("indexing through the running worker")
            stop = (stops or _Stops()).through_worker()
            reports: list[IngestReport] = []
            batches = batches_by_size(files, JOB_PAYLOAD_BYTES)
            for batch in batches:
                try:
                    if stop.presses:
                        raise JobCancelled("nothing more was sent to the worker; nothing was published")
                    reports.append(
                        await client.ingest_many(
                            collection, batch, who=who, progress=line.from_queue, replace=replace, stop=stop
                        )
                    )
                except JobCancelled as exc:
                    if not reports:
                        raise
                    done = sum(len(r.files) for r in reports)
                    raise CancelUnconfirmed(
                        f"the first {done} of {len(files)} files (sent in {len(reports)} of "
                        f"{len(batches)} jobs) were already published; the rest were not ({exc})"
                    ) from exc
            if stops is not None:
                stops.completed_anyway()
            return merge_reports(collection, reports)
        _say("no worker is running; indexing in this process")
    except NoWorker:
        # The worker went away between the check and the job (or during it): say so, then do it here.
        _say("the worker went away; indexing in this process instead")
    finally:
        line.close()
        await client.close()
    return await asyncio.to_thread(_index_locally, settings, collection, files, who, cancel, replace)


def run_reindex(settings: Settings, collection: str) -> IngestReport:
    """Re-embed every stored document: through a running worker (so it serves the result at once)
    or in this process. Errors are raised as for :func:`run_index`."""
    return _run_write(lambda stops: reindex(settings, collection, stops.token, stops), collection)


async def reindex(
    settings: Settings, collection: str, cancel: CancelToken | None = None, stops: _Stops | None = None
) -> IngestReport:
    if _no_worker_possible(settings):
        return await asyncio.to_thread(_reindex_locally, settings, collection, cancel)
    from syllabot.shared.queue import NoWorker, QueueClient

    line = _ProgressLine()
    client = QueueClient(settings)
    try:
        if await client.worker_count():
            _say("re-indexing through the running worker")
            stops = stops or _Stops()
            report = await client.reindex(
                collection, who=_user(), progress=line.from_queue, stop=stops.through_worker()
            )
            stops.completed_anyway()
            return report
        _say("no worker is running; re-indexing in this process")
    except NoWorker:
        _say("the worker went away; re-indexing in this process instead")
    finally:
        line.close()
        await client.close()
    return await asyncio.to_thread(_reindex_locally, settings, collection, cancel)


def _local_engine(settings: Settings, cancel: CancelToken | None) -> Engine:
    """The engine of a build run here, its token armed: from now on a signal cancels the build."""
    from syllabot.worker.indexes.engine import Engine

    if cancel is not None:
        cancel.armed = True
    return Engine(settings, cancel=cancel)


def _reindex_locally(settings: Settings, collection: str, cancel: CancelToken | None = None) -> IngestReport:
    line = _ProgressLine()
    try:
        return _local_engine(settings, cancel).reindex(collection, progress=line.update)
    finally:
        line.close()


def _index_locally(
    settings: Settings,
    collection: str,
    files: list[tuple[str, bytes]],
    who: str,
    cancel: CancelToken | None = None,
    replace: bool = False,
) -> IngestReport:
    line = _ProgressLine()
    try:
        return _local_engine(settings, cancel).ingest(
            collection, files, who=who, progress=line.update, replace=replace
        )
    finally:
        line.close()


# --- remove -----------------------------------------------------------------------------------


def run_remove(settings: Settings, collection: str, name: str) -> tuple[SourceInfo, IngestReport]:
    """Remove one document (by doc_id or file name): through a running worker, else in this process.

    Returns the document removed and the build's report; errors are raised as for :func:`run_index`,
    an unknown document as ``UnknownDocument``.
    """
    return _run_write(
        lambda stops: _document_write(
            settings,
            collection,
            name,
            None,
            "removing",
            lambda client, document, _by, stop: client.remove(
                collection, document.doc_id, who=_user(), stop=stop
            ),
            lambda engine, document, _by: engine.remove(collection, document.doc_id),
            stops,
        ),
        collection,
    )


# --- versions: superseded / current ----------------------------------------------------------


def run_mark(
    settings: Settings, collection: str, name: str, status: str, by: str | None = None
) -> tuple[SourceInfo, IngestReport]:
    """Mark a document (doc_id or file name) superseded, optionally ``by`` another, or current:
    through a running worker, else in this process. Errors as for :func:`run_remove`."""
    return _run_write(
        lambda stops: _document_write(
            settings,
            collection,
            name,
            by,
            "marking",
            lambda client, document, successor, stop: client.mark(
                collection,
                document.doc_id,
                status,
                _user(),
                by=successor.doc_id if successor else None,
                seen=seen_versions(document, successor),
                stop=stop,
            ),
            lambda engine, document, successor: engine.mark(
                collection,
                document.doc_id,
                status,
                successor.doc_id if successor else None,
                seen=seen_versions(document, successor),
            ),
            stops,
        ),
        collection,
    )


async def _document_write(
    settings: Settings,
    collection: str,
    name: str,
    by: str | None,
    verb: str,
    via_worker: Callable[[QueueClient, SourceInfo, SourceInfo | None, Stop], Awaitable[IngestReport]],
    here: Callable[[Engine, SourceInfo, SourceInfo | None], IngestReport],
    stops: _Stops,
) -> tuple[SourceInfo, IngestReport]:
    """A write to one named document (and ``by``, a second one it names): through a running worker
    (``via_worker(client, document, successor, stop)``), else in this process (``here(engine,
    document, successor)``, which needs no model: the stored index keeps its vectors)."""
    note = None
    if not _no_worker_possible(settings):
        from syllabot.shared.queue import NoWorker, QueueClient

        client = QueueClient(settings)
        try:
            if await client.worker_count():
                document, successor = find_with_successor(
                    await client.sources(collection), name, by, collection
                )
                _say(f"{verb} through the running worker")
                report = await via_worker(client, document, successor, stops.through_worker())
                stops.completed_anyway()
                return document, report
            note = f"no worker is running; {verb} in this process"
        except NoWorker:
            note = f"the worker went away; {verb} in this process instead"
        finally:
            await client.close()

    def locally() -> tuple[SourceInfo, IngestReport]:
        engine = _local_engine(settings, stops.token)
        document, successor = find_with_successor(engine.sources(collection), name, by, collection)
        if note:  # said once the document is known, so a mistyped name gets a single line
            _say(note)
        return document, here(engine, document, successor)

    return await asyncio.to_thread(locally)


# --- report -----------------------------------------------------------------------------------


def run_report(settings: Settings, collection: str, days: int) -> GapReport:
    """The teacher's gap report: through a running worker, else computed in this process (it loads
    the model only if a 👎 answer's question was not kept and must be embedded)."""
    return asyncio.run(report(settings, collection, days))


async def report(settings: Settings, collection: str, days: int) -> GapReport:
    if not _no_worker_possible(settings):
        from syllabot.shared.queue import NoWorker, QueueClient

        client = QueueClient(settings)
        try:
            if await client.worker_count():
                return await client.report(collection, days)
        except NoWorker:
            pass
        finally:
            await client.close()
    return await report_in_process(settings, collection, days)


async def report_in_process(settings: Settings, collection: str, days: int) -> GapReport:
    from syllabot.shared.keys import Keys
    from syllabot.shared.redis_conn import async_client
    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.ops.question_log import QuestionLog
    from syllabot.worker.ops.report import build_report

    keys = Keys(settings.key_prefix)
    redis_client = async_client(settings)
    engine = Engine(settings)
    try:
        questions = QuestionLog(redis_client, keys, settings.keep_questions_days)
        return await build_report(
            redis_client,
            keys,
            questions,
            collection,
            days,
            lambda texts: engine.embedder.embed_queries(texts),
            lambda: engine.conflicts(collection),
        )
    finally:
        await redis_client.aclose()


# --- worker -----------------------------------------------------------------------------------


def run_worker(settings: Settings) -> int:
    """Run a worker in the foreground until interrupted."""
    from syllabot.worker.main import run_worker as serve

    serve(settings)
    return 0
