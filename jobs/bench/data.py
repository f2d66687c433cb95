"""Fast data builders: raw batched inserts (executemany in big transactions, seconds for a
million rows where the ORM would take minutes), of jobs and of runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from jobs.bench.progress import Progress
from jobs.models import Job, JobHistory
from jobs.runs import new_key
from jobs.sql import store

JOB_TABLE = Job._meta.db_table
RUN_TABLE = JobHistory._meta.db_table

# A datetime as a raw query parameter (store().adapt_datetime).
Adapt = Callable[[datetime | None], object]

JOB_COLUMNS = (
    "id",
    "name",
    "description",
    "command",
    "schedule_type",
    "scheduled_at",
    "interval",
    "interval_unit",
    "misfire_policy",
    "max_retries",
    "retry_backoff_seconds",
    "is_active",
    "anchor_at",
    "last_run_at",
    "last_run_status",
    "next_run_at",
    "created_at",
    "updated_at",
)
RUN_COLUMNS = (
    "id",
    "job_id",
    "scheduled_for",
    "attempt",
    "status",
    "trigger",
    "not_before",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "log",
    "worker",
    "created_at",
)


def insert_rows(
    table: str,
    columns: Iterable[str],
    rows: Iterable[tuple],
    *,
    chunk: int = 20_000,
    on_chunk: Callable[[int], None] | None = None,
) -> int:
    """executemany in one transaction, `chunk` rows at a time; returns the rows inserted."""
    # Quoted: `interval` and `trigger` are reserved words on MySQL.
    names = [connection.ops.quote_name(name) for name in columns]
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})"
    done = 0
    batch: list[tuple] = []
    with transaction.atomic(), connection.cursor() as cursor:
        for row in rows:
            batch.append(row)
            if len(batch) == chunk:
                cursor.executemany(sql, batch)
                done += len(batch)
                batch = []
                if on_chunk:
                    on_chunk(done)
        if batch:
            cursor.executemany(sql, batch)
            done += len(batch)
            if on_chunk:
                on_chunk(done)
    return done


def job_row(
    adapt: Adapt,
    key: str,
    name: str,
    *,
    every_seconds: int,
    first: datetime,
    now: datetime,
    active: bool = True,
    last_run_at: datetime | None = None,
    last_run_status: str = "",
) -> tuple:
    """An interval job (every `every_seconds` s) whose next occurrence, and anchor, is `first`."""
    db_now = adapt(now)
    db_first = adapt(first)
    return (
        key,
        name,
        "",
        f"echo {name}",
        "interval",
        None,
        every_seconds,
        "second",
        "coalesce",
        0,
        10,
        active,
        db_first,
        adapt(last_run_at),
        last_run_status,
        db_first if active else None,
        db_now,
        db_now,
    )


def insert_jobs(
    rows: Iterable[tuple], *, chunk: int = 20_000, progress: Progress | None = None
) -> int:
    """Job rows (job_row) into the job table."""
    on_chunk = progress.update if progress else None
    return insert_rows(JOB_TABLE, JOB_COLUMNS, rows, chunk=chunk, on_chunk=on_chunk)


def insert_interval_jobs(
    count: int,
    due_at: datetime,
    every: timedelta,
    *,
    prefix: str = "bench",
    progress: Progress | None = None,
) -> None:
    """`count` active interval jobs whose next occurrence is `due_at`, named
    `<prefix> 0000000`, `<prefix> 0000001`, ... (so that a range of names is a range of
    the name index)."""
    now = timezone.now()
    adapt = store().adapt_datetime
    seconds = int(every.total_seconds())
    rows = (
        job_row(adapt, new_key(), f"{prefix} {i:07d}", every_seconds=seconds, first=due_at, now=now)
        for i in range(count)
    )
    insert_jobs(rows, progress=progress)


def insert_far_jobs(
    prefix: str,
    first: int,
    end: int,
    far: datetime,
    *,
    progress: Progress | None = None,
) -> None:
    """Hourly jobs `<prefix> <first>` up to `<prefix> <end>` (excluded), their first
    occurrences a millisecond apart from `far` on: none comes due on its own while a
    benchmark runs, and set_due makes a range of them due."""
    adapt = store().adapt_datetime
    now = timezone.now()
    insert_jobs(
        (
            job_row(
                adapt,
                new_key(),
                f"{prefix} {i:07d}",
                every_seconds=3600,
                first=far + timedelta(milliseconds=i),
                now=now,
            )
            for i in range(first, end)
        ),
        chunk=50_000,
        progress=progress,
    )


def set_due(at: datetime, *, names_below: str | None = None) -> None:
    """Jobs (all, or those whose name sorts before `names_below`: a range of the name
    index) come due at `at`, their grid anchored there."""
    db_at = store().adapt_datetime(at)
    sql = f"UPDATE {JOB_TABLE} SET next_run_at = %s, anchor_at = %s"
    params: list[object] = [db_at, db_at]
    if names_below is not None:
        sql += " WHERE name < %s"
        params.append(names_below)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def delete_runs() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {RUN_TABLE}")


def spread_over_queues(names: list[str]) -> None:
    """Put the jobs in these queues in turn (by id order: evenly, and mixed in due
    order), one UPDATE per queue."""
    ids = list(Job.objects.order_by("id").values_list("id", flat=True))
    for index, name in enumerate(names):
        chosen = ids[index :: len(names)]
        for start in range(0, len(chosen), 900):
            Job.objects.filter(pk__in=chosen[start : start + 900]).update(queue=name)
