"""Scale-out benchmark: several runscheduler processes (and Huey workers) on PostgreSQL.

    python benchmarks/scale_out.py --schedulers 1 2 4 [--huey-workers 2] [--jobs 10000]
        [--rate 1000 --seconds 20]

Makes a throwaway database on the PostgreSQL server (BENCH_PG, default
postgres://postgres@127.0.0.1:5432/postgres), and for each number of schedulers:
  burst:  --jobs jobs due at the same instant, instant simulation; runs/s from the due
          time to the last finish, and the lag from scheduled_for to started_at;
  steady: --rate runs a second (jobs every 10 s, spread evenly) for --seconds; lag
          percentiles of the runs in the last two thirds of the window.
With --huey-workers N, runs go through Huey over Redis (BENCH_REDIS, default
redis://127.0.0.1:6379/0, on a queue of its own) to N `run_huey` processes.
The database is dropped at the end, also on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SERVER_URL = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/0")
DB_NAME = f"bench_scale_{random.randrange(10**8)}"
DB_URL = SERVER_URL.rsplit("/", 1)[0] + "/" + DB_NAME

INSTANT = {"JOBS_SIM_MIN_SECONDS": "0", "JOBS_SIM_MAX_SECONDS": "0", "LOG_LEVEL": "WARNING"}


def admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(SERVER_URL.replace("postgres://", "postgresql://"), autocommit=True) as c:
        c.execute(sql)


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": DB_URL,
            "SECRET_KEY": secrets.token_urlsafe(50),  # 50+ characters, as DEBUG off needs
            "DJANGO_SETTINGS_MODULE": "scheduler_site.settings",
            **INSTANT,
            **extra,
        }
    )
    return env


def start(args: list[str], extra: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=child_env(extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def reset() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE jobs_jobhistory, jobs_job CASCADE")


def processes(schedulers: int, huey_workers: int, queue: str) -> list[subprocess.Popen]:
    extra = {"REDIS_URL": REDIS_URL, "HUEY_QUEUE": queue} if huey_workers else {}
    procs = [start(["runscheduler"], extra) for _ in range(schedulers)]
    procs += [start(["run_huey", "--workers", "4", "--quiet"], extra) for _ in range(huey_workers)]
    return procs


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def burst(jobs: int, schedulers: int, huey_workers: int) -> dict:
    from django.utils import timezone

    from jobs.bench.data import insert_interval_jobs
    from jobs.models import JobHistory

    reset()
    due = timezone.now() + timedelta(seconds=6)  # every process is up by then
    insert_interval_jobs(jobs, due, timedelta(hours=1))
    procs = processes(schedulers, huey_workers, f"bench-{random.randrange(10**9)}")
    try:
        deadline = time.monotonic() + 120
        while JobHistory.objects.filter(status__in=["success", "failed"]).count() < jobs:
            if time.monotonic() > deadline:
                raise RuntimeError("the burst did not finish within 2 minutes")
            time.sleep(0.2)
    finally:
        stop(procs)
    rows = list(JobHistory.objects.values_list("scheduled_for", "started_at", "finished_at"))
    first_attempts = JobHistory.objects.filter(attempt=1).values("job_id", "scheduled_for")
    duplicates = first_attempts.count() - first_attempts.distinct().count()
    lags = [(s - d).total_seconds() for d, s, _ in rows]
    done = (max(f for *_, f in rows) - due).total_seconds()
    return {
        "runs": len(rows),
        "duplicates": duplicates,
        "all_done_within_s": round(done, 3),
        "runs_per_s": round(len(rows) / done, 1),
        "lag_p50_ms": round(percentile(lags, 0.5) * 1000, 1),
        "lag_p99_ms": round(percentile(lags, 0.99) * 1000, 1),
    }


def steady(rate: int, seconds: int, schedulers: int, huey_workers: int) -> dict:
    from django.db import connection
    from django.utils import timezone

    from jobs.bench.data import insert_interval_jobs
    from jobs.models import JobHistory

    reset()
    every = 10
    count = rate * every
    start_at = timezone.now() + timedelta(seconds=6)
    insert_interval_jobs(count, start_at, timedelta(seconds=every))
    # Spread the anchors evenly over one interval: `rate` occurrences every second.
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH numbered AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n "
            "FROM jobs_job) UPDATE jobs_job j SET anchor_at = %s + (n * %s) * interval "
            "'1 microsecond', next_run_at = %s + (n * %s) * interval '1 microsecond' "
            "FROM numbered WHERE numbered.id = j.id",
            [start_at, every * 1_000_000 // count, start_at, every * 1_000_000 // count],
        )
    procs = processes(schedulers, huey_workers, f"bench-{random.randrange(10**9)}")
    try:
        time.sleep((start_at - timezone.now()).total_seconds() + seconds)
    finally:
        stop(procs)
    window_start = start_at + timedelta(seconds=seconds / 3)
    window_end = start_at + timedelta(seconds=seconds - 1)
    rows = list(
        JobHistory.objects.filter(
            scheduled_for__gte=window_start, scheduled_for__lt=window_end, attempt=1
        ).values_list("scheduled_for", "started_at")
    )
    started = [(s - d).total_seconds() for d, s in rows if s is not None]
    expected = int((window_end - window_start).total_seconds() * rate)
    return {
        "rate": rate,
        "runs_in_window": len(rows),
        "expected_in_window": expected,
        "never_started": len(rows) - len(started),
        "lag_p50_ms": round(percentile(started, 0.5) * 1000, 1),
        "lag_p99_ms": round(percentile(started, 0.99) * 1000, 1),
        "lag_max_ms": round(max(started, default=0) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedulers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--huey-workers", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--skip-steady", action="store_true")
    args = parser.parse_args()

    admin(f"CREATE DATABASE {DB_NAME}")
    try:
        os.environ.update(child_env({}))
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "migrate", "-v0"],
            env=child_env({}),
            check=True,
        )
        import django

        django.setup()
        results = []
        for count in args.schedulers:
            row = {"schedulers": count, "huey_workers": args.huey_workers}
            row["burst"] = burst(args.jobs, count, args.huey_workers)
            if not args.skip_steady:
                row["steady"] = steady(args.rate, args.seconds, count, args.huey_workers)
            print(json.dumps(row), flush=True)
            results.append(row)
        from django.db import connection

        connection.close()
    finally:
        admin(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")


if __name__ == "__main__":
    main()
