"""`syllabot doctor`: can this deployment answer questions, and if not, what exactly is wrong.

The checks return data (:class:`Check`, :class:`DoctorReport`) and :func:`render_table` turns it into
text, so the table for people and ``--json`` for scripts and monitoring come from one source and
cannot disagree. The CLI calls :func:`run_checks` and exits non-zero when ``report.ok`` is False.

Design choices, and why:

* **Every group of checks runs in its own daemon thread with its own deadline.** A doctor is run when
  something is already wrong; its job is to name *everything* that is wrong in one run. A Redis that
  stalls, a model that will not load or an LLM endpoint that never answers must not hide the results
  of the checks that do not depend on them, and must not hang the command. A group that misses its
  deadline is reported as a failure and abandoned (daemon threads do not keep the process alive).
* **The product's own code does the reading**: the Redis URL comes from
  :func:`shared.redis_conn.resolve_redis_url` (``REDIS_URL`` or the embedded server, exactly as the
  bots and workers resolve it), the heartbeat and queue rules from :mod:`shared.queue_protocol`, snapshots are
  loaded with :class:`worker.indexes.store.CollectionStore` / :class:`worker.indexes.index.IndexSnapshot` and the
  embedder with :func:`worker.indexes.embedders.get_embedder`. A doctor with its own decoding could report a
  healthy index the workers cannot load, or the reverse.
* **No secret ever reaches the report.** Checks only say whether a token is set; on top of that every
  string in the finished report is scrubbed of every configured secret (API keys, bot tokens, the
  Redis password), because error messages from libraries are not under our control.
* **The unit-length checks are loud.** The product exists because truncated embeddings that were not
  unit vectors made every cosine small and every question come back empty, with nothing in any log.
  The embedder check and the per-collection vector sample say so in words an operator cannot misread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import textwrap
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import httpx
import numpy as np
import redis

from syllabot.shared.bindings import SAMPLE_COLLECTION
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue_protocol import HEARTBEAT_INTERVAL_S, HEARTBEAT_TTL_S
from syllabot.shared.redis_conn import describe, is_sentinel, resolve_redis_url, sync_client_at, unreachable
from syllabot.shared.wording import plural
from syllabot.worker.indexes.embedders import Embedder, get_embedder, graph_of, served_as_earlier
from syllabot.worker.indexes.index import UNIT_TOLERANCE, CorruptSnapshot
from syllabot.worker.indexes.store import CollectionStore

#: Every failed check becomes a finding in the report; its traceback goes here (debug level).
log = logging.getLogger("syllabot.doctor")

Status = Literal["ok", "warn", "fail"]

#: Deadline, in seconds, of each group of checks. Generous for the embedder and the collections
#: (loading a model, or a 100k-chunk snapshot, takes seconds); short where an answer is instant or
#: never comes. A module-level dict so tests (and a future ``--timeout``) can tighten them.
TIMEOUTS: dict[str, float] = {
    "redis": 8.0,
    "workers": 8.0,
    "embedder": 60.0,
    "llm": 10.0,
    "collections": 60.0,
    "bots": 5.0,
}
#: Socket timeouts of the doctor's Redis client: an unreachable or stalled server is reported in
#: seconds instead of hanging the command (the product's plain ``sync_client`` has none).
REDIS_CONNECT_TIMEOUT_S = 2.0
REDIS_COMMAND_TIMEOUT_S = 5.0
#: Upper bound of the LLM endpoint probe, whatever ``SYLLABOT_LLM_TIMEOUT_S`` allows answers.
LLM_PROBE_TIMEOUT_S = 5.0
#: How many stored vectors of each collection are measured.
VECTOR_SAMPLE = 32
#: How many queue entries are inspected for running/waiting state (the queue is normally near empty).
QUEUE_SCAN = 100
#: A question normally waits milliseconds for a worker; one waiting this long means the workers
#: cannot keep up or none is claiming, and students are close to their ``SYLLABOT_ASK_TIMEOUT_S``.
QUEUE_STALE_S = 30.0
#: Used memory above this share of ``maxmemory`` is flagged: with ``noeviction`` Redis then refuses
#: writes, so the next upload fails.
MEMORY_HIGH_SHARE = 0.9

_CHECK_ORDER = ("redis", "workers", "embedder", "llm", "collections", "bots")


# --- the report -------------------------------------------------------------------------------------


@dataclass
class Check:
    """One line of the report: ``detail`` for people (one line), ``data`` for ``--json``."""

    name: str
    status: Status
    detail: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "data": self.data}


@dataclass
class DoctorReport:
    checks: list[Check]

    @property
    def ok(self) -> bool:
        """False when any check failed; warnings (e.g. a bot that is not configured) do not count."""
        return not any(c.status == "fail" for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.status == "warn"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "summary": {
                "ok": sum(c.status == "ok" for c in self.checks),
                "warn": len(self.warnings),
                "fail": len(self.failures),
            },
            "checks": [c.to_dict() for c in self.checks],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def render_table(report: DoctorReport, width: int = 110) -> str:
    """A fixed-width table (check, status, detail) and a last line saying how many problems.

    Long details wrap under the detail column, so the status column stays scannable. "Problems"
    counts failures and warnings (both deserve a look); only failures make the exit status non-zero.
    """
    name_w = max([len("CHECK"), *(len(c.name) for c in report.checks)])
    status_w = len("STATUS")
    indent = name_w + 2 + status_w + 2
    detail_w = max(30, width - indent)
    lines = [f"{'CHECK':<{name_w}}  {'STATUS':<{status_w}}  DETAIL", "-" * min(width, indent + detail_w)]
    for check in report.checks:
        wrapped = textwrap.wrap(check.detail, detail_w, break_on_hyphens=False) or [""]
        lines.append(f"{check.name:<{name_w}}  {check.status.upper():<{status_w}}  {wrapped[0]}")
        lines.extend(" " * indent + rest for rest in wrapped[1:])
    fails, warns = len(report.failures), len(report.warnings)
    problems = fails + warns
    if problems == 0:
        lines.append("all good")
    else:
        parts = [plural(fails, "failure")] if fails else []
        parts += [plural(warns, "warning")] if warns else []
        lines.append(f"{plural(problems, 'problem')} ({', '.join(parts)})")
    return "\n".join(lines)


# --- running ----------------------------------------------------------------------------------------


def run_checks(settings: Settings, *, embedder: Embedder | None = None) -> DoctorReport:
    """Run every check against these settings and return the report (never raises).

    ``embedder`` replaces the configured one (tests; a caller that already loaded it). Redis is
    reached first because three groups need it; the groups that do not (embedder, LLM, bot tokens)
    start at the same time, so a slow Redis does not delay them.
    """
    keys = Keys(settings.key_prefix)
    shared: dict[str, Any] = {}

    def redis_group() -> list[Check]:
        client, checks = connect_and_check_redis(settings)
        shared["client"] = client
        return checks

    def embedder_group() -> list[Check]:
        loaded, problem = _load_embedder(settings, embedder)
        return [check_embedder(loaded)] if loaded is not None else [problem] if problem else []

    first = {
        "redis": _Group("redis", redis_group),
        "embedder": _Group("embedder", embedder_group),
        "llm": _Group("llm", lambda: [check_llm(settings)]),
        "bots": _Group("bots", lambda: check_bot_tokens(settings)),
    }
    for group in first.values():
        group.start()
    results: dict[str, list[Check]] = {"redis": first["redis"].finish()}

    client: redis.Redis | None = shared.get("client")
    if client is None:
        second = {
            "workers": _Group(
                "workers",
                lambda: [_not_checked("workers"), _not_checked("queue"), _not_checked("snapshot cache")],
            ),
            "collections": _Group("collections", lambda: [_not_checked("collections")]),
        }
    else:
        live = client

        def collections_group() -> list[Check]:
            loaded, _ = _load_embedder(settings, embedder)
            return check_collections(live, keys, loaded)

        second = {
            "workers": _Group(
                "workers",
                lambda: [
                    check_workers(live, keys, bots=bool(settings.discord_token or settings.slack_bot_token)),
                    check_queue(live, keys),
                    check_snapshot_cache(live, keys),
                ],
            ),
            "collections": _Group("collections", collections_group),
        }
    for group in second.values():
        group.start()
    for name, group in {**first, **second}.items():
        if name not in results:
            results[name] = group.finish()
    if client is not None:
        client.close()
    checks = [check for name in _CHECK_ORDER for check in results.get(name, [])]
    return _redact(DoctorReport(checks), _secrets(settings))


class _Group:
    """One group of checks in a daemon thread, with a deadline counted from its start."""

    def __init__(self, name: str, run: Callable[[], list[Check]]) -> None:
        self.name = name
        self.timeout = TIMEOUTS.get(name, 10.0)
        self._run = run
        self._result: list[Check] = []
        self._error: BaseException | None = None
        self._started = 0.0
        self._thread = threading.Thread(target=self._target, name=f"doctor-{name}", daemon=True)

    def _target(self) -> None:
        try:
            self._result = self._run()
        except BaseException as exc:  # a broken check is a finding, not a crash of the doctor
            log.debug("check thread failed", exc_info=True)
            self._error = exc

    def start(self) -> None:
        self._started = time.monotonic()
        self._thread.start()

    def finish(self) -> list[Check]:
        self._thread.join(max(0.0, self._started + self.timeout - time.monotonic()))
        if self._thread.is_alive():
            return [
                Check(
                    self.name,
                    "fail",
                    f"no result within {self.timeout:g} s; the check was abandoned",
                    {"timeout_s": self.timeout},
                )
            ]
        if self._error is not None:
            return [
                Check(
                    self.name,
                    "fail",
                    f"the check itself failed: {type(self._error).__name__}: {self._error}",
                    {"error": type(self._error).__name__},
                )
            ]
        return self._result


def _not_checked(name: str) -> Check:
    # A failure, not a warning: with Redis down no question reaches a worker and no index is
    # readable, so "unknown" is as bad as broken for the people asking.
    return Check(name, "fail", "not checked: Redis is unreachable (see the redis line)", {"checked": False})


def _load_embedder(settings: Settings, given: Embedder | None) -> tuple[Embedder | None, Check | None]:
    if given is not None:
        return given, None
    try:
        return get_embedder(settings), None  # cached per process: the collections check shares it
    except Exception as exc:
        log.debug("embedder check failed", exc_info=True)
        return None, Check(
            "embedder",
            "fail",
            f"could not load the {settings.embedder!r} embedder (SYLLABOT_EMBEDDER): "
            f"{type(exc).__name__}: {exc}",
            {"embedder": settings.embedder, "error": type(exc).__name__},
        )


# --- 1. Redis --------------------------------------------------------------------------------------


def connect_and_check_redis(settings: Settings) -> tuple[redis.Redis | None, list[Check]]:
    """Reach the Redis the product would use; the client (None when unreachable) and the checks.

    The URL is resolved by the product's own :func:`resolve_redis_url` (so the embedded server is
    found or started exactly as ``syllabot worker`` would); the client adds socket timeouts.
    """
    url = "(unresolved)"
    client: redis.Redis | None = None
    try:
        url = resolve_redis_url(settings)
        client = sync_client_at(
            url, socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S, socket_timeout=REDIS_COMMAND_TIMEOUT_S
        )
        started = time.perf_counter()
        client.ping()
        ping_ms = (time.perf_counter() - started) * 1000.0
    except Exception as exc:
        log.debug("redis check failed", exc_info=True)
        if client is not None:
            client.close()
        return None, [
            Check(
                "redis",
                "fail",
                unreachable(url, exc),
                {"url": describe(url), "reachable": False, "error": type(exc).__name__},
            )
        ]
    server = _info(client, "server")
    version = str(server.get("redis_version", "unknown"))
    status, why = assess_version(version)
    detail = f"reachable at {describe(url)}, Redis {version} (ping {ping_ms:.1f} ms)"
    checks = [
        Check(
            "redis",
            status,
            f"{detail}; {why}" if why else detail,
            {"url": describe(url), "reachable": True, "version": version, "ping_ms": round(ping_ms, 2)},
        )
    ]
    checks.append(_guard("redis persistence", lambda: check_persistence(client)))
    checks.append(_guard("redis memory", lambda: assess_memory(_info(client, "memory"))))
    checks.append(
        _guard(
            "redis replicas",
            lambda: assess_replication(
                _info(client, "replication"), settings.replicas_to_wait, primary=_primary_of(client, url)
            ),
        )
    )
    return client, checks


def _info(client: redis.Redis, section: str) -> dict[str, Any]:
    info: Any = client.info(section)
    return dict(info)


def _guard(name: str, run: Callable[[], Check]) -> Check:
    """One sub-check that may raise (a managed Redis refusing INFO, say) without losing its siblings."""
    try:
        return run()
    except Exception as exc:
        log.debug("check %s failed", name, exc_info=True)
        return Check(name, "warn", f"could not be read: {type(exc).__name__}: {exc}", {})


def replicas_of(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The primary's replicas from ``INFO replication`` (``slave0: {ip, port, state, offset, lag}``),
    each with how many bytes of the replication stream it is behind (``behind``)."""
    primary_offset = int(info.get("master_repl_offset", 0) or 0)
    found = []
    for key in sorted(k for k in info if re.fullmatch(r"slave\d+", str(k))):
        entry = info[key]
        if isinstance(entry, str):  # some servers' INFO parsed as "ip=...,port=..."
            entry = dict(part.split("=", 1) for part in entry.split(",") if "=" in part)
        replica = {k: _text(v) for k, v in dict(entry).items()}
        replica["behind"] = max(0, primary_offset - int(replica.get("offset", 0) or 0))
        found.append(replica)
    return found


