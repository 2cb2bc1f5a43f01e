"""`syllabot`: the terminal front-end, and the entry point of the worker and both bots.

Subcommands: index, search, ask, eval, sources, worker, discord, slack. Exit codes: 0 success,
1 the work ran but failed (nothing indexed, questions missed), 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from syllabot.bots.frontend import QuestionRejected, check_question
from syllabot.shared.config import Settings, get_settings
from syllabot.shared.formats import SUPPORTED_TYPES, is_document_name
from syllabot.shared.schema import SEARCH_HIT_FIELDS, Answer, IngestReport

if TYPE_CHECKING:
    from syllabot.worker.engine import SearchResult
    from syllabot.worker.evaluation import EvalRow, LabelledQuestion

#: How many questions whose answer missed its ``expect`` `syllabot eval` lists (all are in --json).
EVAL_MISSES_SHOWN = 10


def _err(message: str) -> None:
    print(f"syllabot: {message}", file=sys.stderr)


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


def print_ingest_report(report: IngestReport, stream=sys.stdout) -> None:
    for f in report.files:
        if f.ok:
            modules = f", modules: {', '.join(f.modules)}" if f.modules else ""
            print(f"  ok    {f.file}: {f.pages} pages, {f.chunks} chunks{modules}", file=stream)
            for warning in f.warnings:
                print(f"        warning: {warning}", file=stream)
        else:
            print(f"  ERROR {f.file}: {f.error}", file=stream)
    if report.changed:
        print(
            f"collection '{report.collection}': {report.total_chunks} chunks, index version "
            f"{report.index_version}",
            file=stream,
        )
    else:
        print(
            f"collection '{report.collection}': nothing could be indexed; the previous index is unchanged",
            file=stream,
        )


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import run_index, run_reindex

    collection = args.collection or settings.default_collection
    if args.reindex:
        if args.paths:
            _err("--reindex re-reads the stored documents; give either paths or --reindex")
            return 2
        report = run_reindex(settings, collection)
        print_ingest_report(report)
        return 0 if report.changed else 1
    files, problems = collect_files(args.paths)
    for problem in problems:
        _err(problem)
    if not files:
        _err("nothing to index: name files or folders (PDF, Markdown, text, DOCX)")
        return 2
    payload = []
    for path in files:
        size = path.stat().st_size
        if size > settings.max_document_bytes:  # refused before reading, as the bots do
            _err(
                f"{path}: {size / 1_048_576:.1f} MB is over the {settings.max_document_mb:g} MB limit "
                "(SYLLABOT_MAX_DOCUMENT_MB); split the file or raise the limit"
            )
            continue
        payload.append((path.name, path.read_bytes()))
    if not payload:
        _err("nothing was indexed; the previous index is unchanged")
        return 1
    report = run_index(settings, collection, payload)
    print_ingest_report(report)
    return 0 if report.changed else 1


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.worker.engine import Engine

    collection = args.collection or settings.default_collection
    engine = Engine(settings)
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
    from syllabot.worker.engine import Engine
    from syllabot.worker.evaluation import EvalRow

    engine = Engine(settings)
    answerer = get_answerer(settings)

    def row(q: LabelledQuestion, result: SearchResult, answer: Answer) -> EvalRow:
        return EvalRow(q, result.hits, answer.status, answer.text)

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
    from syllabot.worker.evaluation import EvalFileError, load_questions, metrics, summarise

    collection = args.collection or settings.default_collection
    try:
        questions = load_questions(Path(args.file))
    except (OSError, EvalFileError) as exc:
        _err(str(exc))
        return 2
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
        f"{retrieval['questions']} questions ({retrieval['answerable']} answerable, "
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
    from syllabot.worker.engine import Engine

    collection = args.collection or settings.default_collection
    sources = Engine(settings).sources(collection)
    if args.json:
        print(json.dumps([s.model_dump() for s in sources], indent=2))
        return 0
    if not sources:
        print(f"collection '{collection}' has no documents")
    for s in sources:
        print(f"{s.doc_id:24} {s.file:36} {s.pages:>3} pages {s.chunks:>4} chunks  indexed {s.indexed_at}")
    return 0


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from syllabot.cli_queue import run_ask

    return run_ask(settings, args.question, args.collection or settings.default_collection, args.json)


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
    from syllabot.worker.doctor import render_table, run_checks  # lazy: keeps other commands fast

    report = run_checks(settings)
    print(report.to_json() if args.json else render_table(report))
    return 0 if report.ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="syllabot", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="add documents (files or folders) to a collection and rebuild its index")
    p.add_argument("paths", nargs="*", help="PDF, Markdown, text or DOCX files, or folders of them")
    p.add_argument("--collection", "-c")
    p.add_argument("--reindex", action="store_true", help="re-read and re-embed every stored document")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="show the passages a question retrieves")
    p.add_argument("question")
    p.add_argument("--collection", "-c")
    p.add_argument("-k", type=int, default=None, help="number of hits (default: SYLLABOT_TOP_K, 18)")
    p.add_argument("--include-superseded", action="store_true", help="keep superseded document versions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="answer a question with citations (through a worker when one runs)")
    p.add_argument("question")
    p.add_argument("--collection", "-c")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "eval", help="answer a labelled JSON-lines file: retrieval recall and MRR, answer outcomes, expect"
    )
    p.add_argument("file")
    p.add_argument("--collection", "-c")
    p.add_argument("-k", type=int, default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("sources", help="list a collection's documents")
    p.add_argument("--collection", "-c")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sources)

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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "question", None) is not None:
        try:
            args.question = check_question(args.question)
        except QuestionRejected as rejected:
            if rejected.kind == "empty":
                _err(
                    "the question is empty; type what you want to know, "
                    'e.g. syllabot ask "which module covers deadlocks?"'
                )
            else:
                _err(f"the question has {rejected.length} characters; the limit is {rejected.limit}")
            return 2
    try:
        settings = get_settings()
    except ValueError as exc:  # pydantic's ValidationError or SettingsError: a setting has a bad value
        _err(f"bad setting: {exc}")
        return 2
    from redis.exceptions import ConnectionError as RedisConnectionError

    from syllabot.shared.queue import QueueError
    from syllabot.shared.redis_conn import RedisUnavailable
    from syllabot.worker.embedders.base import EmbedderError
    from syllabot.worker.engine import NothingToIndex

    try:
        return int(args.func(args, settings) or 0)
    except RedisConnectionError as exc:
        _err(f"Redis is unreachable ({exc}); check REDIS_URL, or unset it to use the embedded Redis")
        return 1
    except (RedisUnavailable, QueueError, EmbedderError, NothingToIndex, ValueError) as exc:
        _err(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
