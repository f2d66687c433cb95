"""Cron schedules: occurrences in a time zone, daylight saving, month ends, Feb 29,
misfires, and a cron job claimed by the engine one pass at a time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from django.db import IntegrityError, transaction

from jobs import engine
from jobs.models import Job, JobHistory
from jobs.schedules import arithmetic as schedules
from jobs.schedules.arithmetic import CronSchedule, plan_cron_claim
from jobs.tests.factories import NOW

GRACE = timedelta(seconds=5)
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def occurrences(schedule: CronSchedule, start: datetime, end: datetime) -> list[datetime]:
    """Every occurrence in (start, end], each found from the one before."""
    found = []
    moment = start
    while (moment := schedule.next_after(moment)) is not None and moment <= end:
        found.append(moment)
    return found


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# --- daylight saving ----------------------------------------------------------------------


def test_a_daily_0230_job_in_berlin_runs_at_0300_on_the_spring_change_day():
    # 2026-03-29: at 02:00 CET the clocks go to 03:00 CEST; 02:30 does not exist.
    daily = CronSchedule("30 2 * * *", "Europe/Berlin")
    runs = occurrences(daily, utc(2026, 3, 27), utc(2026, 3, 31, 12))
    assert [r.astimezone(BERLIN).isoformat() for r in runs] == [
        "2026-03-27T02:30:00+01:00",
        "2026-03-28T02:30:00+01:00",
        "2026-03-29T03:00:00+02:00",  # the first minute after the gap, 01:00 UTC
        "2026-03-30T02:30:00+02:00",
        "2026-03-31T02:30:00+02:00",
    ]


def test_a_daily_0230_job_in_berlin_runs_once_at_the_first_0230_on_the_autumn_change_day():
    # 2026-10-25: at 03:00 CEST the clocks go back to 02:00 CET; 02:30 happens twice.
    daily = CronSchedule("30 2 * * *", "Europe/Berlin")
    runs = occurrences(daily, utc(2026, 10, 23), utc(2026, 10, 27, 12))
    assert [r.isoformat() for r in runs] == [
        "2026-10-23T00:30:00+00:00",
        "2026-10-24T00:30:00+00:00",
        "2026-10-25T00:30:00+00:00",  # 02:30 CEST, the first of the two; not 01:30 UTC
        "2026-10-26T01:30:00+00:00",
        "2026-10-27T01:30:00+00:00",
    ]


@pytest.mark.parametrize(
    "expression,zone,start,end",
    [
        ("30 2 * * *", "Europe/Berlin", utc(2026, 3, 1), utc(2026, 4, 30)),
        ("30 2 * * *", "Europe/Berlin", utc(2026, 10, 1), utc(2026, 11, 30)),
        ("30 2 * * *", "America/New_York", utc(2026, 3, 1), utc(2026, 3, 31)),
        ("30 1 * * *", "America/New_York", utc(2026, 10, 20), utc(2026, 11, 20)),
        ("0 2 * * *", "America/New_York", utc(2026, 3, 1), utc(2026, 11, 30)),
    ],
)
def test_a_daily_job_runs_exactly_once_on_every_local_day_across_a_change(
    expression, zone, start, end
):
    runs = occurrences(CronSchedule(expression, zone), start, end)
    days = [r.astimezone(ZoneInfo(zone)).date() for r in runs]
    assert len(days) == len(set(days))  # never twice on one day
    first, last = days[0], days[-1]
    assert len(days) == (last - first).days + 1  # never a day without


def test_a_daily_0230_job_in_new_york_runs_at_0300_on_the_spring_change_day():
    # 2026-03-08: at 02:00 EST the clocks go to 03:00 EDT.
    daily = CronSchedule("30 2 * * *", "America/New_York")
    runs = occurrences(daily, utc(2026, 3, 7), utc(2026, 3, 9, 12))
    assert [r.astimezone(NEW_YORK).isoformat() for r in runs] == [
        "2026-03-07T02:30:00-05:00",
        "2026-03-08T03:00:00-04:00",
        "2026-03-09T02:30:00-04:00",
    ]


def test_a_daily_0130_job_in_new_york_runs_once_on_the_autumn_change_day():
    # 2026-11-01: at 02:00 EDT the clocks go back to 01:00 EST; 01:30 happens twice.
    daily = CronSchedule("30 1 * * *", "America/New_York")
    runs = occurrences(daily, utc(2026, 10, 31), utc(2026, 11, 2, 12))
    assert [r.astimezone(NEW_YORK).isoformat() for r in runs] == [
        "2026-10-31T01:30:00-04:00",
        "2026-11-01T01:30:00-04:00",  # the first 01:30 (EDT), 05:30 UTC
        "2026-11-02T01:30:00-05:00",
    ]


def test_from_inside_the_repeated_hour_the_next_run_is_tomorrow_not_the_past_one():
    # 01:15 UTC is 02:15 CET, in the second pass of the repeated hour; the day's 02:30
    # (00:30 UTC) is behind us. cronsim alone would answer 00:30 UTC.
    daily = CronSchedule("30 2 * * *", "Europe/Berlin")
    assert daily.next_after(utc(2026, 10, 25, 1, 15)) == utc(2026, 10, 26, 1, 30)


def test_an_hourly_job_follows_elapsed_time_across_the_changes():
    hourly = CronSchedule("0 * * * *", "Europe/Berlin")
    second = timedelta(seconds=1)
    # From local midnight to the next, in UTC.
    autumn = occurrences(hourly, utc(2026, 10, 24, 22) - second, utc(2026, 10, 25, 22, 59))
    spring = occurrences(hourly, utc(2026, 3, 28, 23) - second, utc(2026, 3, 29, 21, 59))
    assert len(autumn) == 25  # the local day of 25 hours
    assert len(spring) == 23
    assert all(b - a == timedelta(hours=1) for a, b in pairwise(autumn))


def test_occurrences_are_aware_utc():
    moment = CronSchedule("0 9 * * *", "Asia/Tokyo").next_after(NOW)
    assert moment == utc(2026, 3, 2, 0)
    assert moment.tzinfo is UTC


# --- month ends and leap days -------------------------------------------------------------


def test_the_last_day_of_every_month():
    month_end = CronSchedule("0 23 L * *", "UTC")
    runs = occurrences(month_end, utc(2027, 12, 1), utc(2028, 6, 1))
    assert [r.date() for r in runs] == [
        date(2027, 12, 31),
        date(2028, 1, 31),
        date(2028, 2, 29),
        date(2028, 3, 31),
        date(2028, 4, 30),
        date(2028, 5, 31),
    ]


def test_day_31_skips_the_months_without_one():
    thirty_first = CronSchedule("0 0 31 * *", "UTC")
    runs = occurrences(thirty_first, utc(2026, 1, 1), utc(2026, 9, 1))
    assert [r.month for r in runs] == [1, 3, 5, 7, 8]


def test_february_29_comes_every_four_years():
    leap_day = CronSchedule("0 12 29 2 *", "Europe/Berlin")
    runs = occurrences(leap_day, utc(2026, 1, 1), utc(2037, 1, 1))
    assert [r.astimezone(BERLIN).date() for r in runs] == [
        date(2028, 2, 29),
        date(2032, 2, 29),
        date(2036, 2, 29),
    ]


def test_an_expression_that_never_matches_has_no_next_occurrence():
    # February 30 is refused when parsed; a Feb 29 that is also the 5th Monday of
    # February happens, but so rarely cronsim gives up within its horizon.
    with pytest.raises(schedules.CronExpressionError):
        CronSchedule("0 0 30 2 *", "UTC")


# --- claims and misfires ------------------------------------------------------------------


def test_a_due_cron_job_runs_its_occurrence_and_moves_to_the_next():
    every_15 = CronSchedule("*/15 * * * *", "UTC")
    due = utc(2026, 3, 1, 12, 15)
    plan = plan_cron_claim(
        due, every_15, due + timedelta(seconds=1), policy="coalesce", grace=GRACE
    )
    assert plan.run_at == (due,)
    assert plan.next_run_at == utc(2026, 3, 1, 12, 30)
    assert plan.missed == 0


def test_a_cron_job_not_yet_due_plans_nothing():
    every_15 = CronSchedule("*/15 * * * *", "UTC")
    due = utc(2026, 3, 1, 12, 15)
    plan = plan_cron_claim(
        due, every_15, due - timedelta(seconds=1), policy="coalesce", grace=GRACE
    )
    assert plan.run_at == () and plan.next_run_at == due


def test_occurrences_within_the_grace_each_run():
    every_minute = CronSchedule("* * * * *", "UTC")
    due = utc(2026, 3, 1, 12, 0)
    plan = plan_cron_claim(
        due, every_minute, due + timedelta(minutes=2), policy="skip", grace=timedelta(minutes=5)
    )
    assert plan.run_at == (due, due + timedelta(minutes=1), due + timedelta(minutes=2))
    assert plan.next_run_at == due + timedelta(minutes=3)


def test_after_downtime_coalesce_runs_once_for_the_latest_missed_occurrence():
    hourly = CronSchedule("0 * * * *", "Europe/Berlin")
    due = utc(2026, 3, 1, 8)
    now = utc(2026, 3, 1, 11, 30)
    plan = plan_cron_claim(due, hourly, now, policy="coalesce", grace=GRACE)
    assert plan.run_at == (utc(2026, 3, 1, 11),)
    assert plan.next_run_at == utc(2026, 3, 1, 12)
    assert plan.missed == 3


def test_after_downtime_skip_runs_nothing_stale():
    hourly = CronSchedule("0 * * * *", "UTC")
    plan = plan_cron_claim(
        utc(2026, 3, 1, 8), hourly, utc(2026, 3, 1, 11, 30), policy="skip", grace=GRACE
    )
    assert plan.run_at == ()
    assert plan.next_run_at == utc(2026, 3, 1, 12)
    assert plan.missed == 4


def test_after_downtime_skip_still_runs_an_occurrence_that_is_on_time():
    hourly = CronSchedule("0 * * * *", "UTC")
    now = utc(2026, 3, 1, 11, 0, 2)
    plan = plan_cron_claim(utc(2026, 3, 1, 8), hourly, now, policy="skip", grace=GRACE)
    assert plan.run_at == (utc(2026, 3, 1, 11),)


def test_a_long_downtime_finds_the_latest_occurrence_without_walking_every_one():
    every_minute = CronSchedule("* * * * *", "UTC")
    due = utc(2026, 3, 1)
    now = utc(2026, 3, 8, 6, 30, 30)  # a week later: ten thousand missed minutes
    plan = plan_cron_claim(due, every_minute, now, policy="coalesce", grace=GRACE)
    assert plan.run_at == (utc(2026, 3, 8, 6, 30),)
    assert plan.next_run_at == utc(2026, 3, 8, 6, 31)
    assert plan.missed >= schedules.MAX_CRON_STEPS  # a lower bound past the walk


def test_a_long_downtime_of_a_daily_job_lands_on_the_right_day():
    daily = CronSchedule("30 2 * * *", "Europe/Berlin")
    plan = plan_cron_claim(
        utc(2026, 1, 1, 1, 30), daily, utc(2026, 6, 1, 12), policy="coalesce", grace=GRACE
    )
    assert plan.run_at == (utc(2026, 6, 1, 0, 30),)
    assert plan.next_run_at == utc(2026, 6, 2, 0, 30)


# --- validation helpers -------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression,field",
    [
        ("61 * * * *", "minute"),
        ("0 24 * * *", "hour"),
        ("0 0 32 * *", "day-of-month"),
        ("0 0 * 13 *", "month"),
        ("0 0 * * 8", "day-of-week"),
        ("0 0 * * * *", None),
        ("0 0 *", None),
    ],
)
def test_a_bad_expression_names_its_field(expression, field):
    with pytest.raises(schedules.CronExpressionError) as caught:
        schedules.parse_cron(expression)
    assert caught.value.field == field


def test_an_unknown_zone_is_refused():
    with pytest.raises(schedules.UnknownTimeZone):
        CronSchedule("* * * * *", "Europe/Atlantis")
    with pytest.raises(schedules.UnknownTimeZone):
        schedules.time_zone("../../etc/passwd")


# --- a cron job through the model and the engine --------------------------------------------


@pytest.mark.django_db
def test_saving_a_cron_job_computes_its_next_run_in_its_zone(make_job, clock):
    job = make_job(schedule_type="cron", cron_expression="30 2 * * *", timezone="Europe/Berlin")
    assert job.next_run_at == utc(2026, 3, 2, 1, 30)  # 02:30 CET
    assert job.anchor_at is None
    assert job.schedule_text == "At 02:30 every day, Europe/Berlin"


@pytest.mark.django_db
def test_a_blank_zone_is_the_sites_time_zone(make_job, clock, settings):
    settings.TIME_ZONE = "Asia/Tokyo"
    job = make_job(schedule_type="cron", cron_expression="0 9 * * *", timezone="")
    assert job.next_run_at == utc(2026, 3, 2, 0)
    assert job.schedule_text == "At 09:00 every day, Asia/Tokyo"


@pytest.mark.django_db
def test_editing_the_expression_moves_the_next_run(make_job, clock):
    job = make_job(schedule_type="cron", cron_expression="0 * * * *", timezone="UTC")
    assert job.next_run_at == utc(2026, 3, 1, 13)
    job.cron_expression = "45 12 * * *"
    job.full_clean()
    job.save()
    assert job.next_run_at == utc(2026, 3, 1, 12, 45)


@pytest.mark.django_db
def test_the_engine_claims_a_cron_job_once_per_day_across_the_spring_change(make_job, clock):
    clock.move_to(utc(2026, 3, 27, 12))
    job = make_job(schedule_type="cron", cron_expression="30 2 * * *", timezone="Europe/Berlin")
    claimed = []
    # One pass every 10 minutes of (frozen) time for four days.
    moment = utc(2026, 3, 27, 12)
    while moment < utc(2026, 3, 31, 12):
        clock.move_to(moment)
        claimed += [t.scheduled_for for t in engine.claim_due()]
        moment += timedelta(minutes=10)
    assert claimed == [
        utc(2026, 3, 28, 1, 30),
        utc(2026, 3, 29, 1, 0),  # 03:00 CEST: 02:30 did not exist
        utc(2026, 3, 30, 0, 30),
        utc(2026, 3, 31, 0, 30),
    ]
    assert JobHistory.objects.filter(job=job).count() == 4


@pytest.mark.django_db
def test_the_engine_claims_a_cron_job_once_on_the_autumn_change_day(make_job, clock):
    clock.move_to(utc(2026, 10, 24, 12))
    make_job(schedule_type="cron", cron_expression="30 2 * * *", timezone="Europe/Berlin")
    claimed = []
    moment = utc(2026, 10, 24, 12)
    while moment < utc(2026, 10, 26, 12):
        clock.move_to(moment)
        claimed += [t.scheduled_for for t in engine.claim_due()]
        moment += timedelta(minutes=5)
    assert claimed == [utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)]


@pytest.mark.django_db
def test_a_cron_job_after_downtime_follows_its_misfire_policy(make_job, clock):
    coalesce = make_job(name="c", schedule_type="cron", cron_expression="*/5 * * * *")
    skip = make_job(name="s", schedule_type="cron", cron_expression="*/5 * * * *")
    Job.objects.filter(pk=skip.pk).update(misfire_policy="skip")
    clock.move_to(NOW + timedelta(hours=1, minutes=2))  # down for an hour
    tickets = engine.claim_due()
    assert [(t.job_key, t.scheduled_for) for t in tickets] == [
        (coalesce.pk.hex, NOW + timedelta(hours=1))
    ]
    for job in (coalesce, skip):
        job.refresh_from_db()
        assert job.next_run_at == NOW + timedelta(hours=1, minutes=5)


@pytest.mark.django_db
def test_the_database_refuses_a_cron_job_without_an_expression(make_job):
    job = make_job(schedule_type="cron", cron_expression="* * * * *")
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.filter(pk=job.pk).update(cron_expression="")