def _primary_of(client: redis.Redis, url: str) -> str | None:
    """The primary's address the Sentinels name now (None without Sentinel)."""
    if not is_sentinel(url):
        return None
    host, port = cast(Any, client.connection_pool).get_master_address()
    return f"{host}:{port}"


def assess_replication(info: dict[str, Any], required: int, *, primary: str | None = None) -> Check:
    """The primary, its replicas and their lag, against the replicas acknowledged writes wait for.

    Why it matters: with ``REDIS_SENTINELS`` a replica is promoted when the primary dies, and only
    writes a replica had received survive; with fewer live replicas than
    ``SYLLABOT_REDIS_MIN_REPLICAS`` every upload, removal, admin setting and vote is reported as not
    copied. A Syllabot pointed at a replica (``REDIS_URL``) cannot write at all.
    """
    role = str(_text(info.get("role", "unknown")))
    if role in ("slave", "replica"):
        primary = f"{_text(info.get('master_host'))}:{_text(info.get('master_port'))}"
        return Check(
            "redis replicas",
            "fail",
            f"this server is a replica of {primary}, which refuses writes: point REDIS_URL at the "
            "primary, or use REDIS_SENTINELS so the primary is found (and followed after a failover)",
            {"role": role, "primary": primary},
        )
    replicas = replicas_of(info)
    online = [r for r in replicas if r.get("state") == "online"]
    sentinel = primary is not None
    described = ", ".join(
        f"{r.get('ip')}:{r.get('port')} {r.get('state')}, lag {r.get('lag', '?')} s, "
        f"{r['behind']} bytes behind"
        for r in replicas
    )
    data: dict[str, Any] = {
        "role": role,
        "replicas": replicas,
        "online": len(online),
        "required": required,
        "sentinel": sentinel,
        "primary": primary,
    }
    where = f"primary {primary} (from the Sentinels)" if sentinel else "primary"
    head = f"{where} with {len(online)} replica(s) online" + (f": {described}" if described else "")
    if len(online) < required:
        return Check(
            "redis replicas",
            "fail",
            f"{head}; acknowledged writes wait for {required} (SYLLABOT_REDIS_MIN_REPLICAS), so every "
            "upload, removal, admin setting and vote is reported as not copied until one is back",
            data,
        )
    if sentinel and not online:
        return Check(
            "redis replicas",
            "warn",
            f"{head}: Sentinel has no replica to promote if the primary fails, and writes of the last "
            "second before a crash are lost; add a replica",
            data,
        )
    if not sentinel and not online:
        return Check("redis replicas", "ok", "single server (no replicas; REDIS_SENTINELS unset)", data)
    return Check("redis replicas", "ok", head + (f"; writes wait for {required}" if required else ""), data)


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor, *_ = [*(int(n) for n in re.findall(r"\d+", version)[:2]), 0, 0]
    return major, minor


