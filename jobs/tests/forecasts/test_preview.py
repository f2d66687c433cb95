"""The schedule preview (jobs/forecasts/preview.py): its occurrences, its daylight-saving notes, its
messages, and that the scheduler then claims exactly the occurrences it showed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from jobs.forecasts import preview
from jobs.models import Job
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW, make_job

pytestmark = pytest.mark.django_db

BERLIN = "Europe/Berlin"
# The days Berlin's clocks change in 2026: forward at 02:00 CET (01:00 UTC) on 29 March,
# back at 03:00 CEST (01:00 UTC) on 25 October.
SPRING = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
AUTUMN = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)


def cron(expression: str, zone: str = BERLIN) -> dict[str, Any]:
    return {"schedule_type": "cron", "cron_expression": expression, "timezone": zone}


def shown(values: dict[str, Any], **options: Any) -> list[tuple[str, str | None]]:
    """The preview's occurrences as (local time with its zone, note)."""
    result = preview.preview(preview.schedule_job(values), **options)
    assert result.errors == {}
    return [(f"{o.local:%Y-%m-%d %H:%M %Z}", o.note) for o in result.occurrences]


# --- daylight saving, Berlin -------------------------------------------------------------


def test_a_daily_0230_in_spring_runs_at_0300_cest_and_says_so() -> None:
    result = preview.preview(preview.schedule_job(cron("30 2 * * *")), count=3, now=SPRING)
    first, second, _ = result.occurrences
    assert first.at == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    assert first.local.isoformat() == "2026-03-29T03:00:00+02:00"
    assert first.note == "02:30 does not exist on 29 March 2026: runs at 03:00 CEST"
    assert (second.at, second.note) == (datetime(2026, 3, 30, 0, 30, tzinfo=UTC), None)
    assert result.zone_name == BERLIN


def test_a_daily_0230_in_autumn_runs_at_the_first_0230_only_and_says_so() -> None:
    first, second = preview.preview(
        preview.schedule_job(cron("30 2 * * *")), count=2, now=AUTUMN
    ).occurrences
    assert first.at == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST
    assert first.note == "02:30 happens twice on 25 October 2026: the first 02:30 only (CEST)"
    # Not at the second 02:30 (CET, 01:30 UTC): the next day.
    assert (second.at, second.note) == (datetime(2026, 10, 26, 1, 30, tzinfo=UTC), None)


def test_an_hourly_job_runs_at_both_0200s_in_autumn_and_skips_0200_in_spring() -> None:
    autumn = shown(cron("0 * * * *"), count=4, start=datetime(2026, 10, 24, 22, 30, tzinfo=UTC))
    assert autumn == [
        ("2026-10-25 01:00 CEST", None),
        (
            "2026-10-25 02:00 CEST",
            "02:00 happens twice on 25 October 2026: runs at both, first in CEST",
        ),
        (
            "2026-10-25 02:00 CET",
            "02:00 again on 25 October 2026, now in CET: the clocks went back",
        ),
        ("2026-10-25 03:00 CET", None),
    ]
    spring = shown(cron("0 * * * *"), count=2, start=datetime(2026, 3, 28, 23, 30, tzinfo=UTC))
    assert spring == [
        ("2026-03-29 01:00 CET", None),
        ("2026-03-29 03:00 CEST", "02:00 does not exist on 29 March 2026: runs once at 03:00 CEST"),
    ]


def test_times_in_the_gap_are_listed_once_and_run_once() -> None:
    assert shown(cron("0,30 2 * * *"), count=1, now=SPRING) == [
        (
            "2026-03-29 03:00 CEST",
            "02:00 and 02:30 do not exist on 29 March 2026: runs once at 03:00 CEST",
        )
    ]


def test_an_expression_that_follows_elapsed_time_says_the_gap_has_no_runs() -> None:
    # "*" in the minute field: the whole hour is skipped on 29 March, nothing moves.
    first, *_ = shown(cron("*/15 2 * * *"), count=4, now=SPRING)
    assert first == (
        "2026-03-30 02:00 CEST",
        "02:00 to 02:45 do not exist on 29 March 2026: no runs then",
    )


def test_a_time_zone_without_daylight_saving_has_no_notes() -> None:
    assert all(note is None for _, note in shown(cron("30 2 * * *", "Asia/Tokyo"), now=SPRING))


