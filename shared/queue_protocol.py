"""The queue protocol: what the client (``shared/queue.py``) and the worker (``worker/main.py``,
``worker/runtime/jobs.py``) must agree on, in one place. Key names stay in ``shared/keys.py``.

* **Jobs**: the arq function names a worker serves (``JOB_*``).
* **Liveness**: a worker beats every :data:`HEARTBEAT_INTERVAL_S` into the sorted set
  ``Keys.workers``, scored with the Redis server's clock plus :data:`HEARTBEAT_TTL_S`
  (:func:`beat`, script :data:`BEAT`); a client counts scores not yet past (:data:`COUNT_LIVE`).
* **Enqueue** (:data:`ENQUEUE`): check liveness, store the job as arq's ``enqueue_job`` would,
  queue it and ``PUBLISH`` its id on ``Keys.wake``, in one round trip; nothing is written without a
  live worker.
* **Claim** (:data:`CLAIM`, :func:`claim`): a woken worker claims up to its free slots at once by
  setting arq's own ``arq:in-progress:<id>`` keys for :data:`IN_PROGRESS_TTL_S`; each heartbeat
  renews the claims of the jobs still running (:func:`beat`'s ``running``), so the job of a worker
  that died is free again, and retried by arq, within that time.
* **Results**: a job pushes one JSON envelope (:func:`ok_envelope`, :func:`error_envelope`) onto
  ``Keys.result_list(job_id)`` for :data:`RESULT_TTL_S`, once per job (:func:`push_result`, script
  :data:`PUSH_ONCE`, marked by ``Keys.delivered``); the client pops it
  with BLPOP and reads it with :func:`read_envelope`. Envelopes carry the worker's
  :data:`~syllabot.shared.schema.SCHEMA_VERSION`. ``FastWorker`` holds a finished job's envelope
  until arq ends the job and makes both in one round trip (:func:`finish_and_push`, script
  :data:`FINISH_AND_PUSH`).

The scripts build arq's key names themselves, so a Redis Cluster is not supported (one Redis, or
a primary with replicas, is). arq's key prefixes are constants of arq (``tests/test_arq_fence.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from arq.constants import abort_jobs_ss, in_progress_key_prefix, job_key_prefix, retry_key_prefix

from syllabot.shared.keys import Keys
from syllabot.shared.schema import SCHEMA_VERSION, wire_version

__all__ = [
    "BEAT",
    "CLAIM",
    "COUNT_LIVE",
    "ENQUEUE",
    "FINISH_AND_PUSH",
    "HEARTBEAT_INTERVAL_S",
    "HEARTBEAT_TTL_S",
    "INGEST_TIMEOUT_S",
    "IN_PROGRESS_TTL_S",
    "JOB_ASK",
    "JOB_CARD",
    "JOB_COLLECTIONS",
    "JOB_CONFLICTS",
    "JOB_DROP",
    "JOB_INGEST",
    "JOB_MARK",
    "JOB_REINDEX",
    "JOB_REMOVE",
    "JOB_REPORT",
    "JOB_SOURCES",
    "PUSH_ONCE",
    "RESULT_TTL_S",
    "Claimed",
    "Envelope",
    "beat",
    "claim",
    "error_envelope",
    "finish_and_push",
    "ok_envelope",
    "push_result",
    "read_envelope",
]

# --- jobs ----------------------------------------------------------------------------------------

#: arq function names of the jobs a worker serves.
JOB_ASK = "ask"
JOB_INGEST = "ingest"
JOB_REINDEX = "reindex"
JOB_SOURCES = "sources"
JOB_REPORT = "report"
JOB_REMOVE = "remove"
JOB_MARK = "mark"
JOB_CONFLICTS = "conflicts"
JOB_CARD = "card"
JOB_COLLECTIONS = "collections"
JOB_DROP = "drop"

# --- timing --------------------------------------------------------------------------------------

#: How often a worker refreshes its heartbeat, and how long one stays valid.
HEARTBEAT_INTERVAL_S = 2.0
HEARTBEAT_TTL_S = 10.0
#: How long a claimed job stays claimed without a refresh. The worker's heartbeat refreshes the
#: ``arq:in-progress:<id>`` keys of the jobs it runs, so a job whose worker died (SIGKILL, lost host)
#: is free for another worker to claim (and arq to retry) within this time.
IN_PROGRESS_TTL_S = HEARTBEAT_TTL_S
#: How long an ingest, reindex or remove may take (the client's default wait; the worker's job
#: timeout adds a margin): embedding a large upload on a CPU can take minutes.
INGEST_TIMEOUT_S = 1800.0
#: How long an unclaimed result list lives (the client normally pops it within milliseconds).
RESULT_TTL_S = 300

# --- scripts (Lua, so liveness uses the Redis server's clock: workers may run on other hosts) -----

#: KEYS: workers. Returns how many workers have a live heartbeat.
COUNT_LIVE = "local t = redis.call('TIME') return redis.call('ZCOUNT', KEYS[1], t[1], '+inf')"

#: KEYS: workers, job key, queue. ARGV: serialised job, expiry ms, job id, wake channel.
#: Returns 0 (no live worker, nothing written) or the job's score (enqueue time, server clock, ms).
ENQUEUE = """
local t = redis.call('TIME')
if redis.call('ZCOUNT', KEYS[1], t[1], '+inf') == 0 then return 0 end
local score = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('PSETEX', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], score, ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return score
"""

#: KEYS: workers, then the in-progress keys of the jobs this worker runs. ARGV: worker id, ttl s,
#: in-progress ttl ms. PEXPIRE is a no-op on a key already deleted by a job that just finished.
BEAT = (
    "local t = redis.call('TIME') "
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. t[1]) "
    "redis.call('ZADD', KEYS[1], t[1] + tonumber(ARGV[2]), ARGV[1]) "
    "redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) * 2) "
    "for i = 2, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end "
    "return redis.call('ZCARD', KEYS[1])"
)

#: KEYS: queue. ARGV: in-progress ms, free slots, read limit, in-progress key prefix.
#: Claims up to `free` due jobs nobody runs (as arq's WATCH/MULTI claim does, one job at a time) and
#: returns [id1, score1, id2, score2, ..., backlog] where backlog = 1 when due jobs were left
#: unclaimed for lack of slots. In-progress keys are computed in the script: one Redis, no cluster.
CLAIM = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
local free = tonumber(ARGV[2])
local out = {}
local backlog = 0
for i = 1, #rows, 2 do
  local key = ARGV[4] .. rows[i]
  if redis.call('EXISTS', key) == 0 then
    if free <= 0 then
      backlog = 1
      break
    end
    redis.call('PSETEX', key, ARGV[1], '1')
    out[#out + 1] = rows[i]
    out[#out + 1] = rows[i + 1]
    free = free - 1
  end
end
out[#out + 1] = backlog
return out
"""


