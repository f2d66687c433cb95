"""Server time of the main pages with 10,000 jobs and 1,000,000 runs in SQLite.

    python benchmarks/pages.py                 # build the data once, then measure
    python benchmarks/pages.py --rebuild       # start again from an empty file
    python benchmarks/pages.py --repeat 50 --jobs 10000 --runs 1000000

The dataset lives in a throwaway file, benchmarks/out/pages.sqlite3 (git ignores it),
written with raw executemany inserts (about a minute). Runs are spread over the last ten
days, so the last 24 hours hold about 100,000 of them; a few are pending or running.

Each page is requested with Django's test Client (the whole middleware stack, session
and all) after a warm-up, and the median and 90th percentile of the server time are
printed. The dashboard is measured twice: as configured (its 24-hour counts reused for
JOBS_DASHBOARD_CACHE_SECONDS) and with that cache off, which is the cost of one poll
after the period has passed.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TARGET_MS = 100.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--days", type=float, default=10.0, help="runs spread over this many")
    parser.add_argument("--repeat", type=int, default=30, help="requests per page")
    parser.add_argument("--rebuild", action="store_true", help="build the dataset again")
    parser.add_argument("--db", type=Path, default=OUT / "pages.sqlite3")
    return parser.parse_args()


def setup_django(db: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "scheduler_site.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _ts(value: datetime) -> str:
    # Django's SQLite format for an aware datetime: naive UTC text.
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _insert(conn: sqlite3.Connection, table: str, rows: list[dict]) -> None:
    # Every column of the table, so fields others add with a default keep working.
    columns = [c for c in _columns(conn, table) if c in rows[0]]
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    conn.executemany(sql, ([row[c] for c in columns] for row in rows))


def build(db: Path, jobs: int, runs: int, days: float) -> None:
    from django.core.management import call_command
    from django.db import connection

    from jobs.models import JobHistory, RunStatus

    db.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    call_command("migrate", verbosity=0)
    connection.close()

    rng = random.Random(42)
    now = datetime.now(UTC)
    began = time.perf_counter()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    words = ["backup", "report", "sync", "cleanup", "import", "export", "billing", "mail"]
    job_rows = []
    for index in range(jobs):
        active = rng.random() < 0.8
        once = rng.random() < 0.1
        next_run = now + timedelta(seconds=rng.uniform(1, 86400)) if active else None
        job_rows.append(
            {
                "id": uuid.UUID(int=rng.getrandbits(128), version=4).hex,
                "name": f"{rng.choice(words)}-{index:05d}",
                "description": "",
                "command": f"echo job {index}",
                "schedule_type": "once" if once else "interval",
                "scheduled_at": _ts(next_run or now) if once else None,
                "interval": None if once else rng.choice([1, 5, 10, 15, 30, 60]),
                "interval_unit": "" if once else rng.choice(["minute", "hour"]),
                "misfire_policy": "coalesce",
                "max_retries": rng.randint(0, 3),
                "retry_backoff_seconds": 10,
                "is_active": active,
                "anchor_at": None if once else _ts(now - timedelta(days=30)),
                "last_run_at": _ts(now - timedelta(seconds=rng.uniform(1, 86400))),
                "last_run_status": rng.choice(["success"] * 5 + ["failed"]),
                "next_run_at": _ts(next_run) if next_run else None,
                "created_at": _ts(now - timedelta(days=30)),
                "updated_at": _ts(now - timedelta(days=30)),
            }
        )
    _insert(conn, "jobs_job", job_rows)
    job_ids = [row["id"] for row in job_rows]

    table = JobHistory._meta.db_table
    span = days * 86400
    batch = 100_000
    for start in range(0, runs, batch):
        rows = []
        for _ in range(min(batch, runs - start)):
            created = now - timedelta(seconds=rng.uniform(0, span))
            age = (now - created).total_seconds()
            if age < 60 and rng.random() < 0.5:
                status = rng.choice([RunStatus.PENDING, RunStatus.RUNNING])
            else:
                status = RunStatus.FAILED if rng.random() < 0.15 else RunStatus.SUCCESS
            started = created + timedelta(milliseconds=rng.uniform(1, 50))
            finished = started + timedelta(seconds=rng.uniform(1, 5))
            rows.append(
                {
                    "id": uuid.UUID(int=rng.getrandbits(128), version=4).hex,
                    "job_id": rng.choice(job_ids),
                    "scheduled_for": _ts(created),
                    "attempt": 1,
                    "status": str(status),
                    "trigger": "schedule",
                    "not_before": _ts(created),
                    "started_at": None if status == RunStatus.PENDING else _ts(started),
                    "finished_at": _ts(finished) if status in ("success", "failed") else None,
                    "heartbeat_at": None if status == RunStatus.PENDING else _ts(started),
                    "log": f"$ echo\nsimulated run took {rng.uniform(1, 5):.3f} s\nexit status 0\n",
                    "worker": "" if status == RunStatus.PENDING else "bench:1/w1",
                    "created_at": _ts(created),
                }
            )
        rows.sort(key=lambda row: row["created_at"])
        _insert(conn, table, rows)
        conn.commit()
        print(f"  {start + len(rows):>9,} runs", flush=True)
    conn.close()
    print(f"built {jobs:,} jobs and {runs:,} runs in {time.perf_counter() - began:.0f} s")


def measure(client, url: str, repeat: int, **headers: str) -> list[float]:  # type: ignore[no-untyped-def]
    for _ in range(3):  # warm-up: templates compiled, caches filled
        client.get(url, **headers)
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        response = client.get(url, **headers)
        times.append((time.perf_counter() - began) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
    return times


def main() -> None:
    args = parse_args()
    setup_django(args.db)
    if args.rebuild or not args.db.exists():
        build(args.db, args.jobs, args.runs, args.days)

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings
    from django.utils import timezone

    from jobs.models import Job, JobHistory
    from jobs.pagination import Cursor

    call_command("migrate", verbosity=0)  # new indexes, if any, on an existing file
    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    busiest = JobHistory.objects.order_by("-created_at").values_list("job_id", flat=True)[0]
    job = Job.objects.get(pk=busiest)
    before = Cursor.of(JobHistory.objects.newest_first()[1000])
    job_page = f"/jobs/{job.pk}/"
    # The four pages the target is for come first; the rest show filters and fragments.
    required = ["/", "/jobs/", job_page, "/history/"]
    pages = [
        *((url, {}) for url in required),
        ("/jobs/?q=backup&state=failed&active=yes&page=3", {}),
        ("/history/?status=failed", {}),
        ("/history/?job_name=report-0", {}),
        (f"/history/?job={job.pk}", {}),
        (f"/history/?before={before}", {}),
        ("/history/?date_from=2000-01-01&date_to=2000-01-02", {}),
        ("/", {"HTTP_HX_REQUEST": "true"}),
        ("/jobs/", {"HTTP_HX_REQUEST": "true"}),
        (job_page, {"HTTP_HX_REQUEST": "true"}),
        ("/history/", {"HTTP_HX_REQUEST": "true"}),
    ]
    last_day = JobHistory.objects.filter(created_at__gte=timezone.now() - timedelta(days=1))
    print(
        f"{Job.objects.count():,} jobs, {JobHistory.objects.count():,} runs "
        f"({last_day.count():,} in the last 24 h); {args.repeat} requests per page; "
        "server time in ms"
    )
    print(f"{'page':<58} {'median':>8} {'p90':>8}")
    results = []
    for url, headers in pages:
        label = url + (" (htmx)" if headers else "")
        results.append(
            (label, url in required and not headers, measure(client, url, args.repeat, **headers))
        )
    # A dashboard whose cache of completed hours is cold (the first view after a start, or
    # with JOBS_DASHBOARD_CACHE_SECONDS=0): it counts the whole last day.
    with override_settings(JOBS_DASHBOARD_CACHE_SECONDS=0):
        cold = measure(client, "/", args.repeat)
    results.append(("/ with a cold cache (counts the whole day)", False, cold))
    over = []
    for label, is_required, times in results:
        median = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        flag = "" if median < TARGET_MS else "  over target"
        if flag and is_required:
            over.append(label)
        print(f"{label[:58]:<58} {median:8.1f} {p90:8.1f}{flag}")
    if over:
        raise SystemExit(f"median over {TARGET_MS:g} ms: {', '.join(over)}")


if __name__ == "__main__":
    main()
