"""Prometheus metrics, served at ``GET /metrics`` in the text format (version 0.0.4).

- ``anonbox_http_requests_total`` and ``anonbox_http_request_duration_seconds``, by
  ``route`` (the route *template*, ``/message/{link_id}``; ``unmatched`` for a path that
  is no route), ``method`` and ``status``;
- ``anonbox_rate_limited_total`` by ``route``: requests answered 429;
- ``anonbox_db_<key>`` for every key of ``Database.stats()`` (connections open, in use,
  allowed, ...), summed over the worker processes;
- ``anonbox_workers``: worker processes alive;
- ``anonbox_job_last_run_timestamp_seconds`` by ``job`` (every chore and delivery a
  package declares, ``core.chores``): when its last pass, or look for due work, ended;
  ``anonbox_job_backlog`` by ``job``: what waited at that look, for the jobs that can
  tell (each delivery channel, the outbox relay). Both are the latest over the workers.

One process keeps the numbers in memory. Under ``anonbox serve --workers N`` every
worker writes them to files in ``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's
multiprocess mode), and whichever worker answers a scrape adds them all up.
"""

from __future__ import annotations

import asyncio
import glob
import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from litestar import Request, Response, get
from litestar.exceptions import NotFoundException
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from anonbox.core.chores import Ran
from anonbox.core.client import addresses_of
from anonbox.core.settings import ConfigurationError, IPNetwork

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"
MEDIA_TYPE = "text/plain; version=0.0.4"  # Litestar adds "; charset=utf-8"
OTHER_METHOD = "other"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# Most answers take a few milliseconds; the top buckets catch a database that stalls.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
REFRESH_SECONDS = 5.0  # how stale another worker's database gauges may be in a scrape
_NOT_A_NAME = re.compile(r"[^a-zA-Z0-9_]")


@dataclass(frozen=True, slots=True)
class MetricsSettings:
    enabled: bool = True
    allow: tuple[IPNetwork, ...] = ()  # empty: anyone who reaches the service may scrape

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> MetricsSettings:
        env = os.environ if environ is None else environ
        switch = env.get("ANONBOX_METRICS", "on").strip().lower()
        if switch not in {"on", "off"}:
            raise ConfigurationError(f"ANONBOX_METRICS must be on or off, not {switch!r}")
        raw = env.get("ANONBOX_METRICS_ALLOW", "")
        try:
            allow = tuple(
                ipaddress.ip_network(part.strip(), strict=False)
                for part in raw.split(",")
                if part.strip()
            )
        except ValueError as exc:
            raise ConfigurationError(f"ANONBOX_METRICS_ALLOW: {exc}") from None
        return cls(enabled=switch == "on", allow=allow)


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_DIR) or None


