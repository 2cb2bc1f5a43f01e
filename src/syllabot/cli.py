"""`syllabot`: the terminal front-end, and the entry point of the worker and both bots.

Subcommands: index, search, ask, eval, sources, collections, drop, remove, report, doctor, worker,
discord, slack.

Exit codes: 0 success; 1 the work ran but failed (Redis unreachable, a worker's error, nothing
indexed); 2 a user error -- a bad argument or setting, a question too long, a missing or malformed
eval file, a collection or document that does not exist -- told in one line that names the
argument or setting and what it accepts, so a script can tell "fix the command" from "try again";
3 an index that refused some files (the usable ones are indexed; a summary line says how many);
130 cancelled by Ctrl-C or SIGTERM (nothing published); 141 stdout was closed early (``| head``).

Modules are imported where a command needs them: `syllabot ask` answered in-process loads
neither the bots' platforms nor the queue's worker side, and only loads the model when it searches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from syllabot.shared.config import Settings, get_settings
from syllabot.shared.formats import SUPPORTED_TYPES, is_document_name
from syllabot.shared.gap_report import DEFAULT_REPORT_DAYS, MAX_REPORT_DAYS
from syllabot.shared.wording import plural
from syllabot.worker.indexes.cancel import Cancelled

if TYPE_CHECKING:
    from pydantic import ValidationError

    from syllabot.shared.schema import Answer, IngestReport
    from syllabot.worker.indexes.retrieval import SearchResult
    from syllabot.worker.ops.evaluation import EvalRow, LabelledQuestion

#: How many questions whose answer missed its ``expect`` `syllabot eval` lists (all are in --json).
EVAL_MISSES_SHOWN = 10


#: Range of ``-k`` (hits per question): at least one; more than a page of hits is never read.
K_RANGE = (1, 100)


def _err(message: str) -> None:
    print(f"syllabot: {message}", file=sys.stderr)


class UsageError(Exception):
    """A mistake in the command (argument, setting, collection, file): one line, exit 2."""


# --- collections ------------------------------------------------------------------------------


def known_collections(settings: Settings) -> list[str]:
    """Every collection that has been indexed (the ``collections`` set every publish adds to)."""
    from syllabot.shared.keys import Keys
    from syllabot.shared.redis_conn import sync_client

    client = sync_client(settings)
    try:
        members: Any = client.smembers(Keys(settings.key_prefix).collections)
        return sorted(m.decode() for m in members)
    finally:
        client.close()


def implied_collection(settings: Settings, given: str | None, known: list[str] | None = None) -> str:
    """The collection a reading command uses: ``-c``; else ``SYLLABOT_DEFAULT_COLLECTION`` when it
    is set or exists; else the only collection of the user's (the samples aside), said on stderr;
    else a :class:`UsageError` naming the collections and the setting.

    Why: once a class has indexed into its own collection (``-c os-2026``), ``ask`` without ``-c``
    failed on the never-created ``default`` with no word on how to choose."""
    from syllabot.shared.bindings import SAMPLE_COLLECTION

    if given:
        return given
    default = settings.default_collection
    known = known_collections(settings) if known is None else known
    if default in known or "default_collection" in settings.model_fields_set:
        return default
    own = [name for name in known if name != SAMPLE_COLLECTION]
    if len(own) == 1:
        _err(f"using '{own[0]}', the only collection (-c picks another)")
        return own[0]
    if not own:
        return default  # nothing indexed: require_collection says how to start
    raise UsageError(
        f"no collection '{default}'; name one with -c ({', '.join(own)}), or set "
        "SYLLABOT_DEFAULT_COLLECTION to the one to use without -c"
    )


def require_collection(settings: Settings, collection: str, *, seeded: bool = False) -> str:
    """``collection``, or :class:`UsageError` when it does not exist, naming the ones that do.

    A mistyped ``-c`` must never look like an empty result (``[]``, all-zero recall) with exit 0.
    ``seeded``: the sample collection is accepted even before it exists, because `syllabot ask`
    fills it with the sample corpus on first use.
    """
    from syllabot.shared.bindings import SAMPLE_COLLECTION, validate_collection_name

    try:
        collection = validate_collection_name(collection)
    except ValueError as exc:
        raise UsageError(f"--collection: {exc}") from exc
    if seeded and collection == SAMPLE_COLLECTION:
        return collection
    known = known_collections(settings)
    if collection in known:
        return collection
    if known:
        raise UsageError(f"collection '{collection}' does not exist; known: {', '.join(known)}")
    raise UsageError(f"no collections yet; add documents with `syllabot index PATH -c {collection}`")


# --- settings ---------------------------------------------------------------------------------


def _setting_name(loc: object) -> str:
    """The environment variable a validation error is about (the field's alias)."""
    from pydantic import AliasChoices

    name = str(loc)
    field = Settings.model_fields.get(name)
    if field is not None and isinstance(field.validation_alias, AliasChoices):
        first = field.validation_alias.choices[0]
        return str(first)
    return name.upper() if name.islower() else name


def _field_of(variable: str) -> Any:
    from pydantic import AliasChoices

    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        if name == variable or (isinstance(alias, AliasChoices) and variable in alias.choices):
            return field
    return None


def _bounds(field: Any) -> str:
    """ " between 1 and 100", " of at least 1", "" -- from the field's ge/le/gt/lt constraints."""
    low = high = None
    for item in getattr(field, "metadata", ()):
        low = getattr(item, "ge", None) if getattr(item, "ge", None) is not None else low
        low = getattr(item, "gt", None) if getattr(item, "gt", None) is not None else low
        high = getattr(item, "le", None) if getattr(item, "le", None) is not None else high
        high = getattr(item, "lt", None) if getattr(item, "lt", None) is not None else high
    if low is not None and high is not None:
        return f" between {low} and {high}"
    if low is not None:
        return f" of at least {low}"
    if high is not None:
        return f" of at most {high}"
    return ""


_SECRET_WORDS = ("token", "key", "secret", "password")


def settings_error_lines(exc: ValidationError) -> list[str]:
    """One line per bad setting: the variable, the value (never a secret's), what it accepts.

    pydantic's own text lists field names, error types and a documentation URL; a user needs the
    environment variable to change and the values it takes.
    """
    lines = []
    for error in exc.errors(include_url=False):
        variable = _setting_name(error["loc"][0]) if error.get("loc") else "a setting"
        field = _field_of(variable)
        kind = error.get("type", "")
        ctx = error.get("ctx") or {}
        if kind == "int_parsing" or kind == "int_from_float":
            accepts = f"a whole number{_bounds(field)}"
        elif kind == "float_parsing":
            accepts = f"a number{_bounds(field)}"
        elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            accepts = f"a value{_bounds(field)}"
        elif kind == "literal_error":
            accepts = f"one of {ctx.get('expected', '')}"
        elif kind in ("bool_parsing", "bool_type"):
            accepts = "true or false"
        else:
            accepts = str(error.get("msg", "a valid value")).removeprefix("Value error, ").rstrip(".")
        secret = any(word in variable.lower() for word in _SECRET_WORDS)
        value = str(error.get("input", ""))
        if variable.endswith("_URL"):
            from syllabot.shared.redis_conn import describe

            value = describe(value)  # a URL may carry a password
        shown = "" if secret or "input" not in error else f"={value[:60]!r}"
        lines.append(f"{variable}{shown} is not valid: expected {accepts} (see deploy/.env.example)")
    return lines or [str(exc).splitlines()[0]]


# --- arguments --------------------------------------------------------------------------------


def bounded_int(name: str, low: int, high: int) -> Any:
    """An argparse ``type``: a whole number in [low, high], else one line naming ``name`` and the range."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{name} must be between {low} and {high} (got {text!r})")
        return value

    return parse


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (naming the argument) and exit 2, without the usage dump."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument ") and ": " in message:
            _, _, rest = message.partition(": ")
            if rest.startswith("-"):  # our own messages already name the argument
                message = rest
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def collect_files(paths: Sequence[str]) -> tuple[list[Path], list[str]]:
    """Files named, or found under named folders; plus a message for each path that is unusable."""
    files: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and is_document_name(p.name) and p.name.lower() != "readme.md"
            )
            if not found:
                problems.append(f"{path}: no supported files inside ({SUPPORTED_TYPES})")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            problems.append(f"{path}: no such file or folder")
    return files, problems


def print_ingest_report(report: IngestReport, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout  # as it is now (a test's capture replaces it)
    for f in report.files:
        if f.ok:
            modules = f", modules: {', '.join(f.modules)}" if f.modules else ""
            replaced = f" (replaced {f.replaced})" if f.replaced else ""
            counts = f"{plural(f.pages, 'page')}, {plural(f.chunks, 'chunk')}"
            print(f"  ok    {f.file}: {counts}{modules}{replaced}", file=stream)
            for warning in f.warnings:
                print(f"        warning: {warning}", file=stream)
            if f.left_out():
                print(f"        left out of the index: {f.left_out()}", file=stream)
            if f.guessed():
                print(f"        read by a guess: {f.guessed()}", file=stream)
        else:
            print(f"  ERROR {f.file}: {f.error}", file=stream)
    if report.changed:
        print(
            f"collection '{report.collection}': {plural(report.total_chunks, 'chunk')}, index version "
            f"{report.index_version}",
            file=stream,
        )
    else:
        print(
            f"collection '{report.collection}': nothing could be indexed; the previous index is unchanged",
            file=stream,
        )


#: Exit code of an index that refused some of its files while indexing the others.
EXIT_PARTLY_INDEXED = 3

#: Exit code when stdout was closed before everything was printed (``syllabot sources | head``),
#: as for a program stopped by SIGPIPE.
EXIT_BROKEN_PIPE = 141


def _index_outcome(report: IngestReport, refused_before: int) -> int:
    """0, 1 (nothing indexed) or :data:`EXIT_PARTLY_INDEXED`, with a summary line for the last:
    a script must be able to tell that one syllabus of the batch is missing."""
    if not report.changed:
        return 1
    refused = refused_before + sum(1 for f in report.files if not f.ok)
    if not refused:
        return 0
    indexed = sum(1 for f in report.files if f.ok)
    _err(
        f"indexed {indexed} of {indexed + refused} files into '{report.collection}'; {refused} refused "
        f"(see the lines above); exit {EXIT_PARTLY_INDEXED}"
    )
    return EXIT_PARTLY_INDEXED


def _reindex_all(settings: Settings) -> int:
    """Every collection re-indexed in turn, each published as it is done (a collection on the
    earlier embedder is answered by the current one from then on). One that fails is reported and
    the others still run; the exit code is the worst of them."""
    from syllabot.cli_queue import run_reindex

    names = known_collections(settings)
    if not names:
        print("no collections yet; nothing to re-index")
        return 0
    worst, failed = 0, []
    for n, name in enumerate(names, start=1):
        _err(f"[{n}/{len(names)}] re-indexing '{name}'")
        try:
            report = run_reindex(settings, name)
        except (UsageError, Cancelled):
            raise
        except Exception as exc:  # one collection's trouble must not stop the rest; a bug does
            message = runtime_failure(exc)
            if message is None:
                raise
            _err(f"'{name}' was not re-indexed: {message}")
            failed.append(name)
            worst = max(worst, 1)
            continue
        print_ingest_report(report)
        worst = max(worst, _index_outcome(report, 0))
    done = len(names) - len(failed)
    tail = f"; not re-indexed: {', '.join(failed)}" if failed else ""
    _err(f"re-indexed {done} of {len(names)} collections{tail}")
    return worst


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import run_index, run_reindex

    collection = args.collection or settings.default_collection
    if args.all and not args.reindex:
        _err("--all goes with --reindex: `syllabot index --reindex --all` re-indexes every collection")
        return 2
    if args.reindex:
        if args.paths:
            _err("--reindex re-reads the stored documents; give either paths or --reindex")
            return 2
        if args.all:
            if args.collection:
                _err("--all re-indexes every collection; leave out --collection")
                return 2
            return _reindex_all(settings)
        report = run_reindex(settings, require_collection(settings, collection))
        print_ingest_report(report)
        return _index_outcome(report, 0)
    files, problems = collect_files(args.paths)
    for problem in problems:
        _err(problem)
    if not files:
        _err("nothing to index: name files or folders (PDF, Markdown, text, DOCX)")
        return 2
    from syllabot.shared.bindings import validate_collection_name

    try:
        collection = validate_collection_name(collection)
    except ValueError as exc:
        raise UsageError(f"--collection: {exc}") from exc
    payload = []
    refused = len(problems)
    for path in files:
        size = path.stat().st_size
        if size > settings.max_document_bytes:  # refused before reading, as the bots do
            _err(
                f"{path}: {size / 1_048_576:.1f} MB is over the {settings.max_document_mb:g} MB limit "
                "(SYLLABOT_MAX_DOCUMENT_MB); split the file or raise the limit"
            )
            refused += 1
            continue
        payload.append((path.name, path.read_bytes()))
    if not payload:
        _err("nothing was indexed; the previous index is unchanged")
        return 1
    report = run_index(settings, collection, payload, replace=args.replace)
    print_ingest_report(report)
    return _index_outcome(report, refused)


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import preload_embedder, preloaded_embedder
    from syllabot.shared.schema import SEARCH_HIT_FIELDS

    preload_embedder(settings)
    collection = require_collection(settings, implied_collection(settings, args.collection))
    from syllabot.worker.indexes.engine import Engine

    engine = Engine(settings, embedder=preloaded_embedder(settings))
    result = engine.search(collection, args.question, k=args.k, include_superseded=args.include_superseded)
    if args.json:
        print(
            json.dumps(
                [{k: getattr(h, k) for k in SEARCH_HIT_FIELDS} for h in result.hits],
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if result.index_version is None:
        _err(
            f"collection '{collection}' has no index yet; run `syllabot index PATH --collection {collection}`"
        )
        return 1
    if result.fallback:
        print("(nothing cleared the score threshold; showing the closest passages)")
    for h in result.hits:
        snippet = " ".join(h.text.split())[:160]
        print(f"{h.rank:>2}. {h.score:.3f} (cos {h.cosine:.3f}, kw {h.keyword:.3f})  {h.label}  [{h.file}]")
        print(f"    {snippet}")
    print(
        f"embed {result.embed_ms:.1f} ms, search {result.search_ms:.1f} ms, index {result.index_version}",
        file=sys.stderr,
    )
    return 0


def _answer_all(
    settings: Settings, collection: str, questions: Sequence[LabelledQuestion], k: int
) -> list[EvalRow]:
    """Search and answer every question with the answerer the worker would use.

    The extractive answerer (the default) is pure CPU and is called directly (``answer_sync``); any
    other (the LLM) is awaited, all questions on one event loop so its HTTP pool is reused.
    """
    from syllabot.worker.answerers import get_answerer
    from syllabot.worker.indexes.engine import Engine
    from syllabot.worker.ops.evaluation import EvalRow

    engine = Engine(settings)
    answerer = get_answerer(settings)

    def row(q: LabelledQuestion, result: SearchResult, answer: Answer) -> EvalRow:
        return EvalRow.of(q, result.hits, answer)

    answer_sync = getattr(answerer, "answer_sync", None)
    if answer_sync is not None:
        rows = []
        for q in questions:
            result = engine.search(collection, q.question, k=k)
            rows.append(row(q, result, answer_sync(q.question, result, collection)))
        return rows

    async def run() -> list[EvalRow]:
        try:
            rows = []
            for q in questions:
                result = engine.search(collection, q.question, k=k)
                rows.append(row(q, result, await answerer.answer(q.question, result, collection)))
            return rows
        finally:
            close = getattr(answerer, "aclose", None)
            if close is not None:
                await close()

    return asyncio.run(run())


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.shared.schema import ANSWER_STATUSES
    from syllabot.worker.ops.evaluation import EvalFileError, load_questions, metrics, summarise

    collection = implied_collection(settings, args.collection)
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"eval file {path} does not exist (a JSON-lines file: one question per line)")
    try:
        questions = load_questions(path)
    except (OSError, EvalFileError) as exc:
        raise UsageError(str(exc)) from exc
    collection = require_collection(settings, collection)
    rows = _answer_all(settings, collection, questions, args.k or settings.top_k)
    # The legacy flag rates count a reply as flagged when it starts with "Not in your materials".
    retrieval = metrics((r.question, r.hits, r.status != "not_in_materials") for r in rows)
    answers = summarise(rows)
    if args.json:
        hit_keys = ["rank", "doc_id", "file", "page", "page_end", "module", "score"]
        print(
            json.dumps(
                {
                    "metrics": retrieval,
                    "summary": answers,
                    "results": [
                        {
                            "question": r.question.question,
                            "expected_file": r.question.file,
                            "expected_pages": r.question.pages,
                            "answerable": r.question.answerable,
                            "in_materials": r.in_materials,
                            "status": r.status,
                            "answer": r.text,
                            "expect": r.question.expect,
                            "expect_met": r.expect_met,
                            "hits": [{k: getattr(h, k) for k in hit_keys} for h in r.hits],
                        }
                        for r in rows
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    print(
        f"{plural(int(retrieval['questions']), 'question')} ({retrieval['answerable']} answerable, "
        f"{retrieval['unanswerable']} unanswerable) on collection '{collection}', answerer "
        f"{settings.answerer}"
    )
    print(f"{'':10}{'R@1':>8}{'R@5':>8}{'R@18':>8}{'MRR':>8}")
    for name in ("file", "page"):
        print(
            f"{'by ' + name:10}"
            + "".join(f"{retrieval[f'recall@{k}_{name}']:>8.3f}" for k in (1, 5, 18))
            + f"{retrieval[f'mrr_{name}']:>8.3f}"
        )
    counts, rates, totals = answers["counts"], answers["rates"], answers["totals"]
    columns = ("answerable", "unanswerable", "all")
    print()
    print(f"{'answer status':18}" + "".join(f"{c:>18}" for c in columns))
    for status in ANSWER_STATUSES:
        cells = (f"{counts[status][c]} ({_rate(rates[status][c])})" for c in columns)
        print(f"{status:18}" + "".join(f"{cell:>18}" for cell in cells))
    print(f"{'total':18}" + "".join(f"{totals[c]:>18}" for c in columns))
    print()
    conflicts = answers["conflicts"]
    if conflicts["conflict_n"]:
        print(
            f"conflict questions whose answer says the materials disagree: "
            f"{_rate(conflicts['noted_rate'])} ({conflicts['noted']}/{conflicts['conflict_n']})"
        )
        print(
            f"other questions given a conflict note: {_rate(conflicts['false_rate'])} "
            f"({conflicts['false_notes']}/{conflicts['other_n']})"
        )
    print(
        f"answerable told 'Not in your materials': {_rate(answers['answerable_not_in_materials'])} "
        f"({counts['not_in_materials']['answerable']}/{totals['answerable']})"
    )
    print(
        f"unanswerable answered as if from the materials: {_rate(answers['unanswerable_answered'])} "
        f"({counts['answered']['unanswerable']}/{totals['unanswerable']})"
    )
    print(
        f"uncertain, of all questions: {_rate(answers['uncertain'])} "
        f"({counts['uncertain']['all']}/{totals['all']})"
    )
    expect = answers["expect"]
    if expect["n"]:
        print(f"expect met: {_rate(expect['rate'])} ({expect['met']}/{expect['n']} questions with an expect)")
        misses = [r for r in rows if r.expect_met is False]
        for r in misses[:EVAL_MISSES_SHOWN]:
            print(f"  missed {r.question.expect} [{r.status}]: {r.question.question}")
        if len(misses) > EVAL_MISSES_SHOWN:
            print(f"  … and {len(misses) - EVAL_MISSES_SHOWN} more (see --json)")
    else:
        print("expect met: - (no question has an 'expect')")
    return 0


def cmd_sources(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.worker.indexes.engine import Engine

    collection = require_collection(settings, implied_collection(settings, args.collection))
    sources = Engine(settings).sources(collection)
    if args.json:
        print(json.dumps([s.model_dump() for s in sources], indent=2))
        return 0
    if not sources:
        print(f"collection '{collection}' has no documents")
        return 0
    files = {s.doc_id: s.file for s in sources}
    # Each column as wide as its longest value (a long doc_id or file name no longer pushes the
    # rest of its row out of line), and at least as wide as before.
    ids = max(24, *(len(s.doc_id) for s in sources))
    names = max(36, *(len(s.file) for s in sources))
    stamps = max(25, *(len(s.indexed_at) for s in sources))
    print(f"{'doc_id':{ids}} {'file':{names}} {'pages':>5} {'chunks':>6}  {'indexed':{stamps}}  status")
    for s in sources:
        line = f"{s.doc_id:{ids}} {s.file:{names}} {s.pages:>5} {s.chunks:>6}  {s.indexed_at:{stamps}}"
        if s.status == "superseded":
            by = files.get(s.superseded_by or "")
            line += f"  superseded{f' by {by}' if by else ''}"
        print(line.rstrip())
    return 0


def cmd_collections(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.bots.frontend import size_text
    from syllabot.worker.indexes.engine import Engine

    infos = Engine(settings).collections()
    if args.json:
        print(json.dumps([i.model_dump() for i in infos], indent=2))
        return 0
    if not infos:
        print("no collections yet; add documents with `syllabot index PATH -c my-course`")
        return 0
    print(
        f"{'collection':24} {'documents':>9} {'chunks':>7} {'size':>9}  {'embedder':28} {'last indexed':32} "
        "superseded"
    )
    for i in infos:
        print(
            f"{i.name:24} {i.documents:>9} {i.chunks:>7} {size_text(i.bytes):>9}  {i.embedder or '-':28} "
            f"{i.indexed_at or '-':32} {i.superseded}"
        )
    return 0


def cmd_drop(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.bots.frontend import size_text
    from syllabot.worker.indexes.engine import Engine

    collection = require_collection(settings, args.collection)
    engine = Engine(settings)
    if not args.yes:
        info = engine.store.collection_info(collection)
        assert info is not None  # require_collection found it
        raise UsageError(
            f"drop deletes collection '{collection}' for good ({info.documents} documents, {info.chunks} "
            f"chunks, {size_text(info.bytes)}, its kept questions and the bindings to it); run it again with "
            "--yes to confirm"
        )
    report = engine.drop(collection)
    bound = f"; {report.bindings} channel or server bindings to it removed" if report.bindings else ""
    print(
        f"dropped collection '{collection}': {report.dropped.documents} documents, "
        f"{report.dropped.chunks} chunks, {report.keys} keys{bound}"
    )
    return 0


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import preload_embedder, run_ask

    thread = args.thread.strip() if args.thread is not None else None
    if thread is not None and not thread:
        raise UsageError("--thread: give a conversation id, e.g. --thread os-revision")
    preload_embedder(settings)
    collection = require_collection(settings, _ask_collection(settings, args.collection), seeded=True)
    return run_ask(settings, args.question, collection, args.json, thread)


def _ask_collection(settings: Settings, given: str | None) -> str:
    """``-c``, else the default collection -- or, while nothing of the user's is indexed at all,
    the sample collection, said on stderr (so `syllabot ask "..."` answers on a fresh machine
    without the samples ever entering a collection of the user's)."""
    from syllabot.shared.bindings import SAMPLE_COLLECTION

    if given:
        return given
    known = known_collections(settings)
    if set(known) - {SAMPLE_COLLECTION}:
        return implied_collection(settings, None, known)
    _err(
        f"nothing of yours is indexed yet, so this answer comes from the '{SAMPLE_COLLECTION}' collection "
        "(the bike-shop samples shipped with Syllabot); index your own materials into a collection "
        'of their own: `syllabot index PATH -c my-course`, then `syllabot ask "..." -c my-course`'
    )
    return SAMPLE_COLLECTION


def cmd_remove(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import run_remove
    from syllabot.shared.source_names import UnknownDocument

    collection = require_collection(settings, args.collection or settings.default_collection)
    try:
        document, report = run_remove(settings, collection, args.document)
    except UnknownDocument as exc:
        raise UsageError(str(exc)) from exc
    print(
        f"removed {document.file} (doc_id {document.doc_id}) from collection '{collection}': "
        f"{report.total_chunks} chunks left, index version {report.index_version}"
    )
    return 0


def cmd_mark(args: argparse.Namespace, settings: Settings) -> int:
    """`syllabot supersede OLD [--by NEW]` and `syllabot current DOC`: which version counts."""
    from syllabot.cli_queue import run_mark
    from syllabot.shared.source_names import UnknownDocument, mark_said

    collection = require_collection(settings, args.collection or settings.default_collection)
    status = "superseded" if args.command == "supersede" else "current"
    try:
        document, report = run_mark(settings, collection, args.document, status, getattr(args, "by", None))
    except UnknownDocument as exc:
        raise UsageError(str(exc)) from exc
    print(
        f"{document.file} (doc_id {document.doc_id}) in collection '{collection}': {mark_said(report, status)}"
    )
    return 0


def cmd_conflicts(args: argparse.Namespace, settings: Settings) -> int:
    """`syllabot conflicts -c C`: the facts on which the collection's documents disagree."""
    from syllabot.shared.gap_report import conflict_lines
    from syllabot.worker.indexes.engine import Engine

    collection = require_collection(settings, implied_collection(settings, args.collection))
    entries = Engine(settings).conflicts(collection)
    if args.json:
        print(json.dumps([e.model_dump() for e in entries], indent=2))
        return 0
    if not entries:
        print(f"collection '{collection}': no two documents give different values for the same thing")
        return 0
    print(f"collection '{collection}': {len(entries)} fact(s) on which the documents disagree")
    for line in conflict_lines(entries):
        print(f"- {line}")
    return 0


def cmd_card(args: argparse.Namespace, settings: Settings) -> int:
    """`syllabot card -c C`: the course card (each fact with its document and page, the slots no
    document fills, disagreements by slot); `--template`: a course-facts document to fill in."""
    from syllabot.worker.query.card import card_lines, disagreements, template

    if args.template:
        sys.stdout.write(template())
        return 0
    from syllabot.worker.indexes.engine import Engine

    collection = require_collection(settings, implied_collection(settings, args.collection))
    card = Engine(settings).card(collection)
    if args.json:
        data = {
            "collection": collection,
            "terms": card.terms,
            "facts": [
                {
                    "slot": f.slot,
                    "text": f.text,
                    "who": f.who or None,
                    "file": f.file,
                    "page": f.page or None,
                    "older_term": f.older,
                    "teacher": f.doc_id in card.teacher,
                }
                for f in card.facts
            ],
            "disagreements": [
                {
                    "slot": d.slot,
                    "who": d.who or None,
                    "first": d.first.text,
                    "first_file": d.first.file,
                    "first_page": d.first.page or None,
                    "second": d.second.text,
                    "second_file": d.second.file,
                    "second_page": d.second.page or None,
                }
                for d in disagreements(card)
            ],
        }
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(f"collection '{collection}': the course card ({len(card.facts)} facts)")
    for line in card_lines(card):
        print(line)
    print(
        "\nTo correct or add a fact: `syllabot card --template > course-facts.md`, fill it in, and index it."
    )
    return 0


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import run_report
    from syllabot.shared.gap_report import disagreements, summary_line, table, to_csv

    collection = require_collection(settings, implied_collection(settings, args.collection))
    report = run_report(settings, collection, args.days)
    if args.json:
        print(report.model_dump_json(indent=2))
    elif args.csv:
        sys.stdout.write(to_csv(report))
    else:
        print(summary_line(report))
        print(table(report, limit=20, width=60))
        for line in disagreements(report, limit=20, width=220):
            print(line)
    return 0


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import run_worker

    return run_worker(settings)


def cmd_discord(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.bots.discord_bot import run_discord

    return run_discord(settings)


def cmd_slack(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.bots.slack_bot import run_slack

    return run_slack(settings)


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.worker.ops.doctor import render_table, run_checks  # lazy: keeps other commands fast

    report = run_checks(settings)
    print(report.to_json() if args.json else render_table(report))
    return 0 if report.ok else 1


def _version() -> str:
    """The installed distribution's version (pyproject's), for ``syllabot --version``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("syllabot")
    except PackageNotFoundError:  # run from a tree that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="syllabot", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"syllabot {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("index", help="add documents (files or folders) to a collection and rebuild its index")
    p.add_argument("paths", nargs="*", help="PDF, Markdown, text or DOCX files, or folders of them")
    p.add_argument("--collection", "-c")
    p.add_argument("--reindex", action="store_true", help="re-read and re-embed every stored document")
    p.add_argument("--all", action="store_true", help="with --reindex: every collection, one after another")
    p.add_argument(
        "--replace",
        action="store_true",
        help="let a file replace a document of another name with the same id (else it is refused), "
        "and supersede an indexed document with the same title (else both are used)",
    )
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="show the passages a question retrieves")
    p.add_argument("question")
    p.add_argument("--collection", "-c")
    p.add_argument(
        "-k",
        type=bounded_int("-k", *K_RANGE),
        default=None,
        help="number of hits, 1-100 (default: SYLLABOT_TOP_K, 18)",
    )
    p.add_argument("--include-superseded", action="store_true", help="keep superseded document versions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="answer a question with citations (through a worker when one runs)")
    p.add_argument("question")
    p.add_argument("--collection", "-c")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--thread",
        metavar="ID",
        help="a conversation id: follow-ups asked with the same id are read against its earlier questions",
    )
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "eval", help="answer a labelled JSON-lines file: retrieval recall and MRR, answer outcomes, expect"
    )
    p.add_argument("file")
    p.add_argument("--collection", "-c")
    p.add_argument("-k", type=bounded_int("-k", *K_RANGE), default=None, help="hits per question, 1-100")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("sources", help="list a collection's documents")
    p.add_argument("--collection", "-c")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sources)

    p = sub.add_parser(
        "collections", help="list the collections: documents, chunks, size, embedder, last indexed"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_collections)

    p = sub.add_parser("drop", help="delete a collection completely (documents, index, kept questions)")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument(
        "--yes", action="store_true", help="confirm: without it, drop only says what it would delete"
    )
    p.set_defaults(func=cmd_drop)

    p = sub.add_parser("remove", help="remove one document from a collection and rebuild its index")
    p.add_argument("document", help="its doc_id or file name (see `syllabot sources`)")
    p.add_argument("--collection", "-c")
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser(
        "supersede",
        help="mark a document as an old version: left out of answers while a current one is indexed",
    )
    p.add_argument("document", help="its doc_id or file name (see `syllabot sources`)")
    p.add_argument("--by", help="the document that replaces it (doc_id or file name)")
    p.add_argument("--collection", "-c")
    p.set_defaults(func=cmd_mark)

    p = sub.add_parser(
        "conflicts", help="list the facts on which the collection's documents disagree (counts, days, %%)"
    )
    p.add_argument("--collection", "-c")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_conflicts)

    p = sub.add_parser(
        "card",
        help="show the course card: who teaches, when and where, grading and rules, each with its page",
    )
    p.add_argument("--collection", "-c")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--template", action="store_true", help="print a course-facts document to fill in and index"
    )
    p.set_defaults(func=cmd_card)

    p = sub.add_parser("current", help="mark a document as the current version (undoes `supersede`)")
    p.add_argument("document", help="its doc_id or file name (see `syllabot sources`)")
    p.add_argument("--collection", "-c")
    p.set_defaults(func=cmd_mark)

    p = sub.add_parser(
        "report", help="the teacher's gap report: what students asked that the materials did not answer"
    )
    p.add_argument("--collection", "-c")
    p.add_argument(
        "--days",
        type=bounded_int("--days", 1, MAX_REPORT_DAYS),
        default=DEFAULT_REPORT_DAYS,
        help=f"the period, 1-{MAX_REPORT_DAYS} days back from now (default {DEFAULT_REPORT_DAYS})",
    )
    output = p.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true")
    output.add_argument("--csv", action="store_true", help="one row per topic (spreadsheets)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "doctor", help="check Redis, workers, the embedder, the LLM, every collection's index and bot tokens"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)

    for name, func, text in (
        ("worker", cmd_worker, "run a retrieval worker"),
        ("discord", cmd_discord, "run the Discord bot"),
        ("slack", cmd_slack, "run the Slack bot"),
    ):
        sub.add_parser(name, help=text).set_defaults(func=func)
    return parser


#: Commands that are servers: they handle their own signals and may keep an embedded Redis alive.
SERVERS = frozenset({"worker", "discord", "slack"})


def _exit_on_sigterm(signum: int, frame: object) -> NoReturn:
    raise SystemExit(128 + signum)  # unwinds, so exit hooks (the embedded Redis's) still run


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    restore = None
    if args.command not in SERVERS and threading.current_thread() is threading.main_thread():
        restore = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        code = _run(args)
        sys.stdout.flush()  # inside the try: a closed pipe is reported here, not at interpreter exit
        return code
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more can be shown, and a traceback would be noise.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    finally:
        if restore is not None:
            signal.signal(signal.SIGTERM, restore)


def _run(args: argparse.Namespace) -> int:
    if getattr(args, "question", None) is not None:
        from syllabot.bots.frontend import QuestionRejected, check_question

        try:
            args.question = check_question(args.question)
        except QuestionRejected as rejected:
            if rejected.kind == "empty":
                _err(
                    "the question is empty; type what you want to know, "
                    'e.g. syllabot ask "which module covers deadlocks?"'
                )
            else:
                _err(
                    f"the question has {rejected.length} characters; it must be between 1 and "
                    f"{rejected.limit} characters"
                )
            return 2
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    try:
        settings = get_settings()
    except ValidationError as exc:  # a setting has a bad value
        for line in settings_error_lines(exc):
            _err(line)
        return 2
    except SettingsError as exc:  # a value pydantic-settings could not even decode (e.g. a list)
        _err(f"{str(exc).splitlines()[0]} (see deploy/.env.example)")
        return 2
    from syllabot.shared.config import unknown_settings

    for warning in unknown_settings():
        _err(f"warning: {warning}")
    try:
        return int(args.func(args, settings) or 0)
    except UsageError as exc:
        _err(str(exc))
        return 2
    except Cancelled as exc:  # Ctrl-C or SIGTERM stopped a build run here before it published
        _err(str(exc))
        return 130
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Exception as exc:
        message = runtime_failure(exc)
        if message is None:
            raise  # a bug: the traceback is the report
        _err(message)
        return 1


def runtime_failure(exc: Exception) -> str | None:
    """The one line for a failure of the work itself (exit 1), or None for a bug.

    The classes are imported here, when something failed, so a command that succeeds never pays
    for importing the queue, the engine and numpy just to be able to catch their errors.
    """
    from redis.exceptions import ConnectionError as RedisConnectionError

    from syllabot.shared.queue import QueueError
    from syllabot.shared.redis_conn import RedisUnavailable, redis_trouble
    from syllabot.worker.indexes.embedders.base import EmbedderError

    trouble = redis_trouble(exc)
    if trouble is not None:  # Redis answered but refused: full, read-only, loading, ...
        return trouble
    if isinstance(exc, RedisConnectionError):
        return f"Redis is unreachable ({exc}); check REDIS_URL, or unset it to use the embedded Redis"
    if isinstance(exc, (RedisUnavailable, QueueError, EmbedderError, ValueError)):
        return str(exc)  # ValueError includes the engine's NothingToIndex and the queue's job failures
    return None


if __name__ == "__main__":
    sys.exit(main())
