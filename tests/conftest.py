"""Shared fixtures: a real Redis with a private key prefix per test, settings pointing at it, and
the one worker fixture (``worker``: a real ``FastWorker`` in the test's event loop).

Tests never FLUSHDB: several test runs (and developers) may share the machine's Redis, so each
test gets its own ``key_prefix`` and removes only its own keys afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis

from syllabot.shared.config import Settings, get_settings

if TYPE_CHECKING:
    from syllabot.worker.main import FastWorker

REDIS_URL = os.environ.get("SYLLABOT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"
SHARED_DATA = REPO.parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _redis_or_fail() -> redis.Redis:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as exc:  # a missing Redis is a broken setup, not a skip
        pytest.fail(f"tests need a Redis server at {REDIS_URL} ({exc}); .ci/run starts one")
    return client


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A unique key prefix; every key under it is deleted after the test."""
    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    client = _redis_or_fail()
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def settings(redis_prefix: str, tmp_path: Path) -> Settings:
    """Settings on the real Redis with the deterministic hashing embedder (fast, offline)."""
    _redis_or_fail().close()
    return Settings(
        redis_url=REDIS_URL,
        data_dir=tmp_path / "data",
        key_prefix=redis_prefix,
        embedder="hashing",
        answerer="extractive",
        _env_file=None,
    )


@pytest.fixture
def env(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Settings]:
    """The environment ``cli.main`` reads, pointing at the test's Redis prefix, working in the
    test's folder; no stray .env. For tests that call the command in-process."""
    values = {
        "REDIS_URL": settings.redis_url or "",
        "SYLLABOT_KEY_PREFIX": settings.key_prefix,
        "SYLLABOT_DATA_DIR": str(settings.data_dir),
        "SYLLABOT_EMBEDDER": "hashing",
        "SYLLABOT_ANSWERER": "extractive",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    yield settings
    get_settings.cache_clear()


@pytest.fixture
def minilm_settings(settings: Settings) -> Settings:
    """The same, with the bundled default MiniLM model."""
    return settings.model_copy(update={"embedder": "minilm"})


@pytest.fixture
async def worker(settings: Settings) -> AsyncIterator[FastWorker]:
    """A real worker (arq, woken over pub/sub) in the test's event loop on ``settings``, ready once it
    beats, closed after the test. The one way tests start a worker in-process: a test that needs a
    stand-in engine or answerer, or other settings, uses the same ``tests.queue_helpers.running_worker``
    directly; worker processes come from ``tests.queue_helpers.worker_processes``."""
    from tests.queue_helpers import running_worker

    async with running_worker(settings) as started:
        yield started


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test when that folder is absent (e.g. outside CI)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path
