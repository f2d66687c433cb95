"""Celery burst: --jobs celery runs due at once, sent to a real Celery worker, against the
same work sent by celery beat itself.

    .venv/bin/python benchmarks/celery_burst.py [--jobs 1000] [--concurrency 4]
        [--workers 16] [--poll 1.0]

Starts a private redis-server (broker on database 0, Celery's Redis result backend on 1)
and one `celery -A jobs.tests.celery_tasks worker --concurrency N` (prefork). Then:

  ours: --jobs celery jobs (task jobs_tests.add) due at the same instant, in a throwaway
        SQLite database, and one `runscheduler --workers W` following each task through
        the result backend; runs/s from the first send (the earliest run start: a run
        sends at once) to the last finish recorded in our database.
  beat: celery beat with a static schedule of --jobs entries of the same task, all due
        at the same instant (an interval schedule starting together); runs/s from its
        first "Sending due task" to the last date_done in the result backend. Beat is
        stopped once it has sent them all, before a second round comes due.

Both with the same worker; nothing else is measured in between.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TASK = "jobs_tests.add"
BEAT_DUE_SECONDS = 20  # beat's entries all come due this long after it starts
# A line of beat's log saying it sent a task, and when (whatever the log's format).
SENDING = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}).*Scheduler: Sending due task")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition, timeout: float, what: str, interval: float = 0.1):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)


class Processes:
    """The processes started, each with its output in a file; all killed at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: list[subprocess.Popen] = []

    def start(self, name: str, args: list[str], env: dict[str, str], cwd: Path = ROOT) -> Path:
        log = self.folder / f"{name}.log"
        with log.open("wb") as out:
            self.started.append(
                subprocess.Popen(
                    args,
                    cwd=cwd,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        return log

    def stop(self, index: int, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
        proc = self.started[index]
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def stop_all(self) -> None:
        for index in reversed(range(len(self.started))):
            self.stop(index, signal.SIGKILL)


def redis_client(port: int, db: int):  # type: ignore[no-untyped-def]
    import redis

    return redis.Redis(host="127.0.0.1", port=port, db=db)


def ours(args: argparse.Namespace, procs: Processes, env: dict[str, str]) -> dict:
    from django.core.management import call_command
    from django.db.models import Max, Min
    from django.utils import timezone

    from jobs.bench.data import insert_interval_jobs
    from jobs.models import Job, JobHistory

    call_command("migrate", verbosity=0)
    due = timezone.now() + timedelta(seconds=8)  # the scheduler is up by then
    insert_interval_jobs(args.jobs, due, timedelta(hours=1))
    Job.objects.update(executor="celery", command=TASK, arguments={"args": [2, 3]})
    index = len(procs.started)
    procs.start(
        "runscheduler",
        [sys.executable, str(ROOT / "manage.py"), "runscheduler", "--workers", str(args.workers)],
        env,
    )
    finished = ("success", "failed")
    wait_for(
        lambda: JobHistory.objects.filter(status__in=finished).count() >= args.jobs,
        600,
        "our runs",
        interval=0.5,
    )
    procs.stop(index)
    runs = JobHistory.objects.all()
    span = runs.aggregate(first=Min("started_at"), last=Max("finished_at"))
    seconds = (span["last"] - span["first"]).total_seconds()
    return {
        "runs": runs.count(),
        "succeeded": runs.filter(status="success").count(),
        "first_send_to_last_finish_s": round(seconds, 3),
        "runs_per_s": round(args.jobs / seconds, 1),
    }


def beat(args: argparse.Namespace, procs: Processes, env: dict[str, str], port: int) -> dict:
    results = redis_client(port, 1)
    results.flushdb()
    beat_env = {
        **env,
        "BENCH_BEAT_ENTRIES": str(args.jobs),
        "BENCH_BEAT_DUE_SECONDS": str(BEAT_DUE_SECONDS),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT)]),
    }
    index = len(procs.started)
    log = procs.start(
        "beat",
        [
            sys.executable, "-m", "celery", "-A", "celery_beat_app", "beat",
            "--schedule", str(procs.folder / "beat-schedule"), "--loglevel", "INFO",
        ],
        beat_env,
        cwd=procs.folder,
    )  # fmt: skip

    def sent() -> list[str]:
        return [
            line for line in log.read_text(errors="replace").splitlines() if SENDING.search(line)
        ]

    try:
        wait_for(lambda: len(sent()) >= args.jobs, BEAT_DUE_SECONDS + 60, "beat's sends", 0.05)
    except RuntimeError:
        print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    procs.stop(index)  # before a second round comes due
    first = datetime.strptime(SENDING.search(sent()[0]).group(1), "%Y-%m-%d %H:%M:%S,%f")
    first = first.astimezone(UTC)  # beat logs in the local time of this machine

    def done() -> list[dict]:
        metas = [json.loads(results.get(key)) for key in results.scan_iter("celery-task-meta-*")]
        return [meta for meta in metas if meta.get("status") in ("SUCCESS", "FAILURE")]

    metas = wait_for(lambda: len(done()) >= args.jobs and done(), 600, "beat's results", 0.5)
    last = max(datetime.fromisoformat(meta["date_done"]) for meta in metas)
    last = last if last.tzinfo else last.replace(tzinfo=UTC)
    seconds = (last - first).total_seconds()
    return {
        "runs": len(metas),
        "succeeded": sum(meta["status"] == "SUCCESS" for meta in metas),
        "first_send_to_last_finish_s": round(seconds, 3),
        "runs_per_s": round(args.jobs / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=4, help="Celery worker processes")
    parser.add_argument("--workers", type=int, default=16, help="runscheduler's threads")
    parser.add_argument("--poll", type=float, default=1.0, help="JOBS_CELERY_POLL_SECONDS")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="celery-burst-"))
    procs = Processes(folder)
    port = free_port()
    redis_url = f"redis://127.0.0.1:{port}/0"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "scheduler_site.settings",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": f"sqlite:///{folder / 'bench.sqlite3'}",
        "ENV_FILE": "",
        "LOG_LEVEL": "WARNING",
        "JOBS_CELERY_APP": "jobs.tests.celery_tasks.app",
        "JOBS_CELERY_POLL_SECONDS": str(args.poll),
        "JOBS_TEST_CELERY_REDIS": redis_url,
    }
    try:
        procs.start(
            "redis",
            [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind",
             "127.0.0.1", "--save", "", "--appendonly", "no"],
            env,
        )  # fmt: skip
        wait_for(lambda: _pings(port), 10, "redis-server")
        worker_log = procs.start(
            "worker",
            [
                sys.executable, "-m", "celery", "-A", "jobs.tests.celery_tasks", "worker",
                "--concurrency", str(args.concurrency), "--without-gossip", "--without-mingle",
                "--loglevel", "WARNING",
            ],
            {**env, "JOBS_TEST_CELERY_RECEIPTS": ""},
        )  # fmt: skip
        wait_for(lambda: _pings_worker(env), 60, f"the Celery worker ({worker_log})", 0.5)
        os.environ.update(env)
        import django

        django.setup()
        row = {
            "jobs": args.jobs,
            "celery_processes": args.concurrency,
            "scheduler_threads": args.workers,
            "poll_s": args.poll,
            "ours": ours(args, procs, env),
            "beat": beat(args, procs, env, port),
        }
        print(json.dumps(row), flush=True)
    finally:
        procs.stop_all()
        shutil.rmtree(folder, ignore_errors=True)


def _pings(port: int) -> bool:
    try:
        return bool(redis_client(port, 0).ping())
    except Exception:
        return False


def _pings_worker(env: dict[str, str]) -> bool:
    os.environ["JOBS_TEST_CELERY_REDIS"] = env["JOBS_TEST_CELERY_REDIS"]
    from jobs.tests.celery_tasks import app, use_redis

    use_redis(env["JOBS_TEST_CELERY_REDIS"])
    return bool(app.control.ping(timeout=0.5))


if __name__ == "__main__":
    main()
