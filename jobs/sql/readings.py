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

from jobs.models import JobHistory
from jobs.sql import store


class RecentBucket(NamedTuple):
    """Runs finished since a moment, of one status, first attempt or not, whose duration
    and start lag fall in the given buckets (-1: no value), with their sums."""

    status: str
    first_attempt: bool
    duration_bucket: int
    lag_bucket: int
    count: int
    duration_sum: float | None
    lag_sum: float | None


def _bucket_sql(column: str, bounds: Sequence[float]) -> str:
    whens = " ".join(
        f"WHEN {column} <= {float(bound)!r} THEN {i}" for i, bound in enumerate(bounds)
    )
    return f"CASE WHEN {column} IS NULL THEN -1 {whens} ELSE {len(bounds)} END"


def recent_buckets(
    since: datetime, duration_bounds: Sequence[float], lag_bounds: Sequence[float]
) -> list[RecentBucket]:
    """The runs that finished since `since`, grouped into a few dozen rows: one pass."""
    s = store()
    table = connection.ops.quote_name(JobHistory._meta.db_table)
    sql = (
        f"SELECT status, attempt = 1, {_bucket_sql('d', duration_bounds)}, "
        f"{_bucket_sql('l', lag_bounds)}, COUNT(*), SUM(d), SUM(l) FROM ("
        f"SELECT status, attempt, {s.seconds_between('finished_at', 'started_at')} AS d, "
        f"{s.seconds_between('started_at', 'scheduled_for')} AS l "
        f"FROM {table} WHERE finished_at >= %s) recent GROUP BY 1, 2, 3, 4"
    )
    since_param = JobHistory._meta.get_field("finished_at").get_db_prep_value(
        since, connection, prepared=False
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [since_param])
        return [RecentBucket(str(r[0]), bool(r[1]), *r[2:]) for r in cursor.fetchall()]
