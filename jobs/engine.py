"""The run engine: the only code that changes the state of runs.

claim -> start -> finish (-> retry), and reap, exactly as DESIGN.md's "life of a run".
Every state change is a conditional update whose row count (or RETURNING list) says
whether this process won: losing a race is normal and silently skipped.

The hot path works in batches: one transaction and a handful of statements per batch
of runs, written as parametrised SQL, because per-row ORM saves (and even bulk_update's
CASE expressions) cost several times more than the work itself.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from jobs import alerts, conf, schedules
from jobs.models import Job, JobHistory, RunStatus, ScheduleType, Trigger

logger = logging.getLogger(__name__)

JOB_TABLE = Job._meta.db_table
RUN_TABLE = JobHistory._meta.db_table

# Rows per multi-row statement: well under SQLite's 32,766 bound parameters.
_ROWS_PER_STATEMENT = 900

_INSERT_RUN_COLUMNS = (
    "id",
    "job_id",
    "scheduled_for",
    "attempt",
    "status",
    "trigger",
    "not_before",
    "log",
    "worker",
    "created_at",
)


@dataclass(slots=True)
class RunTicket:
    """Everything a worker needs to execute one run, without reading the database again."""

    run_id: uuid.UUID
    job_id: uuid.UUID
    job_name: str
    command: str
    scheduled_for: datetime
    attempt: int
    max_retries: int
    retry_backoff_seconds: int


@dataclass(slots=True)
class RunResult:
    ticket: RunTicket
    succeeded: bool
    log: str
    started_at: datetime
    finished_at: datetime


# --- adapting values for raw SQL ---------------------------------------------------------


def _db_uuid(value: uuid.UUID) -> object:
    # SQLite stores UUIDField as 32 hex characters; PostgreSQL has a native type.
    return value if connection.features.has_native_uuid_field else value.hex


def _from_db_uuid(value: object) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _db_dt(value: datetime | None) -> object:
    return connection.ops.adapt_datetimefield_value(value)


def _placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def _chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _insert_runs(rows: list[tuple]) -> set[uuid.UUID]:
    """Insert pending runs; a run that already exists (same job, occurrence, attempt)
    is left alone. Returns the ids actually inserted."""
    inserted: set[uuid.UUID] = set()
    row_sql = f"({_placeholders(len(_INSERT_RUN_COLUMNS))})"
    columns = ", ".join(_INSERT_RUN_COLUMNS)
    with connection.cursor() as cursor:
        for chunk in _chunks(rows, _ROWS_PER_STATEMENT):
            sql = (
                f"INSERT INTO {RUN_TABLE} ({columns}) VALUES "
                + ", ".join([row_sql] * len(chunk))
                + " ON CONFLICT DO NOTHING RETURNING id"
            )
            cursor.execute(sql, [value for row in chunk for value in row])
            inserted.update(_from_db_uuid(row[0]) for row in cursor.fetchall())
    return inserted


def _run_row(
    run_id: uuid.UUID,
    job_id: uuid.UUID,
    scheduled_for: datetime,
    attempt: int,
    trigger: str,
    not_before: datetime,
    now: datetime,
) -> tuple:
    return (
        _db_uuid(run_id),
        _db_uuid(job_id),
        _db_dt(scheduled_for),
        attempt,
        RunStatus.PENDING.value,
        trigger,
        _db_dt(not_before),
        "",
        "",
        _db_dt(now),
    )


# --- claim -------------------------------------------------------------------------------

_CLAIM_FIELDS = (
    "id",
    "name",
    "command",
    "schedule_type",
    "interval",
    "interval_unit",
    "misfire_policy",
    "next_run_at",
    "max_retries",
    "retry_backoff_seconds",
)


def claim_due(now: datetime | None = None, *, limit: int | None = None) -> list[RunTicket]:
    """Claim one batch of due jobs: create their pending runs and advance them.

    One short transaction: select up to `limit` due jobs (oldest first), insert one
    pending run per occurrence to run, move each job's next_run_at (a once job is
    deactivated). On PostgreSQL the select skips rows another scheduler has locked; on
    SQLite the transaction holds the write lock from its first statement.
    The unique (job, scheduled_for, attempt) constraint makes a second claim of the same
    occurrence insert nothing, whatever happened before.
    """
    now = now or timezone.now()
    limit = limit or conf.claim_batch()
    grace = conf.misfire_grace()
    tickets: list[RunTicket] = []
    with transaction.atomic():
        due = Job.objects.due(now).order_by("next_run_at")
        if connection.features.has_select_for_update_skip_locked:
            due = due.select_for_update(skip_locked=True)
        jobs = list(due.values_list(*_CLAIM_FIELDS)[:limit])
        if not jobs:
            return []
        run_rows: list[tuple] = []
        job_updates: list[tuple] = []
        for (
            job_id,
            name,
            command,
            schedule_type,
            interval,
            interval_unit,
            misfire_policy,
            next_run_at,
            max_retries,
            backoff,
        ) in jobs:
            try:
                if schedule_type == ScheduleType.ONCE:
                    plan = schedules.plan_once_claim(
                        next_run_at, now, policy=misfire_policy, grace=grace
                    )
                else:
                    step = schedules.interval_step(interval, interval_unit)
                    plan = schedules.plan_interval_claim(
                        next_run_at, step, now, policy=misfire_policy, grace=grace
                    )
            except schedules.ScheduleError:
                # The constraints make this unreachable; if it happens, park the job
                # rather than let one bad row stop every claim.
                logger.exception("job %s has an invalid schedule; deactivating it", job_id)
                job_updates.append((None, False, _db_uuid(job_id)))
                continue
            if plan.missed:
                logger.info(
                    "job %s missed %d occurrence(s); misfire policy %s",
                    name,
                    plan.missed,
                    misfire_policy,
                )
            for scheduled_for in plan.run_at:
                run_id = uuid.uuid4()
                run_rows.append(
                    _run_row(run_id, job_id, scheduled_for, 1, Trigger.SCHEDULE, scheduled_for, now)
                )
                tickets.append(
                    RunTicket(
                        run_id=run_id,
                        job_id=job_id,
                        job_name=name,
                        command=command,
                        scheduled_for=scheduled_for,
                        attempt=1,
                        max_retries=max_retries,
                        retry_backoff_seconds=backoff,
                    )
                )
            still_active = plan.next_run_at is not None
            job_updates.append((_db_dt(plan.next_run_at), still_active, _db_uuid(job_id)))
        inserted = _insert_runs(run_rows) if run_rows else set()
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {JOB_TABLE} SET next_run_at = %s, is_active = %s WHERE id = %s",
                job_updates,
            )
    if len(inserted) != len(tickets):
        # Someone else had already created these occurrences: theirs to run.
        tickets = [t for t in tickets if t.run_id in inserted]
    return tickets


# --- start -------------------------------------------------------------------------------


def start(
    tickets: Sequence[RunTicket], worker: str, now: datetime | None = None
) -> list[RunTicket]:
    """Move pending runs to running, for `worker`. Returns the ones this worker won.

    A run that is no longer pending (another worker started it, it was cancelled or
    deleted) is simply not returned.
    """
    if not tickets:
        return []
    now = now or timezone.now()
    won: set[uuid.UUID] = set()
    with connection.cursor() as cursor:
        for chunk in _chunks(tickets, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET status = %s, worker = %s, started_at = %s, "
                f"heartbeat_at = %s WHERE status = %s AND not_before <= %s "
                f"AND id IN ({_placeholders(len(chunk))}) RETURNING id",
                [
                    RunStatus.RUNNING.value,
                    worker,
                    _db_dt(now),
                    _db_dt(now),
                    RunStatus.PENDING.value,
                    _db_dt(now),
                    *[_db_uuid(t.run_id) for t in chunk],
                ],
            )
            won.update(_from_db_uuid(row[0]) for row in cursor.fetchall())
    return [t for t in tickets if t.run_id in won]


def release(tickets: Sequence[RunTicket], worker: str) -> int:
    """Hand runs that `worker` started but did not begin executing back to pending."""
    if not tickets:
        return 0
    released = 0
    with connection.cursor() as cursor:
        for chunk in _chunks(tickets, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET status = %s, worker = '', started_at = NULL, "
                f"heartbeat_at = NULL WHERE status = %s AND worker = %s "
                f"AND id IN ({_placeholders(len(chunk))})",
                [
                    RunStatus.PENDING.value,
                    RunStatus.RUNNING.value,
                    worker,
                    *[_db_uuid(t.run_id) for t in chunk],
                ],
            )
            released += cursor.rowcount
    return released


def heartbeat(run_ids: Sequence[uuid.UUID], now: datetime | None = None) -> int:
    """Stamp running runs as alive. Returns how many are still running."""
    if not run_ids:
        return 0
    now = now or timezone.now()
    touched = 0
    with connection.cursor() as cursor:
        for chunk in _chunks(list(run_ids), _ROWS_PER_STATEMENT):
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET heartbeat_at = %s WHERE status = %s "
                f"AND id IN ({_placeholders(len(chunk))})",
                [_db_dt(now), RunStatus.RUNNING.value, *[_db_uuid(i) for i in chunk]],
            )
            touched += cursor.rowcount
    return touched


# --- finish and retry --------------------------------------------------------------------


def _retry_rows(
    failed: Iterable[tuple[RunTicket, datetime]], rng: random.Random | None = None
) -> list[tuple]:
    """Pending next attempts for failed attempts that have retries left."""
    rows = []
    for ticket, failed_at in failed:
        if ticket.attempt > ticket.max_retries:
            continue
        delay = schedules.retry_delay(ticket.attempt, ticket.retry_backoff_seconds, rng)
        rows.append(
            _run_row(
                uuid.uuid4(),
                ticket.job_id,
                ticket.scheduled_for,
                ticket.attempt + 1,
                Trigger.RETRY,
                failed_at + delay,
                failed_at,
            )
        )
    return rows


def finish(results: Sequence[RunResult], worker: str) -> int:
    """Record the outcome of runs `worker` executed; schedule retries for failures.

    Only runs still owned by `worker` (running, stamped with its name) are written: a
    run the reaper already declared lost keeps that verdict, and its retry is not made
    twice. Returns how many results were recorded.
    """
    if not results:
        return 0
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {RUN_TABLE} SET status = %s, started_at = %s, finished_at = %s, "
                f"heartbeat_at = %s, log = %s WHERE id = %s AND status = %s AND worker = %s",
                [
                    (
                        RunStatus.SUCCESS.value if r.succeeded else RunStatus.FAILED.value,
                        _db_dt(r.started_at),
                        _db_dt(r.finished_at),
                        _db_dt(r.finished_at),
                        r.log,
                        _db_uuid(r.ticket.run_id),
                        RunStatus.RUNNING.value,
                        worker,
                    )
                    for r in results
                ],
            )
            recorded = cursor.rowcount
        owned = list(results)
        if recorded != len(results):
            owned = _still_ours(results, worker)
        alerts.runs_finished(
            (r.ticket.job_id, r.ticket.run_id, r.started_at, r.succeeded) for r in owned
        )
        _record_on_jobs(
            (r.ticket.job_id, r.started_at, RunStatus.SUCCESS if r.succeeded else RunStatus.FAILED)
            for r in owned
        )
        retries = _retry_rows((r.ticket, r.finished_at) for r in owned if not r.succeeded)
        if retries:
            _insert_runs(retries)
    return len(owned)


def _still_ours(results: Sequence[RunResult], worker: str) -> list[RunResult]:
    """After a partial update, the results whose rows this worker did write."""
    written = {
        run_id: finished_at
        for run_id, finished_at in JobHistory.objects.filter(
            id__in=[r.ticket.run_id for r in results], worker=worker
        ).values_list("id", "finished_at")
    }
    return [r for r in results if written.get(r.ticket.run_id) == r.finished_at]


def _record_on_jobs(entries: Iterable[tuple[uuid.UUID, datetime, str]]) -> None:
    """Copy each run's start and outcome onto its job, never moving last_run_at back."""
    rows = [
        (_db_dt(started_at), str(status), _db_uuid(job_id), _db_dt(started_at))
        for job_id, started_at, status in sorted(entries, key=lambda e: e[1])
    ]
    if not rows:
        return
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {JOB_TABLE} SET last_run_at = %s, last_run_status = %s "
            f"WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)",
            rows,
        )


