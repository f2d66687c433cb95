"""/metrics: the histograms of recent runs per queue, and per job for small sites."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from jobs.models import JobHistory, RunStatus
from jobs.tests.api_helpers import finish_run
from jobs.tests.factories import make_job, make_run
from jobs.tests.metrics.test_metrics import scrape

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_queues():
    """A run of 2 s in queue reports that started 3 s late, one of 20 s in default."""
    reports = make_job(name="monthly report", queue="reports")
    late = finish_run(reports, succeeded=True, duration=timedelta(seconds=2))
    JobHistory.objects.filter(pk=late.pk).update(
        scheduled_for=late.started_at - timedelta(seconds=3)
    )
    finish_run(make_job(name="backup"), succeeded=False, duration=timedelta(seconds=20))


def test_duration_and_lag_histograms_per_queue(client, two_queues):
    figures = scrape(client)
    duration = "jobs_queue_run_duration_recent_seconds"
    assert figures[f"{duration}_bucket{{le=2.5,queue=reports}}"] == 1
    assert figures[f"{duration}_bucket{{le=1.0,queue=reports}}"] == 0
    assert figures[f"{duration}_bucket{{le=2.5,queue=default}}"] == 0
    assert figures[f"{duration}_bucket{{le=30.0,queue=default}}"] == 1
    assert figures[f"{duration}_gsum{{queue=default}}"] == pytest.approx(20, abs=1e-3)
    lag = "jobs_queue_run_start_lag_recent_seconds"
    assert figures[f"{lag}_bucket{{le=2.5,queue=reports}}"] == 0
    assert figures[f"{lag}_bucket{{le=5.0,queue=reports}}"] == 1
    assert figures[f"{lag}_gsum{{queue=reports}}"] == pytest.approx(3, abs=1e-3)
    # The totals are the sums of the queues'.
    assert figures["jobs_run_duration_recent_seconds_gcount"] == 2


def test_no_per_job_series_unless_asked(client, two_queues):
    assert not [name for name in scrape(client) if name.startswith("jobs_job_run_")]


def test_per_job_histograms_with_jobs_metrics_per_job(client, two_queues, settings):
    settings.JOBS_METRICS_PER_JOB = True
    figures = scrape(client)
    duration = "jobs_job_run_duration_recent_seconds"
    assert figures[f"{duration}_gcount{{job=monthly report}}"] == 1
    assert figures[f"{duration}_gcount{{job=backup}}"] == 1
    assert figures[f"{duration}_bucket{{job=backup,le=10.0}}"] == 0
    lag = "jobs_job_run_start_lag_recent_seconds"
    assert figures[f"{lag}_gsum{{job=monthly report}}"] == pytest.approx(3, abs=1e-3)


def test_runs_running_long_are_counted(client):
    job = make_job(name="slow")
    make_run(job, status=RunStatus.RUNNING, running_long_at=timezone.now())
    make_run(job, status=RunStatus.RUNNING)
    make_run(job, status=RunStatus.SUCCESS, running_long_at=timezone.now())  # it ended
    assert scrape(client)["jobs_runs_running_long"] == 1
