"""Real scheduler processes on one database: racing, SIGKILL, SIGTERM.

These start `manage.py runscheduler` as separate processes, so the database is shared
through committed data (transactional tests) and every claim goes through real locking.
"""

from __future__ import annotations

import signal
from collections import defaultdict
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from jobs import engine
from jobs.models import Job, JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.processes import scheduler, wait_until

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

INSTANT = {"JOBS_SIM_MIN_SECONDS": 0, "JOBS_SIM_MAX_SECONDS": 0, "JOBS_SIM_FAILURE_RATE": 0}


def make_interval_jobs(count: int, every_seconds: int, start_in: float) -> list[Job]:
    anchor = timezone.now() + timedelta(seconds=start_in)
    for i in range(count):
        Job(
            name=f"tick {i:03}",
            command="true",
            schedule_type="interval",
            interval=every_seconds,
            interval_unit="second",
            scheduled_at=anchor,
        ).save()
    # Saving a hundred jobs can outlast start_in on a loaded machine, and a job saved
    # after its start begins at its next step: every job starts at the anchor all the same
    # (the misfire grace the tests set runs a late first occurrence, never skips it).
    assert Job.objects.filter(scheduled_at=anchor).update(next_run_at=anchor) == count
    return list(Job.objects.all())


def assert_gapless_single_first_attempts(jobs: list[Job], step: timedelta) -> int:
    """Each job's first attempts are exactly anchor + k * step, k = 0..n, once each."""
    by_job: dict = defaultdict(list)
    for job_id, scheduled_for in JobHistory.objects.filter(attempt=1).values_list(
        "job_id", "scheduled_for"
    ):
        by_job[job_id].append(scheduled_for)
    total = 0
    for job in jobs:
        occurrences = sorted(by_job[job.id])
        assert occurrences, f"{job.name} never ran"
        assert len(occurrences) == len(set(occurrences)), f"{job.name} ran an occurrence twice"
        expected = [job.anchor_at + k * step for k in range(len(occurrences))]
        assert occurrences == expected, f"{job.name} has a gap or drifted"
        total += len(occurrences)
    return total


def first_attempts() -> int:
    return JobHistory.objects.filter(attempt=1).count()


def test_four_schedulers_one_killed_and_restarted_make_one_first_attempt_per_occurrence(
    settings,
):
    settings.JOBS_LEASE_SECONDS = 2
    # However long a loaded machine stalls the schedulers, every occurrence is run (none
    # coalesced as missed): the test counts first attempts, not the misfire policy.
    settings.JOBS_MISFIRE_GRACE_SECONDS = 3600
    jobs = make_interval_jobs(50, every_seconds=2, start_in=2.0)
    env = {**INSTANT, "JOBS_LEASE_SECONDS": 2, "JOBS_MISFIRE_GRACE_SECONDS": 3600}
    procs = [scheduler("--workers", "2", **env) for _ in range(4)]
    try:
        # Racing through a few occurrences, then once more after the restart: counted,
        # not timed.
        wait_until(lambda: first_attempts() >= 50 * 2, 120, interval=0.2)
        procs[0].kill()
        procs[0] = scheduler("--workers", "2", **env)
        wait_until(lambda: first_attempts() >= 50 * 4, 120, interval=0.2)
        # The three others can make those runs while the restarted one is still importing
        # Django on a loaded machine; a SIGTERM then would find Python's default handler,
        # not the scheduler's (it logs "started" once its own is in place).
        wait_until(lambda: all(" started: " in proc.log() for proc in procs), 120)
        for proc in procs:
            assert proc.stop(timeout=30) == 0, proc.log()
        logs = "".join(proc.log() for proc in procs)
        assert "database is locked" not in logs
        assert "Traceback" not in logs, logs
    finally:
        for proc in procs:
            proc.cleanup()
    # After the lease, whatever the killed process held is reaped; pending runs are run.
    engine.reap(timezone.now() + timedelta(seconds=3))
    Job.objects.update(is_active=False)
    Scheduler(workers=2).run_once()
    assert not JobHistory.objects.filter(status__in=[RunStatus.PENDING, RunStatus.RUNNING]).exists()
    total = assert_gapless_single_first_attempts(jobs, timedelta(seconds=2))
    assert total >= 50 * 4  # the schedulers really ran for several occurrences