def assess_version(version: str) -> tuple[Status, str]:
    """Status of a Redis server version, and why when it is not ok.

    Below 6.0 is a failure, not a warning: the queue client waits for results with sub-second
    ``BLPOP`` timeouts, which Redis accepts only from 6.0 on (older servers answer "timeout is not an
    integer"), so no answer would ever be delivered. 6.0 and 6.1 work but are past end of life.
    """
    if not re.search(r"\d", version):
        return "warn", "could not read the server version"
    if _version_tuple(version) < (6, 0):
        return (
            "fail",
            f"Redis {version} is too old: answers are delivered with sub-second BLPOP timeouts, "
            "which Redis accepts from 6.0 on; upgrade to 6.2 or newer",
        )
    if _version_tuple(version) < (6, 2):
        return "warn", f"Redis {version} is past end of life; upgrade to 6.2 or newer"
    return "ok", ""


def check_persistence(client: redis.Redis) -> Check:
    """AOF and RDB settings (CONFIG GET when allowed, INFO otherwise) judged by :func:`assess_persistence`."""
    info = _info(client, "persistence")
    aof: bool | None
    save: str | None
    try:
        config: Any = client.config_get("appendonly")
        aof = str(_text(config.get("appendonly", ""))).lower() == "yes"
        config = client.config_get("save")
        save = str(_text(config.get("save", "")))
    except redis.ResponseError:  # CONFIG renamed or forbidden (managed Redis): INFO still says AOF
        aof = bool(int(info.get("aof_enabled", 0)))
        save = None
    return assess_persistence(aof, save, info)


