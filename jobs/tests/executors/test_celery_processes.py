"""Celery jobs end to end: a real Celery worker (jobs/tests/celery_tasks.py) over a
private redis-server, with Celery's Redis result backend, and our scheduler (in this
process one pass at a time, or as real `runscheduler` processes) sending and following
the tasks: results, tracebacks, Celery's retries, cancel and timeout really stopping the
task, a broker that is down, and a scheduler SIGKILLed after it sent a task."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from jobs import engine
from jobs.models import Job, JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests import celery_tasks
from jobs.tests.processes import CeleryWorker, RedisServer, scheduler, wait_until

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

APP = "jobs.tests.celery_tasks.app"
FINISHED = (RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.CANCELLED)


class Celery:
    """The module's Celery: its Redis, its worker, and the file where the worker writes
    down every task id it receives."""

    def __init__(self, redis: RedisServer, receipts: Path, worker: CeleryWorker) -> None:
        self.redis = redis
        self.receipts = receipts
        self.worker = worker

    @property
    def env(self) -> dict[str, str]:
        return {"JOBS_TEST_CELERY_REDIS": self.redis.url, "JOBS_CELERY_APP": APP}

    def receipts_of(self, run: JobHistory) -> int:
        """How many times the worker received the run's task."""
        if not self.receipts.exists():
            return 0
        return self.receipts.read_text().split().count(str(run.pk))


@pytest.fixture(scope="module")
def celery(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Celery]:
    redis = RedisServer()
    redis.start()
    celery_tasks.use_redis(redis.url)
    receipts = tmp_path_factory.mktemp("celery") / "receipts"
    env = {"JOBS_TEST_CELERY_REDIS": redis.url, "JOBS_TEST_CELERY_RECEIPTS": str(receipts)}
    try:
        worker = CeleryWorker(env)
    except BaseException:
        redis.stop()
        raise
    try:
        yield Celery(redis, receipts, worker)
    finally:
        worker.cleanup()
        redis.stop()


@pytest.fixture
def celery_site(settings, celery: Celery) -> Celery:
    settings.JOBS_CELERY_APP = APP
    settings.JOBS_CELERY_POLL_SECONDS = 0.2
    settings.JOBS_LIVE_LOG_SECONDS = 0.5
    return celery


def celery_job(name: str, task: str, arguments: dict | None = None, **fields: Any) -> Job:
    job = Job(
        name=name,
        executor="celery",
        command=task,
        arguments=arguments or {},
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(hours=1),  # runs when the test says
        **fields,
    )
    job.full_clean()
    job.save()
    return job


