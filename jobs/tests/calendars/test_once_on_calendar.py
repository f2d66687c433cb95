"""A one-off job on a calendar obeys it, and the blackout windows too: its one time on
a day off is skipped or moved by the policy, one inside a window skipped or deferred;
the preview says the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine

from jobs import engine
from jobs.forecasts.preview import preview
from jobs.models import (
    Blackout,
    BlackoutAction,
    Calendar,
    CalendarPolicy,
    Job,
    JobHistory,
    RunStatus,
    ScheduleType,
)

pytestmark = pytest.mark.django_db

TOKYO = ZoneInfo("Asia/Tokyo")
NEW_YEAR_NINE = datetime(2027, 1, 1, 9, tzinfo=TOKYO).astimezone(UTC)
SAVED_AT = datetime(2026, 12, 20, tzinfo=UTC)


@pytest.fixture
def japan() -> Calendar:
    calendar = Calendar(name="Japan", country="JP", timezone="Asia/Tokyo")
    calendar.full_clean()
    calendar.save()
    return calendar


def once_job(at: datetime, **fields) -> Job:
    job = Job(
        name="one-off",
        command="echo once",
        schedule_type=ScheduleType.ONCE,
        scheduled_at=at,
        **fields,
    )
    job.full_clean()
    with time_machine.travel(SAVED_AT, tick=False):
        job.save()
    return job


def claim_at(moment: datetime) -> None:
    with time_machine.travel(moment, tick=False):
        engine.claim_due()


def test_skip_records_the_one_time_on_a_holiday_as_skipped_and_ends_the_job(japan):
    job = once_job(NEW_YEAR_NINE, calendar=japan, calendar_policy=CalendarPolicy.SKIP)
    assert job.next_run_at == NEW_YEAR_NINE
    claim_at(NEW_YEAR_NINE)
    (run,) = JobHistory.objects.filter(job=job)
    assert run.status == RunStatus.SKIPPED
    assert "not on 2027-01-01: New Year's Day (JP)" in run.log
    job.refresh_from_db()
    assert job.is_active is False and job.next_run_at is None


@pytest.mark.parametrize(
    ("policy", "day"),
    [(CalendarPolicy.NEXT_BUSINESS_DAY, 4), (CalendarPolicy.PREVIOUS_BUSINESS_DAY, 31)],
)
def test_a_moving_policy_moves_the_one_time_to_a_business_day(japan, policy, day):
    # 2027-01-01 is a holiday, the 2nd and 3rd a weekend: the 4th is the next business
    # day; the 31st of December the one before.
    month, year = (1, 2027) if day == 4 else (12, 2026)
    moved = datetime(year, month, day, 9, tzinfo=TOKYO).astimezone(UTC)
    job = once_job(NEW_YEAR_NINE, calendar=japan, calendar_policy=policy)
    assert job.next_run_at == moved
    claim_at(min(moved, NEW_YEAR_NINE) - timedelta(minutes=1))
    assert not JobHistory.objects.filter(job=job).exists()
    claim_at(moved)
    (run,) = JobHistory.objects.filter(job=job)
    assert run.status == RunStatus.PENDING and run.scheduled_for == moved
    (shown,) = preview(job, now=SAVED_AT).occurrences
    assert shown.at == moved and "moved from 2027-01-01" in shown.note


def test_a_window_defers_the_one_time_to_its_end():
    window = Blackout(
        name="nightly backup",
        action=BlackoutAction.DEFER,
        cron_expression="0 23 * * *",
        duration_minutes=180,
        timezone="UTC",
    )
    window.full_clean()
    window.save()
    at = datetime(2027, 1, 5, 23, 30, tzinfo=UTC)
    job = once_job(at)
    end = datetime(2027, 1, 6, 2, tzinfo=UTC)
    assert job.next_run_at == end
    claim_at(end)
    (run,) = JobHistory.objects.filter(job=job)
    assert run.scheduled_for == end and run.status == RunStatus.PENDING


def test_a_one_off_job_due_in_the_past_still_runs_on_its_slot(japan):
    # Saved after its time (a business day): it runs at once, as without a calendar.
    at = datetime(2026, 12, 18, 9, tzinfo=TOKYO).astimezone(UTC)
    job = once_job(at, calendar=japan)
    assert job.next_run_at == at
    claim_at(SAVED_AT)
    assert JobHistory.objects.filter(job=job, status=RunStatus.PENDING).count() == 1