def assess_persistence(aof: bool | None, save: str | None, info: dict[str, Any]) -> Check:
    """Uploaded documents and indexes live only in Redis: without persistence a restart loses them.

    A failed last save is a failure: with ``stop-writes-on-bgsave-error`` (the default) Redis then
    refuses every write, so uploads, re-indexes and even heartbeats fail.
    """
    data: dict[str, Any] = {
        "aof": aof,
        "rdb_save": save,
        "rdb_last_bgsave_status": _text(info.get("rdb_last_bgsave_status")),
        "aof_last_write_status": _text(info.get("aof_last_write_status")),
    }
    rdb_on = bool(save and save.strip())
    if rdb_on:
        rdb = f"save '{(save or '').strip()}'"
    else:
        rdb = "off" if save is not None else "rules unknown (CONFIG not allowed)"
    described = f"AOF {'on' if aof else 'off'}; RDB {rdb}"
    if data["rdb_last_bgsave_status"] not in (None, "ok") and rdb_on:
        return Check(
            "redis persistence",
            "fail",
            f"{described}; the last RDB save FAILED: Redis may refuse every write until a save succeeds "
            "(stop-writes-on-bgsave-error). Check the server's log and disk.",
            data,
        )
    if data["aof_last_write_status"] not in (None, "ok") and aof:
        return Check(
            "redis persistence",
            "fail",
            f"{described}; the last AOF write FAILED: Redis refuses writes until it can append again. "
            "Check the server's log and disk.",
            data,
        )
    if not aof and not rdb_on:
        if save is None:
            return Check(
                "redis persistence",
                "warn",
                f"{described}: cannot tell whether a restart keeps the documents; enable AOF "
                "(appendonly yes) to be sure",
                data,
            )
        return Check(
            "redis persistence",
            "warn",
            f"{described}: neither AOF nor RDB is on, so a Redis restart loses every uploaded document "
            "and index; set appendonly yes",
            data,
        )
    if not aof:
        # RDB alone snapshots every few minutes at best: a crash loses the uploads, re-indexes,
        # bindings and votes since the last one, and questions in flight (the README asks for AOF).
        return Check(
            "redis persistence",
            "warn",
            f"{described}: without AOF a crash loses everything written since the last snapshot "
            "(uploads, indexes, channel bindings, votes, questions in flight); set appendonly yes",
            data,
        )
    return Check("redis persistence", "ok", described, data)


def assess_memory(info: dict[str, Any]) -> Check:
    """Memory use and the eviction policy.

    Any policy other than ``noeviction`` lets Redis delete keys when it is full: documents and index
    snapshots then disappear without an error anywhere, and questions silently find less.
    """
    used = int(info.get("used_memory", 0))
    maxmemory = int(info.get("maxmemory", 0))
    policy = str(_text(info.get("maxmemory_policy", "unknown")))
    data = {"used_bytes": used, "maxmemory_bytes": maxmemory, "policy": policy}
    limit = f"of {_bytes(maxmemory)} ({used / maxmemory:.0%})" if maxmemory else "(no maxmemory limit)"
    described = f"used {_bytes(used)} {limit}, policy {policy}"
    if policy != "noeviction":
        when = "" if maxmemory else " once a maxmemory limit is set"
        return Check(
            "redis memory",
            "warn",
            f"{described}: Redis will evict keys when full{when}, silently losing documents and "
            "indexes; set maxmemory-policy noeviction",
            data,
        )
    if maxmemory and used >= MEMORY_HIGH_SHARE * maxmemory:
        return Check(
            "redis memory",
            "warn",
            f"{described}: nearly full; with noeviction Redis will refuse writes (uploads fail). "
            "Raise maxmemory or drop collections no class uses (`syllabot collections`, `syllabot drop`)",
            data,
        )
    return Check("redis memory", "ok", described, data)


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"  # pragma: no cover


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


# --- 2. workers and queue --------------------------------------------------------------------------


