"""Read-only SQL that is built, not named: the /metrics scrape's histograms of recent runs.

The bucket bounds are the metrics' own constants, so the statement is assembled from them
here, in the vendor layer, with the vendor's own duration arithmetic (Store.seconds_between:
Django's portable duration arithmetic calls a Python function per row on SQLite, which made
a scrape over 50,000 recent runs take seconds).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import connection

from jobs.models import Job, JobHistory
from jobs.sql import store


class RecentBucket(NamedTuple):
    """Runs finished since a moment, of one queue (and job, when asked), one status,
    first attempt or not, whose duration and start lag fall in the given buckets (-1: no
    value), with their sums."""

    status: str
    first_attempt: bool
    duration_bucket: int
    lag_bucket: int
    count: int
    duration_sum: float | None
    lag_sum: float | None
    queue: str = ""
    job_name: str = ""  # "" unless asked for per job


def _bucket_sql(column: str, bounds: Sequence[float]) -> str:
    whens = " ".join(
        f"WHEN {column} <= {float(bound)!r} THEN {i}" for i, bound in enumerate(bounds)
    )
    return f"CASE WHEN {column} IS NULL THEN -1 {whens} ELSE {len(bounds)} END"


def recent_buckets(
    since: datetime,
    duration_bounds: Sequence[float],
    lag_bounds: Sequence[float],
    *,
    per_job: bool = False,
) -> list[RecentBucket]:
    """The runs that finished since `since`, grouped into a few dozen rows per queue (and
    per job with `per_job`, which joins the job table for the names): one pass."""
    s = store()
    quote = connection.ops.quote_name
    table = quote(JobHistory._meta.db_table)
    job_table = quote(Job._meta.db_table)
    # The queue a run was inserted on is its own column: grouping by it adds rows, not
    # reads. The job's name needs the job's row: only for per_job.
    job_column = "j.name" if per_job else "''"
    join = f"JOIN {job_table} j ON j.id = h.job_id " if per_job else ""
    sql = (
        f"SELECT status, attempt = 1, {_bucket_sql('d', duration_bounds)}, "
        f"{_bucket_sql('l', lag_bounds)}, COUNT(*), SUM(d), SUM(l), queue, job_name FROM ("
        f"SELECT h.status, h.attempt, h.queue, {job_column} AS job_name, "
        f"{s.seconds_between('h.finished_at', 'h.started_at')} AS d, "
        f"{s.seconds_between('h.started_at', 'h.scheduled_for')} AS l "
        f"FROM {table} h {join}WHERE h.finished_at >= %s) recent GROUP BY 1, 2, 3, 4, 8, 9"
    )
    since_param = JobHistory._meta.get_field("finished_at").get_db_prep_value(
        since, connection, prepared=False
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [since_param])
        return [
            RecentBucket(str(r[0]), bool(r[1]), *r[2:7], str(r[7]), str(r[8] or ""))
            for r in cursor.fetchall()
        ]
