"""Pure schedule arithmetic: no database, no clock."""

from __future__ import annotations

import random
import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest

from jobs.schedules import arithmetic as schedules
from jobs.schedules.arithmetic import (
    COALESCE,
    SKIP,
    first_occurrence_at_or_after,
    interval_step,
    plan_interval_claim,
    plan_once_claim,
    retry_delay,
)

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
GRACE = timedelta(seconds=5)
BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")


def test_interval_step_converts_each_unit():
    assert interval_step(1, "second") == timedelta(seconds=1)
    assert interval_step(10, "minute") == timedelta(minutes=10)
    assert interval_step(2, "hour") == timedelta(hours=2)
    assert interval_step(3, "day") == timedelta(days=3)


@pytest.mark.parametrize("interval,unit", [(0, "minute"), (-1, "hour"), (5, "week"), (5, "")])
def test_interval_step_rejects_non_positive_intervals_and_unknown_units(interval, unit):
    with pytest.raises(schedules.ScheduleError):
        interval_step(interval, unit)


def test_first_occurrence_is_the_anchor_while_it_is_still_to_come():
    assert first_occurrence_at_or_after(T0, timedelta(minutes=10), T0 - timedelta(days=1)) == T0


def test_first_occurrence_resumes_on_the_grid_after_a_pause():
    step = timedelta(minutes=10)
    moment = T0 + timedelta(days=7, minutes=3, seconds=1)
    assert first_occurrence_at_or_after(T0, step, moment) == T0 + timedelta(days=7, minutes=10)


def test_first_occurrence_at_an_exact_grid_point_is_that_point():
    step = timedelta(minutes=10)
    assert first_occurrence_at_or_after(T0, step, T0 + 3 * step) == T0 + 3 * step


def test_a_daily_interval_is_24_hours_across_the_spring_dst_change_in_berlin():
    # 2026-03-29: Berlin clocks jump from 02:00 to 03:00.
    anchor = datetime(2026, 3, 28, 9, 0, tzinfo=BERLIN).astimezone(UTC)
    step = interval_step(1, "day")
    following = first_occurrence_at_or_after(anchor, step, anchor + timedelta(seconds=1))
    assert following - anchor == timedelta(hours=24)
    # ... so the local wall-clock time moves by the hour the clocks moved.
    assert following.astimezone(BERLIN).hour == 10


def test_a_daily_interval_is_24_hours_across_the_autumn_dst_change_in_berlin():
    # 2026-10-25: Berlin clocks fall back from 03:00 to 02:00.
    anchor = datetime(2026, 10, 24, 9, 0, tzinfo=BERLIN).astimezone(UTC)
    following = first_occurrence_at_or_after(
        anchor, interval_step(1, "day"), anchor + timedelta(seconds=1)
    )
    assert following - anchor == timedelta(hours=24)
    assert following.astimezone(BERLIN).hour == 8


def test_daily_occurrences_cross_month_ends_and_a_leap_day():
    anchor = datetime(2028, 2, 27, 23, 30, tzinfo=UTC)
    step = interval_step(1, "day")
    days = [anchor + k * step for k in range(4)]
    assert [d.date().isoformat() for d in days] == [
        "2028-02-27",
        "2028-02-28",
        "2028-02-29",
        "2028-03-01",
    ]
    assert first_occurrence_at_or_after(
        anchor, step, datetime(2028, 2, 29, 23, 31, tzinfo=UTC)
    ) == (datetime(2028, 3, 1, 23, 30, tzinfo=UTC))


def test_a_30_day_interval_from_january_31st_stays_30_days_apart():
    anchor = datetime(2026, 1, 31, 8, 0, tzinfo=UTC)
    step = interval_step(30, "day")
    assert anchor + step == datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def test_a_plan_runs_the_due_occurrence_and_moves_to_the_next_grid_point():
    step = timedelta(minutes=1)
    plan = plan_interval_claim(T0, step, T0 + timedelta(seconds=2), policy=COALESCE, grace=GRACE)
    assert plan.run_at == (T0,)
    assert plan.next_run_at == T0 + step
    assert plan.missed == 0


