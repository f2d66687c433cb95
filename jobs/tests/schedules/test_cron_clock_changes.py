"""Cron across clock changes that are not one whole hour, and from inside a repeated hour:
every occurrence is found, nothing switches a job off, and save, enable, syncjobs and the
preview all agree with the scheduler."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from jobs import engine
from jobs.alerts import health
from jobs.engine import claim
from jobs.forecasts import preview
from jobs.models import Job, JobHistory, SchedulerHealth, SchedulerHeartbeat
from jobs.schedules import arithmetic as schedules
from jobs.schedules.arithmetic import CronSchedule
from jobs.tests.declaring import code_job, syncjobs

CHATHAM = ZoneInfo("Pacific/Chatham")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")
BERLIN = ZoneInfo("Europe/Berlin")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def local_times(schedule: CronSchedule, start: datetime, end: datetime) -> list[str]:
    """Each occurrence in (start, end], found from the one before, as local ISO text."""
    found = []
    moment = start
    while (moment := schedule.next_after(moment)) is not None and moment <= end:
        found.append(moment.astimezone(schedule.zone).isoformat(timespec="minutes"))
    return found


# --- clocks that move by 30 minutes, or at :45 ------------------------------------------

# 5 April 2026 in Pacific/Chatham: at 03:45 +13:45 the clocks go back to 02:45 +12:45, so
# 02:45 to 03:44 happens twice. From 2 April 12:00 UTC to 6 April 12:00 UTC.
CHATHAM_SPAN = (utc(2026, 4, 4, 12), utc(2026, 4, 5, 12))


def test_every_ten_minutes_of_hour_3_in_chatham_runs_at_both_passes_then_goes_on():
    # "*/10" starts with "*": elapsed time, so each 03:x0 that happens twice runs twice.
    times = local_times(CronSchedule("*/10 3 * * *", "Pacific/Chatham"), *CHATHAM_SPAN)
    assert times == [
        "2026-04-05T03:00+13:45",
        "2026-04-05T03:10+13:45",
        "2026-04-05T03:20+13:45",
        "2026-04-05T03:30+13:45",
        "2026-04-05T03:40+13:45",
        "2026-04-05T03:00+12:45",
        "2026-04-05T03:10+12:45",
        "2026-04-05T03:20+12:45",
        "2026-04-05T03:30+12:45",
        "2026-04-05T03:40+12:45",
        "2026-04-05T03:50+12:45",
    ]
    schedule = CronSchedule("*/10 3 * * *", "Pacific/Chatham")
    assert schedule.next_after(utc(2026, 4, 5, 12)) == utc(2026, 4, 5, 14, 15)  # 03:00 next day


def test_every_minute_of_hour_3_in_chatham_runs_every_minute_that_passes():
    times = local_times(CronSchedule("* 3 * * *", "Pacific/Chatham"), *CHATHAM_SPAN)
    # 03:00-03:44 in +13:45, then the hour again in +12:45: 45 + 60 minutes.
    assert len(times) == 105
    assert times[44:46] == ["2026-04-05T03:44+13:45", "2026-04-05T03:00+12:45"]
    assert times[-1] == "2026-04-05T03:59+12:45"


def test_every_minute_of_hour_2_in_lord_howe_keeps_going_through_the_spring_gap():
    # 4 October 2026: at 02:00 +10:30 the clocks go forward 30 minutes to 02:30 +11.
    schedule = CronSchedule("* 2 * * *", "Australia/Lord_Howe")
    times = local_times(schedule, utc(2026, 10, 3, 12), utc(2026, 10, 4, 12))
    assert times[0] == "2026-10-04T02:30+11:00"
    assert len(times) == 30  # 02:30 to 02:59: the first half hour does not exist
    assert schedule.next_after(utc(2026, 10, 4, 12)) == utc(2026, 10, 4, 15)  # 02:00 +11


def test_a_fixed_time_in_the_lord_howe_gap_runs_once_at_its_end():
    schedule = CronSchedule("15 2 * * *", "Australia/Lord_Howe")
    assert local_times(schedule, utc(2026, 10, 3, 12), utc(2026, 10, 5, 12)) == [
        "2026-10-04T02:30+11:00",
        "2026-10-05T02:15+11:00",
    ]


# --- from inside the second pass of a repeated hour --------------------------------------

# 25 October 2026 in Europe/Berlin: 02:00-02:59 CEST (00:00-00:59 UTC), then the clocks go
# back and 02:00-02:59 CET (01:00-01:59 UTC). 01:32 UTC is 02:32 in the second pass.
SECOND_PASS = utc(2026, 10, 25, 1, 32)
TOMORROW_0200 = utc(2026, 10, 26, 1, 0)  # 02:00 CET


def test_from_the_second_pass_a_fixed_hour_with_many_times_goes_to_the_next_day():
    schedule = CronSchedule("0-59/5 2 * * *", "Europe/Berlin")
    assert schedule.next_after(SECOND_PASS) == TOMORROW_0200
    assert schedule.next_after(utc(2026, 10, 25, 1, 0)) == TOMORROW_0200
    assert schedule.next_after(utc(2026, 10, 25, 0, 57)) == TOMORROW_0200


@pytest.mark.django_db
def test_a_job_saved_in_the_second_pass_has_a_next_run(make_job, clock):
    clock.move_to(SECOND_PASS)
    job = make_job(schedule_type="cron", cron_expression="0-59/5 2 * * *", timezone="Europe/Berlin")
    assert job.next_run_at == TOMORROW_0200


@pytest.mark.django_db
def test_a_job_enabled_in_the_second_pass_has_a_next_run(make_job, clock):
    job = make_job(
        schedule_type="cron",
        cron_expression="0-59/5 2 * * *",
        timezone="Europe/Berlin",
        is_active=False,
    )
    clock.move_to(SECOND_PASS)
    job.set_active(True)
    job.refresh_from_db()
    assert (job.is_active, job.next_run_at) == (True, TOMORROW_0200)


@pytest.mark.django_db
def test_syncjobs_in_the_second_pass_leaves_a_next_run(clock, declare):
    clock.move_to(SECOND_PASS)
    declare(cron="0-59/5 2 * * *", timezone="Europe/Berlin")
    assert syncjobs().status == 0
    assert code_job().next_run_at == TOMORROW_0200


@pytest.mark.django_db
def test_the_preview_from_the_second_pass_is_not_empty(clock):
    clock.move_to(SECOND_PASS)
    job = Job(
        name="x",
        command="echo",
        schedule_type="cron",
        cron_expression="0-59/5 2 * * *",
        timezone="Europe/Berlin",
    )
    shown = preview.preview(job, count=3)
    assert shown.errors == {}
    assert [o.at for o in shown.occurrences] == [
        TOMORROW_0200,
        TOMORROW_0200 + timedelta(minutes=5),
        TOMORROW_0200 + timedelta(minutes=10),
    ]


# --- a claim never switches a recurring job off ----------------------------------------


def claim_every_minute(start: datetime, end: datetime, clock) -> list[datetime]:
    claimed: list[datetime] = []
    moment = start
    while moment <= end:
        clock.move_to(moment)
        claimed += [ticket.scheduled_for for ticket in engine.claim_due()]
        moment += timedelta(minutes=1)
    return claimed


@pytest.mark.django_db
@pytest.mark.parametrize("expression", ["*/10 3 * * *", "* 3 * * *"])
def test_the_claim_keeps_a_chatham_job_active_across_the_change(make_job, clock, expression):
    clock.move_to(utc(2026, 4, 4, 13))  # 02:45 +13:45 on 5 April, before the repeated hour
    job = make_job(schedule_type="cron", cron_expression=expression, timezone="Pacific/Chatham")
    claimed = claim_every_minute(utc(2026, 4, 4, 13), utc(2026, 4, 4, 16), clock)
    job.refresh_from_db()
    assert job.is_active
    assert job.next_run_at == utc(2026, 4, 5, 14, 15)  # 03:00 +12:45 on 6 April
    expected = local_times(CronSchedule(expression, "Pacific/Chatham"), *CHATHAM_SPAN)
    assert [t.astimezone(CHATHAM).isoformat(timespec="minutes") for t in claimed] == expected


@pytest.mark.django_db
def test_the_claim_keeps_a_lord_howe_job_active_across_the_spring_gap(make_job, clock):
    clock.move_to(utc(2026, 10, 3, 15, 20))  # 01:50 +10:30 on 4 October, before the gap
    job = make_job(
        schedule_type="cron", cron_expression="* 2 * * *", timezone="Australia/Lord_Howe"
    )
    claimed = claim_every_minute(utc(2026, 10, 3, 15, 20), utc(2026, 10, 3, 16, 10), clock)
    job.refresh_from_db()
    assert (job.is_active, job.next_run_at) == (True, utc(2026, 10, 4, 15))
    assert len(claimed) == 30 == JobHistory.objects.filter(job=job).count()


@pytest.mark.django_db
def test_a_job_whose_next_occurrence_cannot_be_computed_stays_active_and_due(
    make_job, clock, monkeypatch, caplog
):
    job = make_job(schedule_type="cron", cron_expression="30 2 * * *", timezone="Europe/Berlin")
    due_at = job.next_run_at
    clock.move_to(due_at + timedelta(seconds=1))

    def broken(self, moment):
        raise ArithmeticError("something unforeseen")

    monkeypatch.setattr(schedules.CronSchedule, "next_after", broken)
    claim.cron_schedule.cache_clear()
    with caplog.at_level(logging.DEBUG, logger="jobs.engine"):
        assert engine.claim_due() == []
        assert engine.claim_due() == []  # tried again, and told once
    job.refresh_from_db()
    assert (job.is_active, job.next_run_at) == (True, due_at)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "backup" in errors[0].getMessage()
    assert "stays active" in errors[0].getMessage()
    assert errors[0].exc_info is not None


@pytest.mark.django_db
def test_a_recurring_job_with_no_next_occurrence_is_not_switched_off(
    make_job, clock, monkeypatch, caplog
):
    job = make_job(schedule_type="cron", cron_expression="30 2 * * *", timezone="Europe/Berlin")
    due_at = job.next_run_at
    clock.move_to(due_at + timedelta(seconds=1))
    monkeypatch.setattr(schedules.CronSchedule, "next_after", lambda self, moment: None)
    claim.cron_schedule.cache_clear()
    with caplog.at_level(logging.ERROR, logger="jobs.engine"):
        assert engine.claim_due() == []
    job.refresh_from_db()
    assert (job.is_active, job.next_run_at) == (True, due_at)
    assert "no next occurrence" in caplog.text


@pytest.mark.django_db
def test_a_job_left_due_raises_the_scheduler_down_alert_naming_it(
    make_job, clock, monkeypatch, settings
):
    job = make_job(schedule_type="cron", cron_expression="30 2 * * *", timezone="Europe/Berlin")
    due_at = job.next_run_at
    monkeypatch.setattr(schedules.CronSchedule, "next_after", lambda self, moment: None)
    claim.cron_schedule.cache_clear()
    late = due_at + health.unclaimed_limit() + timedelta(seconds=5)
    clock.move_to(late)
    engine.claim_due()
    _beat_now(late)
    assert health.watch(late, alert=False).status == health.DOWN
    reason = SchedulerHealth.objects.get().reason
    assert "“backup”" in reason and "no scheduler has claimed it" in reason


def _beat_now(moment: datetime) -> None:
    """A live scheduler process's heartbeat: it is there, but the job stays unclaimed."""
    SchedulerHeartbeat.objects.create(
        name="host:1", pid=1, host="host", started_at=moment, seen_at=moment
    )


