"""Business calendars in the claim: Japanese holidays of 2027, skipped or moved, one
pass at a time with the clock in the test's hand."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine

from jobs import engine
from jobs.forecasts.preview import preview
from jobs.models import Calendar, CalendarPolicy, Job, JobHistory, RunStatus, ScheduleType

pytestmark = pytest.mark.django_db

TOKYO = ZoneInfo("Asia/Tokyo")


def at_nine(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 9, tzinfo=TOKYO).astimezone(UTC)


def daily_job(policy: str, calendar: Calendar) -> Job:
    job = Job(
        name=f"report {policy}",
        command="echo report",
        schedule_type=ScheduleType.CRON,
        cron_expression="0 9 * * *",
        timezone="Asia/Tokyo",
        calendar=calendar,
        calendar_policy=policy,
    )
    job.full_clean()
    job.save()
    return job


def claim_each_day(first: date, last: date) -> None:
    """One claim at 09:00 Tokyo and one at 18:00 of every day in [first, last]."""
    day = first
    while day <= last:
        for hour in (9, 18):
            moment = datetime(day.year, day.month, day.day, hour, tzinfo=TOKYO)
            with time_machine.travel(moment, tick=False):
                engine.claim_due()
        day += timedelta(days=1)


@pytest.fixture
def japan() -> Calendar:
    calendar = Calendar(name="Japan", country="JP", timezone="Asia/Tokyo")
    calendar.full_clean()
    calendar.save()
    return calendar


def runs_of(job: Job) -> list[tuple[date, str, str]]:
    return [
        (run.scheduled_for.astimezone(TOKYO).date(), run.status, run.log)
        for run in JobHistory.objects.filter(job=job).order_by("scheduled_for")
    ]


def test_skip_records_golden_week_and_the_substitute_holiday_as_skipped(japan):
    with time_machine.travel(datetime(2027, 3, 19, 12, tzinfo=TOKYO), tick=False):
        job = daily_job(CalendarPolicy.SKIP, japan)
    claim_each_day(date(2027, 3, 20), date(2027, 3, 23))
    runs = runs_of(job)
    assert [(d, s) for d, s, _ in runs] == [
        (date(2027, 3, 20), RunStatus.SKIPPED),  # Saturday
        (date(2027, 3, 21), RunStatus.SKIPPED),  # Vernal Equinox Day, a Sunday
        (date(2027, 3, 22), RunStatus.SKIPPED),  # its substitute holiday
        (date(2027, 3, 23), RunStatus.PENDING),
    ]
    assert "not on 2027-03-22: Substitute Holiday (JP)" in runs[2][2]


def test_golden_week_skipped_day_by_day(japan):
    with time_machine.travel(datetime(2027, 4, 27, 12, tzinfo=TOKYO), tick=False):
        job = daily_job(CalendarPolicy.SKIP, japan)
    claim_each_day(date(2027, 4, 28), date(2027, 5, 6))
    statuses = {d: s for d, s, _ in runs_of(job)}
    ran = sorted(d for d, s in statuses.items() if s == RunStatus.PENDING)
    assert ran == [date(2027, 4, 28), date(2027, 4, 30), date(2027, 5, 6)]
    skipped = sorted(d for d, s in statuses.items() if s == RunStatus.SKIPPED)
    assert skipped == [date(2027, 4, 29), *(date(2027, 5, d) for d in range(1, 6))]
    log = dict((d, text) for d, _, text in runs_of(job))
    assert "not on 2027-04-29: Showa Day (JP)" in log[date(2027, 4, 29)]


def test_next_business_day_moves_golden_week_to_the_6th_at_the_same_time(japan):
    with time_machine.travel(datetime(2027, 4, 27, 12, tzinfo=TOKYO), tick=False):
        job = daily_job(CalendarPolicy.NEXT_BUSINESS_DAY, japan)
    claim_each_day(date(2027, 4, 28), date(2027, 5, 7))
    runs = JobHistory.objects.filter(job=job).order_by("scheduled_for")
    assert [r.scheduled_for for r in runs] == [
        at_nine(date(2027, 4, 28)),
        at_nine(date(2027, 4, 30)),  # Showa Day's occurrence coalesced into the 30th's
        at_nine(date(2027, 5, 6)),  # 1 to 5 May: one run on the 6th, at 09:00 still
        at_nine(date(2027, 5, 7)),
    ]
    assert {r.status for r in runs} == {RunStatus.PENDING}


def test_next_business_day_moves_a_weekly_saturday_job_to_monday(japan):
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=TOKYO), tick=False):
        job = Job(
            name="weekly",
            command="echo",
            schedule_type=ScheduleType.CRON,
            cron_expression="0 9 * * 6",
            timezone="Asia/Tokyo",
            calendar=japan,
            calendar_policy=CalendarPolicy.NEXT_BUSINESS_DAY,
        )
        job.full_clean()
        job.save()
    # Saturday the 20th moves to Tuesday the 23rd: the 21st is a holiday (a Sunday),
    # the 22nd its substitute.
    assert job.next_run_at == at_nine(date(2027, 3, 23))
    claim_each_day(date(2027, 3, 20), date(2027, 3, 24))
    assert [r.scheduled_for for r in JobHistory.objects.filter(job=job)] == [
        at_nine(date(2027, 3, 23))
    ]


def test_previous_business_day_runs_new_years_day_on_new_years_eve(japan):
    with time_machine.travel(datetime(2026, 12, 20, tzinfo=TOKYO), tick=False):
        job = Job(
            name="monthly",
            command="echo",
            schedule_type=ScheduleType.CRON,
            cron_expression="0 9 1 * *",
            timezone="Asia/Tokyo",
            calendar=japan,
            calendar_policy=CalendarPolicy.PREVIOUS_BUSINESS_DAY,
        )
        job.full_clean()
        job.save()
    assert job.next_run_at == at_nine(date(2026, 12, 31))


def test_the_preview_shows_what_the_scheduler_claims(japan):
    with time_machine.travel(datetime(2027, 4, 27, 12, tzinfo=TOKYO), tick=False):
        job = daily_job(CalendarPolicy.SKIP, japan)
        shown = preview(job, count=10)
    claim_each_day(date(2027, 4, 28), date(2027, 5, 7))
    claimed = [
        r.scheduled_for for r in JobHistory.objects.filter(job=job).order_by("scheduled_for")
    ]
    assert [o.at for o in shown.occurrences] == claimed[:10]
    notes = {o.at.astimezone(TOKYO).date(): o.note for o in shown.occurrences}
    assert notes[date(2027, 4, 29)] == "not on 2027-04-29: Showa Day (JP)"
