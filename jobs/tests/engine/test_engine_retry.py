"""engine.retry_run: an operator's retry of a failed run (the admin's "retry" action)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jobs import engine
from jobs.models import Job, JobHistory, RunStatus, Trigger
from jobs.tests.factories import NOW, make_job, make_run

OCCURRENCE = NOW - timedelta(minutes=30)


@pytest.fixture
def job(db) -> Job:
    return make_job(command="backup.sh", interval_unit="minute")


def test_it_creates_the_next_attempt_pending_from_now(job: Job) -> None:
    failed = make_run(job, at=OCCURRENCE, attempt=1, status=RunStatus.FAILED)
    retry = engine.retry_run(failed, now=NOW)
    assert (retry.job_id, retry.scheduled_for, retry.attempt) == (job.pk, OCCURRENCE, 2)
    assert retry.status == RunStatus.PENDING
    assert retry.trigger == Trigger.RETRY
    assert retry.not_before == retry.created_at == NOW
    # The scheduler's ready() query picks it up at once.
    assert list(JobHistory.objects.ready(NOW)) == [retry]


def test_it_retries_beyond_the_jobs_max_retries(job: Job) -> None:
    assert job.max_retries == 0
    failed = make_run(job, at=OCCURRENCE, attempt=3, status=RunStatus.FAILED)
    assert engine.retry_run(failed, now=NOW).attempt == 4


@pytest.mark.parametrize("status", [RunStatus.PENDING, RunStatus.RUNNING, RunStatus.SUCCESS])
def test_it_refuses_a_run_that_did_not_fail(job: Job, status: str) -> None:
    run = make_run(job, at=OCCURRENCE, status=status)
    with pytest.raises(engine.RetryRefused, match="Only a failed run"):
        engine.retry_run(run, now=NOW)
    assert JobHistory.objects.count() == 1


def test_it_refuses_a_run_that_already_has_a_later_attempt(job: Job) -> None:
    failed = make_run(job, at=OCCURRENCE, attempt=1, status=RunStatus.FAILED)
    # The scheduler's automatic retry:
    make_run(job, at=OCCURRENCE, attempt=2, status=RunStatus.PENDING)
    with pytest.raises(engine.RetryRefused, match="already been retried"):
        engine.retry_run(failed, now=NOW)
    assert JobHistory.objects.count() == 2


def test_it_reads_the_status_from_the_database_not_the_callers_copy(job: Job) -> None:
    stale = make_run(job, at=OCCURRENCE, status=RunStatus.RUNNING)
    JobHistory.objects.filter(pk=stale.pk).update(status=RunStatus.FAILED)
    assert engine.retry_run(stale, now=NOW).attempt == 2

    stale_failed = JobHistory.objects.get(attempt=2)
    JobHistory.objects.filter(pk=stale_failed.pk).update(status=RunStatus.SUCCESS)
    stale_failed.status = RunStatus.FAILED
    with pytest.raises(engine.RetryRefused):
        engine.retry_run(stale_failed, now=NOW)
