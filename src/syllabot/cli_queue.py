"""The CLI's side of the queue: `syllabot ask`, `syllabot index` and `syllabot worker`.

``ask`` and ``index`` go through a worker when one is running (so a running worker serves the new
index at once and the CLI loads no model), and otherwise run the very same code in this process —
on the embedded Redis when ``REDIS_URL`` is unset — so `syllabot ask "..."` answers on a fresh
machine with nothing else started. On a fresh data directory the default collection is seeded from
the sample corpus shipped in the distribution, and the terminal says so (on stderr, so ``--json``
output stays clean).
"""

from __future__ import annotations

import asyncio
import getpass
import sys
from typing import TextIO

from syllabot.bots.frontend import answer_parts
from syllabot.shared.config import Settings
from syllabot.shared.queue import (
    EmptyCollection,
    JobFailed,
    NoWorker,
    QueueClient,
    QueueError,
    QueueTimeout,
    RedisUnreachable,
)
from syllabot.shared.redis_conn import RedisUnavailable
from syllabot.shared.schema import NOT_IN_MATERIALS, UNCERTAIN_LEAD, Answer, AskRequest, IngestReport


def _say(message: str) -> None:
    print(f"syllabot: {message}", file=sys.stderr)


def _user() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):  # no login name in some containers
        return "cli"


class _ProgressLine:
    """``embedding 120/300`` redrawn in place on a terminal; silent when stderr is not one."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.drawn = False
        self.said: str | None = None

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

    async def from_queue(self, state: dict) -> None:
        self.update(str(state.get("stage", "")), int(state.get("done", 0)), int(state.get("total", 0)))

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()


# --- ask --------------------------------------------------------------------------------------


def run_ask(settings: Settings, question: str, collection: str, as_json: bool) -> int:
    """Answer one question and print it; 0 when an answer (even "Not in your materials") was shown,
    1 on an error -- including a collection with nothing indexed (:class:`EmptyCollection`)."""
    request = AskRequest(question=question, collection=collection, platform="cli", user=_user())
    try:
        answer = asyncio.run(ask(settings, request))
    except (QueueError, RedisUnavailable) as exc:
        _say(str(exc))  # the terminal is for admins: the queue's own message names the URL to check
        return 1
    print(answer.model_dump_json(indent=2) if as_json else render_answer(answer))
    return 0


async def ask(settings: Settings, request: AskRequest) -> Answer:
    """Through a worker when one is alive, else in this process (same pipeline, same answer)."""
    client = QueueClient(settings)
    try:
        try:
            return await client.ask(request)
        except EmptyCollection:
            # A fresh default collection: seed it from the sample corpus through the worker, ask again.
            if request.collection != settings.default_collection:
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


async def ask_in_process(settings: Settings, request: AskRequest) -> Answer:
    """The worker's ``ask`` job, run here: engine, optional sample seeding, answerer."""
    from syllabot.worker.answerers import get_answerer
    from syllabot.worker.engine import Engine
    from syllabot.worker.jobs import answer_question

    engine = Engine(settings)
    if request.collection == settings.default_collection:
        await asyncio.to_thread(_seed_locally, engine, request.collection)
    answerer = get_answerer(settings)
    try:
        return await answer_question(engine, answerer, request)
    finally:
        close = getattr(answerer, "aclose", None)
        if close is not None:
            await close()


def _seed_locally(engine: object, collection: str) -> None:
    from syllabot.worker.sample import seed_if_empty

    line = _ProgressLine()
    try:
        report = seed_if_empty(engine, collection, progress=line.update)  # type: ignore[arg-type]
    finally:
        line.close()
    if report is not None:
        _announce_seed(report)


async def _seed_via_queue(client: QueueClient, collection: str) -> bool:
    from syllabot.worker.sample import sample_files

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
        f"the '{report.collection}' collection was empty, so it now holds the sample corpus shipped "
        f"with Syllabot ({documents} documents, {report.total_chunks} passages). "
        "Add your own materials with `syllabot index PATH`."
    )


#: Heading of the numbered sources, by status: an uncertain answer lists passages, not sources.
SOURCES_HEADING = {
    "answered": "Sources:",
    "uncertain": "Closest passages (may not answer it):",
    "not_in_materials": "Sources:",
}


GENERAL_KNOWLEDGE_LABEL = "General knowledge (not from your course materials):"


