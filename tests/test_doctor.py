"""`syllabot doctor`'s engine (worker/ops/doctor.py) against a real Redis, the hashing embedder and a
local fake of an OpenAI-compatible endpoint.

The setups are made with the product's own code (Engine.ingest, shared.queue_protocol.beat), so the doctor is
checked against data exactly as workers write it, not against a hand-made imitation.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import redis
import redis.asyncio as aioredis
from arq.constants import in_progress_key_prefix

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue_protocol import beat
from syllabot.worker.indexes.embedders.base import Embedder
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.indexes.store import CollectionStore
from syllabot.worker.ops import doctor
from syllabot.worker.ops.doctor import (
    Check,
    DoctorReport,
    assess_memory,
    assess_persistence,
    assess_version,
    check_bot_tokens,
    check_embedder,
    check_queue,
    render_table,
    run_checks,
    sample_rows,
)

NOTES = b"""# Operating Systems

## Module 2: Process scheduling

Round robin gives every process a fixed time slice. Shortest job first minimises the average
waiting time. Deadlocks need mutual exclusion, hold and wait, no preemption and circular wait.

## Module 3: Memory

Paging splits memory into fixed-size frames; segmentation uses variable-size segments.
"""


# --- helpers -----------------------------------------------------------------------------------------


def _client(settings: Settings) -> Any:
    """A plain client; typed Any because redis-py's stubs give sync replies as ``Awaitable | Any``."""
    assert settings.redis_url
    return redis.Redis.from_url(settings.redis_url)


def _index(settings: Settings, collection: str = "course", embedder: Embedder | None = None) -> None:
    report = Engine(settings, embedder=embedder).ingest(collection, [("os-notes.md", NOTES)], who="test")
    assert report.changed and all(f.ok for f in report.files), report


def _beat(settings: Settings, worker_id: str) -> None:
    """One heartbeat written by the function the worker itself uses."""

    async def once() -> None:
        assert settings.redis_url
        client = aioredis.Redis.from_url(settings.redis_url)
        try:
            await beat(client, Keys(settings.key_prefix), worker_id)
        finally:
            await client.aclose()

    asyncio.run(once())


def _by_name(report: DoctorReport) -> dict[str, Check]:
    return {c.name: c for c in report.checks}


def _server_ms(client: Any) -> float:
    seconds, micros = client.time()
    return seconds * 1000.0 + micros / 1000.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _everything_printed(report: DoctorReport) -> str:
    """Every way the report reaches a person or a script."""
    return "\n".join([render_table(report), report.to_json(), repr(report.checks)])


# --- a healthy deployment ------------------------------------------------------------------------------


def test_healthy_setup_reports_every_check_ok(settings: Settings) -> None:
    _index(settings)
    _beat(settings, "host-a:123:abc")
    report = run_checks(settings)
    checks = _by_name(report)

    assert report.ok, render_table(report)
    assert checks["redis"].status == "ok" and checks["redis"].data["version"].startswith(("6.", "7.", "8."))
    assert checks["redis memory"].status in ("ok", "warn")
    # Persistence is judged from the server's real settings (CI's Redis runs without any).
    client = _client(settings)
    aof = client.config_get("appendonly")["appendonly"] == "yes"
    rdb = bool(client.config_get("save")["save"].strip())
    assert checks["redis persistence"].status == ("ok" if aof else "warn"), rdb

    workers = checks["workers"]
    assert workers.status == "ok" and "host-a:123:abc" in workers.detail
    assert [w["id"] for w in workers.data["workers"]] == ["host-a:123:abc"]
    assert 0.0 <= workers.data["workers"][0]["last_beat_s"] < 5.0
    assert checks["queue"].status == "ok" and checks["queue"].data["depth"] == 0

    assert checks["embedder"].status == "ok"
    assert checks["embedder"].data["dim"] == 256 and checks["embedder"].data["returned_dims"] == [256]

    course = checks["collection course"]
    store = CollectionStore(client, Keys(settings.key_prefix))
    version = store.current_version("course")
    snapshot = store.load_snapshot("course", version or "")
    assert snapshot is not None
    assert course.status == "ok", course.detail
    assert course.data["documents"] == 1
    assert course.data["chunks"] == len(snapshot) > 0
    assert course.data["version"] == version
    assert course.data["embedder_id"] == "hashing-trigram-256" and course.data["dim"] == 256
    assert course.data["sampled"] == min(32, len(snapshot))
    assert course.data["worst_norm_error"] < 1e-3

    assert checks["llm endpoint"].data == {"configured": False}
    assert checks["discord bot"].status == checks["slack bot"].status == "warn"  # no tokens here

    as_json = json.loads(report.to_json())
    assert as_json["ok"] is True
    assert [c["name"] for c in as_json["checks"]] == [c.name for c in report.checks]
    assert as_json["summary"]["fail"] == 0
    table = render_table(report)
    assert "FAIL" not in table
    warnings = len(report.warnings)
    assert table.splitlines()[-1].startswith(f"{warnings} problem")