def test_an_interval_across_a_clock_change_says_its_local_times_move(settings) -> None:  # type: ignore[no-untyped-def]
    settings.TIME_ZONE = BERLIN  # an interval job's zone is the site's
    values = {
        "schedule_type": "interval",
        "interval": 1,
        "interval_unit": "day",
        "scheduled_at": datetime(2026, 3, 27, 1, 30, tzinfo=UTC),  # 02:30 CET
    }
    assert shown(values, count=3, now=datetime(2026, 3, 26, tzinfo=UTC)) == [
        ("2026-03-27 02:30 CET", None),
        ("2026-03-28 02:30 CET", None),
        (
            "2026-03-29 03:30 CEST",
            "Clocks go forward 1 hour on 29 March 2026 (CET to CEST): intervals count real "
            "time, so local times are 1 hour later from here.",
        ),
    ]


# --- kinds of schedule -------------------------------------------------------------------


def test_a_once_job_shows_its_one_time(clock) -> None:  # type: ignore[no-untyped-def]
    at = NOW + timedelta(days=2)
    result = preview.preview(
        preview.schedule_job({"schedule_type": "once", "scheduled_at": at}), count=10
    )
    assert [(o.at, o.local, o.note) for o in result.occurrences] == [(at, at, None)]
    assert result.zone_name == "UTC"


def test_an_interval_job_without_a_start_time_is_previewed_from_now(clock) -> None:  # type: ignore[no-untyped-def]
    values = {"schedule_type": "interval", "interval": 7, "interval_unit": "minute"}
    times = [o.at for o in preview.preview(preview.schedule_job(values)).occurrences]
    assert times == [NOW + timedelta(minutes=7 * k) for k in range(1, 11)]


def test_an_interval_job_with_a_past_start_time_stays_on_its_grid(clock) -> None:  # type: ignore[no-untyped-def]
    values = {
        "schedule_type": "interval",
        "interval": 1,
        "interval_unit": "hour",
        "scheduled_at": NOW - timedelta(days=3, minutes=20),
    }
    times = [o.at for o in preview.preview(preview.schedule_job(values), count=3).occurrences]
    assert times == [NOW + timedelta(minutes=40 + 60 * k) for k in range(3)]


def test_start_and_count_choose_the_window(clock) -> None:  # type: ignore[no-untyped-def]
    start = datetime(2026, 6, 1, 8, 59, 30, tzinfo=UTC)
    result = preview.preview(preview.schedule_job(cron("0 9 * * *", "UTC")), count=100, start=start)
    assert len(result.occurrences) == 100
    assert result.occurrences[0].at == datetime(2026, 6, 1, 9, tzinfo=UTC)
    assert result.occurrences[-1].at == datetime(2026, 9, 8, 9, tzinfo=UTC)
    with pytest.raises(ValueError):
        preview.preview(preview.schedule_job(cron("0 9 * * *")), count=101)


def test_an_edited_job_keeps_its_anchor_unless_its_grid_changes(clock) -> None:  # type: ignore[no-untyped-def]
    job = make_job(interval=7, interval_unit="minute")
    clock.shift(timedelta(minutes=3))
    loaded = Job.objects.get(pk=job.pk)
    same = {"schedule_type": "interval", "interval": 7, "interval_unit": "minute"}
    kept = preview.preview(preview.schedule_job(same, loaded), count=2).occurrences
    assert [o.at for o in kept] == [NOW + timedelta(minutes=7), NOW + timedelta(minutes=14)]
    changed = preview.preview(preview.schedule_job({**same, "interval": 5}, loaded), count=1)
    assert changed.occurrences[0].at == NOW + timedelta(minutes=3 + 5)
    loaded.refresh_from_db()
    assert loaded.interval == 7  # nothing saved


def test_a_cron_expression_with_no_date_to_come_shows_nothing() -> None:
    # 30 February never comes: cronsim refuses it, and clean() says so.
    result = preview.preview(preview.schedule_job(cron("0 0 30 2 *")))
    assert result.occurrences == [] and "cron_expression" in result.errors


