"""How fast are the admin's lists with a big history?

Builds 10,000 jobs and 1,000,000 runs in a throwaway SQLite file (a fresh `migrate`,
then raw executemany inserts), logs a superuser in with Django's test Client, and prints
the median server time of the admin pages over --requests requests each.

    python benchmarks/admin_pages.py                      # build, measure, delete the file
    python benchmarks/admin_pages.py --db /tmp/bench.sqlite3   # keep it; reuse on the next run

The goal (issue 4): job and run lists under 100 ms median. "ms" is wall-clock time
of the request inside the process (SQLite runs in-process, so it includes the queries);
"cpu ms" is the process's CPU time for it, which other work on a shared machine
does not inflate.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RUN_STATUSES_PAST = ("success",) * 88 + ("failed",) * 12
LOAD_CHUNK = 50_000


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=20, help="timed requests per page")
    parser.add_argument(
        "--db", type=Path, help="SQLite file to use and keep (built if it does not exist)"
    )
    return parser.parse_args()


def configure_django(db_path: Path) -> None:
    # WhiteNoise warns that STATIC_ROOT was never collected; irrelevant to these timings.
    warnings.filterwarnings("ignore", message="No directory at")
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("SECRET_KEY", "benchmark-only-secret-key")
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ["DJANGO_SETTINGS_MODULE"] = "scheduler_site.settings"
    sys.path.insert(0, str(PROJECT_ROOT))
    import django

    django.setup()


def sqlite_time(value: datetime) -> str:
    # What Django's SQLite backend stores for an aware datetime: naive UTC, space separated.
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")


def build(job_count: int, run_count: int) -> None:
    from django.core.management import call_command
    from django.db import connection, transaction

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    now = datetime.now(UTC).replace(microsecond=0)
    rng = random.Random(4)
    job_ids = [uuid.uuid4().hex for _ in range(job_count)]
    runs_per_job = max(1, run_count // job_count)

    with connection.cursor() as cursor:
        # The random UUID primary keys land all over their index; a big page cache keeps
        # the load from thrashing. This only affects this connection.
        cursor.execute("PRAGMA cache_size = -1000000")
        with transaction.atomic():
            cursor.executemany(
                "INSERT INTO jobs_job (id, name, description, command, schedule_type, "
                "scheduled_at, interval, interval_unit, misfire_policy, max_retries, "
                "retry_backoff_seconds, is_active, anchor_at, last_run_at, last_run_status, "
                "next_run_at, created_at, updated_at) "
                "VALUES (%s, %s, '', %s, 'interval', NULL, 1, 'day', 'coalesce', 0, 10, "
                "%s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        job_id,
                        f"job {n:05d}",
                        f"run-task --id {n}",
                        n % 10 != 0,
                        sqlite_time(now - timedelta(days=runs_per_job, seconds=n)),
                        sqlite_time(now - timedelta(seconds=n)),
                        rng.choice(RUN_STATUSES_PAST),
                        sqlite_time(now + timedelta(days=1, seconds=-n)) if n % 10 else None,
                        sqlite_time(now - timedelta(days=runs_per_job)),
                        sqlite_time(now),
                    )
                    for n, job_id in enumerate(job_ids)
                ],
            )
            # Oldest first, as a real history is written: each job ran once a day.
            rows = []
            inserted = 0
            for day in range(runs_per_job - 1, -1, -1):
                for n, job_id in enumerate(job_ids):
                    if inserted >= run_count:
                        break
                    at = now - timedelta(days=day, seconds=n)
                    if day == 0 and n % 100 == 0:
                        status = rng.choice(("pending", "running"))
                    else:
                        status = rng.choice(RUN_STATUSES_PAST)
                    started_at = None if status == "pending" else at
                    finished_at = at + timedelta(seconds=rng.uniform(1, 5))
                    rows.append(
                        (
                            uuid.uuid4().hex,
                            job_id,
                            sqlite_time(at),
                            status,
                            sqlite_time(at),
                            sqlite_time(started_at) if started_at else None,
                            sqlite_time(finished_at) if status in ("success", "failed") else None,
                            sqlite_time(at) if status == "running" else None,
                            f"$ run-task --id {n}\nsimulated run\nexit status "
                            f"{0 if status == 'success' else 1}\n",
                            f"bench-host:{n % 4}-{n % 8}",
                            sqlite_time(at),
                        )
                    )
                    inserted += 1
                    if len(rows) == LOAD_CHUNK:
                        insert_runs(cursor, rows)
                        rows = []
            if rows:
                insert_runs(cursor, rows)
        # Fold the load into the database file, as SQLite's automatic checkpoints do over
        # time; a 600 MB write-ahead log would slow every read of a fresh benchmark.
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(
        f"built {job_count:,} jobs and {inserted:,} runs in {time.perf_counter() - started:.0f} s",
        flush=True,
    )


def insert_runs(cursor, rows: list[tuple]) -> None:  # type: ignore[no-untyped-def]
    cursor.executemany(
        "INSERT INTO jobs_jobhistory (id, job_id, scheduled_for, attempt, status, trigger, "
        "not_before, started_at, finished_at, heartbeat_at, log, worker, created_at) "
        "VALUES (%s, %s, %s, 1, %s, 'schedule', %s, %s, %s, %s, %s, %s, %s)",
        rows,
    )


def measure(requests: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from jobs.models import Job, JobHistory

    user_model = get_user_model()
    user = user_model.objects.filter(username="bench").first()
    if user is None:
        user = user_model.objects.create_superuser("bench", "", "bench")
    client = Client()
    client.force_login(user)

    job = Job.objects.order_by("name")[5000 if Job.objects.count() > 5000 else 0]
    run = JobHistory.objects.order_by("-created_at").first()
    newest = run.created_at
    runs_url = reverse("admin:jobs_jobhistory_changelist")
    jobs_url = reverse("admin:jobs_job_changelist")
    pages = [
        ("job list", jobs_url),
        ("run list", runs_url),
        ("admin index", reverse("admin:index")),
        ("job list, state=failed", f"{jobs_url}?state=failed"),
        ("job list, search", f"{jobs_url}?q=job+0500"),
        ("run list, status=failed", f"{runs_url}?status__exact=failed"),
        ("run list, page 50", f"{runs_url}?p=50"),
        ("run list, one job", f"{runs_url}?job={job.pk}"),
        ("run list, a year", f"{runs_url}?created_at__year={newest.year}"),
        (
            "run list, a month",
            f"{runs_url}?created_at__year={newest.year}&created_at__month={newest.month}",
        ),
        ("run list, search by job", f"{runs_url}?q=job+0500"),
        ("run list, search (all jobs)", f"{runs_url}?q=job"),
        ("run list, job + status", f"{runs_url}?job={job.pk}&status__exact=failed"),
        ("job change page", reverse("admin:jobs_job_change", args=[job.pk])),
        ("run view page", reverse("admin:jobs_jobhistory_change", args=[run.pk])),
    ]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{'page':<30}{'median ms':>10}{'min ms':>9}{'max ms':>9}{'cpu ms':>9}{'queries':>9}")
    for label, url in pages:
        for _ in range(2):  # warm the page cache and the template cache
            assert client.get(url).status_code == 200, url
        timings, cpu_timings = [], []
        for _ in range(requests):
            started, cpu_started = time.perf_counter(), time.process_time()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
            cpu_timings.append((time.process_time() - cpu_started) * 1000)
            assert response.status_code == 200, url
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        print(
            f"{label:<30}{statistics.median(timings):>10.1f}{min(timings):>9.1f}"
            f"{max(timings):>9.1f}{statistics.median(cpu_timings):>9.1f}{len(queries):>9}"
        )

    # What the admin avoids, for comparison.
    print("\nfor comparison (what the run list does not do):")
    compare = [
        ("full COUNT(*) of runs", lambda: JobHistory.objects.count()),
        (
            # What Django's date_hierarchy lists on the unfiltered run list.
            "Django's date hierarchy",
            lambda: list(JobHistory.objects.datetimes("created_at", "month")),
        ),
    ]
    for label, query in compare:
        started = time.perf_counter()
        query()
        print(f"{label:<30}{(time.perf_counter() - started) * 1000:>10.1f} ms")


def main() -> None:
    args = parse_args()
    if args.db:
        db_path, keep = args.db.resolve(), True
    else:
        db_path, keep = Path(tempfile.mkdtemp(prefix="admin-bench-")) / "bench.sqlite3", False
    fresh = not db_path.exists()
    configure_django(db_path)
    try:
        if fresh:
            build(args.jobs, args.runs)
        else:
            print(f"reusing {db_path}")
        measure(args.requests)
    finally:
        if not keep:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db_path}{suffix}").unlink(missing_ok=True)
            db_path.parent.rmdir()


if __name__ == "__main__":
    main()