def _server_time(client: redis.Redis) -> float:
    """The Redis server's clock: heartbeats and queue scores are written with it, not the hosts'."""
    reply: Any = client.time()
    seconds, micros = reply
    return float(seconds) + float(micros) / 1e6


def check_workers(client: redis.Redis, keys: Keys, bots: bool = True) -> Check:
    """Live heartbeats, with the product's rule (``shared.queue_protocol``: score = beat time + TTL, live
    while the score is not in the past by the server's clock).

    The age of a beat assumes the worker used :data:`HEARTBEAT_TTL_S`, as ``worker.runtime.jobs`` does.
    ``bots``: whether a bot is configured (a token set). Without one, no worker is how a
    terminal-only class runs (every command answers in its own process), not a failure.
    """
    now = _server_time(client)
    entries: Any = client.zrange(keys.workers, 0, -1, withscores=True)
    live: list[dict[str, Any]] = []
    stale: list[dict[str, Any]] = []
    for raw_id, score in entries:
        entry = {"id": _text(raw_id), "last_beat_s": round(max(0.0, now - (score - HEARTBEAT_TTL_S)), 2)}
        (live if score >= int(now) else stale).append(entry)
    data: dict[str, Any] = {"live": len(live), "workers": live, "stale": stale}
    if not live and not bots:
        return Check(
            "workers",
            "ok",
            "no worker is running and no bot is configured: `syllabot ask`, `index` and `report` run "
            "in their own process (loading the model each time); start `syllabot worker` to answer "
            "faster or to serve Discord or Slack",
            data,
        )
    if not live:
        gone = f"; {len(stale)} stopped beating" if stale else ""
        return Check(
            "workers",
            "fail",
            f"no worker is running (no live heartbeat in Redis{gone}): the bots would answer nothing. "
            "Start one with `syllabot worker`",
            data,
        )
    shown = ", ".join(f"{w['id']} (beat {w['last_beat_s']:.1f} s ago)" for w in live[:5])
    more = f" and {len(live) - 5} more" if len(live) > 5 else ""
    slow = [w for w in live if w["last_beat_s"] > 3 * HEARTBEAT_INTERVAL_S]
    if slow:
        return Check(
            "workers",
            "warn",
            f"{len(live)} live: {shown}{more}; {len(slow)} beat late (every {HEARTBEAT_INTERVAL_S:g} s "
            "expected): overloaded or stalling",
            data,
        )
    return Check("workers", "ok", f"{len(live)} live: {shown}{more}", data)


def check_queue(client: redis.Redis, keys: Keys) -> Check:
    """Depth of the arq queue (a sorted set job id -> enqueue time in server ms) and the oldest wait.

    arq keeps a job in the queue while it runs (until it finishes); a job is running when its
    ``arq:in-progress:<id>`` claim exists. Entries scored in the future are retries deferred by arq.
    """
    from arq.constants import in_progress_key_prefix

    now_ms = _server_time(client) * 1000.0
    card: Any = client.zcard(keys.queue)
    depth = int(card)
    rows: Any = client.zrange(keys.queue, 0, QUEUE_SCAN - 1, withscores=True)
    with client.pipeline(transaction=False) as pipe:
        for job_id, _ in rows:
            pipe.exists(in_progress_key_prefix + str(_text(job_id)))
        claimed = pipe.execute()
    running = sum(bool(c) for c in claimed)
    waiting = [score for (_, score), c in zip(rows, claimed, strict=True) if not c and score <= now_ms]
    deferred = sum(1 for (_, score), c in zip(rows, claimed, strict=True) if not c and score > now_ms)
    oldest = round((now_ms - min(waiting)) / 1000.0, 2) if waiting else None
    data = {
        "depth": depth,
        "inspected": len(rows),
        "running": running,
        "waiting": len(waiting),
        "deferred": deferred,
        "oldest_waiting_s": oldest,
    }
    if depth == 0:
        return Check("queue", "ok", "empty", data)
    partial = f" (first {len(rows)} inspected)" if depth > len(rows) else ""
    parts = [f"{running} running", f"{len(waiting)} waiting"] + ([f"{deferred} deferred"] if deferred else [])
    detail = f"{depth} jobs{partial}: {', '.join(parts)}"
    if oldest is not None:
        detail += f"; oldest waiting {oldest:.1f} s"
    if oldest is not None and oldest > QUEUE_STALE_S:
        return Check("queue", "warn", f"{detail}: workers are not keeping up, or none is claiming", data)
    return Check("queue", "ok", detail, data)


def check_snapshot_cache(client: redis.Redis, keys: Keys) -> Check:
    """Each live worker's snapshot cache as it published it with its last heartbeat
    (``worker/indexes/snapshot_cache.py``): bytes held against the budget, entries, misses, evictions and the
    mean load time a cold question pays. Warns when a snapshot is bigger than the whole budget."""
    now = _server_time(client)
    ids = [_text(m) for m in cast(list[Any], client.zrangebyscore(keys.workers, int(now), "+inf"))]
    raw = cast(list[Any], client.mget([keys.worker_cache(i) for i in ids])) if ids else []
    workers: list[dict[str, Any]] = []
    for worker_id, value in zip(ids, raw, strict=True):
        if value is None:
            continue
        figures = json.loads(value)
        loads = int(figures.get("loads", 0))
        figures["load_ms_mean"] = (
            round(1000 * float(figures.get("load_seconds", 0.0)) / loads, 2) if loads else None
        )
        workers.append({"id": worker_id, **figures})
    data: dict[str, Any] = {"live": len(ids), "reporting": len(workers), "workers": workers}
    if not workers:
        return Check("snapshot cache", "ok", "no live worker reports its cache yet", data)
    parts = []
    for w in workers[:5]:
        mean = f", load {w['load_ms_mean']:.1f} ms mean" if w["load_ms_mean"] is not None else ""
        parts.append(
            f"{w['id']}: {_bytes(w['bytes'])} of {_bytes(w['budget_bytes'])} in {w['entries']} "
            f"{'snapshot' if w['entries'] == 1 else 'snapshots'}, {w['misses']} misses, "
            f"{w['evictions']} evictions{mean}"
        )
    more = f"; and {len(workers) - 5} more" if len(workers) > 5 else ""
    detail = "; ".join(parts) + more
    over = [w["id"] for w in workers if w.get("over_budget")]
    if over:
        return Check(
            "snapshot cache",
            "warn",
            f"{detail}; a snapshot bigger than the whole budget was loaded on {', '.join(over)} (served, "
            "kept alone): raise SYLLABOT_SNAPSHOT_CACHE_MB",
            data,
        )
    return Check("snapshot cache", "ok", detail, data)


