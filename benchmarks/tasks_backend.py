"""Django's task framework through this scheduler, beside django-tasks' own database
backend (the django-tasks-db package, worker `db_worker`), on the same database in one run.

    .venv/bin/python benchmarks/tasks_backend.py [--vendor sqlite|postgresql]
        [--enqueues 2000] [--rate 100] [--seconds 10]

For each backend: enqueue throughput (--enqueues calls of `task.enqueue()` from one
process, each its own transaction, as from a request), then the latency from enqueue()
to the task's start with one worker process running (`manage.py runscheduler`, or
`manage.py db_worker`, each with its default poll of 1 s) while this process enqueues
--rate tasks a second for --seconds: p50 and p99 of started_at - enqueued_at, as each
backend records them. The database is a temporary SQLite file, or a database made on the
PostgreSQL server BENCH_PG (default postgres://postgres@127.0.0.1:5432/postgres) and
dropped at the end, also on failure.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.throwaway import throwaway_database  # noqa: E402

SETTINGS = "scheduler_site.bench_tasks_settings"
OURS, THEIRS = "default", "db"
WORKERS = {
    OURS: ["runscheduler", "--workers", "4"],
    THEIRS: ["db_worker", "--backend", "db", "--no-reload"],
}
NAMES = {OURS: "jobs.tasks_backend (runscheduler)", THEIRS: "django-tasks-db (db_worker)"}


class Latency(NamedTuple):
    p50_ms: float
    p99_ms: float
    count: int


def task_for(backend: str):  # type: ignore[no-untyped-def]
    from jobs.bench.task_targets import noop

    return noop if backend == OURS else noop.using(backend=backend)


def clear() -> None:
    from django_tasks_db.models import DBTaskResult

    from jobs.models import JobHistory

    JobHistory.objects.all().delete()
    DBTaskResult.objects.all().delete()


def throughput(backend: str, count: int) -> float:
    """enqueue() calls a second, each outside any transaction (it commits by itself)."""
    task = task_for(backend)
    for number in range(50):  # warm: the job made, statements prepared
        task.enqueue(number)
    started = time.perf_counter()
    for number in range(count):
        task.enqueue(number)
    rate = count / (time.perf_counter() - started)
    clear()
    return rate


def start_worker(backend: str) -> subprocess.Popen:
    log = tempfile.TemporaryFile(prefix="bench-worker-")  # noqa: SIM115 - lives with the worker
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), *WORKERS[backend]],
        cwd=ROOT,
        env={**os.environ, "LOG_LEVEL": "WARNING"},
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def finished(backend: str) -> int:
    if backend == OURS:
        from jobs.models import JobHistory

        return JobHistory.objects.filter(finished_at__isnull=False).count()
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(finished_at__isnull=False).count()


def wait_for(condition, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the worker did not finish the tasks in time")
        time.sleep(0.1)


def latencies(backend: str) -> list[float]:
    if backend == OURS:
        from jobs.models import JobHistory

        rows = JobHistory.objects.values_list("created_at", "started_at")
    else:
        from django_tasks_db.models import DBTaskResult

        rows = DBTaskResult.objects.values_list("enqueued_at", "started_at")
    return [(started - enqueued).total_seconds() * 1000 for enqueued, started in rows]


def latency(backend: str, rate: float, seconds: float) -> Latency:
    """Enqueue `rate` a second for `seconds` while one worker process runs them."""
    task = task_for(backend)
    worker = start_worker(backend)
    try:
        task.enqueue(-1)  # the worker is up once it ran this one
        wait_for(lambda: finished(backend) >= 1, 60)
        clear()
        total = int(rate * seconds)
        began = time.monotonic()
        for number in range(total):
            # Paced to the schedule, not to the previous call: no drift from slow calls.
            delay = began + number / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            task.enqueue(number)
        wait_for(lambda: finished(backend) >= total, 120)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
    values = sorted(latencies(backend))
    clear()
    cut = statistics.quantiles(values, n=100)
    return Latency(statistics.median(values), cut[98], len(values))


def measure(options: argparse.Namespace) -> None:
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    print(
        f"{connection.vendor}: {options.enqueues:,} enqueues; {options.rate:g}/s for "
        f"{options.seconds:g} s with one worker process"
    )
    for backend in (OURS, THEIRS):
        rate = throughput(backend, options.enqueues)
        late = latency(backend, options.rate, options.seconds)
        print(
            f"  {NAMES[backend]:38} {rate:8,.0f} enqueues/s   enqueue to start: "
            f"p50 {late.p50_ms:6.0f} ms, p99 {late.p99_ms:6.0f} ms ({late.count} tasks)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vendor", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--enqueues", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--seconds", type=float, default=10)
    options = parser.parse_args()

    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
    os.environ["ENV_FILE"] = ""
    with throwaway_database(options.vendor, "bench_tasks"):
        measure(options)


if __name__ == "__main__":
    main()
