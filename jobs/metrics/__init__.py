"""Prometheus metrics: from the database for /metrics, in process for the scheduler.

Two sources, kept apart on purpose (docs/metrics.md explains every metric):

* `/metrics` on the web site is computed from the database at scrape time by
  `DatabaseCollector`. Every web process answers the same, so it is safe behind any
  number of them. Each scrape costs a handful of indexed queries: counts of pending and
  running runs read their partial indexes, the due backlog reads the due-jobs index, and
  the "recent" figures read only the runs that finished in the last
  JOBS_METRICS_WINDOW_SECONDS (index on finished_at). Nothing counts the whole history.
* `runscheduler --metrics-port N` serves the scheduler process's own counters and
  histograms (runs it finished, claimed, reaped; alert deliveries), updated once per
  batch by the hooks below. They cost nothing until the port is opened.

The scheduler also upserts a SchedulerHeartbeat row every few seconds, which /metrics
reports as the time the last scheduler was seen.
"""

from __future__ import annotations

import hmac
import logging
import os
import socket
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, connection
from django.db.models import Count, Max, Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
    start_http_server,
)
from prometheus_client.core import GaugeHistogramMetricFamily, GaugeMetricFamily, Metric

from jobs import conf
from jobs.models import (
    FINISHED_STATUSES,
    Job,
    JobHistory,
    RunStatus,
    SchedulerHeartbeat,
    SchedulerState,
)
from jobs.queues import status as queue_status
from jobs.runs import RunResult
from jobs.sql.readings import RecentBucket, recent_buckets

logger = logging.getLogger(__name__)

DURATION_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
# A scheduler upserts its heartbeat row at most this often.
HEARTBEAT_EVERY_SECONDS = conf.HEARTBEAT_EVERY_SECONDS
# Heartbeat rows of schedulers gone this long are deleted (a restart gets a new row).
HEARTBEAT_KEEP = timedelta(days=7)


def window() -> timedelta:
    return conf.metrics_window()


# --- /metrics: computed from the database at scrape time --------------------------------


@dataclass
class _Histogram:
    counts: list[int]  # per bucket, not cumulative; the last one is above every bound
    total: float = 0.0

    def add(self, bucket: int, count: int, total: float | None) -> None:
        self.counts[bucket] += count
        self.total += total or 0.0

    def buckets(self, bounds: Sequence[float]) -> list[tuple[str, float]]:
        running, out = 0, []
        for bound, count in zip(bounds, self.counts, strict=False):
            running += count
            out.append((str(bound), float(running)))
        out.append(("+Inf", float(sum(self.counts))))
        return out


def _durations() -> _Histogram:
    return _Histogram([0] * (len(DURATION_BUCKETS) + 1))


def _lags() -> _Histogram:
    return _Histogram([0] * (len(LAG_BUCKETS) + 1))


@dataclass
class _Timings:
    """The duration and start-lag histograms of one group of runs."""

    duration: _Histogram = field(default_factory=_durations)
    lag: _Histogram = field(default_factory=_lags)

    def add(self, row: RecentBucket) -> None:
        if row.duration_bucket >= 0:
            self.duration.add(row.duration_bucket, row.count, row.duration_sum)
        # Retries are left out of the lag: their wait is the backoff, by design.
        if row.first_attempt and row.lag_bucket >= 0:
            self.lag.add(row.lag_bucket, row.count, max(row.lag_sum or 0.0, 0.0))


@dataclass
class _Recent:
    by_status: dict[str, int] = field(default_factory=dict)
    all: _Timings = field(default_factory=_Timings)
    # Fixed buckets per queue (a bounded label set: the queues an operator named) and,
    # with JOBS_METRICS_PER_JOB, per job name.
    by_queue: dict[str, _Timings] = field(default_factory=dict)
    by_job: dict[str, _Timings] = field(default_factory=dict)

    @property
    def duration(self) -> _Histogram:
        return self.all.duration

    @property
    def lag(self) -> _Histogram:
        return self.all.lag


