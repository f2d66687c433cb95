"""Editing a calendar plans the next run of its jobs again at once: a day that starts to
count, or stops counting, moves Job.next_run_at, and the claim then runs on that day."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine

from jobs import engine
from jobs.models import Calendar, CalendarPolicy, Job, JobHistory, ScheduleType

pytestmark = pytest.mark.django_db


def at_nine_utc(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 9, tzinfo=UTC)


@pytest.fixture
def weekdays() -> Calendar:
    calendar = Calendar(name="Office", timezone="UTC")
    calendar.full_clean()
    calendar.save()
    return calendar


def daily_job(calendar: Calendar, name: str = "report", **fields: object) -> Job:
    job = Job(
        name=name,
        command="echo report",
        schedule_type=ScheduleType.CRON,
        cron_expression="0 9 * * *",
        timezone="UTC",
        calendar=calendar,
        calendar_policy=CalendarPolicy.NEXT_BUSINESS_DAY,
        **fields,
    )
    job.full_clean()
    job.save()
    return job


def edit(calendar: Calendar, **fields: object) -> None:
    for name, value in fields.items():
        setattr(calendar, name, value)
    calendar.full_clean()
    calendar.save()


# Friday 2027-01-08: the next weekday is Monday 2027-01-11.
FRIDAY_NOON = datetime(2027, 1, 8, 12, tzinfo=UTC)


def test_an_extra_working_day_brings_the_next_run_forward_and_the_claim_runs_on_it(
    weekdays: Calendar,
) -> None:
    with time_machine.travel(FRIDAY_NOON, tick=False):
        job = daily_job(weekdays)
        assert job.next_run_at == at_nine_utc(date(2027, 1, 11))
        edit(weekdays, extra_working_days=["2027-01-09"])
    job.refresh_from_db()
    assert job.next_run_at == at_nine_utc(date(2027, 1, 9))
    with time_machine.travel(at_nine_utc(date(2027, 1, 9)), tick=False):
        engine.claim_due()
    assert [run.scheduled_for for run in JobHistory.objects.filter(job=job)] == [
        at_nine_utc(date(2027, 1, 9))
    ]


def test_an_extra_day_off_moves_the_next_run_past_it_and_another_calendar_s_jobs_stay(
    weekdays: Calendar,
) -> None:
    other = Calendar(name="Plant", timezone="UTC")
    other.full_clean()
    other.save()
    with time_machine.travel(FRIDAY_NOON, tick=False):
        job = daily_job(weekdays)
        untouched = daily_job(other, name="plant report")
        edit(weekdays, extra_days_off=["2027-01-11"])
    job.refresh_from_db()
    untouched.refresh_from_db()
    assert job.next_run_at == at_nine_utc(date(2027, 1, 12))
    assert untouched.next_run_at == at_nine_utc(date(2027, 1, 11))


def test_a_due_occurrence_not_yet_claimed_is_kept_and_a_paused_job_is_left_alone(
    weekdays: Calendar,
) -> None:
    monday_nine = at_nine_utc(date(2027, 1, 11))
    with time_machine.travel(FRIDAY_NOON, tick=False):
        job = daily_job(weekdays)
        paused = daily_job(weekdays, name="paused report", is_active=False)
    # The scheduler is a little late: Monday's run is due, not claimed yet.
    with time_machine.travel(monday_nine.replace(second=5), tick=False):
        edit(weekdays, extra_working_days=["2027-01-16"])
        job.refresh_from_db()
        assert job.next_run_at == monday_nine
        engine.claim_due()
    assert JobHistory.objects.filter(job=job, scheduled_for=monday_nine).count() == 1
    paused.refresh_from_db()
    assert paused.next_run_at is None
