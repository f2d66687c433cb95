"""Queues across real scheduler processes: `--queues` splits the work by process, and a
queue's limit (JOBS_QUEUE_LIMITS) holds across all of them, sampled from the database
while they run.

Run on SQLite by default and on PostgreSQL with DATABASE_URL (pytest-django makes the
test database; the processes connect to it)."""

from __future__ import annotations

import secrets
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from jobs.models import Job, JobHistory, RunStatus
from jobs.tests.processes import huey_worker, redis_url_or_skip, scheduler, wait_until

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]


def jobs_due(prefix: str, count: int, queue: str, *, in_seconds: float, **fields) -> None:
    at = timezone.now() + timedelta(seconds=in_seconds)
    for index in range(count):
        Job(
            name=f"{prefix} {index:02}",
            command="true",
            schedule_type="once",
            scheduled_at=at,
            queue=queue,
            sim_failure_rate=0,
            **fields,
        ).save()


def all_succeeded(count: int) -> bool:
    return JobHistory.objects.filter(status=RunStatus.SUCCESS).count() == count


def test_two_schedulers_with_different_queues_each_run_only_their_queues_runs():
    jobs_due("report", 6, "reports", in_seconds=3, sim_min_seconds=0, sim_max_seconds=0.05)
    jobs_due("backup", 6, "default", in_seconds=3, sim_min_seconds=0, sim_max_seconds=0.05)
    reports = scheduler("--workers", "2", "--queues", "reports", "--tick", "0.2")
    others = scheduler("--workers", "2", "--queues", "default", "--tick", "0.2")
    try:
        wait_until(lambda: all_succeeded(12), timeout=60, interval=0.1)
        for proc in (reports, others):
            assert proc.stop(timeout=30) == 0, proc.log()
    finally:
        for proc in (reports, others):
            proc.cleanup()
    for queue, proc in (("reports", reports), ("default", others)):
        workers = set(JobHistory.objects.filter(queue=queue).values_list("worker", flat=True))
        # host:pid/wN or host:pid/claim (inserted running by its claim): the process
        # that ran each run.
        assert all(f":{proc.pid}/" in worker for worker in workers), (queue, workers)


def test_a_queue_limit_holds_across_four_schedulers_and_freed_slots_are_reused():
    limit = 2
    count = 14
    env = {"JOBS_QUEUE_LIMITS": f"reports={limit}"}
    # Runs that overlap (1-1.5 s each, long beside a loaded machine's sampling), all due
    # at once: 14 runs through 2 slots.
    jobs_due("report", count, "reports", in_seconds=4, sim_min_seconds=1, sim_max_seconds=1.5)
    jobs_due("backup", 4, "default", in_seconds=4, sim_min_seconds=0, sim_max_seconds=0.05)
    procs = [scheduler("--workers", "3", "--tick", "0.2", **env) for _ in range(4)]
    most = 0
    samples = 0
    try:
        deadline = time.monotonic() + 90
        while not all_succeeded(count + 4):
            assert time.monotonic() < deadline, "the runs did not all finish in time"
            running = JobHistory.objects.filter(status=RunStatus.RUNNING, queue="reports").count()
            most = max(most, running)
            samples += 1
            assert running <= limit, f"{running} reports runs running at once"
            time.sleep(0.005)
        for proc in procs:
            assert proc.stop(timeout=30) == 0, proc.log()
        logs = "".join(proc.log() for proc in procs)
        assert "Traceback" not in logs, logs
    finally:
        for proc in procs:
            proc.cleanup()
    assert most == limit, f"never {limit} at once in {samples} samples: the test proved little"
    runs = JobHistory.objects.filter(queue="reports")
    # Each run overlapped at most one other: the starts and ends say so too.
    spans = sorted(runs.values_list("started_at", "finished_at"))
    for index, (started, _) in enumerate(spans):
        overlapping = sum(1 for s, f in spans[:index] if f > started)
        assert overlapping < limit, spans
    # (Which processes ran them is not fixed: a worker that frees a slot takes the next
    # run at once, so one process may run them all; the limit is what holds.)


def test_runscheduler_refuses_a_bad_queue_name_before_starting():
    proc = scheduler("--queues", "reports,bad name")
    try:
        assert proc.wait(timeout=60) != 0
        assert "'bad name' is not a queue name" in proc.log(), proc.log()
    finally:
        proc.cleanup()


def test_runscheduler_refuses_bad_queue_limits_with_the_checks_message():
    proc = scheduler(JOBS_QUEUE_LIMITS="reports=lots")
    try:
        assert proc.wait(timeout=60) != 0
        log = proc.log()
        assert "jobs.E012" in log and "reports" in log, log
    finally:
        proc.cleanup()


@pytest.fixture
def huey_env() -> dict[str, str]:
    """The Redis the tests may use, with a Huey queue prefix of this test's own."""
    url = redis_url_or_skip()
    return {
        "REDIS_URL": url,
        "HUEY_QUEUE": f"queues-{secrets.token_hex(4)}",
        "JOBS_HUEY_QUEUES": "reports",
        "JOBS_SIM_FAILURE_RATE": 0,
    }


def test_with_huey_each_queue_goes_to_the_workers_that_consume_it(huey_env):
    jobs_due("report", 3, "reports", in_seconds=2, sim_min_seconds=0, sim_max_seconds=0)
    jobs_due("backup", 3, "default", in_seconds=2, sim_min_seconds=0, sim_max_seconds=0)
    reports = huey_worker(**huey_env, JOBS_HUEY_CONSUME_QUEUE="reports")
    others = huey_worker(**huey_env)
    proc = scheduler(**huey_env)
    try:
        wait_until(lambda: all_succeeded(6), timeout=60, interval=0.1)
    finally:
        for each in (proc, reports, others):
            each.stop(timeout=30)
            each.cleanup()
    for queue, worker in (("reports", reports), ("default", others)):
        names = set(JobHistory.objects.filter(queue=queue).values_list("worker", flat=True))
        assert all(f":{worker.pid}/huey-" in name for name in names), (queue, names)
