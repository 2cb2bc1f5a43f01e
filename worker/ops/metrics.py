"""A worker's Prometheus series, fed by the jobs in ``worker/runtime/jobs.py`` and served by
:func:`syllabot.shared.metrics.start_endpoint`.

The stage timings are the ones each question's JSON log line already carries (``Answer.timings``),
observed in seconds, so the histograms and the log can never disagree about what a stage is.
Nothing here reads question text, users or settings: labels are collection, platform, status,
stage and an error class name, so the page cannot leak a question or a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.registry import Collector

from syllabot.shared.keys import Keys
from syllabot.shared.metrics import questions_counter
from syllabot.shared.schema import Answer, AskRequest

if TYPE_CHECKING:
    from syllabot.worker.indexes.snapshot_cache import CacheStats

#: The ``stage`` label values: ``queue`` (enqueued → a worker starts it), ``embed``, ``search``,
#: ``answer`` and ``total`` (search + answer, without the queue), as in the log line's ``timings_ms``.
STAGES = ("queue", "embed", "search", "answer", "total")

#: From a millisecond embed to an LLM answer that takes most of the default 60 s deadline.
STAGE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

#: How the LLM answerer's note begins when it fell back to the extractive answer
#: (``worker/answerers/llm.py``): the one sign of a fallback that reaches the job.
LLM_FALLBACK_NOTE = "LLM unavailable"

#: Queue entries inspected for their claim per sample; beyond it every due entry counts as waiting.
QUEUE_SCAN = 1000

# KEYS: queue. ARGV: in-progress key prefix, scan limit. Returns the due jobs nobody has claimed.
# arq leaves a running job in the queue until it finishes, so ZCARD alone would count every job in
# flight (32 questions waiting on an LLM are not a backlog); a job runs when its in-progress key
# exists. Deferred retries (scored in the future) are not waiting yet.
_WAITING = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local waiting = 0
for i = 1, #rows do
  if redis.call('EXISTS', ARGV[1] .. rows[i]) == 0 then
    waiting = waiting + 1
  end
end
local due = redis.call('ZCOUNT', KEYS[1], '-inf', now)
return waiting + math.max(0, due - #rows)
"""


class WorkerMetrics:
    """Every series a worker exports, in a registry of its own (one per worker)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.questions = questions_counter(self.registry)
        self.stage_seconds = Histogram(
            "syllabot_stage_seconds",
            "Seconds spent in each stage of answering a question (queue, embed, search, answer, total).",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        for stage in STAGES:  # present (at zero) from the start, so rate() has a baseline
            self.stage_seconds.labels(stage=stage)
        self.queue_depth = Gauge(
            "syllabot_queue_depth",
            "Jobs due in the queue that no worker has claimed yet, sampled on each heartbeat (every "
            "worker reports the same queue: aggregate with max, not sum).",
            registry=self.registry,
        )
        self.index_chunks = Gauge(
            "syllabot_index_chunks",
            "Chunks in the collection's index as this worker last loaded or published it.",
            ["collection"],
            registry=self.registry,
        )
        self.ingest_failures = Counter(
            "syllabot_ingest_failures",
            "Uploaded files that could not be indexed, by the loader's error class (CorruptFile, "
            "EncryptedFile, NoTextLayer, TooLarge, ...).",
            ["kind"],
            registry=self.registry,
        )
        self.llm_fallbacks = Counter(
            "syllabot_llm_fallbacks",
            "Questions the LLM could not answer (unreachable, too slow, unusable reply) that got the "
            "extractive answer instead.",
            registry=self.registry,
        )
        self._index_versions: dict[str, str] = {}
        self._cache_collector: _CacheCollector | None = None

    # --- questions ------------------------------------------------------------------------------
    def answered(self, request: AskRequest, answer: Answer) -> None:
        """Count the outcome and observe each stage the answer's timings hold."""
        self.questions.labels(request.collection, request.platform, answer.status).inc()
        timings = answer.timings.model_dump(exclude_none=True)
        for stage in STAGES:
            ms = timings.get(stage)
            if ms is not None:
                self.stage_seconds.labels(stage=stage).observe(max(0.0, float(ms)) / 1000.0)
        if answer.note and answer.note.startswith(LLM_FALLBACK_NOTE):
            self.llm_fallbacks.inc()

    def failed(self, request: AskRequest) -> None:
        self.questions.labels(request.collection, request.platform, "error").inc()

    def expired(self, request: AskRequest) -> None:
        self.questions.labels(request.collection, request.platform, "expired").inc()

    # --- index and ingest -----------------------------------------------------------------------
    def index_version(self, collection: str) -> str | None:
        """The version whose size was last recorded (so a question checks the size only on a change)."""
        return self._index_versions.get(collection)

    def index_loaded(self, collection: str, version: str | None, chunks: int) -> None:
        if version is None:
            return
        self._index_versions[collection] = version
        self.index_chunks.labels(collection=collection).set(chunks)

    def ingest_failed(self, kind: str) -> None:
        self.ingest_failures.labels(kind=kind).inc()

    def watch_cache(self, stats: Callable[[], CacheStats]) -> None:
        """Export the snapshot cache's figures, read from ``stats()`` at each scrape (no bookkeeping
        on the question path)."""
        if self._cache_collector is None:
            self._cache_collector = _CacheCollector(stats)
            self.registry.register(self._cache_collector)
        else:  # a restarted worker with the same metrics: follow its new engine
            self._cache_collector.stats = stats

    # --- queue ----------------------------------------------------------------------------------
    async def sample_queue_depth(self, redis_client: Any, keys: Keys) -> int:
        """Read the number of waiting jobs with one script call and set the gauge."""
        from arq.constants import in_progress_key_prefix

        depth = int(await redis_client.eval(_WAITING, 1, keys.queue, in_progress_key_prefix, QUEUE_SCAN))
        self.queue_depth.set(depth)
        return depth


