"""The Upcoming page (/upcoming/): every job's runs to come as density strips, busiest
first, in a fixed number of queries; and the counting behind it (jobs/schedules/density.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs import engine
from jobs.forecasts import upcoming
from jobs.models import IntervalUnit, Job, ScheduleType
from jobs.schedules import arithmetic as schedules
from jobs.schedules import density
from jobs.sql import store
from jobs.sql.rows import TimelineJob
from jobs.tests.factories import NOW, make_job, make_user

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

# Session, user, the user's permissions, whether team scoping is on: 5 queries on every
# page (test_views_queries.py),
# and the pause switch for the banner of every whole page; the page's own is one read of
# the job table and one of the active blackout windows (no calendar on these jobs: none
# read; with calendars and windows, jobs/tests/calendars/test_upcoming_notes.py).
EXPECTED_QUERIES = 5 + 1 + 1 + 1


def _row(html: str, job: Job) -> str:
    match = re.search(rf'<tr id="upcoming-{job.pk}".*?</tr>', html, re.S)
    assert match, f"no row for {job.name}"
    return match.group(0)


def _cells(row: str) -> int:
    return row.count('class="density-cell')


def _bulk(count: int) -> None:
    """`count` jobs of every kind: intervals from every second to every day, cron jobs in
    two zones, one-off jobs, a tenth disabled; written in bulk (next_run_at as given)."""
    now = timezone.now()
    jobs = []
    for index in range(count):
        kind = index % 4
        values = {
            "name": f"bulk {index:05d}",
            "command": "true",
            "is_active": index % 10 != 9,
            "next_run_at": now + timedelta(seconds=1 + index % 600),
        }
        if kind == 0:
            values.update(schedule_type=ScheduleType.INTERVAL, interval=1 + index % 7)
            values.update(interval_unit=IntervalUnit.SECOND)
        elif kind == 1:
            values.update(schedule_type=ScheduleType.INTERVAL, interval=1 + index % 5)
            values.update(interval_unit=IntervalUnit.HOUR)
        elif kind == 2:
            values.update(schedule_type=ScheduleType.CRON, timezone="Europe/Berlin")
            values.update(
                cron_expression=["*/5 * * * *", "30 2 * * *", "0 9-17 * * 1-5"][index % 3]
            )
        else:
            values.update(schedule_type=ScheduleType.ONCE, scheduled_at=values["next_run_at"])
        if not values["is_active"]:
            values["next_run_at"] = None
        jobs.append(Job(**values))
    Job.objects.bulk_create(jobs)


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def test_the_page_issues_the_same_queries_for_10_and_for_1000_jobs(signed_in: Client) -> None:
    _bulk(10)
    urls = ["/upcoming/", "/upcoming/?span=6h", "/upcoming/?span=7d"]
    small = [_queries(signed_in, url) for url in urls]
    Job.objects.all().delete()
    _bulk(1000)
    large = [_queries(signed_in, url) for url in [*urls, "/upcoming/?page=3"]]
    assert small == [EXPECTED_QUERIES] * 3
    assert large == [EXPECTED_QUERIES] * 4
    page = signed_in.get("/upcoming/?page=3").context["page"]
    assert page.number == 3 and len(page.object_list) == 50


def test_a_job_every_second_is_a_strip_of_buckets_not_86400_marks(
    signed_in: Client,
    clock,  # type: ignore[no-untyped-def]
) -> None:
    # Its grid starts now: 86,400 runs in the next 24 hours.
    busy = make_job(name="every second", interval=1, interval_unit="second", scheduled_at=NOW)
    response = signed_in.get("/upcoming/")
    row = _row(response.text, busy)
    # NOW is on the hour: 24 buckets of an hour, 3,600 runs each.
    assert _cells(row) == 24
    # Each cell has its title (the next run's {% when %} has one of its own).
    assert len(re.findall(r'<span class="density-cell [^"]*" title="', row)) == 24
    assert "3,600 runs" in row
    assert re.search(r"data-total>86,400<", row)
    assert len(response.content) < 40_000


def test_the_busiest_job_comes_first_and_disabled_jobs_last(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    daily = make_job(
        name="a daily", interval=1, interval_unit="day", scheduled_at=NOW + timedelta(hours=5)
    )
    minutely = make_job(name="b minutely", schedule_type="cron", cron_expression="* * * * *")
    once = make_job(name="c once", schedule_type="once", scheduled_at=NOW + timedelta(hours=2))
    off = make_job(name="d off", interval=1, interval_unit="second", is_active=False)
    later = make_job(name="e next week", schedule_type="once", scheduled_at=NOW + timedelta(days=7))
    response = signed_in.get("/upcoming/")
    rows = [row.job.name for row in response.context["rows"]]
    assert rows == ["b minutely", "a daily", "c once", "e next week", "d off"]
    totals = {row.job.name: row.total for row in response.context["rows"]}
    assert totals == {
        # From 12:01, the first minute after it was saved, to 11:59 the next day.
        "b minutely": 1439,
        "a daily": 1,
        "c once": 1,
        "e next week": 0,
        "d off": None,
    }
    html = response.text
    assert "data-paused>disabled<" in _row(html, off)
    assert 'data-cells="0"' in _row(html, off)
    assert _cells(_row(html, once)) == 24
    assert "of which 1 is disabled and listed last" in html
    assert [daily, minutely, later]  # all listed


def test_the_spans_choose_the_buckets(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    job = make_job(name="quarterly", schedule_type="cron", cron_expression="*/15 * * * *")
    six = signed_in.get("/upcoming/?span=6h")
    assert _cells(_row(six.text, job)) == 24  # quarters of an hour
    # From 12:15, the first quarter after it was saved.
    assert six.context["rows"][0].total == 23
    assert six.context["rows"][0].counts == [0] + [1] * 23
    week = signed_in.get("/upcoming/?span=7d")
    assert _cells(_row(week.text, job)) == 28  # 6-hour blocks
    assert week.context["rows"][0].total == 7 * 96 - 1
    unknown = signed_in.get("/upcoming/?span=year")
    assert unknown.context["span"] == upcoming.DEFAULT_SPAN
    assert "Showing the next 24 hours." in unknown.text


def test_buckets_follow_the_viewers_clock_and_the_first_starts_now(
    signed_in: Client,
    clock,  # type: ignore[no-untyped-def]
) -> None:
    clock.move_to(NOW + timedelta(minutes=20))
    make_job(name="minutely", schedule_type="cron", cron_expression="* * * * *")
    signed_in.cookies["tz"] = "Asia/Kolkata"  # UTC+05:30: its hours start at :30 UTC
    response = signed_in.get("/upcoming/")
    timeline = response.context["timeline"]
    starts = [f"{bucket.start:%H:%M}" for bucket in timeline.buckets]
    assert starts[:3] == ["17:50", "18:00", "19:00"]
    assert len(starts) == 25  # a part of an hour at each end
    # 12:21 to 12:29 UTC, then a whole hour.
    assert response.context["rows"][0].counts[:2] == [9, 60]
    assert sum(response.context["rows"][0].counts) == 1439


def test_cron_counts_on_a_clock_change_day_follow_the_scheduler(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    # Just before midnight in Berlin, 29 March: the first hourly run is at 00:00 CET.
    clock.move_to(datetime(2026, 3, 28, 22, 59, 30, tzinfo=UTC))
    hourly = make_job(
        name="hourly", schedule_type="cron", cron_expression="0 * * * *", timezone="Europe/Berlin"
    )
    daily = make_job(
        name="daily", schedule_type="cron", cron_expression="30 2 * * *", timezone="Europe/Berlin"
    )
    totals = {row.job.name: row.total for row in signed_in.get("/upcoming/").context["rows"]}
    # 24 hours pass, so an hourly job runs 24 times though the day has 23 on the clock;
    # the daily 02:30 runs once (at 03:00 CEST).
    assert totals == {"hourly": 24, "daily": 1}
    assert [hourly, daily]


def test_the_page_needs_view_job_and_is_in_the_menu(signed_in: Client) -> None:
    nobody = Client()
    nobody.force_login(make_user("nobody"))
    assert nobody.get("/upcoming/").status_code == 403
    assert Client().get("/upcoming/")["Location"] == "/accounts/login/?next=/upcoming/"
    page = signed_in.get("/").text
    assert 'href="/upcoming/"' in page


def test_the_page_says_the_timeline_waits_while_the_scheduler_is_paused(
    signed_in: Client,
) -> None:
    assert 'id="upcoming-paused"' not in signed_in.get("/upcoming/").text
    engine.pause(note="upgrading")
    assert 'id="upcoming-paused"' in signed_in.get("/upcoming/").text
    engine.resume()
    assert 'id="upcoming-paused"' not in signed_in.get("/upcoming/").text


def test_while_paused_until_a_time_nothing_is_counted_before_it(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    every_minute = make_job(name="every minute", interval=1, interval_unit=IntervalUnit.MINUTE)
    [before] = signed_in.get("/upcoming/").context["rows"]
    # The first a minute from now; the window ends just before the last.
    assert before.total == 24 * 60 - 1
    engine.pause(until=timezone.now() + timedelta(hours=6), note="upgrading")
    response = signed_in.get("/upcoming/")
    [row] = [row for row in response.context["rows"] if row.job.name == "every minute"]
    assert row.total == 18 * 60  # from the resumption (a run on the minute) to the window end
    assert sum(row.counts) == row.total
    first_hours = response.context["timeline"].buckets
    assert (
        sum(
            count
            for bucket, count in zip(first_hours, row.counts, strict=True)
            if bucket.end <= timezone.now() + timedelta(hours=6)
        )
        == 0
    )
    shown = _row(response.text, every_minute)
    assert "data-next><span" in shown and "paused" in shown  # not "in 1 minute"


def test_while_paused_with_no_end_nothing_is_counted(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    every_minute = make_job(name="every minute", interval=1, interval_unit=IntervalUnit.MINUTE)
    engine.pause(note="upgrading")
    [row] = signed_in.get("/upcoming/").context["rows"]
    assert row.job.pk == every_minute.pk and row.total == 0 and sum(row.counts) == 0


# --- counting --------------------------------------------------------------------------


def test_grid_counts_are_arithmetic() -> None:
    assert density.grid_count(0, 10, 0, 10) == 1
    assert density.grid_count(0, 10, 1, 10) == 0
    assert density.grid_count(0, 10, 1, 11) == 1
    assert density.grid_count(100, 10, 0, 100) == 0  # before the first point
    assert density.grid_count(5, 1, 0, 86_400_000_005) == 86_400_000_000
    assert density.grid_counts(0, 7, [0, 10, 20, 30]) == [2, 1, 2]
    assert sum(density.grid_counts(3, 7, list(range(0, 1000, 37)))) == density.grid_count(
        3, 7, 0, 999
    )


def test_sorted_counts_leave_out_what_comes_before_the_next_run() -> None:
    times = [1, 2, 3, 10, 11, 20]
    assert density.sorted_counts(times, [0, 5, 15, 25]) == [3, 2, 1]
    assert density.sorted_counts(times, [0, 5, 15, 25], since=11) == [0, 1, 1]
    assert density.sorted_count(times, 2, 11) == 3


def test_cron_walks_are_kept_and_extended_as_time_goes_on() -> None:
    density.forget_cron_walks()
    start = density.micros(NOW)
    day = 24 * density.HOUR_US

    def brute(low: int, high: int) -> list[int]:
        schedule = schedules.CronSchedule("*/5 * * * *", "Europe/Berlin")
        found, at = [], schedule.next_after(density.moment(low - 1))
        while at is not None and density.micros(at) < high:
            found.append(density.micros(at))
            at = schedule.next_after(at)
        return found

    first = density.cron_times("*/5 * * * *", "Europe/Berlin", start, start + day)
    assert list(first) == brute(start, start + day)
    # Later windows (and one earlier, as when a clock goes back) count the same.
    for shift in (7 * 60 * 10**6, day, 3 * day, -day):
        low, high = start + shift, start + shift + day
        times = density.cron_times("*/5 * * * *", "Europe/Berlin", low, high)
        assert density.sorted_counts(times, [low, high]) == [len(brute(low, high))]
    assert list(first) == brute(start, start + day)  # what was handed out never changes
    assert density.cron_times("not cron", "UTC", start, start + day) is None


def test_levels_are_on_a_log_scale_of_the_pages_peak() -> None:
    assert [upcoming.level(count, 3600) for count in (0, 1, 60, 3600)] == [0, 1, 3, 4]
    assert upcoming.level(1, 1) == upcoming.LEVELS


def test_the_job_table_is_read_with_its_times_to_the_microsecond() -> None:
    moments = [
        NOW,
        NOW + timedelta(microseconds=1),
        NOW + timedelta(seconds=59, microseconds=999_999),
        datetime(2038, 1, 19, 3, 14, 8, 500_000, tzinfo=UTC),
    ]
    for index, moment in enumerate(moments):
        make_job(name=f"once {index}", schedule_type="once", scheduled_at=moment)
    read = store().read_micros
    with store().reading() as ops:
        rows = [TimelineJob(*row[:8], read(row[8]), read(row[9])) for row in ops.timeline_jobs()]
    expected = [density.micros(moment) for moment in moments]
    assert sorted(row.next_run_us for row in rows) == expected
    assert sorted(row.scheduled_at_us for row in rows) == expected
    assert all(len(row.key) == 32 for row in rows)