# --- workers -------------------------------------------------------------------------------------------


def test_no_live_worker_is_a_failure_when_a_bot_is_configured(settings: Settings) -> None:
    settings = settings.model_copy(update={"discord_token": "configured-bot-token"})
    _index(settings)
    client = _client(settings)
    keys = Keys(settings.key_prefix)
    # What a worker leaves behind once it stopped beating: its score (beat + TTL) is in the past.
    client.zadd(keys.workers, {"host-b:9:dead": _server_ms(client) / 1000.0 - 5.0})

    report = run_checks(settings)
    workers = _by_name(report)["workers"]

    assert not report.ok
    assert workers.status == "fail"
    assert "no worker is running" in workers.detail and "1 stopped beating" in workers.detail
    assert workers.data["live"] == 0
    assert [w["id"] for w in workers.data["stale"]] == ["host-b:9:dead"]
    line = next(row for row in render_table(report).splitlines() if row.startswith("workers "))
    assert "FAIL" in line


def test_no_worker_is_how_a_terminal_only_class_runs(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No bot configured: the CLI answers in its own process, so no worker is no failure."""
    from syllabot import cli

    assert not settings.discord_token and not settings.slack_bot_token
    _index(settings)
    workers = _by_name(run_checks(settings))["workers"]
    assert workers.status == "ok" and "no bot is configured" in workers.detail
    assert "run in their own process" in workers.detail and "syllabot worker" in workers.detail
    monkeypatch.setattr(cli, "get_settings", lambda: settings)
    assert cli.main(["doctor"]) == 0, capsys.readouterr().out


def test_queue_depth_running_waiting_and_oldest_wait(settings: Settings) -> None:
    client = _client(settings)
    keys = Keys(settings.key_prefix)
    now = _server_ms(client)
    running_id = f"doctor-test-{settings.key_prefix.split(':')[1]}"
    # As the enqueue script writes them: job id scored by its enqueue time (server clock, ms).
    client.zadd(
        keys.queue,
        {"old": now - 40_000, "new": now - 1_000, running_id: now - 50_000, "retry": now + 60_000},
    )
    client.set(in_progress_key_prefix + running_id, "1", px=60_000)
    try:
        check = check_queue(client, keys)
    finally:
        client.delete(in_progress_key_prefix + running_id)

    assert check.data["depth"] == 4
    assert (check.data["running"], check.data["waiting"], check.data["deferred"]) == (1, 2, 1)
    assert 39.0 <= check.data["oldest_waiting_s"] <= 45.0  # the running job's age does not count
    assert check.status == "warn" and "not keeping up" in check.detail

    client.zrem(keys.queue, "old", running_id)
    fresh = check_queue(client, keys)
    assert fresh.status == "ok" and fresh.data["waiting"] == 1 and fresh.data["oldest_waiting_s"] < 5.0


# --- collections ---------------------------------------------------------------------------------------


def test_index_built_by_another_embedder_fails_with_the_reindex_command(settings: Settings) -> None:
    _index(settings, embedder=HashingEmbedder(128))
    _beat(settings, "host-a:1:abc")
    report = run_checks(settings)
    course = _by_name(report)["collection course"]

    assert course.status == "fail"
    assert "built by hashing-trigram-128" in course.detail
    assert "workers run hashing-trigram-256" in course.detail
    assert "`syllabot index --reindex -c course`" in course.detail
    assert [c.name for c in report.failures] == ["collection course"]


@pytest.mark.parametrize("loader_checks", [True, False], ids=["loader-refuses", "sample-catches"])
def test_a_stored_non_unit_vector_fails_and_other_collections_are_still_checked(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, loader_checks: bool
) -> None:
    _index(settings, "course")
    _index(settings, "other")
    _beat(settings, "host-a:1:abc")
    client = _client(settings)
    keys = Keys(settings.key_prefix)
    version = CollectionStore(client, keys).current_version("course")
    assert version
    snap_key = keys.snapshot("course", version)
    meta = json.loads(client.hget(snap_key, "meta") or b"{}")
    matrix = (
        np.frombuffer(client.hget(snap_key, "matrix") or b"", dtype="<f4").reshape(meta["count"], -1).copy()
    )
    matrix[0] *= 0.5  # the incident's signature: a vector of length 0.5
    client.hset(snap_key, "matrix", matrix.astype("<f4").tobytes())
    if not loader_checks:  # a future lazy loader that skips the full check: the sample must catch it
        monkeypatch.setattr("syllabot.worker.indexes.index.check_unit_rows", lambda matrix: None)

    report = run_checks(settings)
    checks = _by_name(report)
    course = checks["collection course"]

    assert course.status == "fail"
    assert "not unit length" in course.detail.lower()
    assert "`syllabot index --reindex -c course`" in course.detail
    assert course.data["embedder_id"] == "hashing-trigram-256"
    if not loader_checks:
        assert course.data["worst_norm_error"] == pytest.approx(0.5, abs=1e-3)
    assert checks["collection other"].status == "ok"
    assert [c.name for c in report.failures] == ["collection course"]


def test_a_current_pointer_to_a_missing_snapshot_fails(settings: Settings) -> None:
    _index(settings)
    client = _client(settings)
    keys = Keys(settings.key_prefix)
    version = CollectionStore(client, keys).current_version("course")
    assert version
    client.delete(keys.snapshot("course", version))

    course = _by_name(run_checks(settings))["collection course"]

    assert course.status == "fail"
    assert version in course.detail and "missing" in course.detail
    assert "--reindex -c course" in course.detail


def test_sample_rows_spread_over_the_whole_index() -> None:
    rows = sample_rows(1000, 32)
    assert len(rows) == 32 and rows[0] == 0 and rows[-1] == 999
    assert sample_rows(5, 32) == [0, 1, 2, 3, 4]
    assert sample_rows(0, 32) == []


# --- Redis ---------------------------------------------------------------------------------------------


def test_unreachable_redis_fails_fast_and_the_other_checks_still_run(settings: Settings) -> None:
    port = _free_port()
    dead = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{port}/0"})

    started = time.monotonic()
    report = run_checks(dead)
    elapsed = time.monotonic() - started
    checks = _by_name(report)

    assert elapsed < 5.0
    assert not report.ok
    assert checks["redis"].status == "fail"
    assert f"127.0.0.1:{port}" in checks["redis"].detail and "unreachable" in checks["redis"].detail
    for name in ("workers", "queue", "collections"):
        assert checks[name].status == "fail" and "not checked" in checks[name].detail
    assert checks["embedder"].status == "ok"  # isolation: checks not needing Redis still answer
    assert checks["discord bot"].status == "warn"


@pytest.mark.parametrize(
    ("version", "status"),
    [("4.0.14", "fail"), ("5.0.7", "fail"), ("6.0.16", "warn"), ("6.2.0", "ok"), ("7.0.15", "ok")],
)
def test_redis_version_thresholds(version: str, status: str) -> None:
    assert assess_version(version)[0] == status


def test_replication_assessment_names_primary_replicas_and_lag() -> None:
    """What ``doctor`` says of INFO replication: a replica used as the primary fails, Sentinel without
    a replica warns, fewer replicas online than writes wait for fails, and each replica's lag shows."""
    single = doctor.assess_replication({"role": "master", "connected_slaves": 0}, 0)
    assert single.status == "ok" and "single server" in single.detail
    replica = doctor.assess_replication({"role": "slave", "master_host": "10.0.0.5", "master_port": 6379}, 0)
    assert replica.status == "fail" and "replica of 10.0.0.5:6379" in replica.detail
    lonely = doctor.assess_replication(
        {"role": "master", "master_repl_offset": 900}, 0, primary="10.0.0.5:6379"
    )
    assert lonely.status == "warn" and "no replica to promote" in lonely.detail
    info = {
        "role": "master",
        "master_repl_offset": 1000,
        "slave0": {"ip": "10.0.0.6", "port": 6379, "state": "online", "offset": 960, "lag": 1},
    }
    healthy = doctor.assess_replication(info, 1, primary="10.0.0.5:6379")
    assert healthy.status == "ok", healthy
    assert "primary 10.0.0.5:6379 (from the Sentinels)" in healthy.detail
    assert "10.0.0.6:6379 online, lag 1 s, 40 bytes behind" in healthy.detail
    short = doctor.assess_replication(info, 2, primary="10.0.0.5:6379")
    assert short.status == "fail" and "wait for 2 (SYLLABOT_REDIS_MIN_REPLICAS)" in short.detail


def test_persistence_and_memory_assessments() -> None:
    assert assess_persistence(False, "", {}).status == "warn"
    assert "restart loses" in assess_persistence(False, "", {}).detail
    assert assess_persistence(True, "", {"aof_last_write_status": "ok"}).status == "ok"
    # RDB without AOF (appendonly no): a crash loses minutes of writes, and the README asks for AOF
    rdb_only = assess_persistence(False, "3600 1 300 100", {"rdb_last_bgsave_status": "ok"})
    assert rdb_only.status == "warn" and "set appendonly yes" in rdb_only.detail
    assert "since the last snapshot" in rdb_only.detail
    failed = assess_persistence(False, "3600 1", {"rdb_last_bgsave_status": "err"})
    assert failed.status == "fail" and "refuse" in failed.detail
    assert assess_persistence(None, None, {}).status == "warn"  # CONFIG forbidden, AOF unknown

    evicting = assess_memory({"used_memory": 10, "maxmemory": 100, "maxmemory_policy": "allkeys-lru"})
    assert evicting.status == "warn" and "evict" in evicting.detail and "noeviction" in evicting.detail
    full = assess_memory({"used_memory": 95, "maxmemory": 100, "maxmemory_policy": "noeviction"})
    assert full.status == "warn" and "refuse writes" in full.detail
    fine = assess_memory({"used_memory": 10, "maxmemory": 0, "maxmemory_policy": "noeviction"})
    assert fine.status == "ok" and fine.data["policy"] == "noeviction"


# --- embedder ------------------------------------------------------------------------------------------


class _Truncating(Embedder):
    """The incident: unit vectors of 256 dims cut to their first ``keep`` without renormalising."""

    def __init__(self, keep: int, declared: int) -> None:
        self.inner = HashingEmbedder(256)
        self.keep = keep
        self.dim = declared
        self.id = f"truncating-{keep}"

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - bypassed
        raise NotImplementedError

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)[:, : self.keep]

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)[: self.keep]


