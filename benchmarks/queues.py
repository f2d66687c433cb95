"""What reading the queues costs with a big backlog: jobs.queues.status.snapshot() (the dashboard's
card, GET /api/v1/queues/, the jobs_queue_* gauges) and stuck_queue() (the health check).

    python benchmarks/queues.py [--vendor sqlite|postgresql] [--history 1000000]
        [--pending 100000] [--index]

Builds a throwaway database (a temporary SQLite file, or a database on the PostgreSQL
server BENCH_PG, default postgres://postgres@127.0.0.1:5432/postgres, dropped at the end)
with --history finished runs, --pending pending ones (a tenth of them waiting out a
backoff) and 200 running ones over 200 jobs in four queues, then times each reading, the
median of 7. --index adds an index on (queue, not_before) of the pending runs first, to
see what one would give.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.throwaway import throwaway_database  # noqa: E402

QUEUES = ("default", "reports", "mail", "bulk")
BATCH = 20_000


def build(history: int, pending: int, index: bool) -> None:
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from jobs.models import Job
    from jobs.sql import store

    call_command("migrate", verbosity=0)
    jobs = [
        Job.objects.create(
            name=f"job {i}", command="true", interval=10, interval_unit="second", queue=q
        )
        for i, q in enumerate(random.choice(QUEUES) for _ in range(200))
    ]
    now, adapt = timezone.now(), store().adapt_datetime
    text_ids = connection.vendor == "sqlite"
    sql = (
        "INSERT INTO jobs_jobhistory (id, job_id, scheduled_for, attempt, status, trigger, "
        "not_before, started_at, finished_at, log, worker, created_at, queue, priority, "
        "cancelled_by) VALUES (%s, %s, %s, 1, %s, 'schedule', %s, %s, %s, '', '', %s, %s, "
        "0, '')"
    )
    rows: list[tuple] = []

    def flush() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(sql, rows)
        rows.clear()

    total = history + pending + 200
    for i in range(total):
        job = jobs[i % len(jobs)]
        at = now - timedelta(seconds=total - i)
        status = "success" if i < history else "pending" if i < history + pending else "running"
        not_before = at + timedelta(hours=2) if status == "pending" and i % 10 == 0 else at
        started = None if status == "pending" else at
        rows.append(
            (
                uuid.uuid4().hex if text_ids else str(uuid.uuid4()),
                job.pk.hex if text_ids else str(job.pk),
                adapt(at),
                status,
                adapt(not_before),
                adapt(started),
                adapt(at) if status == "success" else None,
                adapt(at),
                job.queue,
            )
        )
        if len(rows) >= BATCH:
            flush()
    flush()
    with connection.cursor() as cursor:
        if index:
            cursor.execute(
                "CREATE INDEX bench_run_queue_pending ON jobs_jobhistory (queue, not_before) "
                "WHERE status = 'pending'"
            )
        cursor.execute("ANALYZE")


def timed(function) -> float:  # type: ignore[no-untyped-def]
    function()  # warm
    times = []
    for _ in range(7):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure() -> None:
    from django.db import connection
    from django.utils import timezone

    from jobs.models import SchedulerHeartbeat
    from jobs.queues import status as queue_status

    def stuck(stall: timedelta) -> float:
        # A live scheduler that serves every queue, beating now.
        now = timezone.now()
        SchedulerHeartbeat.objects.update_or_create(
            name="bench:1", defaults={"pid": 1, "host": "bench", "started_at": now, "seen_at": now}
        )
        return timed(
            lambda: queue_status.stuck_queue(
                timezone.now(),
                unserved_after=timedelta(seconds=35),
                within=timedelta(seconds=35),
                stalled_after=stall,
            )
        )

    print(f"{connection.vendor}: snapshot {timed(queue_status.snapshot):.1f} ms")
    print(f"stuck_queue, nothing waits that long: {stuck(timedelta(days=365)):.1f} ms")
    print(f"stuck_queue, a queue found stalled (its runs counted): {stuck(timedelta(0)):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vendor", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--history", type=int, default=1_000_000)
    parser.add_argument("--pending", type=int, default=100_000)
    parser.add_argument("--index", action="store_true")
    options = parser.parse_args()

    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scheduler_site.settings")
    with throwaway_database(options.vendor, "bench_queues"):
        build(options.history, options.pending, options.index)
        print(f"{options.history:,} finished runs, {options.pending:,} pending, 200 running")
        measure()


if __name__ == "__main__":
    main()
