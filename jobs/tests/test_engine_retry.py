"""engine.retry_run: an operator's retry of a failed run (the admin's "retry" action)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs import engine
from jobs.models import Job, JobHistory, RunStatus, Trigger

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
OCCURRENCE = NOW - timedelta(minutes=30)


@pytest.fixture
def job(db) -> Job:
    job = Job(name="backup", command="backup.sh", interval=10, interval_unit="minute")
    job.save()
    return job


def make_run(job: Job, attempt: int = 1, status: str = RunStatus.FAILED) -> JobHistory:
    return JobHistory.objects.create(
        job=job,
        scheduled_for=OCCURRENCE,
        not_before=OCCURRENCE,
        created_at=OCCURRENCE,
        attempt=attempt,
        status=status,
    )


def test_it_creates_the_next_attempt_pending_from_now(job: Job) -> None:
    failed = make_run(job, attempt=1)
    retry = engine.retry_run(failed, now=NOW)
    assert (retry.job_id, retry.scheduled_for, retry.attempt) == (job.pk, OCCURRENCE, 2)
    assert retry.status == RunStatus.PENDING
    assert retry.trigger == Trigger.RETRY
    assert retry.not_before == retry.created_at == NOW
    # The scheduler's ready() query picks it up at once.
    assert list(JobHistory.objects.ready(NOW)) == [retry]


def test_it_retries_beyond_the_jobs_max_retries(job: Job) -> None:
    assert job.max_retries == 0
    failed = make_run(job, attempt=3)
    assert engine.retry_run(failed, now=NOW).attempt == 4


@pytest.mark.parametrize("status", [RunStatus.PENDING, RunStatus.RUNNING, RunStatus.SUCCESS])
def test_it_refuses_a_run_that_did_not_fail(job: Job, status: str) -> None:
    run = make_run(job, status=status)
    with pytest.raises(engine.RetryRefused, match="Only a failed run"):
        engine.retry_run(run, now=NOW)
    assert JobHistory.objects.count() == 1


def test_it_refuses_a_run_that_already_has_a_later_attempt(job: Job) -> None:
    failed = make_run(job, attempt=1)
    make_run(job, attempt=2, status=RunStatus.PENDING)  # the scheduler's automatic retry
    with pytest.raises(engine.RetryRefused, match="already been retried"):
        engine.retry_run(failed, now=NOW)
    assert JobHistory.objects.count() == 2


def test_it_reads_the_status_from_the_database_not_the_callers_copy(job: Job) -> None:
    stale = make_run(job, status=RunStatus.RUNNING)
    JobHistory.objects.filter(pk=stale.pk).update(status=RunStatus.FAILED)
    assert engine.retry_run(stale, now=NOW).attempt == 2

    stale_failed = JobHistory.objects.get(attempt=2)
    JobHistory.objects.filter(pk=stale_failed.pk).update(status=RunStatus.SUCCESS)
    stale_failed.status = RunStatus.FAILED
    with pytest.raises(engine.RetryRefused):
        engine.retry_run(stale_failed, now=NOW)