def test_an_embedder_returning_non_unit_vectors_is_a_loud_failure() -> None:
    check = check_embedder(_Truncating(keep=64, declared=64))
    assert check.status == "fail"
    assert "NOT UNIT VECTORS" in check.detail and "normalise()" in check.detail
    assert check.data["worst_norm_error"] > 1e-3
    assert all(n < 0.999 for n in check.data["norms"])

    wrong_dim = check_embedder(_Truncating(keep=64, declared=256))
    assert wrong_dim.status == "fail" and "64 dimensions but declares 256" in wrong_dim.detail

    assert check_embedder(HashingEmbedder(256)).status == "ok"


def test_a_hanging_check_is_abandoned_and_the_others_still_report(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    class Hanging(HashingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            release.wait(10)
            return super().embed_documents(texts)

    monkeypatch.setitem(doctor.TIMEOUTS, "embedder", 0.5)
    started = time.monotonic()
    try:
        report = run_checks(settings, embedder=Hanging(256))
    finally:
        release.set()
    checks = _by_name(report)

    assert time.monotonic() - started < 3.0
    assert checks["embedder"].status == "fail" and "no result within 0.5 s" in checks["embedder"].detail
    assert checks["redis"].status == "ok" and checks["queue"].status == "ok"


def test_a_check_that_raises_is_reported_not_propagated(settings: Settings) -> None:
    class Broken(HashingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            raise RuntimeError("model file is corrupt")

    report = run_checks(settings, embedder=Broken(256))
    checks = _by_name(report)
    assert checks["embedder"].status == "fail"
    assert "RuntimeError: model file is corrupt" in checks["embedder"].detail
    assert checks["redis"].status == "ok"


# --- LLM endpoint ----------------------------------------------------------------------------------------

API_KEY = "sk-doctor-test-0123456789abcdef"


@pytest.fixture
def fake_llm() -> Iterator[dict[str, Any]]:
    """An OpenAI-compatible ``GET /v1/models`` on 127.0.0.1 answering with ``state['status']``."""
    state: dict[str, Any] = {"status": 401, "models": ["gpt-4o-mini"], "requests": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state["requests"].append((self.path, self.headers.get("Authorization")))
            if state["status"] == 200:
                body = json.dumps({"object": "list", "data": [{"id": m} for m in state["models"]]})
            else:  # real endpoints echo part of the key back; the doctor must not pass it on
                body = json.dumps({"error": {"message": f"Incorrect API key provided: {API_KEY}"}})
            payload = body.encode()
            self.send_response(state["status"])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["base"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    server.shutdown()
    server.server_close()


def _llm_settings(settings: Settings, base: str) -> Settings:
    return settings.model_copy(update={"answerer": "openai", "llm_base_url": base, "llm_api_key": API_KEY})


def test_llm_endpoint_refusing_the_key_fails_and_the_key_is_never_printed(
    settings: Settings, fake_llm: dict[str, Any]
) -> None:
    report = run_checks(_llm_settings(settings, fake_llm["base"]))
    llm = _by_name(report)["llm endpoint"]

    assert fake_llm["requests"] == [("/v1/models", f"Bearer {API_KEY}")]  # the key was really sent
    assert llm.status == "fail"
    assert "HTTP 401" in llm.detail and "SYLLABOT_LLM_API_KEY" in llm.detail
    assert API_KEY not in _everything_printed(report)


@pytest.mark.parametrize(
    ("status", "models", "expected"),
    [(200, ["gpt-4o-mini", "other"], "ok"), (200, ["other"], "warn"), (404, [], "warn"), (500, [], "fail")],
)
def test_llm_endpoint_answers(
    settings: Settings, fake_llm: dict[str, Any], status: int, models: list[str], expected: str
) -> None:
    fake_llm["status"], fake_llm["models"] = status, models
    report = run_checks(_llm_settings(settings, fake_llm["base"]))
    llm = _by_name(report)["llm endpoint"]
    assert llm.status == expected, llm.detail
    assert llm.data["http_status"] == status
    assert API_KEY not in _everything_printed(report)


def test_llm_endpoint_unreachable_fails_and_a_key_inside_the_url_is_scrubbed(settings: Settings) -> None:
    base = f"http://127.0.0.1:{_free_port()}/{API_KEY}/v1"  # some proxies take the key in the path
    report = run_checks(_llm_settings(settings, base))
    llm = _by_name(report)["llm endpoint"]
    assert llm.status == "fail" and "could not reach" in llm.detail
    assert "***" in llm.detail
    assert API_KEY not in _everything_printed(report)


# --- bot tokens ------------------------------------------------------------------------------------------


def test_missing_bot_tokens_are_warnings(settings: Settings) -> None:
    checks = {c.name: c for c in check_bot_tokens(settings)}
    assert checks["discord bot"].status == "warn" and "DISCORD_TOKEN missing" in checks["discord bot"].detail
    assert checks["slack bot"].status == "warn" and "SLACK_BOT_TOKEN missing" in checks["slack bot"].detail

    only_bot_token = settings.model_copy(update={"slack_bot_token": "xoxb-only-0123456789"})
    slack = {c.name: c for c in check_bot_tokens(only_bot_token)}["slack bot"]
    assert slack.status == "warn" and "SLACK_APP_TOKEN" in slack.detail


def test_present_bot_tokens_are_ok_and_never_printed(settings: Settings) -> None:
    secrets = {
        "discord_token": "discord-secret-0123456789",
        "slack_bot_token": "xoxb-secret-0123456789",
        "slack_app_token": "xapp-secret-0123456789",
        "slack_signing_secret": "signing-secret-0123456789",
    }
    report = run_checks(settings.model_copy(update=secrets))
    checks = _by_name(report)
    assert checks["discord bot"].status == "ok"
    assert checks["slack bot"].status == "ok" and "Socket Mode" in checks["slack bot"].detail
    assert checks["slack bot"].data["SLACK_SIGNING_SECRET"] == "set"
    printed = _everything_printed(report)
    assert not [value for value in secrets.values() if value in printed]


# --- the report ------------------------------------------------------------------------------------------


def test_render_table_columns_statuses_and_summary() -> None:
    report = DoctorReport(
        [
            Check("redis", "ok", "reachable"),
            Check("collection a-long-name", "warn", "no index yet " * 20),
            Check("workers", "fail", "no worker is running"),
        ]
    )
    table = render_table(report, width=80)
    lines = table.splitlines()

    assert not report.ok
    assert lines[-1] == "2 problems (1 failure, 1 warning)"
    rows = [line for line in lines[2:-1] if not line.startswith(" ")]
    assert [row.split()[0] for row in rows] == ["redis", "collection", "workers"]
    detail_at = {
        row.index(word) for row, word in zip(rows, ["reachable", "no index", "no worker"], strict=True)
    }
    assert len(detail_at) == 1  # every detail starts in the same column
    assert {"OK", "WARN", "FAIL"} <= set(table.split())
    assert all(len(line) <= 80 for line in lines)
    column = detail_at.pop()
    continuation = [line for line in lines[2:-1] if line.startswith(" ")]
    assert continuation and all(line[:column].strip() == "" and line[column] != " " for line in continuation)

    good = DoctorReport([Check("redis", "ok", "reachable")])
    assert good.ok and render_table(good).splitlines()[-1] == "all good"
    assert json.loads(good.to_json()) == {
        "ok": True,
        "summary": {"ok": 1, "warn": 0, "fail": 0},
        "checks": [{"name": "redis", "status": "ok", "detail": "reachable", "data": {}}],
    }
    only_warn = DoctorReport([Check("slack bot", "warn", "missing")])
    assert only_warn.ok and render_table(only_warn).splitlines()[-1] == "1 problem (1 warning)"


# --- the command line --------------------------------------------------------------------------------


def test_cli_doctor_exits_non_zero_on_a_failure_and_prints_json(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from syllabot import cli

    settings = settings.model_copy(
        update={"slack_bot_token": "xoxb-configured", "slack_signing_secret": "s3cret-value"}
    )
    _index(settings)
    monkeypatch.setattr(cli, "get_settings", lambda: settings)
    assert cli.main(["doctor", "--json"]) == 1  # a bot is configured and no worker beats: a failure
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert {c["name"]: c["status"] for c in report["checks"]}["workers"] == "fail"

    _beat(settings, "host-a:1:cli")
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["CHECK", "STATUS", "DETAIL"]
    assert "FAIL" not in out


def test_a_real_redis_with_snapshots_but_no_aof_is_warned_about(tmp_path: Path) -> None:
    """Issue 49: `appendonly no` with RDB rules passed as healthy, though the README asks for AOF."""
    from syllabot.worker.ops.doctor import check_persistence
    from tests.queue_helpers import private_redis

    with private_redis() as server:
        client = redis.Redis.from_url(server.url)
        try:
            client.config_set("dir", str(tmp_path))
            client.config_set("save", "3600 1 300 100")
            warned = check_persistence(client)
            assert warned.status == "warn", warned
            assert warned.detail.startswith("AOF off; RDB save '3600 1 300 100': without AOF a crash loses")
            client.config_set("appendonly", "yes")
            assert check_persistence(client).status == "ok"
        finally:
            client.close()