def _recent_runs(since: datetime) -> _Recent:
    """Counts by status and the duration and start-lag histograms (in all, per queue,
    per job when asked) of the runs that finished since `since` (one statement,
    jobs/sql/readings.py)."""
    recent = _Recent()
    per_job = conf.metrics_per_job()
    for row in recent_buckets(since, DURATION_BUCKETS, LAG_BUCKETS, per_job=per_job):
        recent.by_status[row.status] = recent.by_status.get(row.status, 0) + row.count
        recent.all.add(row)
        recent.by_queue.setdefault(row.queue, _Timings()).add(row)
        if per_job:
            recent.by_job.setdefault(row.job_name, _Timings()).add(row)
    return recent


class DatabaseCollector:
    """Collects the scheduler's figures from the database (see the module docstring)."""

    def collect(self) -> list[Metric]:
        now = timezone.now()
        return [*_run_metrics(now), *_recent_metrics(now - window()), *_scheduler_metrics(now)]


def _gauge(metrics: list[Metric], name: str, doc: str, value: float) -> None:
    metrics.append(GaugeMetricFamily(name, doc, value=value))


def _run_metrics(now: datetime) -> list[Metric]:
    """The runs waiting and running (in all, and by queue), and the jobs waiting to be
    claimed."""
    metrics: list[Metric] = []
    # The active runs by queue (jobs/queues/status.py): in proportion to the runs counted,
    # not to the history. The totals are their sums.
    by_queue = queue_status.snapshot(now)
    _gauge(
        metrics,
        "jobs_runs_pending",
        "Runs waiting to start, including retries waiting out their backoff.",
        sum(queue.pending + queue.waiting_later for queue in by_queue),
    )
    _gauge(
        metrics, "jobs_runs_running", "Runs being executed now.", sum(q.running for q in by_queue)
    )
    metrics.extend(_queue_families(by_queue))
    # The partial index of running runs: as many rows as are running.
    _gauge(
        metrics,
        "jobs_runs_running_long",
        "Runs still running past their job's expected duration (alerted once each).",
        JobHistory.objects.filter(status=RunStatus.RUNNING, running_long_at__isnull=False).count(),
    )
    # Index jobs_job_due: costs in proportion to the backlog, not to all jobs.
    due = Job.objects.due(now)
    _gauge(
        metrics,
        "jobs_due_backlog",
        "Active jobs whose next run time has come but no scheduler has claimed yet.",
        due.count(),
    )
    oldest = Job.objects.next_due_at()
    _gauge(
        metrics,
        "jobs_due_backlog_oldest_seconds",
        "How long the most overdue job has been waiting to be claimed (0 when none).",
        max(0.0, (now - oldest).total_seconds()) if oldest and oldest <= now else 0.0,
    )
    return metrics


def _recent_metrics(since: datetime) -> list[Metric]:
    """The runs that finished since `since`: by status, their durations and start lags."""
    metrics: list[Metric] = []
    # Runs finished in the window, in one pass (index jobs_run_finished).
    recent = _recent_runs(since)
    finished = GaugeMetricFamily(
        "jobs_runs_finished_recent",
        "Runs that finished in the last JOBS_METRICS_WINDOW_SECONDS, by final status.",
        labels=["status"],
    )
    for status in FINISHED_STATUSES:
        finished.add_metric([status.value], recent.by_status.get(status.value, 0))
    metrics.append(finished)
    metrics.append(
        GaugeHistogramMetricFamily(
            "jobs_run_duration_recent_seconds",
            "Run time (finished_at - started_at) of the runs that finished in the window.",
            buckets=recent.duration.buckets(DURATION_BUCKETS),
            gsum_value=recent.duration.total,
        )
    )
    metrics.append(
        GaugeHistogramMetricFamily(
            "jobs_run_start_lag_recent_seconds",
            "Start lag (started_at - scheduled_for) of first attempts that finished in "
            "the window; retries are left out, their wait is the backoff.",
            buckets=recent.lag.buckets(LAG_BUCKETS),
            gsum_value=recent.lag.total,
        )
    )
    metrics.extend(_grouped_timings("queue", recent.by_queue))
    if conf.metrics_per_job():
        metrics.extend(_grouped_timings("job", recent.by_job))
    _gauge(
        metrics,
        "jobs_metrics_window_seconds",
        "The window of the *_recent metrics (JOBS_METRICS_WINDOW_SECONDS).",
        window().total_seconds(),
    )
    return metrics