# --- heartbeat and claims ------------------------------------------------------------------------


async def beat(
    redis_client: Any,
    keys: Keys,
    worker_id: str,
    ttl_s: float = HEARTBEAT_TTL_S,
    running: Iterable[str] = (),
) -> int:
    """Record one heartbeat of ``worker_id`` and renew the claims of its ``running`` jobs for another
    :data:`IN_PROGRESS_TTL_S`; returns how many workers are live."""
    claimed = [in_progress_key_prefix + job_id for job_id in running]
    return int(
        await redis_client.eval(
            BEAT,
            1 + len(claimed),
            keys.workers,
            *claimed,
            worker_id,
            str(ttl_s),
            str(int(IN_PROGRESS_TTL_S * 1000)),
        )
    )


@dataclass(frozen=True)
class Claimed:
    """What one :func:`claim` took: ``(job_id, score)`` pairs (score: enqueue time, ms) and whether
    due jobs were left for lack of free slots."""

    jobs: list[tuple[str, int]]
    backlog: bool


async def claim(script: Any, queue: str, free: int, read_limit: int) -> Claimed:
    """Claim up to ``free`` due jobs of ``queue`` with ``script`` (:data:`CLAIM`, registered on the
    worker's connection so each call is one EVALSHA)."""
    reply = await script(
        keys=[queue],
        args=[int(IN_PROGRESS_TTL_S * 1000), free, read_limit, in_progress_key_prefix],
    )
    jobs = [
        (_text(reply[i]), int(float(reply[i + 1])))
        for i in range(0, len(reply) - 1, 2)  # the last item is the backlog flag
    ]
    return Claimed(jobs, bool(int(reply[-1])))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# --- results -------------------------------------------------------------------------------------