# --- messages: the ones Job.clean() gives ------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (cron("61 * * * *"), {"cron_expression": ["The minute field “61” is not valid."]}),
        (
            cron("30 2 * *"),
            {
                "cron_expression": [
                    "A cron expression has five fields: minute, hour, day of month, month "
                    "and day of week."
                ]
            },
        ),
        (
            cron("30 2 * * *", "Mars/Olympus"),
            {
                "timezone": [
                    "Unknown time zone “Mars/Olympus”. Use an IANA name such as Europe/Berlin."
                ]
            },
        ),
        (
            {"schedule_type": "interval", "interval": 0, "interval_unit": "minute"},
            {"interval": ["The interval must be at least 1."]},
        ),
        (
            {"schedule_type": "once"},
            {"scheduled_at": ["A one-off job needs a date and time to run at."]},
        ),
        (
            {"schedule_type": "once", "scheduled_at": datetime(2021, 1, 1, tzinfo=UTC)},
            {
                "scheduled_at": [
                    "This time has already passed. Choose a time in the future, or use Run now."
                ]
            },
        ),
    ],
)
def test_a_bad_schedule_gives_the_messages_of_job_clean(values, expected) -> None:  # type: ignore[no-untyped-def]
    job = preview.schedule_job(values)
    result = preview.preview(job)
    assert result.occurrences == []
    assert result.errors == expected
    # The very messages saving the job would give.
    job.name, job.command = "x", "true"
    with pytest.raises(ValidationError) as refused:
        job.full_clean()
    assert {k: v for k, v in refused.value.message_dict.items() if k in expected} == expected


def test_a_disabled_one_off_job_whose_time_passed_shows_nothing_to_come(clock) -> None:  # type: ignore[no-untyped-def]
    job = make_job(schedule_type="once", scheduled_at=NOW + timedelta(minutes=5))
    Job.objects.filter(pk=job.pk).update(is_active=False, next_run_at=None)
    clock.shift(timedelta(hours=1))
    loaded = Job.objects.get(pk=job.pk)
    unchanged = {"schedule_type": "once", "scheduled_at": loaded.scheduled_at, "is_active": False}
    result = preview.preview(preview.schedule_job(unchanged, loaded))
    assert (result.errors, result.occurrences) == ({}, [])


# --- the scheduler claims what the preview showed -----------------------------------------


def _claimed(job: Job, moments: list[datetime], clock) -> list[datetime]:  # type: ignore[no-untyped-def]
    """Drive the scheduler one pass at a time: a second before each moment (nothing may
    be claimed early), then at it. The occurrences its runs were created for."""
    scheduler = Scheduler(workers=1)  # its workers never start: the runs stay pending
    for moment in moments:
        clock.move_to(moment - timedelta(seconds=1))
        scheduler.run_pass()
        early = job.runs.filter(scheduled_for__gte=moment).exists()
        assert not early, f"claimed before {moment}"
        clock.move_to(moment)
        scheduler.run_pass()
    return list(job.runs.order_by("scheduled_for").values_list("scheduled_for", flat=True))


@pytest.mark.parametrize(
    ("created", "values"),
    [
        # Both of Berlin's changes, a daily time in the gap and in the repeated hour.
        (SPRING, cron("30 2 * * *")),
        (AUTUMN, cron("30 2 * * *")),
        # Hourly across the autumn change: both 02:00s.
        (datetime(2026, 10, 24, 21, 0, 1, tzinfo=UTC), cron("0 * * * *")),
        # An interval without a start time: from the moment it was saved.
        (NOW + timedelta(seconds=0.25), {"interval": 7, "interval_unit": "minute"}),
        # An interval with a start time in the past: its grid.
        (
            NOW,
            {
                "interval": 90,
                "interval_unit": "second",
                "scheduled_at": NOW - timedelta(hours=5, seconds=10),
            },
        ),
        (NOW, {"schedule_type": "once", "scheduled_at": NOW + timedelta(hours=3)}),
    ],
)
def test_the_scheduler_claims_exactly_the_occurrences_the_preview_showed(
    clock,  # type: ignore[no-untyped-def]
    created: datetime,
    values: dict[str, Any],
) -> None:
    clock.move_to(created)
    shown = preview.preview(preview.schedule_job({"schedule_type": "interval", **values}))
    job = make_job(clean=True, **{"schedule_type": "interval", **values})
    times = [o.at for o in shown.occurrences]
    assert times and times[0] > created
    assert _claimed(job, times, clock) == times
