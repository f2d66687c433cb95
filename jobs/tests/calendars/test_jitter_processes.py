"""A job's jitter is the same in every scheduler process and in the preview: a hash of
the job and the occurrence, not a draw (two real `runscheduler --once` processes, each
with its own hash seed)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from jobs.forecasts.preview import preview
from jobs.models import Job, JobHistory
from jobs.tests.factories import make_job
from jobs.tests.processes import scheduler

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]


def claim_in_a_process(job: Job, due_at, seed: str) -> JobHistory:
    Job.objects.filter(pk=job.pk).update(next_run_at=due_at)
    process = scheduler("--once", PYTHONHASHSEED=seed)
    try:
        assert process.wait(timeout=120) == 0, process.log()
    finally:
        process.cleanup()
    return JobHistory.objects.get(job=job, scheduled_for=due_at)


def test_two_scheduler_processes_and_the_preview_agree_on_the_jittered_start():
    job = make_job(
        name="jittered", schedule_type="cron", cron_expression="0 * * * *", jitter_seconds=3600
    )
    due_at = job.next_run_at - timedelta(hours=1)  # the hour that began, due now
    assert due_at <= timezone.now()
    first = claim_in_a_process(job, due_at, seed="1")
    JobHistory.objects.all().delete()
    second = claim_in_a_process(job, due_at, seed="2")
    assert second.scheduled_for == first.scheduled_for == due_at
    assert second.not_before == first.not_before
    delay = first.not_before - due_at
    assert timedelta(0) <= delay < timedelta(hours=1)
    job.refresh_from_db()
    shown = preview(job, count=1, start=due_at - timedelta(seconds=1))
    assert shown.occurrences[0].at == due_at
    assert shown.occurrences[0].starts == first.not_before
