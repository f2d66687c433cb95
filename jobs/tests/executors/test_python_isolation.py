"""Python runs that can be stopped: in process isolation (JOBS_PYTHON_ISOLATION=process) a
run is a child process, killed at a cancel within the kill grace however stubborn its
task; in thread mode (the default, cooperative) a task that ignores its stop signal is
reported (the run's log, a metric, an alert) and its worker slot stays taken until it
really ends."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from jobs import alerts, engine, metrics
from jobs.executors import python as python_executor
from jobs.models import Job, JobHistory, NotificationKind, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.executors.test_real_work_processes import alive
from jobs.tests.factories import make_job
from jobs.tests.processes import BASE_DIR, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

STUBBORN = "samples.stubborn"


def due_python_job(name: str, command: str, arguments: dict) -> Job:
    job = make_job(name=name, executor="python", command=command, arguments=arguments)
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    return job


def pid_in(path: Path, timeout: float = 30) -> int:
    return int(wait_until(lambda: path.exists() and path.read_text().strip(), timeout))


@pytest.fixture
def isolated(settings):
    settings.JOBS_PYTHON_ISOLATION = "process"
    settings.JOBS_KILL_GRACE_SECONDS = 0.5
    return settings


def run_to_the_end(job: Job) -> JobHistory:
    scheduler = Scheduler(workers=1)
    scheduler.start_workers()
    try:
        scheduler.run_pass()
        assert scheduler.wait_idle(timeout=60)
    finally:
        scheduler.shutdown()
    return JobHistory.objects.get(job=job)


def test_an_isolated_run_executes_in_a_child_process_and_reports_as_a_thread_would(
    isolated, tmp_path
):
    release = tmp_path / "release"
    release.touch()
    job = due_python_job(
        "isolated", STUBBORN, {"started": str(tmp_path / "pid"), "release": str(release)}
    )
    run = run_to_the_end(job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert int((tmp_path / "pid").read_text()) != os.getpid()
    assert run.log.splitlines()[0] == f"$ python task {STUBBORN}"
    assert "spinning" in run.log and "returned: 'released'" in run.log


def test_an_isolated_task_that_raises_fails_with_its_traceback(isolated):
    job = due_python_job("fails", "jobs.example_tasks.always_fails", {"message": "boom"})
    run = run_to_the_end(job)
    assert run.status == RunStatus.FAILED
    assert "the task raised an exception:" in run.log and "RuntimeError: boom" in run.log


def test_a_cancelled_isolated_run_ends_within_the_kill_grace_and_its_process_is_gone(
    isolated, tmp_path
):
    job = due_python_job("stubborn", STUBBORN, {"started": str(tmp_path / "pid")})
    scheduler = Scheduler(workers=1)
    scheduler.start_workers()
    try:
        scheduler.run_pass()
        pid = pid_in(tmp_path / "pid")
        assert alive(pid)
        engine.cancel_run(JobHistory.objects.get(job=job), by="alice")
        cancelled_at = time.monotonic()
        wait_until(lambda: not alive(pid), 15)
        # The watch sees a cancel within a second; then SIGTERM, and SIGKILL at the grace
        # (3 s in all on a quiet machine): bounded with room for a loaded one, still far
        # short of a task that never ends by itself.
        assert time.monotonic() - cancelled_at < 15
        assert scheduler.wait_idle(timeout=10)  # and the worker is free again
    finally:
        scheduler.shutdown()
    run = JobHistory.objects.get(job=job)
    assert run.status == RunStatus.CANCELLED and "cancelled by alice" in run.log


@pytest.mark.parametrize(("raw", "expected"), [(None, "thread"), (" Process ", "process")])
def test_the_isolation_comes_from_the_environment(raw, expected):
    env = {key: value for key, value in os.environ.items() if key != "JOBS_PYTHON_ISOLATION"}
    env["SECRET_KEY"] = "k" * 50
    if raw is not None:
        env["JOBS_PYTHON_ISOLATION"] = raw
    code = "from scheduler_site import settings as s; print(s.JOBS_PYTHON_ISOLATION)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=BASE_DIR, capture_output=True, text=True
    )
    assert done.stdout.strip() == expected, done.stderr


def test_an_unknown_isolation_in_the_environment_stops_the_process_with_a_message():
    env = {**os.environ, "SECRET_KEY": "k" * 50, "JOBS_PYTHON_ISOLATION": "fork"}
    code = "from scheduler_site import settings"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=BASE_DIR, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "JOBS_PYTHON_ISOLATION must be thread or process, got 'fork'" in done.stderr


def test_an_unknown_isolation_is_refused(settings):
    settings.JOBS_PYTHON_ISOLATION = "fork"
    with pytest.raises(ImproperlyConfigured, match="JOBS_PYTHON_ISOLATION"):
        python_executor.isolation()


# --- thread mode: cooperative ------------------------------------------------------------


def test_a_thread_task_ignoring_its_stop_is_reported_and_keeps_its_slot_until_it_ends(
    settings, tmp_path
):
    settings.JOBS_KILL_GRACE_SECONDS = 0.2
    settings.JOBS_PYTHON_ISOLATION = "thread"
    settings.JOBS_SIM_MIN_SECONDS = settings.JOBS_SIM_MAX_SECONDS = 0
    sent: list = []
    previous = alerts.use_dispatcher(type("Recorder", (), {"submit": sent.extend})())
    before = metrics.PYTHON_NOT_STOPPED._value.get()
    release = tmp_path / "release"
    stubborn = due_python_job("stubborn", STUBBORN, {"release": str(release)})
    scheduler = Scheduler(workers=1)
    scheduler.start_workers()
    try:
        scheduler.run_pass()
        wait_until(lambda: JobHistory.objects.filter(status=RunStatus.RUNNING).exists(), 10)
        run = JobHistory.objects.get(job=stubborn)
        engine.cancel_run(run, by="alice")
        reported = wait_until(
            lambda: JobHistory.objects.filter(pk=run.pk, log__contains="did not stop").first(), 15
        )
        assert "its worker stays busy until the task returns" in reported.log
        assert metrics.PYTHON_NOT_STOPPED._value.get() == before + 1
        assert metrics.PYTHON_STILL_RUNNING._value.get() == 1
        wait_until(lambda: sent, 10)  # dispatched once the log line is written
        assert [(n.run_key, n.kind) for n in sent] == [(run.pk.hex, NotificationKind.NOT_STOPPED)]
        # Its slot is taken: a run due now waits while the task spins.
        other = make_job(name="other", executor="simulated")
        Job.objects.filter(pk=other.pk).update(next_run_at=timezone.now())
        scheduler.run_pass()
        assert not scheduler.wait_idle(timeout=1.0)
        assert JobHistory.objects.get(job=other).status == RunStatus.PENDING
        release.touch()  # the task returns: the slot is free, the other run goes
        assert scheduler.wait_idle(timeout=30)
    finally:
        release.touch()
        scheduler.shutdown()
        alerts.use_dispatcher(previous)
    assert JobHistory.objects.get(job=other).status in (RunStatus.SUCCESS, RunStatus.FAILED)
    assert metrics.PYTHON_STILL_RUNNING._value.get() == 0
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert "the task returned" in run.log.rsplit("did not stop", 1)[1]