def ok_envelope(result: Any) -> bytes:
    """The bytes a worker pushes for a job that succeeded (``result`` must be JSON-ready)."""
    payload = {"ok": True, "result": result, "schema_version": SCHEMA_VERSION}
    return json.dumps(payload, ensure_ascii=False).encode()


def error_envelope(exc: BaseException) -> bytes:
    """The bytes a worker pushes for a job that raised: a message fit to show an admin, and the
    exception's class name (the client raises its own typed error for the ones it knows)."""
    message = str(exc).strip() or type(exc).__name__
    payload = {"ok": False, "error": message, "type": type(exc).__name__, "schema_version": SCHEMA_VERSION}
    return json.dumps(payload).encode()


@dataclass(frozen=True)
class Envelope:
    """A job's outcome as the client reads it. ``schema_version`` is the worker's (1: it named none)."""

    ok: bool
    result: Any
    error: str
    type: str
    schema_version: int


def read_envelope(raw: bytes | str) -> Envelope:
    """Decode what :func:`ok_envelope` or :func:`error_envelope` wrote."""
    data = json.loads(raw)
    return Envelope(
        ok=bool(data.get("ok")),
        result=data.get("result"),
        error=str(data.get("error") or "the job failed without a message"),
        type=str(data.get("type") or ""),
        schema_version=wire_version(data),
    )


#: The push both result scripts make: only the first envelope of a job (KEYS[1] result list,
#: KEYS[2] delivered marker; ARGV[1] envelope, ARGV[2] ttl s). Its SET comes first, so a full Redis
#: refuses the script before it has written anything.
_PUSH_FIRST_ONLY = """
local pushed = 0
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then
  redis.call('RPUSH', KEYS[1], ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  pushed = 1
end
"""

#: KEYS: result list, delivered marker. ARGV: envelope, ttl s. Returns 1 when pushed, 0 when this
#: job had delivered already.
PUSH_ONCE = _PUSH_FIRST_ONLY + "return pushed\n"

#: The push, then arq's own end of a finished job (``Worker.finish_job`` with ``finish`` and no
#: result kept: the job leaves the queue and the abort set, its in-progress, retry and job keys go),
#: in one round trip instead of two. KEYS: result list, delivered marker, abort set, queue,
#: in-progress key, retry key, job key. ARGV: envelope, ttl s, job id. Returns as :data:`PUSH_ONCE`.
FINISH_AND_PUSH = (
    _PUSH_FIRST_ONLY
    + """
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('ZREM', KEYS[4], ARGV[3])
redis.call('DEL', KEYS[5], KEYS[6], KEYS[7])
return pushed
"""
)


async def push_result(redis_client: Any, keys: Keys, job_id: str, payload: bytes) -> bool:
    """Push a job's envelope for its waiting client, kept :data:`RESULT_TTL_S` should nobody pop it;
    False (nothing pushed) when the job had delivered already.

    Why once: a worker SIGKILLed after pushing but before arq marked the job done leaves its claim
    to lapse, and another worker runs the job again; its asker must get one answer, not two (a
    real drill, ``tests/test_fault_drills.py``, saw the second push under load)."""
    pushed = await redis_client.eval(
        PUSH_ONCE, 2, keys.result_list(job_id), keys.delivered(job_id), payload, str(RESULT_TTL_S)
    )
    return bool(pushed)


async def finish_and_push(script: Any, keys: Keys, queue: str, job_id: str, payload: bytes) -> bool:
    """:func:`push_result` and arq's end of the finished job in one call of ``script`` (the
    worker's registered :data:`FINISH_AND_PUSH`): the asker's answer and the job's bookkeeping land
    together, and a worker dying between the two can no longer leave a delivered job queued."""
    pushed = await script(
        keys=[
            keys.result_list(job_id),
            keys.delivered(job_id),
            abort_jobs_ss,
            queue,
            in_progress_key_prefix + job_id,
            retry_key_prefix + job_id,
            job_key_prefix + job_id,
        ],
        args=[payload, str(RESULT_TTL_S), job_id],
    )
    return bool(pushed)