# --- 3. embedder -----------------------------------------------------------------------------------

_PROBE_TEXTS = ("Module 2 covers process scheduling and deadlocks.", "When is the lab internal exam?")


def check_embedder(embedder: Embedder) -> Check:
    """Embed two strings on the indexing path and one on the query path; every vector must have the
    embedder's dimension and unit length. Both paths are probed because each has its own raw method."""
    started = time.perf_counter()
    documents = np.asarray(embedder.embed_documents(list(_PROBE_TEXTS)))
    query = np.asarray(embedder.embed_query(_PROBE_TEXTS[1]))
    embed_ms = (time.perf_counter() - started) * 1000.0
    vectors = [*documents, query] if documents.ndim == 2 else [documents, query]
    dims = sorted({int(np.asarray(v).size) for v in vectors})
    norms = [float(np.linalg.norm(v)) for v in vectors]
    data: dict[str, Any] = {
        "embedder_id": embedder.id,
        "dim": int(embedder.dim),
        "returned_dims": dims,
        "norms": [round(n, 6) for n in norms],
        "embed_ms": round(embed_ms, 1),
    }
    if dims != [int(embedder.dim)]:
        return Check(
            "embedder",
            "fail",
            f"embedder {embedder.id} returned vectors of {'/'.join(map(str, dims))} dimensions but declares "
            f"{embedder.dim}: its output is truncated or padded, so an index built with it cannot be searched. "
            "Fix the embedder's dimension settings (SYLLABOT_EMBED_DIMENSIONS) before indexing anything",
            data,
        )
    if not all(np.isfinite(n) for n in norms):
        return Check("embedder", "fail", f"embedder {embedder.id} returned NaN or infinite values", data)
    worst = max(abs(n - 1.0) for n in norms)
    data["worst_norm_error"] = round(worst, 6)
    if worst > UNIT_TOLERANCE:
        return Check(
            "embedder",
            "fail",
            f"NOT UNIT VECTORS: embedder {embedder.id} returned vectors of length "
            f"{', '.join(f'{n:.4f}' for n in norms)} (|norm - 1| up to {worst:.4f}, tolerance {UNIT_TOLERANCE:g}). "
            "Cosine over them is silently wrong: scores shrink under the threshold and every question gets "
            "nothing, the truncated-embedding failure this product was built to prevent. Every vector must "
            "go through normalise(); indexing with this embedder is refused",
            data,
        )
    return Check(
        "embedder",
        "ok",
        f"{embedder.id}: {embedder.dim} dimensions, unit vectors (|norm - 1| ≤ {worst:.1e}), "
        f"3 texts in {embed_ms:.0f} ms",
        data,
    )


# --- 4. LLM endpoint -------------------------------------------------------------------------------


def check_llm(settings: Settings) -> Check:
    """``GET {llm_base_url}/models`` with the key: proves the endpoint answers and accepts the key
    without spending tokens. The key goes in the header only; nothing from the reply body is shown."""
    if settings.answerer != "openai":
        return Check(
            "llm endpoint",
            "ok",
            f"not used (SYLLABOT_ANSWERER={settings.answerer})",
            {"configured": False},
        )
    url = settings.llm_base_url.rstrip("/") + "/models"
    where = describe(url)
    timeout = min(settings.llm_timeout_s, LLM_PROBE_TIMEOUT_S)
    data: dict[str, Any] = {
        "configured": True,
        "url": where,
        "model": settings.llm_model,
        "key_set": bool(settings.llm_api_key),
    }
    headers = {"Authorization": f"Bearer {settings.llm_api_key}"} if settings.llm_api_key else {}
    try:
        # No redirects: a 3xx means a wrong base URL, and the key must not follow it to another host.
        with httpx.Client(timeout=timeout, follow_redirects=False) as http:
            response = http.get(url, headers=headers)
    except httpx.TimeoutException:
        return Check("llm endpoint", "fail", f"no reply from {where} within {timeout:g} s", data)
    except httpx.InvalidURL:
        return Check("llm endpoint", "fail", "SYLLABOT_LLM_BASE_URL is not a valid URL", data)
    except UnicodeEncodeError:  # the key itself is in the failing header: name the setting, never the value
        return Check("llm endpoint", "fail", "SYLLABOT_LLM_API_KEY is not plain ASCII", data)
    except httpx.HTTPError as exc:
        return Check("llm endpoint", "fail", f"could not reach {where} ({type(exc).__name__})", data)
    data["http_status"] = response.status_code
    if response.status_code in (401, 403):
        why = (
            "the API key was refused; check SYLLABOT_LLM_API_KEY"
            if settings.llm_api_key
            else "the endpoint wants a key and SYLLABOT_LLM_API_KEY is not set"
        )
        return Check("llm endpoint", "fail", f"HTTP {response.status_code} from {where}: {why}", data)
    if response.status_code == 404:
        return Check(
            "llm endpoint",
            "warn",
            f"HTTP 404 from {where}: the server answers but lists no models, so the key and "
            f"model {settings.llm_model} could not be verified",
            data,
        )
    if response.status_code != 200:
        return Check("llm endpoint", "fail", f"HTTP {response.status_code} from {where}", data)
    try:
        models = {str(m["id"]) for m in response.json()["data"]}
    except (ValueError, KeyError, TypeError):
        return Check("llm endpoint", "ok", f"HTTP 200 from {where} (model list not readable)", data)
    data["models_listed"] = len(models)
    if models and settings.llm_model not in models:
        return Check(
            "llm endpoint",
            "warn",
            f"HTTP 200 from {where}, but model {settings.llm_model} (SYLLABOT_LLM_MODEL) is not among the "
            f"{len(models)} it lists",
            data,
        )
    return Check("llm endpoint", "ok", f"HTTP 200 from {where}; model {settings.llm_model} available", data)


