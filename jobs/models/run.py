"""Runs: one execution attempt of one occurrence of a job, and the queries about them.

The run table grows without bound, so every question here is answered through an index
that keeps its cost flat however long the history is.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import reduce

from django.db import models
from django.db.models import Expression, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from jobs.models.choices import (
    ACTIVE_STATUSES,
    DEFAULT_QUEUE,
    QUEUE_NAME_MAX_LENGTH,
    RunStatus,
    Trigger,
)
from jobs.models.job import Job
from jobs.models.job_queries import every_term_in


def one_of(field: str, values: Iterable[str]) -> Q:
    """`field` is one of `values`: Q(field__in=values), written as equality tests.

    For a constraint checked on the hot path. SQLite checks `IN (...)` with more than two
    constants by building a temporary index on every write; on the run table, whose
    status every claim, start and finish writes, that cost about 5 µs a write (a tenth
    of a 10,000-run burst), where the equality tests cost 0.15 µs.
    """
    return reduce(operator.or_, (Q(**{field: value}) for value in values))


def _as_utc_hour(value: datetime | str) -> datetime:
    if isinstance(value, str):  # SQLite: "YYYY-MM-DD HH"
        return datetime.strptime(value, "%Y-%m-%d %H").replace(tzinfo=UTC)
    return value.astimezone(UTC)


# Counting runs stops here: "more than 10,000" costs a bounded scan, an exact count a
# full one (the admin's index and run list, its bulk actions).
RUN_COUNT_CAP = 10_000
# A job-name filter that matches at most this many jobs reads the runs of those jobs;
# one that matches more walks the history newest first and keeps the matches (see
# JobHistoryQuerySet.for_job_name).
JOB_NAME_LOOKUP_LIMIT = 50


@dataclass(frozen=True)
class CappedCount:
    """A row count that stopped at a cap: `value` is exact unless `capped`."""

    value: int
    capped: bool


def capped_count(queryset: models.QuerySet, cap: int | None = None) -> CappedCount:
    """Count at most cap + 1 rows (SELECT COUNT(*) FROM (... LIMIT cap + 1)).

    The ordering is dropped so the database may stop at the first cap + 1 rows it finds.
    `cap` defaults to RUN_COUNT_CAP. Any queryset: the admin's capped paginator also
    pages an object's change history.
    """
    cap = RUN_COUNT_CAP if cap is None else cap
    counted = queryset.order_by()[: cap + 1].count()
    return CappedCount(value=min(counted, cap), capped=counted > cap)


class JobHistoryQuerySet(models.QuerySet["JobHistory"]):
    def capped_count(self, cap: int | None = None) -> CappedCount:
        """These runs counted up to a cap (see capped_count)."""
        return capped_count(self, cap)

    def matching(
        self,
        *,
        job: uuid.UUID | str | None = None,
        job_name: str | None = None,
        status: str | None = None,
        scheduled_after: datetime | None = None,
        scheduled_before: datetime | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> JobHistoryQuerySet:
        """The runs that pass the run filters; a filter left at None is not applied.

        The one reading of the filters, for the API's run lists and the history page
        (whose form also reads its older names, date_from and date_to, into these).
        Lower bounds include their time, upper bounds exclude it.
        """
        runs = self
        if job is not None:
            runs = runs.filter(job_id=job)
        if job_name:
            runs = runs.for_job_name(job_name)
        lookups = {
            "status": status,
            "scheduled_for__gte": scheduled_after,
            "scheduled_for__lt": scheduled_before,
            "created_at__gte": created_after,
            "created_at__lt": created_before,
        }
        return runs.filter(**{lookup: value for lookup, value in lookups.items() if value})

    def for_job_name(self, text: str) -> JobHistoryQuerySet:
        """The runs of the jobs whose name holds every word of `text` (JobQuerySet.named).

        One small query decides how, so that both cases stay bounded where one plan for
        both would be slow for one of them. At most JOB_NAME_LOOKUP_LIMIT matching jobs:
        `job_id IN (their ids)`, which reads only those jobs' runs. More: the history is
        read newest first (index jobs_run_recent) through a join on the name, which fills
        a page quickly precisely because matches are common. The limit is the page size
        (50) because that is about where the two cost the same: with the benchmark's
        10,000 jobs and a million runs, 50 matching jobs hold some 5,000 runs, and a
        newest-first walk finds a page of their runs within some 10,000.
        """
        jobs = Job.objects.named(text)
        ids = list(jobs.values_list("pk", flat=True)[: JOB_NAME_LOOKUP_LIMIT + 1])
        if len(ids) <= JOB_NAME_LOOKUP_LIMIT:
            return self.filter(job_id__in=ids)
        return self.filter(every_term_in(("job__name",), text))

    def ready(self, now: datetime) -> JobHistoryQuerySet:
        """Pending runs that may start now (index jobs_run_pending_ready)."""
        return self.filter(status=RunStatus.PENDING, not_before__lte=now)

    def queue_counts(self) -> tuple[int, int]:
        """(pending, running) runs now.

        Two counts, each reading only its partial index (jobs_run_pending_ready,
        jobs_run_running_heartbeat): one `status IN (...) GROUP BY status` would read the
        whole history instead (300 ms with a million runs on SQLite).
        """
        return (
            self.filter(status=RunStatus.PENDING).count(),
            self.filter(status=RunStatus.RUNNING).count(),
        )

    def in_progress(self) -> JobHistoryQuerySet:
        """Running runs, longest-running first (index jobs_run_running_heartbeat)."""
        return self.filter(status=RunStatus.RUNNING).order_by("started_at")

    def newest_first(self) -> JobHistoryQuerySet:
        """Newest first, with a unique tie-breaker so that keyset pages never skip a run
        (index jobs_run_recent; jobs_run_failed_recent for failed runs)."""
        return self.order_by("-created_at", "-id")

    def hourly_status_counts(
        self, since: datetime, until: datetime | None = None, *, hour: Expression
    ) -> list[tuple[datetime, str, int]]:
        """(hour, status, runs) for the runs created in [since, until), hour in UTC.

        `hour` groups created_at by its UTC hour: the vendor's cheapest way, from the
        store (jobs.sql: `store().hour_of("created_at")`). Reads that slice of
        jobs_run_recent and each of its rows' status; the dashboard counts only the
        current hour this way on every poll and caches the others.
        """
        runs = self.filter(created_at__gte=since)
        if until is not None:
            runs = runs.filter(created_at__lt=until)
        rows = runs.order_by().values_list(hour, "status").annotate(runs=models.Count("*"))
        return [(_as_utc_hour(value), status, count) for value, status, count in rows]


class JobHistory(models.Model):
    """One execution attempt of one occurrence of a job."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: the unique (job, scheduled_for, attempt) constraint starts
    # with job_id and serves every lookup by job.
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="runs", db_index=False)
    scheduled_for = models.DateTimeField(_("scheduled for"))
    attempt = models.PositiveSmallIntegerField(_("attempt"), default=1)
    status = models.CharField(
        _("status"), max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING
    )
    trigger = models.CharField(
        _("trigger"), max_length=16, choices=Trigger.choices, default=Trigger.SCHEDULE
    )
    # The earliest time the run may start: scheduled_for, or later for a retry's backoff.
    not_before = models.DateTimeField(_("not before"))
    # When the run was last handed to Huey; a run still pending long after is handed
    # out again (its message was lost).
    dispatched_at = models.DateTimeField(null=True, blank=True, editable=False)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    heartbeat_at = models.DateTimeField(_("heartbeat"), null=True, blank=True)
    # When a scheduler found the run still going past its job's expected duration and
    # alerted (jobs/alerts/running_long.py): set once, by a conditional update, so of
    # several schedulers only one alerts.
    running_long_at = models.DateTimeField(
        _("noticed running long"), null=True, blank=True, editable=False
    )
    log = models.TextField(_("log"), blank=True)
    # The arguments this run ran with (a JSON object); NULL for simulated runs, so that
    # their claim writes nothing more than it did.
    arguments = models.JSONField(_("arguments"), null=True, blank=True)
    # What an enqueued Django task's run returned or raised (JSON: {"return_value": ...}
    # or {"error": {"exception_class_path", "traceback"}}), read by get_result(); NULL
    # for every other run.
    result = models.JSONField(_("result"), null=True, blank=True, editable=False)
    worker = models.CharField(_("worker"), max_length=200, blank=True)
    # Where the run's processes are (shell, command and isolated python runs): the host
    # and the process group their supervisor leads. The reaper kills what is left of a
    # lost run on its own host by them before the retry starts (jobs/engine/leftovers.py).
    process_host = models.CharField(
        _("process host"), max_length=255, blank=True, default="", db_default="", editable=False
    )
    process_group = models.PositiveIntegerField(
        _("process group"), null=True, blank=True, editable=False
    )
    # The job's queue and priority when the run was inserted: the pending runs a process
    # may start are found (and ordered) by the run's own row, with no join on the job, and
    # a run keeps the pool it was routed to if the job is moved to another meanwhile.
    queue = models.CharField(
        _("queue"),
        max_length=QUEUE_NAME_MAX_LENGTH,
        default=DEFAULT_QUEUE,
        db_default=DEFAULT_QUEUE,
    )
    priority = models.SmallIntegerField(_("priority"), default=0, db_default=0)
    # Who cancelled the run (a user name); blank when the scheduler did (overlap policy
    # replace) or the run was not cancelled. Text, so it outlives the user account.
    cancelled_by = models.CharField(
        _("cancelled by"), max_length=150, blank=True, default="", db_default=""
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    # The run whose outcome started this one (trigger "chain"; jobs/engine/chains.py).
    # SET_NULL: pruning the cause keeps the chained run. Indexed by jobs_run_caused_by.
    caused_by = models.ForeignKey(
        "self",
        verbose_name=_("started by"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="chained_runs",
        db_index=False,
    )

    objects = JobHistoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("run")
        verbose_name_plural = _("runs")
        indexes = [
            # JobHistoryQuerySet.ready and the next retry's wake-up (next_wake_at): pending
            # runs by start time. Partial, so it stays as small as the backlog, however
            # long the history grows.
            # The statement active_runs (jobs/sql/sqlite/queries.sql) names it and the next
            # one in INDEXED BY on SQLite.
            models.Index(
                fields=["not_before"],
                condition=Q(status=RunStatus.PENDING),
                name="jobs_run_pending_ready",
            ),
            # The pending runs a process may start, by queue, then priority (higher
            # first), then start time: the feeds and hand-outs of one queue
            # (ready_runs, undispatched_runs), the starts of a queue with a limit
            # (take_runs), and the queues that have pending runs at all (pending_queues,
            # one step of the index per queue). Partial like the one above.
            models.Index(
                fields=["queue", "-priority", "not_before"],
                condition=Q(status=RunStatus.PENDING),
                name="jobs_run_pending_queue",
            ),
            # engine.reap: running runs with an old heartbeat.
            models.Index(
                fields=["heartbeat_at"],
                condition=Q(status=RunStatus.RUNNING),
                name="jobs_run_running_heartbeat",
            ),
            # (A job's own runs are found through the index of the unique constraint
            # jobs_run_one_per_attempt, which starts with job_id: no index of their own,
            # which would cost every insert.)
            # The history page: all runs newest first (a status filter walks it too).
            models.Index(fields=["-created_at"], name="jobs_run_recent"),
            # Recent failures (dashboard, history filtered by "failed"), which may be rare
            # among millions of runs. Partial, so runs that succeed never touch it.
            models.Index(
                fields=["-created_at"],
                condition=Q(status=RunStatus.FAILED),
                name="jobs_run_failed_recent",
            ),
            # metrics.DatabaseCollector: runs finished in the last few minutes, at every
            # scrape; without it each scrape would read the whole history. (The one index
            # that finishing a run adds to; see docs/metrics.md.)
            models.Index(fields=["finished_at"], name="jobs_run_finished"),
            # A run's chained runs (its page; unlinking them when pruning deletes it, or
            # Django's SET_NULL when its job is deleted). Partial: only chained runs are
            # in it, so inserting any other run (every claim) never touches it.
            models.Index(
                fields=["caused_by"],
                condition=Q(caused_by__isnull=False),
                name="jobs_run_caused_by",
            ),
        ]
        constraints = [
            # Invariant 1: one first attempt (and one of each retry) per occurrence,
            # however many schedulers race.
            models.UniqueConstraint(
                fields=["job", "scheduled_for", "attempt"], name="jobs_run_one_per_attempt"
            ),
            models.CheckConstraint(condition=Q(attempt__gte=1), name="jobs_run_attempt_positive"),
            models.CheckConstraint(
                condition=one_of("status", RunStatus.values), name="jobs_run_known_status"
            ),
        ]

    def __str__(self) -> str:
        # The job's name, which people know the run by (the admin's title, breadcrumb and
        # inline rows); lists that show it select the job with the run (no query per row).
        return f"{self.job.name} @ {self.scheduled_for:%Y-%m-%d %H:%M:%S} #{self.attempt}"

    @property
    def duration(self) -> timedelta | None:
        if self.started_at is None:
            return None
        end = self.finished_at or timezone.now()
        return end - self.started_at

    @property
    def can_be_cancelled(self) -> bool:
        return self.status in ACTIVE_STATUSES