def test_no_drift_over_100_occurrences_with_late_claims():
    step = timedelta(seconds=7)
    rng = random.Random(1)
    next_run_at = T0
    ran = []
    for _ in range(100):
        # The claim comes up to 3 s late (a slow run, a late tick); it never drifts.
        now = next_run_at + timedelta(milliseconds=rng.randint(0, 3000))
        plan = plan_interval_claim(next_run_at, step, now, policy=COALESCE, grace=GRACE)
        ran.extend(plan.run_at)
        next_run_at = plan.next_run_at
    assert ran == [T0 + k * step for k in range(100)]


def test_a_scheduler_briefly_behind_catches_up_every_occurrence_within_the_grace():
    step = timedelta(seconds=1)
    plan = plan_interval_claim(T0, step, T0 + timedelta(seconds=3.5), policy=COALESCE, grace=GRACE)
    assert plan.run_at == tuple(T0 + k * step for k in range(4))
    assert plan.next_run_at == T0 + 4 * step


def test_coalesce_after_downtime_runs_once_for_all_missed_occurrences():
    step = timedelta(minutes=10)
    now = T0 + timedelta(hours=2, minutes=5)
    plan = plan_interval_claim(T0, step, now, policy=COALESCE, grace=GRACE)
    assert plan.run_at == (T0 + timedelta(hours=2),)
    assert plan.next_run_at == T0 + timedelta(hours=2, minutes=10)
    assert plan.missed == 12


def test_skip_after_downtime_runs_nothing_and_moves_to_the_next_future_slot():
    step = timedelta(minutes=10)
    now = T0 + timedelta(hours=2, minutes=5)
    plan = plan_interval_claim(T0, step, now, policy=SKIP, grace=GRACE)
    assert plan.run_at == ()
    assert plan.next_run_at == T0 + timedelta(hours=2, minutes=10)
    assert plan.missed == 13


def test_skip_still_runs_the_latest_occurrence_when_it_is_on_time():
    step = timedelta(seconds=10)
    now = T0 + timedelta(minutes=10, seconds=2)
    plan = plan_interval_claim(T0, step, now, policy=SKIP, grace=GRACE)
    assert plan.run_at == (T0 + timedelta(minutes=10),)


def test_a_plan_for_a_job_not_yet_due_runs_nothing():
    plan = plan_interval_claim(
        T0, timedelta(seconds=5), T0 - timedelta(seconds=1), policy=SKIP, grace=GRACE
    )
    assert plan.run_at == () and plan.next_run_at == T0


def test_a_once_job_runs_once_and_has_no_next_occurrence():
    plan = plan_once_claim(T0, T0 + timedelta(seconds=1), policy=COALESCE, grace=GRACE)
    assert plan.run_at == (T0,)
    assert plan.next_run_at is None


def test_a_missed_once_job_runs_late_with_coalesce_and_not_at_all_with_skip():
    late = T0 + timedelta(hours=1)
    assert plan_once_claim(T0, late, policy=COALESCE, grace=GRACE).run_at == (T0,)
    skipped = plan_once_claim(T0, late, policy=SKIP, grace=GRACE)
    assert skipped.run_at == () and skipped.missed == 1 and skipped.next_run_at is None


def test_retry_delay_doubles_per_attempt_within_its_jitter():
    class Fixed(random.Random):
        def __init__(self, value):
            super().__init__()
            self.value = value

        def random(self):
            return self.value

    assert retry_delay(1, 10, Fixed(0.0)) == timedelta(seconds=5)
    assert retry_delay(1, 10, Fixed(1.0)) == timedelta(seconds=10)
    assert retry_delay(3, 10, Fixed(1.0)) == timedelta(seconds=40)
    assert retry_delay(3, 10, Fixed(0.0)) == timedelta(seconds=20)


def test_retry_delay_is_capped_at_a_day():
    assert retry_delay(30, 3600, random.Random(0)) <= schedules.MAX_RETRY_DELAY


def test_retry_delay_without_backoff_is_zero():
    assert retry_delay(1, 0) == timedelta(0)
