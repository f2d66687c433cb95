"""The queues at a glance: per queue, the runs waiting and running, how long the oldest
ready one has waited, the queue's limit, and whether a live scheduler serves it.

The one reading behind the dashboard's Queues card, `GET /api/v1/queues/`, the
`jobs_queue_*` gauges of /metrics and the health check's queue problems, so that they
never disagree.

What it costs does not grow with the history: the active runs are read through the
partial indexes that hold only them (jobs_run_pending_ready, jobs_run_running_heartbeat),
in one statement of two `GROUP BY queue` halves; the queues of the jobs come from the
index jobs_job_queue; the live schedulers are a table of one row per process.

Which queues a process serves: `runscheduler --queues a,b` serves a and b only. A
scheduler says so in its heartbeat row (SchedulerHeartbeat.queues: the names,
comma-separated; empty: every queue), written at each heartbeat; live_schedulers() is
the one place that reads it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from django.db.models import Count, DateTimeField, IntegerField, Min, Q, Value
from django.utils import timezone

from jobs import conf
from jobs.models import Job, JobHistory, RunStatus, SchedulerHeartbeat
from jobs.queues import settings as queue_settings

# The heartbeat column that lists the queues a process serves (see the module docstring).
HEARTBEAT_QUEUES_FIELD = "queues"


class QueueState(NamedTuple):
    """One queue now."""

    name: str
    pending: int  # ready to start now (not_before has come)
    waiting_later: int  # pending, waiting out a retry's backoff
    running: int
    oldest_pending_seconds: float  # how long the oldest ready run has waited (0: none)
    limit: int | None  # the most running at once (JOBS_QUEUE_LIMITS); None: no limit
    served: bool  # a live scheduler serves this queue
    stalled: bool  # the oldest ready run has waited longer than JOBS_QUEUE_STALL_SECONDS

    @property
    def oldest_pending(self) -> timedelta:
        return timedelta(seconds=self.oldest_pending_seconds)

    @property
    def full(self) -> bool:
        """As many runs running as the limit allows: the ready ones wait for a slot."""
        return self.limit is not None and self.running >= self.limit


class ServedBy(NamedTuple):
    """A live scheduler process and the queues it serves (None: every queue)."""

    name: str
    queues: frozenset[str] | None


def parse_served(text: str | None) -> frozenset[str] | None:
    """The queues a heartbeat row names (comma-separated); empty or missing: every queue."""
    names = frozenset(part.strip() for part in (text or "").split(",") if part.strip())
    return names or None


def live_schedulers(now: datetime | None = None, within: timedelta | None = None) -> list[ServedBy]:
    """The scheduler processes whose heartbeat is at most `within` old (default: alive as
    /metrics and the scheduler page count them), by name, with the queues each serves."""
    now = now or timezone.now()
    beats = SchedulerHeartbeat.objects.filter(
        seen_at__gte=now - (within or conf.alive_within())
    ).order_by("name")
    return [
        ServedBy(name, parse_served(served))
        for name, served in beats.values_list("name", HEARTBEAT_QUEUES_FIELD)
    ]


def served_queues(
    now: datetime | None = None, within: timedelta | None = None
) -> frozenset[str] | None:
    """The queues some live scheduler serves; None: every queue (a live process serves
    them all, as every process does when its heartbeat does not say). With no live
    scheduler at all, the empty set: nobody serves anything."""
    schedulers = live_schedulers(now, within)
    if any(scheduler.queues is None for scheduler in schedulers):
        return None
    return frozenset().union(*(scheduler.queues or () for scheduler in schedulers))


class _Runs(NamedTuple):
    pending: int
    waiting_later: int
    running: int
    oldest_ready: datetime | None


def _active_runs(now: datetime, runs_q: Q | None = None) -> dict[str, _Runs]:
    """Pending and running runs by queue: one statement, each half on its partial index;
    with `runs_q`, only those runs (a team-scoped user's, jobs.models.teams).

    (One `status IN ('pending', 'running')` would read the whole history on SQLite,
    which uses a partial index only for the condition it was built for.)
    """
    ready = Q(not_before__lte=now)
    none = Value(0, output_field=IntegerField())
    scope = runs_q or Q()
    pending = (
        JobHistory.objects.filter(scope, status=RunStatus.PENDING)
        .order_by()
        .values("queue")
        .annotate(
            ready=Count("not_before", filter=ready),
            later=Count("not_before", filter=~ready),
            running=none,
            oldest=Min("not_before", filter=ready),
        )
    )
    running = (
        JobHistory.objects.filter(scope, status=RunStatus.RUNNING)
        .order_by()
        .values("queue")
        .annotate(
            ready=none,
            later=none,
            running=Count("*"),
            oldest=Value(None, output_field=DateTimeField()),
        )
    )
    found: dict[str, _Runs] = {}
    # order_by() on the union too: Django 6.1 gives a combined query its model's default
    # ordering (-created_at), which is no column of these rows.
    for row in pending.union(running, all=True).order_by():
        seen = found.get(row["queue"], _Runs(0, 0, 0, None))
        found[row["queue"]] = _Runs(
            seen.pending + row["ready"],
            seen.waiting_later + row["later"],
            seen.running + row["running"],
            row["oldest"] or seen.oldest_ready,
        )
    return found


def snapshot(
    now: datetime | None = None,
    *,
    within: timedelta | None = None,
    jobs_q: Q | None = None,
    runs_q: Q | None = None,
) -> list[QueueState]:
    """Every queue that has jobs, active runs or a limit, by name.

    `within`: how recent a scheduler's heartbeat must be for it to serve (live_schedulers).
    `jobs_q` and `runs_q`: a team-scoped user's filters (jobs.web.scoping.filters): the
    counts are of the runs of the jobs they may see, and a queue is listed only when one
    of those jobs or runs is in it (its limit alone does not list it: the queue may be
    another team's).
    """
    now = now or timezone.now()
    runs = _active_runs(now, runs_q)
    limits = queue_settings.limits()
    served = served_queues(now, within)
    stall = conf.queue_stall()
    if jobs_q is None:
        names = set(Job.objects.queue_names()) | set(runs) | set(limits)
    else:
        names = set(Job.objects.filter(jobs_q).queue_names()) | set(runs)
    queues = []
    for name in sorted(names):
        counts = runs.get(name, _Runs(0, 0, 0, None))
        oldest = counts.oldest_ready
        waited = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
        queues.append(
            QueueState(
                name=name,
                pending=counts.pending,
                waiting_later=counts.waiting_later,
                running=counts.running,
                oldest_pending_seconds=waited,
                limit=limits.get(name),
                served=served is None or name in served,
                stalled=stall is not None and waited > stall.total_seconds(),
            )
        )
    return queues


class StuckQueue(NamedTuple):
    """A queue whose ready runs wait too long (stuck_queue)."""

    name: str
    waiting: int  # ready runs in the queue
    oldest_seconds: float
    served: bool


def stuck_queue(
    now: datetime,
    *,
    unserved_after: timedelta,
    within: timedelta,
    stalled_after: timedelta | None = None,
    since: datetime | None = None,
) -> StuckQueue | None:
    """The queue in the worst trouble, or None: first one that no scheduler seen within
    `within` serves whose oldest ready run has waited longer than `unserved_after`, else
    any queue whose oldest ready run has waited longer than `stalled_after`. Waits count
    from `since` at the earliest (a resume: the processes may have been stopped while
    paused, and are given the same time to come back).

    For the health check, which asks every few seconds: the usual answer (no run waits
    that long) costs one look-up at the start of jobs_run_pending_ready per case; the
    count is made only for the queue found.
    """

    def waited(after: timedelta) -> bool:
        return since is None or now - since > after

    served = served_queues(now, within)
    pending = JobHistory.objects.filter(status=RunStatus.PENDING)
    found = None
    if served is not None and waited(unserved_after):
        found = (
            pending.filter(not_before__lte=now - unserved_after)
            .exclude(queue__in=served)
            .order_by("not_before")
            .values_list("queue", "not_before")
            .first()
        )
    if found is None and stalled_after is not None and waited(stalled_after):
        found = (
            pending.filter(not_before__lte=now - stalled_after)
            .order_by("not_before")
            .values_list("queue", "not_before")
            .first()
        )
    if found is None:
        return None
    name, oldest = found
    return StuckQueue(
        name=name,
        waiting=pending.filter(queue=name, not_before__lte=now).count(),
        oldest_seconds=(now - oldest).total_seconds(),
        served=served is None or name in served,
    )