# --- validation: "no next occurrence" is refused before it is saved --------------------


@pytest.mark.django_db
@pytest.mark.parametrize("expression", ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31 2 */7"])
def test_an_expression_that_never_matches_is_refused(make_job, expression):
    job = Job(name="x", command="echo", schedule_type="cron", cron_expression=expression)
    assert "cron_expression" in job.schedule_errors()


def test_an_hourly_job_in_lord_howe_runs_at_both_passes_of_the_repeated_half_hour():
    # 5 April 2026: at 02:00 +11 the clocks go back 30 minutes to 01:30 +10:30.
    schedule = CronSchedule("45 * * * *", "Australia/Lord_Howe")
    assert local_times(schedule, utc(2026, 4, 4, 13), utc(2026, 4, 4, 17)) == [
        "2026-04-05T00:45+11:00",
        "2026-04-05T01:45+11:00",
        "2026-04-05T01:45+10:30",
        "2026-04-05T02:45+10:30",
    ]


@pytest.mark.django_db
def test_the_claim_runs_both_lord_howe_0145s(make_job, clock):
    clock.move_to(utc(2026, 4, 4, 14))  # 01:00 +11 on 5 April
    job = make_job(
        schedule_type="cron", cron_expression="45 * * * *", timezone="Australia/Lord_Howe"
    )
    claimed = claim_every_minute(utc(2026, 4, 4, 14), utc(2026, 4, 4, 16, 30), clock)
    assert [t.astimezone(LORD_HOWE).isoformat(timespec="minutes") for t in claimed] == [
        "2026-04-05T01:45+11:00",
        "2026-04-05T01:45+10:30",
        "2026-04-05T02:45+10:30",
    ]
    job.refresh_from_db()
    assert job.is_active


# --- the one rule: does the field start with "*"? ---------------------------------------


@pytest.mark.parametrize(
    ("expression", "wall_clock"),
    [
        ("30 2 * * *", True),
        ("0-59/20 2 * * *", True),
        ("0,*/20 2 * * *", True),  # names what "*/20" names, but does not start with "*"
        ("*/20 2 * * *", False),
        ("0 * * * *", False),
        ("0 */2 * * *", False),
    ],
)
def test_an_expression_follows_elapsed_time_when_its_minute_or_hour_starts_with_a_star(
    expression: str, wall_clock: bool
) -> None:
    assert schedules.follows_wall_clock(expression) is wall_clock


@pytest.mark.parametrize(
    ("expression", "second_pass_runs"),
    [("0-59/20 2 * * *", False), ("0,*/20 2 * * *", False), ("*/20 2 * * *", True)],
)
def test_the_second_0220_of_berlins_autumn_runs_only_for_elapsed_time(
    expression: str, second_pass_runs: bool
) -> None:
    # 25 October 2026: 02:20 CEST is 00:20 UTC, 02:20 CET is 01:20 UTC.
    following = CronSchedule(expression, "Europe/Berlin").next_after(utc(2026, 10, 25, 1, 19))
    assert (following == utc(2026, 10, 25, 1, 20)) is second_pass_runs


def test_a_day_field_starting_with_a_star_makes_both_day_fields_count() -> None:
    # June 2026: Mondays are the 1st, 8th, 15th, 22nd and 29th.
    both = CronSchedule("0 0 */2 * 1", "UTC")  # odd-numbered days that are Mondays
    assert [t.day for t in _june(both)] == [1, 15, 29]
    either = CronSchedule("0 0 1,15 * 1", "UTC")  # the 1st, the 15th, and Mondays
    assert [t.day for t in _june(either)] == [1, 8, 15, 22, 29]
    every_day = CronSchedule("0 0 1-31 * 1", "UTC")  # "1-31" is not a wildcard: either
    assert len(_june(every_day)) == 30


def _june(schedule: CronSchedule) -> list[datetime]:
    found, at = [], utc(2026, 5, 31, 23, 59)
    while (at := schedule.next_after(at)) is not None and at < utc(2026, 7, 1):
        found.append(at)
    return found