# --- 5. collections --------------------------------------------------------------------------------


def check_collections(client: redis.Redis, keys: Keys, embedder: Embedder | None) -> list[Check]:
    """One line per collection; one broken collection never hides the others."""
    store = CollectionStore(client, keys)
    names = store.collections()
    if not names:
        return [
            Check(
                "collections",
                "warn",
                "no collection is indexed yet: `syllabot ask` answers from the bundled samples (indexed "
                f"into '{SAMPLE_COLLECTION}' on its first question), and a question from Discord or Slack is "
                "told that nothing is indexed. Add your own files with `syllabot index PATH -c NAME`",
                {"collections": []},
            )
        ]
    checks = []
    for name in names:
        try:
            checks.append(check_collection(store, name, embedder))
        except Exception as exc:
            log.debug("collection check %s failed", name, exc_info=True)
            checks.append(
                Check(
                    f"collection {name}",
                    "fail",
                    f"could not be checked: {type(exc).__name__}: {exc}",
                    {"collection": name, "error": type(exc).__name__},
                )
            )
    return checks


def check_collection(store: CollectionStore, name: str, embedder: Embedder | None) -> Check:
    """Documents, chunks, index version and embedder of one collection, and a sample of its vectors.

    Loading goes through :meth:`CollectionStore.load_snapshot`, which already refuses non-unit rows
    (:func:`worker.indexes.index.check_unit_rows`): a corrupt snapshot fails here exactly as it fails in a
    worker. The sample is measured again on top, so the report carries the figures, and so a future
    loader that skips the full check (lazy or memory-mapped loading) is still caught.
    """
    row = f"collection {name}"
    hint = f"re-index with `syllabot index --reindex -c {name}`"
    documents = len(store.documents(name))
    version = store.current_version(name)
    data: dict[str, Any] = {"collection": name, "documents": documents, "version": version}
    if version is None:
        return Check(row, "warn", f"{documents} documents but no index yet; {hint}", data)
    try:
        snapshot = store.load_snapshot(name, version)
    except CorruptSnapshot as exc:
        data.update(_stored_meta(store, name, version))
        return Check(row, "fail", f"index {version} cannot be used: {exc} ({hint})", data)
    if snapshot is None:
        return Check(
            row,
            "fail",
            f"the current index {version} is missing from Redis (deleted or evicted): questions on "
            f"{name} find nothing; {hint}",
            data,
        )
    data.update(
        chunks=len(snapshot),
        embedder_id=snapshot.embedder_id,
        dim=snapshot.dim,
        built_at=snapshot.built_at,
    )
    if embedder is not None:
        data["workers_embedder_id"] = embedder.id
    if embedder is not None and served_as_earlier(snapshot.embedder_id, embedder.id):
        graph = graph_of(snapshot.embedder_id)
        gain = f" ({graph.reindex_gain})" if graph is not None and graph.reindex_gain else ""
        return Check(
            row,
            "warn",
            f"built by the earlier embedder {snapshot.embedder_id}: answered with that model{gain} "
            f"until it is re-indexed with {embedder.id}: `syllabot index --reindex -c {name}`, or "
            "`syllabot index --reindex --all`",
            data,
        )
    if embedder is not None and (snapshot.embedder_id, snapshot.dim) != (embedder.id, embedder.dim):
        return Check(
            row,
            "fail",
            f"built by {snapshot.embedder_id} ({snapshot.dim} dims), workers run {embedder.id} "
            f"({embedder.dim} dims): every search is refused; {hint}",
            data,
        )
    rows = sample_rows(len(snapshot), VECTOR_SAMPLE)
    # Rows first, then float64: converting the whole matrix would copy hundreds of MB for a big index.
    sample = np.asarray(snapshot.matrix[rows], dtype=np.float64)
    worst = float(np.max(np.abs(np.linalg.norm(sample, axis=1) - 1.0))) if rows else 0.0
    data.update(sampled=len(rows), worst_norm_error=round(worst, 6))
    if not np.isfinite(worst) or worst > UNIT_TOLERANCE:
        return Check(
            row,
            "fail",
            f"STORED VECTORS ARE NOT UNIT LENGTH: {len(rows)} sampled, worst |norm - 1| = {worst:.4f}; "
            f"cosine scores over this index are silently wrong; {hint}",
            data,
        )
    counts = f"{documents} documents, {len(snapshot)} chunks, index {version}"
    if len(snapshot) == 0:
        return Check(row, "warn", f"{counts}: the index is empty, questions on {name} find nothing", data)
    compared = "" if embedder is not None else " (workers' embedder not loaded: not compared)"
    return Check(
        row,
        "ok",
        f"{counts}, {snapshot.embedder_id} ({snapshot.dim} dims){compared}, "
        f"{len(rows)} sampled vectors unit length",
        data,
    )


