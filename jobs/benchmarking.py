"""Benchmark scenarios, run by `manage.py benchmark` inside a throwaway database.

Each scenario builds its data with raw batched inserts (fast), drives the real
scheduler code, and returns a flat dict of figures.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from jobs.engine import JOB_TABLE, dialect, new_key
from jobs.executors import SimulatedExecutor
from jobs.models import JobHistory
from jobs.scheduler import Scheduler

Progress = Callable[[str], None]


def insert_interval_jobs(count: int, due_at: datetime, every: timedelta) -> None:
    """`count` active interval jobs whose next occurrence is `due_at`."""
    now = timezone.now()
    d = dialect()
    seconds = int(every.total_seconds())
    rows = [
        (
            new_key(),
            f"bench {i:07d}",
            "",
            "bench",
            "interval",
            seconds,
            "second",
            "coalesce",
            0,
            10,
            True,
            d.dt(due_at),
            "",
            d.dt(due_at),
            d.dt(now),
            d.dt(now),
        )
        for i in range(count)
    ]
    sql = (
        f"INSERT INTO {JOB_TABLE} (id, name, description, command, schedule_type, interval, "
        "interval_unit, misfire_policy, max_retries, retry_backoff_seconds, is_active, "
        "anchor_at, last_run_status, next_run_at, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(rows), 5000):
            cursor.executemany(sql, rows[start : start + 5000])


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def burst(jobs: int, workers: int, progress: Progress) -> dict[str, float | int]:
    """`jobs` jobs due at the same instant, instant simulation, one scheduler process."""
    progress(f"burst: creating {jobs} jobs")
    insert_interval_jobs(jobs, timezone.now() + timedelta(days=1), timedelta(hours=1))
    scheduler = Scheduler(workers=workers, executor=SimulatedExecutor(min_seconds=0, max_seconds=0))
    due_at = timezone.now()
    d = dialect()
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {JOB_TABLE} SET next_run_at = %s, anchor_at = %s",
            [d.dt(due_at), d.dt(due_at)],
        )
    progress("burst: running the scheduler")
    began = timezone.now()
    wall = time.perf_counter()
    scheduler.run_once()
    elapsed = time.perf_counter() - wall
    rows = list(
        JobHistory.objects.values_list("scheduled_for", "started_at", "finished_at", "status")
    )
    lags = [(started - scheduled).total_seconds() for scheduled, started, _, _ in rows]
    last_finish = max(finished for _, _, finished, _ in rows)
    done_within = (last_finish - began).total_seconds()
    unfinished = sum(1 for *_, status in rows if status not in ("success", "failed"))
    return {
        "jobs": jobs,
        "workers": workers,
        "runs": len(rows),
        "unfinished": unfinished,
        "skipped": jobs - len(rows),
        "all_done_within_s": round(done_within, 3),
        "runs_per_s": round(len(rows) / done_within, 1) if done_within else 0.0,
        "wall_s": round(elapsed, 3),
        "lag_p50_ms": round(percentile(lags, 0.50) * 1000, 1),
        "lag_p99_ms": round(percentile(lags, 0.99) * 1000, 1),
        "lag_max_ms": round(max(lags) * 1000, 1),
        "lag_mean_ms": round(statistics.fmean(lags) * 1000, 1),
    }