def _grouped_timings(label: str, groups: dict[str, _Timings]) -> list[Metric]:
    """jobs_<label>_run_duration_recent_seconds and jobs_<label>_run_start_lag_recent_seconds,
    one histogram per value of `label` (queue, or job with JOBS_METRICS_PER_JOB)."""
    duration = GaugeHistogramMetricFamily(
        f"jobs_{label}_run_duration_recent_seconds",
        f"Run time of the runs that finished in the window, by {label}.",
        labels=[label],
    )
    lag = GaugeHistogramMetricFamily(
        f"jobs_{label}_run_start_lag_recent_seconds",
        f"Start lag of the first attempts that finished in the window, by {label}.",
        labels=[label],
    )
    for name, timings in sorted(groups.items()):
        duration.add_metric(
            [name], timings.duration.buckets(DURATION_BUCKETS), timings.duration.total
        )
        lag.add_metric([name], timings.lag.buckets(LAG_BUCKETS), timings.lag.total)
    return [duration, lag]


def _scheduler_metrics(now: datetime) -> list[Metric]:
    """The scheduler processes' heartbeats and the pause switch."""
    metrics: list[Metric] = []
    # Index jobs_scheduler_seen.
    beats = SchedulerHeartbeat.objects.aggregate(
        latest=Max("seen_at"),
        alive=Count("pk", filter=Q(seen_at__gte=now - alive_within())),
    )
    if beats["latest"] is not None:
        _gauge(
            metrics,
            "jobs_scheduler_last_seen_timestamp_seconds",
            "Unix time of the latest heartbeat of any scheduler process.",
            beats["latest"].timestamp(),
        )
    _gauge(
        metrics,
        "jobs_schedulers_alive",
        "Scheduler processes whose heartbeat is recent (within the run lease).",
        beats["alive"],
    )
    # The one row of the pause switch, by primary key.
    _gauge(
        metrics,
        "jobs_scheduler_paused",
        "1 while the whole scheduler is paused (maintenance mode: nothing is claimed), else 0.",
        1.0 if SchedulerState.current_window().active(now) else 0.0,
    )
    return metrics


def _queue_families(by_queue: Sequence[queue_status.QueueState]) -> list[Metric]:
    """The jobs_queue_* gauges, one sample per queue (label `queue`)."""
    families = {
        "pending": GaugeMetricFamily(
            "jobs_queue_pending",
            "Runs of the queue ready to start now, waiting for a slot or a worker "
            "(retries waiting out their backoff are not counted).",
            labels=["queue"],
        ),
        "running": GaugeMetricFamily(
            "jobs_queue_running", "Runs of the queue being executed now.", labels=["queue"]
        ),
        "oldest": GaugeMetricFamily(
            "jobs_queue_oldest_pending_seconds",
            "How long the queue's oldest ready run has waited to start (0 when none).",
            labels=["queue"],
        ),
        "limit": GaugeMetricFamily(
            "jobs_queue_limit",
            "The most runs of the queue running at once (JOBS_QUEUE_LIMITS); absent: no limit.",
            labels=["queue"],
        ),
        "served": GaugeMetricFamily(
            "jobs_queue_served",
            "1 while a live scheduler serves the queue, 0 when none does (its runs wait).",
            labels=["queue"],
        ),
    }
    for queue in by_queue:
        label = [queue.name]
        families["pending"].add_metric(label, queue.pending)
        families["running"].add_metric(label, queue.running)
        families["oldest"].add_metric(label, queue.oldest_pending_seconds)
        if queue.limit is not None:
            families["limit"].add_metric(label, queue.limit)
        families["served"].add_metric(label, 1.0 if queue.served else 0.0)
    return list(families.values())