def test_a_run_held_by_a_killed_scheduler_is_reaped_and_retried(settings):
    settings.JOBS_LEASE_SECONDS = 2
    job = Job(
        name="long",
        command="sleep 60",
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(seconds=1),
        max_retries=1,
        retry_backoff_seconds=0,
    )
    job.save()
    proc = scheduler(JOBS_SIM_MIN_SECONDS=60, JOBS_SIM_MAX_SECONDS=60, JOBS_LEASE_SECONDS=2)
    try:
        wait_until(lambda: JobHistory.objects.filter(status=RunStatus.RUNNING).exists(), 20)
        proc.kill()
    finally:
        proc.cleanup()
    run = JobHistory.objects.get()
    assert run.status == RunStatus.RUNNING  # nobody knows yet that its worker died
    # Within the lease the reaper leaves it alone; after it, the run is failed and retried.
    assert engine.reap(run.heartbeat_at + timedelta(seconds=1)) == 0
    after_lease = run.heartbeat_at + timedelta(seconds=3)
    assert engine.reap(after_lease) == 1
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "worker lost" in run.log
    retry = JobHistory.objects.get(attempt=2)
    assert retry.status == RunStatus.PENDING
    settings.JOBS_SIM_MIN_SECONDS = settings.JOBS_SIM_MAX_SECONDS = 0
    settings.JOBS_SIM_FAILURE_RATE = 0
    with time_machine.travel(after_lease, tick=True):
        Scheduler(workers=1).run_once()
    retry.refresh_from_db()
    assert retry.status == RunStatus.SUCCESS


def test_sigterm_lets_the_in_flight_run_finish_and_exits_cleanly(tmp_path):
    # The run goes on until the test creates this file, once the scheduler has said it
    # is stopping: still in flight at the signal, however slow the machine.
    release = tmp_path / "release"
    job = Job(
        name="until released",
        command="jobs.tests.sample_tasks.wait_for_file",
        executor="python",
        arguments={"path": str(release)},
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(seconds=1),
    )
    job.save()
    proc = scheduler(JOBS_SHUTDOWN_GRACE_SECONDS=120)
    try:
        wait_until(lambda: JobHistory.objects.filter(status=RunStatus.RUNNING).exists(), 60)
        proc.signal(signal.SIGTERM)
        wait_until(lambda: "stopping: waiting for 1 run" in proc.log(), 60)
        assert JobHistory.objects.get().status == RunStatus.RUNNING
        release.touch()
        assert proc.wait(timeout=120) == 0, proc.log()
        log = proc.log()
    finally:
        release.touch()
        proc.cleanup()
    run = JobHistory.objects.get()
    assert run.status == RunStatus.SUCCESS
    assert "released" in run.log
    assert "run finished" in log and "stopped" in log


def test_sigint_past_the_grace_period_interrupts_the_run_and_still_exits_0():
    job = Job(
        name="endless",
        command="work",
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(seconds=1),
    )
    job.save()
    proc = scheduler(
        JOBS_SIM_MIN_SECONDS=600, JOBS_SIM_MAX_SECONDS=600, JOBS_SHUTDOWN_GRACE_SECONDS=0.5
    )
    try:
        wait_until(lambda: JobHistory.objects.filter(status=RunStatus.RUNNING).exists(), 20)
        proc.signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0, proc.log()
    finally:
        proc.cleanup()
    run = JobHistory.objects.get()
    assert run.status == RunStatus.FAILED and "interrupted" in run.log