# --- reap --------------------------------------------------------------------------------


def reap(now: datetime | None = None, *, limit: int = 500) -> int:
    """Fail runs whose worker stopped heartbeating (it died) and retry them per policy.

    Returns how many runs were reaped.
    """
    now = now or timezone.now()
    lease = conf.lease()
    cutoff = now - lease
    with transaction.atomic():
        stuck = list(
            JobHistory.objects.stuck(now, lease)
            .order_by("heartbeat_at")
            .values_list(
                "id",
                "job_id",
                "job__name",
                "job__command",
                "scheduled_for",
                "attempt",
                "job__max_retries",
                "job__retry_backoff_seconds",
                "worker",
                "heartbeat_at",
            )[:limit]
        )
        if not stuck:
            return 0
        note = (
            f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] worker lost: no heartbeat for "
            f"{lease.total_seconds():g} s; the run is marked failed."
        )
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET status = %s, finished_at = %s, log = log || %s "
                f"WHERE status = %s AND heartbeat_at < %s "
                f"AND id IN ({_placeholders(len(stuck))}) RETURNING id",
                [
                    RunStatus.FAILED.value,
                    _db_dt(now),
                    note,
                    RunStatus.RUNNING.value,
                    _db_dt(cutoff),
                    *[_db_uuid(row[0]) for row in stuck],
                ],
            )
            reaped = {_from_db_uuid(row[0]) for row in cursor.fetchall()}
        lost = [
            RunTicket(
                run_id=row[0],
                job_id=row[1],
                job_name=row[2],
                command=row[3],
                scheduled_for=row[4],
                attempt=row[5],
                max_retries=row[6],
                retry_backoff_seconds=row[7],
            )
            for row in stuck
            if row[0] in reaped
        ]
        for ticket, row in zip(lost, (r for r in stuck if r[0] in reaped), strict=True):
            logger.warning(
                "run %s of job %s lost its worker %s (last heartbeat %s); marked failed",
                ticket.run_id,
                ticket.job_name,
                row[8],
                row[9],
            )
        alerts.runs_finished((t.job_id, t.run_id, now, False) for t in lost)
        _record_on_jobs((t.job_id, now, RunStatus.FAILED) for t in lost)
        retries = _retry_rows((t, now) for t in lost)
        if retries:
            _insert_runs(retries)
    return len(lost)