def run_to_the_end(job: Job) -> JobHistory:
    """Run the job now, in this process, one scheduler pass to the end (retries too)."""
    engine.run_now(job)
    Scheduler(workers=2).run_once()
    return JobHistory.objects.filter(job=job).order_by("-attempt").first()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def test_a_run_sends_its_task_once_and_records_the_return_value(celery_site):
    job = celery_job("add", "jobs_tests.add", {"args": [2], "kwargs": {"y": 5}})
    run = run_to_the_end(job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert run.log.startswith("$ celery task jobs_tests.add\n")
    # The task id is the run's id, and the worker that ran it is named.
    assert f"Celery task id {run.pk} (the run's id)" in run.log
    assert f"succeeded on tests-{os.getpid()}@" in run.log
    # The run's worker names the Celery worker, and the scheduler's worker that sent it.
    assert run.worker.startswith(f"tests-{os.getpid()}@"), run.worker
    assert " via " in run.worker
    assert "returned: 7" in run.log
    assert celery_site.receipts_of(run) == 1
    assert celery_tasks.app.AsyncResult(str(run.pk)).get(timeout=10) == 7
    job.refresh_from_db()
    assert job.last_run_status == RunStatus.SUCCESS


def test_a_task_that_declares_scheduled_for_gets_the_runs_occurrence_in_utc(celery_site):
    job = celery_job("when", "jobs_tests.scheduled_for")
    run = run_to_the_end(job)
    assert run.status == RunStatus.SUCCESS, run.log
    sent = celery_tasks.app.AsyncResult(str(run.pk)).get(timeout=10)
    assert sent == run.scheduled_for.astimezone(UTC).isoformat()
    assert sent.endswith("+00:00")


def test_a_failing_task_fails_the_run_with_the_workers_traceback_and_our_retries_follow(
    celery_site,
):
    job = celery_job(
        "fails", "jobs_tests.fail", {"args": ["boom"]}, max_retries=1, retry_backoff_seconds=0
    )
    engine.run_now(job)
    Scheduler(workers=2).run_once()
    runs = list(JobHistory.objects.filter(job=job).order_by("attempt"))
    assert [(r.attempt, r.status) for r in runs] == [(1, "failed"), (2, "failed")]
    for run in runs:
        assert "failed on tests-" in run.log and "ValueError('boom')" in run.log
        assert "Traceback (most recent call last)" in run.log
        assert 'celery_tasks.py", line' in run.log  # the worker's own frames
        assert "ValueError: boom" in run.log
        assert celery_site.receipts_of(run) == 1  # each attempt is a task of its own


def test_an_unknown_task_fails_with_celerys_own_message(celery_site):
    run = run_to_the_end(celery_job("unknown", "jobs_tests.no_such_task"))
    assert run.status == RunStatus.FAILED
    assert "'jobs_tests.no_such_task' never registered" in run.log


def test_celerys_own_retries_are_followed_to_the_tasks_end(celery_site, tmp_path):
    release = tmp_path / "release"
    job = celery_job("retry", "jobs_tests.retry_until", {"args": [str(release)]})
    engine.run_now(job)
    # The task is retried by Celery until the test has seen a retry in the live log.
    passing = threading.Thread(target=Scheduler(workers=2).run_once)
    passing.start()
    try:
        wait_until(
            lambda: "Celery retries the task on tests-" in (JobHistory.objects.get(job=job).log),
            60,
        )
    finally:
        release.write_text("go")
        passing.join(timeout=60)
    run = JobHistory.objects.get(job=job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert "not released yet" in run.log
    assert "returned: 'released'" in run.log
    assert run.attempt == 1  # Celery's retries, not ours


def test_without_a_result_backend_the_run_succeeds_once_the_broker_took_it(celery_site, settings):
    settings.JOBS_CELERY_APP = "jobs.tests.celery_tasks.unfollowed"
    run = run_to_the_end(celery_job("add", "jobs_tests.add", {"args": [1]}))
    assert run.status == RunStatus.SUCCESS
    assert "sent: the broker accepted the task." in run.log
    assert "is all this site knows" in run.log
    wait_until(lambda: celery_site.receipts_of(run) == 1, 30)  # the worker did get it


def test_a_broker_that_is_down_fails_the_run_clearly_and_our_retries_repeat_it(
    celery_site, settings
):
    settings.JOBS_CELERY_APP = "jobs.tests.celery_tasks.unreachable"
    job = celery_job(
        "down", "jobs_tests.add", {"args": [1]}, max_retries=1, retry_backoff_seconds=0
    )
    engine.run_now(job)
    Scheduler(workers=1).run_once()  # returns: nothing is stuck
    runs = list(JobHistory.objects.filter(job=job).order_by("attempt"))
    assert [(r.attempt, r.status) for r in runs] == [(1, "failed"), (2, "failed")]
    for run in runs:
        assert "not sent: the Celery broker or result backend cannot be reached" in run.log


def _start_sleeper(celery: Celery, tmp_path: Path, **fields: Any) -> tuple[Job, Path, int]:
    """A job whose task writes its pid, sleeps a minute and then writes a file, started
    by a real scheduler; (job, the file it would write, the pid of the task's process)."""
    done = tmp_path / "done"
    job = celery_job("sleeper", "jobs_tests.sleep_then_write", {"args": [60, str(done)]}, **fields)
    engine.run_now(job)
    started = Path(f"{done}.started")
    wait_until(started.exists, 60)
    pid = int(wait_until(lambda: started.read_text().strip(), 10))
    assert alive(pid)
    return job, done, pid


def test_a_cancelled_run_revokes_its_task_and_the_task_really_stops(celery_site, tmp_path):
    proc = scheduler("--workers", "2", JOBS_LIVE_LOG_SECONDS=0.5, **celery_site.env)
    try:
        job, done, pid = _start_sleeper(celery_site, tmp_path)
        run = JobHistory.objects.get(job=job)
        engine.cancel_run(run, by="tester")
        # The process running the task is ended (a task that returned leaves its pool
        # process alive), so the file it would write a minute later never appears.
        wait_until(lambda: not alive(pid), 30)
        wait_until(lambda: celery_tasks.app.AsyncResult(str(run.pk)).state == "REVOKED", 30)
        assert not done.exists()
    finally:
        proc.stop(timeout=30)
        proc.cleanup()
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert celery_site.receipts_of(run) == 1


def test_a_run_past_its_timeout_revokes_its_task(celery_site, tmp_path):
    proc = scheduler("--workers", "2", **celery_site.env)
    try:
        job, done, pid = _start_sleeper(celery_site, tmp_path, timeout_seconds=3)
        run = wait_until(
            lambda: JobHistory.objects.filter(job=job, status__in=FINISHED).first(), 60
        )
        wait_until(lambda: not alive(pid), 30)
    finally:
        proc.stop(timeout=30)
        proc.cleanup()
    assert run.status == RunStatus.FAILED
    assert "the run timed out: revoked the task" in run.log
    assert "timed out after 3 s" in run.log
    assert not done.exists()


def test_a_scheduler_killed_after_sending_is_followed_by_the_next_without_a_second_send(
    celery_site, tmp_path, settings
):
    env = {**celery_site.env, "JOBS_LEASE_SECONDS": 2, "JOBS_LIVE_LOG_SECONDS": 0.5}
    done = tmp_path / "done"
    job = celery_job("sleeper", "jobs_tests.sleep_then_write", {"args": [4, str(done)]})
    first = scheduler("--workers", "2", **env)
    try:
        engine.run_now(job)
        # Sent, and running on the Celery worker: now the scheduler dies, mid-follow.
        wait_until(Path(f"{done}.started").exists, 60)
        first.kill()
    finally:
        first.cleanup()
    run = JobHistory.objects.get(job=job)
    assert run.status == RunStatus.RUNNING  # nobody knows yet that its worker died
    second = scheduler("--workers", "2", **env)
    try:
        # Its reaper finds the run lost after the lease and hands it back; its worker
        # follows the task that is already on the Celery worker.
        finished = wait_until(
            lambda: JobHistory.objects.filter(job=job, status__in=FINISHED).first(), 90
        )
    finally:
        second.stop(timeout=30)
        second.cleanup()
    assert finished.pk == run.pk and finished.status == RunStatus.SUCCESS, finished.log
    assert "sent before by an earlier worker of this run" in finished.log
    assert "returned: 'slept'" in finished.log
    assert JobHistory.objects.filter(job=job).count() == 1  # no retry was made
    assert done.exists()
    assert celery_site.receipts_of(run) == 1  # the worker's own count: one delivery


def test_a_scheduler_stopped_while_following_hands_the_run_back_to_the_next(celery_site, tmp_path):
    env = {**celery_site.env, "JOBS_SHUTDOWN_GRACE_SECONDS": 1}
    done = tmp_path / "done"
    job = celery_job("sleeper", "jobs_tests.sleep_then_write", {"args": [4, str(done)]})
    first = scheduler("--workers", "2", **env)
    try:
        engine.run_now(job)
        wait_until(Path(f"{done}.started").exists, 60)
        assert first.stop(timeout=30) == 0, first.log()
    finally:
        first.cleanup()
    run = JobHistory.objects.get(job=job)
    # Handed back as it is, the task still going on its worker: not failed, not retried.
    assert run.status == RunStatus.PENDING and not run.worker
    second = scheduler("--workers", "2", **env)
    try:
        finished = wait_until(
            lambda: JobHistory.objects.filter(job=job, status__in=FINISHED).first(), 90
        )
    finally:
        second.stop(timeout=30)
        second.cleanup()
    assert finished.pk == run.pk and finished.status == RunStatus.SUCCESS, finished.log
    assert "sent before by an earlier worker of this run" in finished.log
    assert JobHistory.objects.filter(job=job).count() == 1
    assert celery_site.receipts_of(run) == 1