class _CacheCollector(Collector):
    """The snapshot cache (``worker/indexes/snapshot_cache.py``) as Prometheus series."""

    def __init__(self, stats: Callable[[], CacheStats]) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        s = self.stats()
        gauges = (
            (
                "syllabot_snapshot_cache_bytes",
                "Bytes of collection snapshots this worker holds in memory.",
                s.bytes,
            ),
            (
                "syllabot_snapshot_cache_budget_bytes",
                "The snapshot cache's budget (SYLLABOT_SNAPSHOT_CACHE_MB) in bytes.",
                s.budget_bytes,
            ),
            ("syllabot_snapshot_cache_entries", "Collection snapshots held in memory.", s.entries),
        )
        for name, doc, value in gauges:
            yield GaugeMetricFamily(name, doc, value=value)
        counters = (
            ("syllabot_snapshot_cache_hits", "Searches served from a snapshot already in memory.", s.hits),
            (
                "syllabot_snapshot_cache_misses",
                "Searches that had to load their collection's snapshot from Redis (cold, evicted or rebuilt).",
                s.misses,
            ),
            (
                "syllabot_snapshot_cache_evictions",
                "Snapshots dropped to stay within the budget (least recently used first).",
                s.evictions,
            ),
            (
                "syllabot_snapshot_over_budget",
                "Snapshots larger than the whole budget, served and kept alone.",
                s.over_budget,
            ),
        )
        for name, doc, value in counters:
            yield CounterMetricFamily(name, doc, value=value)
        yield SummaryMetricFamily(
            "syllabot_snapshot_load_seconds",
            "Time to load a snapshot from Redis (read, decode, check, weigh): what a cold question adds.",
            count_value=s.loads,
            sum_value=s.load_seconds,
        )


def ingest_failure_kind(filename: str, data: bytes, max_bytes: int) -> str:
    """The class name of the error that made the engine refuse this file.

    The engine reports a refused file as text (``FileReport.error``) and keeps the exception to
    itself, so the job reads the file again the way the engine does (load, then chunk) to learn the
    class. Only refused files are read again, after the report has been delivered: no upload waits
    for it, and most refusals (size, corrupt, encrypted, wrong type) are found in the first bytes.
    """
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import IngestError, load_document

    try:
        document = load_document(data, filename, max_bytes)
        if not chunk_document(document):
            return IngestError.__name__  # what Engine._parse raises for a file with no passages
    except Exception as exc:  # noqa: BLE001 - the class name is the answer, whatever it is
        return type(exc).__name__
    return "Unknown"  # reads fine now: the engine's refusal was something else
