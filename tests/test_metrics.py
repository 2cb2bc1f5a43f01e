"""Metrics and secrets: the worker's Prometheus endpoint scraped over HTTP after real questions and
uploads through the real queue and worker, the endpoint off unless configured, and no token,
signing secret, API key or Redis password in the logs, the metrics page or the errors users see."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.metrics import QUESTION_STATUSES, QuestionMetrics, start_endpoint
from syllabot.shared.queue import EmptyCollection, JobFailed, NoWorker, QueueClient, QueueTimeout
from syllabot.shared.redis_conn import async_client_at
from syllabot.shared.schema import Answer, AskRequest
from syllabot.worker.ops.metrics import STAGES, WorkerMetrics
from syllabot.worker.ops.sample import sample_files
from syllabot.worker.runtime import jobs
from tests.queue_helpers import free_port, running_worker

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

ANSWERED = "How many days do I have to return a new bike?"
UNRELATED = "What is the airspeed velocity of an unladen swallow over the Andes?"


def corrupt_pdf() -> bytes:
    """A real PDF cut short: the header is there, the body is not (the loader's CorruptFile)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 8, "21CS44 Operating Systems. Module 1: processes and threads. " * 20)
    return bytes(pdf.output())[:400]


def scrape_text(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.status == 200
        return str(response.read().decode())


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(port: int) -> Samples:
    # In a thread: the endpoint answers from its own thread, but urllib would block this loop,
    # which the worker under test shares.
    return parse(await asyncio.to_thread(scrape_text, port))


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def wait_for_value(
    port: int, name: str, expected: float, timeout: float = 10.0, **labels: str
) -> Samples:
    """Scrape until the sample has the value (counts that the worker records after delivering)."""
    deadline = time.monotonic() + timeout
    while True:
        samples = await scrape(port)
        if value(samples, name, **labels) == expected or time.monotonic() > deadline:
            return samples
        await asyncio.sleep(0.05)


def with_metrics(settings: Settings, port: int | None = None) -> Settings:
    return settings.model_copy(update={"metrics_port": port or free_port()})


async def ask(client: QueueClient, question: str, collection: str = "shop", platform: str = "test") -> Answer:
    return await client.ask(AskRequest(question=question, collection=collection, platform=platform))  # type: ignore[arg-type]


# --- the worker's endpoint ---------------------------------------------------------------------


async def test_worker_endpoint_counts_questions_stages_and_index_size(settings: Settings) -> None:
    settings = with_metrics(settings)
    port = settings.metrics_port
    assert port
    async with running_worker(settings) as worker, QueueClient(settings) as client:
        assert worker.ctx["metrics_endpoint"].port == port
        before = await scrape(port)
        for stage in STAGES:  # every stage is there from the start, at zero
            assert value(before, "syllabot_stage_seconds_count", stage=stage) == 0
        assert ("syllabot_queue_depth", frozenset()) in before

        report = await client.ingest_many("shop", sample_files(), who="admin")
        answered = await ask(client, ANSWERED, platform="discord")
        unrelated = await ask(client, UNRELATED)
        with pytest.raises(EmptyCollection):
            await ask(client, "Anything?", collection="nothing-here")
        assert answered.status == "answered" and unrelated.status == "not_in_materials"

        samples = await wait_for_value(port, "syllabot_index_chunks", report.total_chunks, collection="shop")
    q = "syllabot_questions_total"
    assert value(samples, q, collection="shop", platform="discord", status="answered") == 1
    assert value(samples, q, collection="shop", platform="test", status="not_in_materials") == 1
    assert value(samples, q, collection="nothing-here", platform="test", status="error") == 1
    assert sum(v for (name, _), v in samples.items() if name == q) == 3
    for stage in STAGES:  # the two answers, not the error
        assert value(samples, "syllabot_stage_seconds_count", stage=stage) == 2, stage
    total = value(samples, "syllabot_stage_seconds_sum", stage="total")
    assert 0 < total < 30
    assert value(samples, "syllabot_stage_seconds_sum", stage="search") <= total
    # Stage buckets are cumulative and end in +Inf with every observation.
    assert value(samples, "syllabot_stage_seconds_bucket", stage="total", le="+Inf") == 2
    assert value(samples, "syllabot_index_chunks", collection="shop") == report.total_chunks > 50
    assert value(samples, "syllabot_llm_fallbacks_total") == 0
    assert value(samples, "syllabot_queue_depth") == 0


async def test_a_corrupt_pdf_upload_counts_as_CorruptFile(settings: Settings) -> None:
    settings = with_metrics(settings)
    port = settings.metrics_port
    assert port
    async with running_worker(settings), QueueClient(settings) as client:
        report = await client.ingest_many(
            "shop", [("broken.pdf", corrupt_pdf()), sample_files()[0]], who="admin"
        )
        refused = [f for f in report.files if not f.ok]
        assert [f.file for f in refused] == ["broken.pdf"] and report.changed
        samples = await wait_for_value(port, "syllabot_ingest_failures_total", 1, kind="CorruptFile")
        assert value(samples, "syllabot_ingest_failures_total", kind="CorruptFile") == 1
        assert sum(v for (n, _), v in samples.items() if n == "syllabot_ingest_failures_total") == 1
        # The published build set the collection's size.
        assert value(samples, "syllabot_index_chunks", collection="shop") == report.total_chunks


async def test_index_size_is_set_when_a_worker_loads_a_snapshot_built_elsewhere(settings: Settings) -> None:
    """A build published by another process (here the in-process engine) is measured on the first
    question that loads it, and again when the index moves on."""
    from syllabot.worker.indexes.engine import Engine

    builder = Engine(settings)
    first = await asyncio.to_thread(builder.ingest, "shop", sample_files()[:2], "cli")
    async with running_worker(settings) as worker, QueueClient(settings) as client:
        samples = parse(_exposition(worker.ctx["metrics"]))
        assert ("syllabot_index_chunks", frozenset({("collection", "shop")})) not in samples
        metrics: WorkerMetrics = worker.ctx["metrics"]
        await ask(client, ANSWERED)
        assert await _chunks_become(metrics, "shop", first.total_chunks)
        second = await asyncio.to_thread(builder.ingest, "shop", sample_files()[2:4], "cli")
        assert second.total_chunks > first.total_chunks
        await ask(client, ANSWERED)
        assert await _chunks_become(metrics, "shop", second.total_chunks)
    builder.client.close()


async def _chunks_become(metrics: WorkerMetrics, collection: str, expected: int) -> bool:
    """The worker measures the index after delivering the answer: wait for it (up to 5 s)."""
    deadline = time.monotonic() + 5
    while value(parse(_exposition(metrics)), "syllabot_index_chunks", collection=collection) != expected:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_queue_depth_counts_waiting_jobs_not_running_ones(settings: Settings) -> None:
    """Jobs due and unclaimed count; a claimed (running) one and a deferred retry do not."""
    from arq.constants import in_progress_key_prefix

    keys = Keys(settings.key_prefix)
    redis_client = async_client_at(settings.redis_url or "")
    now_ms = int(time.time() * 1000)
    running_id = f"{settings.key_prefix}running"
    try:
        await redis_client.zadd(keys.queue, {"a": now_ms - 50, "b": now_ms - 10, running_id: now_ms - 100})
        await redis_client.zadd(keys.queue, {"later": now_ms + 60_000})
        await redis_client.set(in_progress_key_prefix + running_id, "1", px=10_000)
        metrics = WorkerMetrics()
        assert await metrics.sample_queue_depth(redis_client, keys) == 2
        assert value(parse(_exposition(metrics)), "syllabot_queue_depth") == 2
    finally:
        await redis_client.delete(in_progress_key_prefix + running_id)
        await redis_client.aclose()


def _exposition(metrics: WorkerMetrics) -> str:
    from prometheus_client import generate_latest

    return generate_latest(metrics.registry).decode()


async def test_an_expired_question_is_counted_and_not_answered(settings: Settings) -> None:
    redis_client = async_client_at(settings.redis_url or "")
    metrics = WorkerMetrics()
    ctx = {
        "metrics": metrics,
        "keys": Keys(settings.key_prefix),
        "redis": redis_client,
        "clock_offset_ms": 0.0,
    }
    request = AskRequest(
        question="Too late?", collection="os", platform="slack", deadline_ms=int(time.time() * 1000) - 5000
    )
    try:
        await jobs.ask(ctx, request.model_dump(mode="json"))
    finally:
        await redis_client.aclose()
    samples = parse(_exposition(metrics))
    assert (
        value(samples, "syllabot_questions_total", collection="os", platform="slack", status="expired") == 1
    )
    assert value(samples, "syllabot_stage_seconds_count", stage="total") == 0


# --- off by default, and never fatal -------------------------------------------------------------


def _listening_ports() -> set[int]:
    """TCP ports this process listens on (Linux /proc: our socket inodes in LISTEN state)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs Linux /proc")
async def test_unset_port_opens_nothing_but_still_counts(settings: Settings) -> None:
    assert settings.metrics_port is None and Settings(_env_file=None).metrics_port is None
    before = _listening_ports()
    async with running_worker(settings) as worker, QueueClient(settings) as client:
        await client.ingest_many("shop", sample_files()[:2], who="admin")
        await ask(client, ANSWERED)
        assert worker.ctx["metrics_endpoint"] is None
        assert _listening_ports() == before
        counted = parse(_exposition(worker.ctx["metrics"]))
    assert sum(v for (n, _), v in counted.items() if n == "syllabot_questions_total") == 1


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs Linux /proc")
async def test_the_endpoint_closes_with_the_worker(settings: Settings) -> None:
    settings = with_metrics(settings)
    async with running_worker(settings):
        assert settings.metrics_port in _listening_ports()
    assert settings.metrics_port not in _listening_ports()


def test_blank_or_zero_port_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYLLABOT_METRICS_PORT", "")
    assert Settings(_env_file=None).metrics_port is None
    monkeypatch.setenv("SYLLABOT_METRICS_PORT", "0")
    settings = Settings(_env_file=None)
    assert settings.metrics_port == 0 and settings.metrics_host == "127.0.0.1"
    assert start_endpoint(settings, QuestionMetrics().registry, "test") is None


async def test_a_taken_port_is_logged_and_the_worker_still_answers(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Two processes on one host given the same port: the second says so and keeps answering."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings = with_metrics(settings, taken.getsockname()[1])
        with caplog.at_level(logging.INFO, logger="syllabot.metrics"):
            async with running_worker(settings) as worker, QueueClient(settings) as client:
                await client.ingest_many("shop", sample_files()[:2], who="admin")
                assert (await ask(client, ANSWERED)).text
                assert worker.ctx["metrics_endpoint"] is None
    assert "SYLLABOT_METRICS_PORT" in caplog.text and "no metrics endpoint" in caplog.text


# --- the bots' counter -------------------------------------------------------------------------


def test_bot_counts_outcomes_failures_and_expiry() -> None:
    metrics = QuestionMetrics()
    metrics.count("os", "discord", "uncertain")
    metrics.count_failure("os", "discord", QueueTimeout("no answer within 60 s"))
    metrics.count_failure("", "slack", NoWorker("no worker"))
    samples = parse(_bot_exposition(metrics))
    q = "syllabot_questions_total"
    assert value(samples, q, collection="os", platform="discord", status="uncertain") == 1
    assert value(samples, q, collection="os", platform="discord", status="expired") == 1
    assert value(samples, q, collection="", platform="slack", status="error") == 1
    assert {"answered", "uncertain", "not_in_materials", "error", "expired"} == set(QUESTION_STATUSES)


def _bot_exposition(metrics: QuestionMetrics) -> str:
    from prometheus_client import generate_latest

    return generate_latest(metrics.registry).decode()


async def test_bot_endpoint_serves_its_own_registry_only(settings: Settings) -> None:
    bot, worker = QuestionMetrics(), WorkerMetrics()
    bot.count("os", "slack", "answered")
    endpoint = start_endpoint(with_metrics(settings), bot.registry, "slack bot")
    assert endpoint is not None
    try:
        text = await asyncio.to_thread(scrape_text, endpoint.port)
    finally:
        await asyncio.to_thread(endpoint.close)
    assert 'syllabot_questions_total{collection="os",platform="slack",status="answered"} 1.0' in text
    # No worker series in a bot, and nothing from the library's global default registry.
    assert "syllabot_stage_seconds" not in text and "process_cpu_seconds_total" not in text
    assert "syllabot_stage_seconds" in _exposition(worker)


# --- secrets -------------------------------------------------------------------------------------

SECRETS = {
    "discord_token": "FAKE-discord-token-MTIzNDU2Nzg5.Gq1w2e",
    "slack_bot_token": "xoxb-FAKE-slack-bot-token-0042",
    "slack_signing_secret": "FAKE-signing-secret-8c7b6a",
    "llm_api_key": "sk-FAKE-llm-api-key-5d4e3f",
}
REDIS_PASSWORD = "FAKE-redis-pass-9a8b7c"


@pytest.fixture
def secret_settings(settings: Settings) -> Iterator[Settings]:
    """Settings holding fake secrets everywhere one can go, an LLM that cannot be reached (so its
    key is used and the fallback taken) and a Redis URL with a password (the test Redis has no
    password: Redis accepts any password for its password-less ``default`` user)."""
    url = (settings.redis_url or "").replace("redis://", f"redis://default:{REDIS_PASSWORD}@", 1)
    assert REDIS_PASSWORD in url
    yield settings.model_copy(
        update={
            **SECRETS,
            "redis_url": url,
            "answerer": "openai",
            "llm_base_url": f"http://127.0.0.1:{free_port()}/v1",  # nothing listens there
            "metrics_port": free_port(),
        }
    )


async def test_secrets_appear_in_no_log_metric_or_error(
    secret_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings = secret_settings
    port = settings.metrics_port
    assert port
    secrets = [*SECRETS.values(), REDIS_PASSWORD]
    user_facing: list[str] = []
    caplog.set_level(logging.DEBUG)
    async with running_worker(settings), QueueClient(settings) as client:
        report = await client.ingest_many(
            "shop", [*sample_files()[:3], ("broken.pdf", corrupt_pdf())], who="admin"
        )
        user_facing.append(report.model_dump_json())
        answer = await ask(client, ANSWERED, platform="slack")
        user_facing.append(answer.model_dump_json())
        for collection in ("nothing-here", "Not A Valid Name!"):
            with pytest.raises(JobFailed) as failed:
                await ask(client, "Anything?", collection=collection)
            user_facing.append(str(failed.value))
        text = ""
        deadline = time.monotonic() + 10
        while "CorruptFile" not in text and time.monotonic() < deadline:
            text = await asyncio.to_thread(scrape_text, port)
            await asyncio.sleep(0.05)
    # It did run what it should have: the LLM was tried with the key and fell back, the upload
    # refusal and the answer were counted, and one line per question was logged.
    assert answer.note and answer.note.startswith("LLM unavailable")
    samples = parse(text)
    assert value(samples, "syllabot_llm_fallbacks_total") == 1
    assert value(samples, "syllabot_ingest_failures_total", kind="CorruptFile") == 1
    assert (
        value(samples, "syllabot_questions_total", collection="shop", platform="slack", status=answer.status)
        == 1
    )
    assert "127.0.0.1:6379" in user_facing[2]  # the empty-collection error names the Redis it read
    answer_lines = [r for r in caplog.records if r.name == "syllabot.answers"]
    assert len(answer_lines) == 1 and answer_lines[0].getMessage().startswith("{")
    logged = caplog.text + "\n".join(_full_record(r) for r in caplog.records)
    assert len(caplog.records) > 10
    for secret in secrets:
        assert secret not in logged, f"a secret is in the log: {secret}"
        assert secret not in text, f"a secret is in the metrics: {secret}"
        for message in user_facing:
            assert secret not in message, f"a secret is in what a user sees: {secret}"


def _full_record(record: logging.LogRecord) -> str:
    """A record as any handler could render it: message, arguments and traceback."""
    out = io.StringIO()
    out.write(record.getMessage())
    out.write(repr(record.args))
    if record.exc_info:
        out.write(logging.Formatter().formatException(record.exc_info))
    return out.getvalue()
