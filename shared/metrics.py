"""Prometheus metrics: one registry per process, served on ``SYLLABOT_METRICS_PORT`` when it is set.

This part lives in ``shared/`` because workers and bots both serve an endpoint and both count
questions, and the bots may import only ``shared/``. The worker's own series (stage timings, queue
depth, index size, ingest failures, LLM fallbacks) are in ``worker/ops/metrics.py`` on top of it.

Each process builds its own :class:`~prometheus_client.CollectorRegistry` rather than using the
library's global default: a test that runs several workers and bots in one interpreter then gets
separate, comparable counts, and nothing is exported that Syllabot did not register (the default
registry also carries process and platform collectors the deployment's node exporter already has).

The endpoint is off unless the setting names a port, and binds ``SYLLABOT_METRICS_HOST``
(127.0.0.1 unless told otherwise): a metrics page is operator information, not for the internet.
The setting is read per process, so processes sharing a host are each given their own port in
their environment; a port that is already taken is logged and the process runs without one,
because answering questions matters more than being scraped.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, start_http_server

from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueTimeout

log = logging.getLogger("syllabot.metrics")

#: Every value of the ``status`` label of ``syllabot_questions_total``: the three outcomes of an
#: answer, a question that failed (``error``), and one nobody waited for any more (``expired``).
QUESTION_STATUSES = ("answered", "uncertain", "not_in_materials", "error", "expired")


def questions_counter(registry: CollectorRegistry) -> Counter:
    """``syllabot_questions_total{collection,platform,status}`` in ``registry``.

    One definition for worker and bots, so a dashboard can put what workers computed next to what
    users saw (a bot counts a question the worker dropped as expired when its wait ran out).
    """
    return Counter(
        "syllabot_questions",
        "Questions by collection, platform and outcome (answered, uncertain, not_in_materials, "
        "error, expired).",
        ["collection", "platform", "status"],
        registry=registry,
    )


class QuestionMetrics:
    """A bot's metrics: the questions its users asked and what became of them."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.questions = questions_counter(self.registry)

    def count(self, collection: str, platform: str, status: str) -> None:
        self.questions.labels(collection=collection, platform=platform, status=status).inc()

    def count_failure(self, collection: str, platform: str, exc: BaseException) -> None:
        """A question that got no answer: ``expired`` when the wait ran out, else ``error``."""
        status = "expired" if isinstance(exc, QueueTimeout) else "error"
        self.count(collection, platform, status)


@dataclass
class MetricsEndpoint:
    """A running ``/metrics`` HTTP server (a daemon thread); :meth:`close` stops it."""

    host: str
    port: int
    server: WSGIServer
    thread: threading.Thread

    def close(self) -> None:
        """Stop serving and free the port (blocks up to the server's 0.5 s poll)."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def start_endpoint(settings: Settings, registry: CollectorRegistry, process: str) -> MetricsEndpoint | None:
    """Serve ``registry`` on ``SYLLABOT_METRICS_HOST:SYLLABOT_METRICS_PORT``; None when the port is
    unset or 0 (nothing is opened) or cannot be bound (logged, and the process carries on)."""
    port = settings.metrics_port
    if not port:
        return None
    host = settings.metrics_host
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        log.error(
            "%s: no metrics endpoint: cannot listen on %s:%d (%s). Give each process on this host its "
            "own SYLLABOT_METRICS_PORT.",
            process,
            host,
            port,
            exc,
        )
        return None
    log.info("%s: metrics on http://%s:%d/metrics", process, host, port)
    return MetricsEndpoint(host, port, server, thread)