def render_answer(answer: Answer) -> str:
    """Plain text for a terminal: the answer, any labelled general knowledge, numbered sources.

    Laid out from the front-end core's :func:`answer_parts`, chosen by ``answer.status``: the text
    starts with its status's words ("Not in your materials", or :data:`UNCERTAIN_LEAD` and "The
    closest passages:"), whether or not the worker wrote them, so a terminal never shows closest
    passages as if they were an answer.
    """
    parts = answer_parts(answer)
    if parts.status == "uncertain":
        text = f"{UNCERTAIN_LEAD}. The closest passages: {parts.body}"
    elif parts.status == "not_in_materials":
        text = f"{NOT_IN_MATERIALS}. {parts.body}" if parts.body else NOT_IN_MATERIALS
    else:
        text = parts.body
    lines = [text]
    if parts.general_knowledge:
        lines += ["", GENERAL_KNOWLEDGE_LABEL, parts.general_knowledge]
    if parts.citations:
        lines += ["", SOURCES_HEADING[parts.status]]
        for c in parts.citations:
            where = f"  ({c.file})" if c.file and c.file not in c.label else ""
            lines.append(f"  [{c.n}] {c.label or c.title}{where}")
    if parts.note:
        lines += ["", f"Note: {parts.note}"]
    return "\n".join(lines)


# --- index ------------------------------------------------------------------------------------


def run_index(settings: Settings, collection: str, files: list[tuple[str, bytes]]) -> IngestReport:
    """Index through a running worker (with progress), or in this process when none runs.

    Queue failures are raised as ``ValueError`` (the CLI prints those as one line and exits 1);
    Redis being unreachable as :class:`RedisUnavailable`.
    """
    try:
        return asyncio.run(index(settings, collection, files))
    except RedisUnreachable as exc:
        raise RedisUnavailable(str(exc)) from exc
    except (JobFailed, QueueTimeout, QueueError) as exc:
        raise ValueError(str(exc)) from exc


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
    settings: Settings, collection: str, files: list[tuple[str, bytes]], who: str | None = None
) -> IngestReport:
    who = who or _user()
    line = _ProgressLine()
    client = QueueClient(settings)
    try:
        if await client.worker_count():
            _say("indexing through the running worker")
            reports = [
                await client.ingest_many(collection, batch, who=who, progress=line.from_queue)
                for batch in batches_by_size(files, JOB_PAYLOAD_BYTES)
            ]
            return merge_reports(collection, reports)
        _say("no worker is running; indexing in this process")
    except NoWorker:
        # The worker went away between the check and the job (or during it): say so, then do it here.
        _say("the worker went away; indexing in this process instead")
    finally:
        line.close()
        await client.close()
    return await asyncio.to_thread(_index_locally, settings, collection, files, who)


def run_reindex(settings: Settings, collection: str) -> IngestReport:
    """Re-embed every stored document: through a running worker (so it serves the result at once)
    or in this process. Errors are raised as for :func:`run_index`."""
    try:
        return asyncio.run(reindex(settings, collection))
    except RedisUnreachable as exc:
        raise RedisUnavailable(str(exc)) from exc
    except (JobFailed, QueueTimeout, QueueError) as exc:
        raise ValueError(str(exc)) from exc


async def reindex(settings: Settings, collection: str) -> IngestReport:
    line = _ProgressLine()
    client = QueueClient(settings)
    try:
        if await client.worker_count():
            _say("re-indexing through the running worker")
            return await client.reindex(collection, who=_user(), progress=line.from_queue)
        _say("no worker is running; re-indexing in this process")
    except NoWorker:
        _say("the worker went away; re-indexing in this process instead")
    finally:
        line.close()
        await client.close()
    return await asyncio.to_thread(_reindex_locally, settings, collection)


def _reindex_locally(settings: Settings, collection: str) -> IngestReport:
    from syllabot.worker.engine import Engine

    line = _ProgressLine()
    try:
        return Engine(settings).reindex(collection, progress=line.update)
    finally:
        line.close()


def _index_locally(
    settings: Settings, collection: str, files: list[tuple[str, bytes]], who: str
) -> IngestReport:
    from syllabot.worker.engine import Engine

    line = _ProgressLine()
    try:
        return Engine(settings).ingest(collection, files, who=who, progress=line.update)
    finally:
        line.close()


# --- worker -----------------------------------------------------------------------------------


def run_worker(settings: Settings) -> int:
    """Run a worker in the foreground until interrupted."""
    from syllabot.worker.main import run_worker as serve

    serve(settings)
    return 0
