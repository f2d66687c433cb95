"""The alerts scenario: what the running-long check costs the scheduler with a million runs.

One job with alerts holds the whole history (the worst case: retention normally keeps a
job to JOBS_HISTORY_KEEP_PER_JOB runs), beside 1,000 jobs without alerts. Measured:

- the read of a job's recent durations (the learned limit, once an hour per job);
- a check with nothing running (what every scheduler pays every JOBS_LEASE_SECONDS / 3);
- a check with `running` runs in flight, half of them of jobs without alerts, none past
  its limit (the read, the limits from the process's cache; no write).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from jobs.alerts import running_long
from jobs.bench.data import (
    JOB_TABLE,
    RUN_COLUMNS,
    RUN_TABLE,
    insert_jobs,
    insert_rows,
    job_row,
)
from jobs.bench.lag import percentile
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.runs import new_key
from jobs.sql import store
from jobs.sql.bench import bench_support


def run(runs: int, running: int, progress: Progress | None = None, repeat: int = 50) -> Result:
    progress = progress or Progress(silent=True)
    now = timezone.now()
    adapt = store().adapt_datetime
    watched = new_key()
    quiet = [new_key() for _ in range(1000)]
    progress("alerts: inserting 1,001 jobs", 1001)
    insert_jobs(
        job_row(adapt, key, f"alerts {i:04d}", every_seconds=60, first=now, now=now)
        for i, key in enumerate([watched, *quiet])
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {JOB_TABLE} SET notify_on_failure = %s, webhook_url = %s WHERE id = %s",
            [True, "https://hooks.example.com/bench", watched],
        )
    progress(f"alerts: inserting {runs:,} runs of one job", runs)
    support = bench_support()
    support.prepare_bulk_load()
    insert_rows(
        RUN_TABLE,
        RUN_COLUMNS,
        _history(watched, runs, now, adapt),
        chunk=50_000,
        on_chunk=progress.update,
    )
    support.settle_bulk_load()
    connection.close()
    progress.end()

    s = store()
    result: Result = {"runs": runs, "running": running}
    with s.reading() as ops:
        result["durations_read"] = len(ops.recent_durations(watched, 1000))
        result.update(_timed("durations", lambda: ops.recent_durations(watched, 1000), repeat))
    limits = running_long.LearnedLimits()
    check = lambda: running_long.check_running_long(now, limits=limits)  # noqa: E731
    result.update(_timed("check_idle", check, repeat))
    _start_runs([watched, *quiet], running, now, adapt)
    check()  # the limit into the cache
    result.update(_timed("check_running", check, repeat))
    result["durations_plan"] = _plan(watched)
    return result


def _history(job_key: str, runs: int, now, adapt) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    """Finished runs a minute apart, oldest first, taking 1 to 10 s."""
    rng = random.Random(42)
    first = now - timedelta(minutes=runs + 10)
    for index in range(runs):
        at = first + timedelta(minutes=index)
        took = timedelta(seconds=rng.uniform(1, 10))
        status = "failed" if index % 7 == 0 else "success"
        db_at = adapt(at)
        yield (
            new_key(),
            job_key,
            db_at,
            1,
            status,
            "schedule",
            db_at,
            db_at,
            adapt(at + took),
            adapt(at + took),
            "",
            "bench:1/w1",
            db_at,
        )


def _start_runs(job_keys: list[str], count: int, now, adapt) -> None:  # type: ignore[no-untyped-def]
    """`count` running runs, one in two of the job with alerts (with 1,000 durations
    to learn from: its limit is some 30 s; these started a second ago)."""
    started = adapt(now - timedelta(seconds=1))
    rows = []
    for index in range(count):
        job_key = job_keys[0] if index % 2 == 0 else job_keys[1 + index % (len(job_keys) - 1)]
        at = adapt(now + timedelta(minutes=index + 1))
        rows.append(
            (
                new_key(),
                job_key,
                at,
                1,
                "running",
                "schedule",
                at,
                started,
                None,
                started,
                "",
                "bench:1/w1",
                at,
            )
        )
    insert_rows(RUN_TABLE, RUN_COLUMNS, rows)


def _timed(label: str, call: Callable[[], object], repeat: int) -> Result:
    call()  # warm-up
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    return {
        f"{label}_median_ms": round(statistics.median(times), 3),
        f"{label}_p90_ms": round(percentile(times, 0.9), 3),
    }


def _plan(job_key: str) -> str:
    """The database's plan for the durations read."""
    query = store().queries["recent_durations"].text
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {query}", [job_key, 1000])
            return " | ".join(str(row[-1]) for row in cursor.fetchall())
        if connection.vendor == "mysql":
            cursor.execute(f"EXPLAIN {query}", [job_key, 1000])
            return " | ".join(" ".join(map(str, row)) for row in cursor.fetchall())
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {query}", [job_key, 1000])
        return " | ".join(row[0] for row in cursor.fetchall())