class Metrics:
    """This process's metrics. Create one per process: in multiprocess mode two sets
    would overwrite each other's files."""

    def __init__(self) -> None:
        self.directory = multiprocess_dir()
        # A *_created series per counter doubles the page; multiprocess mode has none either.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        # In multiprocess mode the values live in files and a scrape reads them all, so the
        # metrics themselves are registered nowhere.
        self._registry = None if self.directory else CollectorRegistry()
        labels = ("route", "method", "status")
        self._requests = Counter(
            "anonbox_http_requests",
            "HTTP requests answered, by route template, method and status",
            labels,
            registry=self._registry,
        )
        self._durations = Histogram(
            "anonbox_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer",
            labels,
            buckets=BUCKETS,
            registry=self._registry,
        )
        self._rate_limited = Counter(
            "anonbox_rate_limited",
            "Requests answered 429 (rate limited), by route template",
            ("route",),
            registry=self._registry,
        )
        self._workers = self._gauge("anonbox_workers", "Worker processes serving")
        self._workers.set(1)
        self._gauges: dict[str, Gauge] = {}
        self._watched: list[tuple[str, str, Callable[[], Mapping[str, int]]]] = []
        self._jobs: list[Callable[[], Mapping[str, Ran]]] = []
        # Every worker runs every job: the latest of their numbers, not their sum.
        self._last_run = Gauge(
            "anonbox_job_last_run_timestamp_seconds",
            "When a background job's last pass, or look for due work, ended (Unix time)",
            ("job",),
            registry=self._registry,
            multiprocess_mode="livemax",
        )
        self._backlog = Gauge(
            "anonbox_job_backlog",
            "What a background job found waiting at its last look",
            ("job",),
            registry=self._registry,
            multiprocess_mode="livemax",
        )
        # (route, method, status) -> the children to move: labels() costs a lock and a
        # tuple of str() per call, and the set of keys is small and bounded.
        self._children: dict[tuple[str, str, int], tuple[Any, Any, Any]] = {}

    def _gauge(self, name: str, documentation: str) -> Gauge:
        # Summed over the live workers; a dead worker's share is dropped (see collect).
        return Gauge(name, documentation, registry=self._registry, multiprocess_mode="livesum")

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request; called once per request, so kept to dict lookups."""
        key = (route, method, status)
        children = self._children.get(key)
        if children is None:
            children = self._children_for(route, method, status)
        children[0].inc()
        children[1].observe(seconds)
        if children[2] is not None:
            children[2].inc()

    def _children_for(self, route: str, method: str, status: int) -> tuple[Any, Any, Any]:
        label = method if method in _METHODS else OTHER_METHOD
        children = (
            self._requests.labels(route, label, str(status)),
            self._durations.labels(route, label, str(status)),
            self._rate_limited.labels(route) if status == 429 else None,
        )
        self._children[(route, method, status)] = children
        return children

    def watch_database(self, stats: Callable[[], Mapping[str, int]]) -> None:
        self.watch("db", "Database", stats)

    def watch(self, part: str, what: str, stats: Callable[[], Mapping[str, int]]) -> None:
        """Show every key of ``stats()`` as the gauge ``anonbox_<part>_<key>``."""
        self._watched.append((part, what, stats))
        self.refresh()

    def watch_jobs(self, jobs: Callable[[], Mapping[str, Ran]]) -> None:
        """Show each job's last run and backlog (``core.chores.Runner.jobs``)."""
        self._jobs.append(jobs)
        self.refresh()

    def refresh(self) -> None:
        """Copy the watched numbers into their gauges."""
        for jobs in self._jobs:
            for name, ran in jobs().items():
                if ran.last_run is not None:
                    self._last_run.labels(name).set(ran.last_run)
                if ran.backlog is not None:
                    self._backlog.labels(name).set(ran.backlog)
        for part, what, stats in self._watched:
            for key, value in stats().items():
                name = f"anonbox_{part}_" + _NOT_A_NAME.sub("_", key)
                gauge = self._gauges.get(name)
                if gauge is None:
                    gauge = self._gauges[name] = self._gauge(name, f"{what}: {key}")
                gauge.set(value)

    async def refresh_forever(self) -> None:
        """In multiprocess mode, keep this worker's gauges fresh for scrapes another
        worker answers."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            self.refresh()

    def close(self) -> None:
        """This worker is leaving: its gauges stop counting towards the sums."""
        if self.directory:
            mark_process_dead(os.getpid(), self.directory)  # type: ignore[no-untyped-call]

    def exposition(self) -> bytes:
        """Every metric, in the Prometheus text format."""
        self.refresh()
        if self._registry is not None:
            return generate_latest(self._registry)
        _forget_dead_workers(self.directory or "")
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=self.directory)  # type: ignore[no-untyped-call]
        return generate_latest(registry)


def _forget_dead_workers(directory: str) -> None:
    """Drop the gauges of workers that died without saying so (a crash, a kill): uvicorn
    replaces them, and their last values would otherwise count forever."""
    pids = {
        int(match.group(1))
        for path in glob.glob(os.path.join(directory, "gauge_live*_*.db"))
        if (match := re.search(r"_(\d+)\.db$", path))
    }
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
        except PermissionError:  # alive, someone else's: not ours to judge
            continue


@get("/metrics", include_in_schema=False, sync_to_thread=False)
def metrics_endpoint(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Prometheus scrapes here; clients outside ANONBOX_METRICS_ALLOW see a 404."""
    settings: MetricsSettings = request.app.state.metrics_settings
    if settings.allow:
        address = addresses_of(request.scope).of(request.scope)
        if address is None or not any(address in network for network in settings.allow):
            raise NotFoundException()
    metrics: Metrics = request.app.state.metrics
    return Response(content=metrics.exposition(), media_type=MEDIA_TYPE)