def alive_within() -> timedelta:
    """A scheduler whose heartbeat is this recent is alive (jobs.conf.alive_within)."""
    return conf.alive_within()


DATABASE_REGISTRY = CollectorRegistry(auto_describe=False)
DATABASE_REGISTRY.register(DatabaseCollector())


@sensitive_variables("token", "given")
def _authorized(request: HttpRequest) -> bool:
    token = conf.metrics_token()
    if not token:
        return True
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    # Compared as bytes (compare_digest refuses str that is not ASCII): the header's
    # bytes as sent (WSGI hands them over decoded as Latin-1) against the token's UTF-8.
    try:
        sent = given.strip().encode("latin-1")
    except UnicodeEncodeError:  # not from a real server: no byte string to compare
        return False
    return hmac.compare_digest(sent, token.encode())


@login_not_required  # scrapers have no session; METRICS_TOKEN protects it when set
@require_GET
@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format. Open unless METRICS_TOKEN is set (then a bearer token)."""
    if not _authorized(request):
        response = HttpResponse(
            "A bearer token is needed.\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    try:
        body = generate_latest(DATABASE_REGISTRY)
    except DatabaseError:
        logger.exception("metrics: the database did not answer")
        return HttpResponse("The database did not answer.\n", status=503, content_type="text/plain")
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


# --- the scheduler process: in-process figures -------------------------------------------

SCHEDULER_REGISTRY = CollectorRegistry()
ProcessCollector(registry=SCHEDULER_REGISTRY)

RUNS_FINISHED = Counter(
    "jobs_scheduler_runs_finished_total",
    "Runs this process executed and recorded, by final status.",
    ["status"],
    registry=SCHEDULER_REGISTRY,
)
RUN_DURATION = Histogram(
    "jobs_scheduler_run_duration_seconds",
    "Run time of the runs this process executed.",
    buckets=DURATION_BUCKETS,
    registry=SCHEDULER_REGISTRY,
)
RUN_START_LAG = Histogram(
    "jobs_scheduler_run_start_lag_seconds",
    "started_at - scheduled_for of the first attempts this process executed.",
    buckets=LAG_BUCKETS,
    registry=SCHEDULER_REGISTRY,
)
RUNS_CLAIMED = Counter(
    "jobs_scheduler_runs_claimed_total",
    "Runs this process created by claiming due jobs.",
    registry=SCHEDULER_REGISTRY,
)
RUNS_REAPED = Counter(
    "jobs_scheduler_runs_reaped_total",
    "Runs of dead workers this process marked failed.",
    registry=SCHEDULER_REGISTRY,
)
ALERTS = Counter(
    "jobs_scheduler_alerts_total",
    "Alert deliveries by channel and outcome (sent, failed after every attempt, dropped).",
    ["channel", "outcome"],
    registry=SCHEDULER_REGISTRY,
)
PYTHON_NOT_STOPPED = Counter(
    "jobs_scheduler_python_tasks_not_stopped_total",
    "Python tasks (thread mode) still running past the kill grace after they were asked to stop.",
    registry=SCHEDULER_REGISTRY,
)
PYTHON_STILL_RUNNING = Gauge(
    "jobs_scheduler_python_tasks_running_after_stop",
    "Python tasks (thread mode) asked to stop that have not returned yet: each holds a "
    "worker thread.",
    registry=SCHEDULER_REGISTRY,
)
_SUCCEEDED = RUNS_FINISHED.labels(status=RunStatus.SUCCESS.value)
_FAILED = RUNS_FINISHED.labels(status=RunStatus.FAILED.value)

_enabled = False


def scheduler_metrics_enabled() -> bool:
    return _enabled


def enable_scheduler_metrics(enabled: bool = True) -> None:
    """Start (or stop) updating the in-process metrics, without serving them."""
    global _enabled
    _enabled = enabled


def serve_scheduler_metrics(port: int, address: str = "127.0.0.1") -> Any:
    """`runscheduler --metrics-port`: serve SCHEDULER_REGISTRY over HTTP in a daemon
    thread. Returns the server (its shutdown() stops it)."""
    server, _thread = start_http_server(port, addr=address, registry=SCHEDULER_REGISTRY)
    enable_scheduler_metrics()
    return server


def observe_results(results: Sequence[RunResult]) -> None:
    """Hook after engine.finish() in the worker: one batch of finished runs."""
    if not _enabled or not results:
        return
    succeeded = 0
    for result in results:
        succeeded += result.succeeded
        RUN_DURATION.observe((result.finished_at - result.started_at).total_seconds())
        if result.ticket.attempt == 1:
            lag = (result.started_at - result.ticket.scheduled_for).total_seconds()
            RUN_START_LAG.observe(max(lag, 0.0))
    if succeeded:
        _SUCCEEDED.inc(succeeded)
    if len(results) > succeeded:
        _FAILED.inc(len(results) - succeeded)


def observe_pass(claimed: int, reaped: int) -> None:
    """Hook at the end of a scheduler pass."""
    if not _enabled:
        return
    if claimed:
        RUNS_CLAIMED.inc(claimed)
    if reaped:
        RUNS_REAPED.inc(reaped)


def python_not_stopped() -> None:
    """Hook: a Python task went on past the kill grace after it was asked to stop."""
    PYTHON_NOT_STOPPED.inc()
    PYTHON_STILL_RUNNING.inc()


def python_not_stopped_ended() -> None:
    """Hook: such a task returned at last."""
    PYTHON_STILL_RUNNING.dec()


def count_alert(channel: str, outcome: str) -> None:
    ALERTS.labels(channel=channel, outcome=outcome).inc()


# --- scheduler heartbeats ----------------------------------------------------------------

_beats: dict[str, float] = {}
_beats_lock = threading.Lock()


def scheduler_alive(
    name: str,
    *,
    queues: Collection[str] | None = None,
    every: float = HEARTBEAT_EVERY_SECONDS,
) -> bool:
    """Hook at the start of a scheduler pass: upsert this scheduler's heartbeat row, at
    most once per `every` seconds. Returns whether it wrote. Never raises on a database
    error: the pass that follows meets the same error and handles it. `queues`: the
    queues the process executes (None: every queue), written in the row."""
    clock = time.monotonic()
    with _beats_lock:
        last = _beats.get(name)
        if last is not None and clock - last < every:
            return False
        _beats[name] = clock
    now = timezone.now()
    try:
        SchedulerHeartbeat.objects.bulk_create(
            [
                SchedulerHeartbeat(
                    name=name,
                    pid=os.getpid(),
                    host=socket.gethostname()[:255],
                    started_at=now,
                    seen_at=now,
                    queues=",".join(sorted(queues or ()))[:500],
                )
            ],
            update_conflicts=True,
            # MySQL's upsert takes no conflict target (ON DUPLICATE KEY: any unique key).
            unique_fields=["name"]
            if connection.features.supports_update_conflicts_with_target
            else None,
            update_fields=["pid", "host", "seen_at", "queues"],
        )
        if last is None:
            SchedulerHeartbeat.objects.filter(seen_at__lt=now - HEARTBEAT_KEEP).delete()
    except DatabaseError:
        logger.warning("could not record the heartbeat of scheduler %s", name, exc_info=True)
        return False
    return True
