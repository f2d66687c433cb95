"""Fixtures and a bulk builder shared by the screens' tests (test_views_*.py, test_browser.py).

Kept out of conftest.py so that each test module says what it uses.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from jobs.access.permissions import JOB_ADMINS
from jobs.models import IntervalUnit, Job, JobHistory, RunStatus, ScheduleType, Trigger
from jobs.tests.factories import make_user

PASSWORD = "correct horse battery staple"


def make_many(jobs: int, runs: int) -> list[Job]:
    """`jobs` jobs and `runs` runs of every status spread over the last two days, in bulk."""
    now = timezone.now()
    created = [
        Job(
            name=f"bulk {index:04d}",
            command="true",
            schedule_type=ScheduleType.INTERVAL,
            interval=5,
            interval_unit=IntervalUnit.MINUTE,
            is_active=index % 5 != 0,
            next_run_at=now + timedelta(minutes=index % 60),
            last_run_at=now - timedelta(minutes=index % 90),
            last_run_status=[RunStatus.SUCCESS, RunStatus.FAILED, ""][index % 3],
        )
        for index in range(jobs)
    ]
    Job.objects.bulk_create(created)
    rows = []
    for index in range(runs):
        at = now - timedelta(seconds=index * 30, microseconds=index)
        # The newest few are still going, as on a live system; of the rest, 1 in 7 failed.
        if index < 10:
            status = RunStatus.RUNNING if index % 2 else RunStatus.PENDING
        else:
            status = RunStatus.FAILED if index % 7 == 0 else RunStatus.SUCCESS
        rows.append(
            JobHistory(
                id=uuid.uuid4(),
                job=created[index % jobs],
                scheduled_for=at,
                not_before=at,
                created_at=at,
                status=status,
                trigger=Trigger.SCHEDULE,
                started_at=None if status == RunStatus.PENDING else at,
                finished_at=at + timedelta(seconds=3)
                if status in (RunStatus.SUCCESS, RunStatus.FAILED)
                else None,
                log="$ true\n",
            )
        )
    JobHistory.objects.bulk_create(rows, batch_size=500)
    return created


@pytest.fixture
def user(db: None):  # type: ignore[no-untyped-def]
    return make_user("alice", JOB_ADMINS, password=PASSWORD, staff=True)


@pytest.fixture
def signed_in(client: Client, user) -> Client:  # type: ignore[no-untyped-def]
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def _no_dashboard_cache(settings) -> None:  # type: ignore[no-untyped-def]
    # Each test sees its own data: no counts cached by an earlier test.
    settings.JOBS_DASHBOARD_CACHE_SECONDS = 0