# --- finding work ------------------------------------------------------------------------


def ready_tickets(now: datetime | None = None, *, limit: int = 500) -> list[RunTicket]:
    """Pending runs that may start now, oldest first: retries whose backoff is over, runs
    someone pressed "run now" for, and runs a dead scheduler claimed but never started."""
    now = now or timezone.now()
    rows = (
        JobHistory.objects.ready(now)
        .order_by("not_before")
        .values_list(
            "id",
            "job_id",
            "job__name",
            "job__command",
            "scheduled_for",
            "attempt",
            "job__max_retries",
            "job__retry_backoff_seconds",
        )[:limit]
    )
    return [RunTicket(*row) for row in rows]


def next_wake_at(now: datetime) -> datetime | None:
    """The earliest moment new work appears: a job comes due or a retry's backoff ends."""
    candidates = [Job.objects.next_due_at()]
    candidates.append(
        JobHistory.objects.filter(status=RunStatus.PENDING, not_before__gt=now)
        .order_by("not_before")
        .values_list("not_before", flat=True)
        .first()
    )
    present = [c for c in candidates if c is not None]
    return min(present) if present else None


# --- actions from the screens ------------------------------------------------------------


def run_now(job: Job, now: datetime | None = None) -> JobHistory:
    """Create a pending run of `job` that may start at once (the "Run now" button)."""
    now = now or timezone.now()
    for _ in range(5):
        try:
            with transaction.atomic():
                return JobHistory.objects.create(
                    job=job,
                    scheduled_for=now,
                    not_before=now,
                    attempt=1,
                    trigger=Trigger.MANUAL,
                    created_at=now,
                )
        except IntegrityError:
            # Two presses in the same microsecond: the occurrence is taken, use the next.
            now += timedelta(microseconds=1)
    raise RuntimeError("could not create a manual run")


def set_active(job: Job, active: bool) -> Job:
    """Enable or disable a job. Enabling resumes its grid at the next point to come."""
    job.is_active = active
    job.full_clean()
    job.save()
    return job