def sample_rows(count: int, size: int) -> list[int]:
    """Up to ``size`` row numbers spread evenly over ``count`` rows (first and last included), so
    the sample sees every part of an index built in batches, not only its first documents."""
    if count <= 0:
        return []
    return sorted({int(i) for i in np.linspace(0, count - 1, min(size, count))})


def _stored_meta(store: CollectionStore, name: str, version: str) -> dict[str, Any]:
    """What an unloadable snapshot says about itself, for the report (best effort)."""
    try:
        raw: Any = store.r.hget(store.keys.snapshot(name, version), "meta")
        meta = json.loads(raw) if raw else {}
    except Exception:
        log.debug("snapshot meta of %s unreadable", name, exc_info=True)
        return {}
    return {k: meta[k] for k in ("embedder_id", "dim", "count", "built_at") if k in meta}


# --- 6. bot tokens ---------------------------------------------------------------------------------


def check_bot_tokens(settings: Settings) -> list[Check]:
    """Which bots could start. Missing tokens are warnings: a deployment may run only one bot.

    Only presence is reported, never a value or a prefix of one.
    """
    present = {
        "DISCORD_TOKEN": bool(settings.discord_token),
        "SLACK_BOT_TOKEN": bool(settings.slack_bot_token),
        "SLACK_SIGNING_SECRET": bool(settings.slack_signing_secret),
        "SLACK_APP_TOKEN": bool(settings.slack_app_token),
    }
    state = {name: ("set" if ok else "missing") for name, ok in present.items()}
    discord = (
        Check("discord bot", "ok", "DISCORD_TOKEN set", {"DISCORD_TOKEN": state["DISCORD_TOKEN"]})
        if present["DISCORD_TOKEN"]
        else Check(
            "discord bot",
            "warn",
            "DISCORD_TOKEN missing: `syllabot discord` will not start (fine if you run no Discord bot)",
            {"DISCORD_TOKEN": "missing"},
        )
    )
    slack_data = {k: v for k, v in state.items() if k.startswith("SLACK_")}
    if not present["SLACK_BOT_TOKEN"]:
        slack = Check(
            "slack bot",
            "warn",
            "SLACK_BOT_TOKEN missing: `syllabot slack` will not start (fine if you run no Slack bot)",
            slack_data,
        )
    elif not present["SLACK_APP_TOKEN"] and not present["SLACK_SIGNING_SECRET"]:
        slack = Check(
            "slack bot",
            "warn",
            "SLACK_BOT_TOKEN set, but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET "
            "(HTTP mode) is: `syllabot slack` will not start",
            slack_data,
        )
    elif settings.slack_app_token and not settings.slack_app_token.startswith("xapp-"):
        slack = Check(
            "slack bot",
            "warn",
            "SLACK_APP_TOKEN is set but is not an app-level token (those start with xapp-)",
            slack_data,
        )
    else:
        mode = "Socket Mode (SLACK_APP_TOKEN set)" if present["SLACK_APP_TOKEN"] else "HTTP mode"
        secret = "SLACK_SIGNING_SECRET set" if present["SLACK_SIGNING_SECRET"] else "no SLACK_SIGNING_SECRET"
        slack = Check("slack bot", "ok", f"SLACK_BOT_TOKEN set; {mode}; {secret}", slack_data)
    return [discord, slack]


# --- secrets -----------------------------------------------------------------------------------------

#: Secrets shorter than this are not scrubbed: replacing every "ab" in a report would garble it, and
#: a secret that short protects nothing anyway.
_MIN_SECRET_LEN = 4


def _secrets(settings: Settings) -> list[str]:
    values = [
        settings.llm_api_key,
        settings.embed_api_key,
        settings.discord_token,
        settings.slack_bot_token,
        settings.slack_signing_secret,
        settings.slack_app_token,
    ]
    if settings.redis_url:
        with contextlib.suppress(ValueError):  # an unparsable URL has no password to hide
            values.append(urlsplit(settings.redis_url).password)
    unique = {v for v in values if v and len(v) >= _MIN_SECRET_LEN}
    return sorted(unique, key=len, reverse=True)  # longest first: one secret may contain another


def _redact(report: DoctorReport, secrets: Sequence[str]) -> DoctorReport:
    """Every string in the report with every secret replaced by ``***``."""
    if not secrets:
        return report

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            for secret in secrets:
                value = value.replace(secret, "***")
            return value
        if isinstance(value, dict):
            return {scrub(k): scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [scrub(v) for v in value]
        return value

    return DoctorReport(
        [Check(scrub(c.name), c.status, scrub(c.detail), scrub(c.data)) for c in report.checks]
    )


__all__ = [
    "TIMEOUTS",
    "Check",
    "DoctorReport",
    "assess_memory",
    "assess_persistence",
    "assess_version",
    "check_bot_tokens",
    "check_collection",
    "check_collections",
    "check_embedder",
    "check_llm",
    "check_queue",
    "check_workers",
    "connect_and_check_redis",
    "render_table",
    "run_checks",
    "sample_rows",
]
