"""Prometheus metrics of one service process (``GET /metrics``).

Labels carry route names (handler classes), methods, statuses, formats and outcomes only:
never a user, a path with ids, a file name or a secret. Every label a caller can influence
has a fixed set of values: the route is the handler class (any unknown path is
``NotFoundHandler``), and a method outside :data:`KNOWN_METHODS` counts as ``OTHER``, so
requests with made-up methods cannot grow the exposition without bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

if TYPE_CHECKING:
    from render_pool.runtime.pool import RenderPool

CONTENT_TYPE = CONTENT_TYPE_LATEST
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def method_label(method: str | None) -> str:
    """The ``method`` label: the method itself when standard, else ``OTHER``."""
    return method if method in KNOWN_METHODS else "OTHER"


class Metrics:
    """The collectors, in a registry of their own (one per Services object)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("http_requests_total", "HTTP requests by route and status",
                                ["route", "method", "status"], registry=r)
        self.latency = Histogram(
            "http_request_duration_seconds", "HTTP request latency by route", ["route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=r)
        self.conversions = Counter("conversions_total", "Conversions by kind, format, outcome",
                                   ["kind", "format", "outcome"], registry=r)
        self.logins_failed = Counter("login_failures_total", "Failed logins", registry=r)
        self.logins_throttled = Counter("login_throttled_total", "Logins refused by throttling",
                                        registry=r)
        self.audit_dropped = Counter("audit_records_dropped_total",
                                     "Audit records dropped: queue full or store down",
                                     ["reason"], registry=r)
        self.browser_restarts = Counter("browser_restarts_total",
                                        "Chromium launches after a worker's first", registry=r)
        self.pool_queue = Gauge("render_pool_queue_depth", "Jobs waiting for a worker",
                                registry=r)
        self.pool_busy = Gauge("render_pool_busy_workers", "Workers running a job", registry=r)
        self.pool_restarts = Gauge("render_pool_executor_restarts",
                                   "Times the worker pool was replaced", registry=r)
        self.job_queue_length = Gauge("job_queue_length",
                                      "Entries in the job stream (queued and running)",
                                      registry=r)
        self.jobs_ended = Counter("jobs_ended_total", "Jobs this process ended, by state",
                                  ["state"], registry=r)
        self.job_claims = Counter("job_claims_total",
                                  "Jobs claimed from a consumer that stopped (re-runs)",
                                  registry=r)
        self.job_duration = Histogram(
            "job_duration_seconds", "Run time of jobs that ended here",
            buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600), registry=r)
        self.webhook_deliveries = Counter(
            "webhook_deliveries_total", "Webhook attempts made here, by outcome "
            "(delivered, retry, gave_up, refused)", ["outcome"], registry=r)
        self._launches: dict[int, int] = {}
        # (route, method label, status) -> the children of requests and latency it counts
        # in: as many entries as the label sets themselves, so as bounded
        self._request_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one request and its latency. The labelled children are kept per (route,
        method, status) once found: ``labels()`` would build the label tuple and take a lock
        to find the same two objects again on every request."""
        key = (route, method_label(method), status)
        children = self._request_children.get(key)
        if children is None:
            children = (self.requests.labels(route, key[1], str(status)),
                        self.latency.labels(route))
            self._request_children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def observe_browser(self, worker_pid: int, launches: int) -> None:
        """Count restarts from a worker's cumulative launch count."""
        if not worker_pid:
            return
        before = self._launches.get(worker_pid)
        self._launches[worker_pid] = launches
        if before is None:
            if launches > 1:
                self.browser_restarts.inc(launches - 1)
        elif launches > before:
            self.browser_restarts.inc(launches - before)

    def render(self, pool: RenderPool | None) -> bytes:
        """The exposition text, with pool gauges read now."""
        if pool is not None:
            stats = pool.stats()
            busy = min(stats.in_flight, stats.workers)
            self.pool_busy.set(busy)
            self.pool_queue.set(stats.in_flight - busy)
            self.pool_restarts.set(stats.restarts)
        return generate_latest(self.registry)
