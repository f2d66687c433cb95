"""The dashboard: counts, success rate, runs in progress, upcoming runs, failures, chart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client

from jobs.models import RunStatus
from jobs.tests.factories import make_job, make_run
from jobs.web import dashboard

pytest_plugins = ["jobs.tests.ui_support"]

# Half past noon on 30 November 2026: mid-hour, so this hour's bar holds runs from
# before and after it; the assertions name these hours.
HALF_PAST_NOON = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)


@pytest.mark.django_db
@time_machine.travel(HALF_PAST_NOON, tick=False)
def test_it_counts_jobs_and_the_last_days_runs_by_status(signed_in: Client) -> None:
    job = make_job(name="busy")
    make_job(name="off", is_active=False)
    for _ in range(3):
        make_run(job, status=RunStatus.SUCCESS, ago=timedelta(hours=2))
    make_run(job, status=RunStatus.FAILED, ago=timedelta(minutes=5))
    make_run(job, status=RunStatus.RUNNING, ago=timedelta(minutes=1))
    make_run(job, status=RunStatus.PENDING, ago=timedelta(seconds=5))
    make_run(job, status=RunStatus.SKIPPED, ago=timedelta(minutes=3))
    make_run(job, status=RunStatus.CANCELLED, ago=timedelta(minutes=2))
    make_run(job, status=RunStatus.FAILED, ago=timedelta(days=3))  # too old to count
    response = signed_in.get("/")
    summary = response.context["summary"]
    assert (summary.jobs_active, summary.jobs_inactive) == (1, 1)
    assert summary.runs_24h == {
        "success": 3,
        "failed": 1,
        "running": 1,
        "pending": 1,
        "skipped": 1,
        "cancelled": 1,
    }
    assert (summary.running_now, summary.pending_now) == (1, 1)
    # Skipped and cancelled runs did not run to an outcome: the rate leaves them out.
    assert summary.success_rate == 75.0
    page = response.content.decode()
    assert 'id="count-skipped">1<' in page and 'id="count-cancelled">1<' in page


@pytest.mark.django_db
def test_it_shows_runs_in_progress_upcoming_runs_and_failures(signed_in: Client) -> None:
    soon = make_job(name="soon", interval=1, interval_unit="minute")
    later = make_job(name="later", interval=1, interval_unit="day")
    make_job(name="disabled", is_active=False)
    make_run(later, status=RunStatus.RUNNING, ago=timedelta(seconds=90))
    failure = make_run(soon, status=RunStatus.FAILED)
    response = signed_in.get("/")
    assert [job.name for job in response.context["upcoming"]] == ["soon", "later"]
    assert [run.pk for run in response.context["failures"]] == [failure.pk]
    assert f"/runs/{failure.pk}/" in response.text
    in_progress = response.text.split('id="in-progress"')[1].split("</ul>")[0]
    assert "later" in in_progress
    assert "1 min 3" in in_progress  # elapsed: 1 min 30 s, give or take the test's time


@pytest.mark.django_db
def test_it_says_so_when_there_is_nothing_to_show(signed_in: Client) -> None:
    response = signed_in.get("/")
    assert "Nothing is running." in response.text
    assert "No active job is scheduled." in response.text
    assert "No failures." in response.text
    assert response.context["summary"].success_rate is None


@pytest.mark.django_db
@time_machine.travel(HALF_PAST_NOON, tick=False)
def test_the_chart_stacks_each_hours_runs_by_status(signed_in: Client) -> None:
    job = make_job()
    make_run(job, status=RunStatus.SUCCESS, ago=timedelta(minutes=10))  # 12:20, this hour
    make_run(job, status=RunStatus.FAILED, ago=timedelta(minutes=15))
    make_run(job, status=RunStatus.SUCCESS, ago=timedelta(hours=5))  # 07:30
    chart = signed_in.get("/").context["chart"]
    assert len(chart.bars) == 24
    assert chart.bars[-1].start == datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert [(s.status, s.count) for s in chart.bars[-1].segments] == [
        ("success", 1),
        ("failed", 1),
    ]
    assert chart.bars[-6].total == 1
    # The tallest bar reaches the top of the plot.
    tallest = chart.bars[-1]
    assert tallest.segments[-1].y == dashboard.CHART_TOP
    assert [line.value for line in chart.grid] == [0, 1, 2]


@pytest.mark.django_db
@time_machine.travel(HALF_PAST_NOON, tick=False)
def test_the_chart_is_svg_in_the_page_with_hours_in_the_users_zone(signed_in: Client) -> None:
    signed_in.cookies["tz"] = "Asia/Kolkata"  # UTC+05:30
    make_run(make_job(), ago=timedelta(minutes=1))
    text = signed_in.get("/").text
    assert '<svg class="runs-chart"' in text
    assert "17:30" in text  # the 12:00 UTC bar
    assert 'class="chart-success"' in text


@pytest.mark.django_db
def test_the_live_part_refreshes_with_htmx_while_the_tab_is_visible(signed_in: Client) -> None:
    page = signed_in.get("/").text
    assert 'hx-get="/"' in page
    # app.js triggers jobs:poll every data-poll-ms while the tab is visible.
    assert 'hx-trigger="jobs:poll" data-poll-ms="3000"' in page
    fragment = signed_in.get("/", headers={"HX-Request": "true"})
    assert "Runs per hour" in fragment.text
    assert "<nav" not in fragment.text


@pytest.mark.parametrize(
    ("value", "ceiling"),
    [(0, 1), (1, 1), (2, 2), (3, 4), (7, 8), (10, 10), (11, 20), (27, 30), (4321, 5000)],
)
def test_the_chart_scale_ends_on_a_round_number(value: int, ceiling: int) -> None:
    assert dashboard.nice_ceiling(value) == ceiling


@pytest.mark.django_db
def test_completed_hours_are_counted_once_and_the_current_hour_every_time(
    settings, django_assert_num_queries
) -> None:
    settings.JOBS_DASHBOARD_CACHE_SECONDS = 30
    cache.clear()
    job = make_job()
    make_run(job, ago=timedelta(hours=3))
    with time_machine.travel(HALF_PAST_NOON, tick=False):
        with django_assert_num_queries(2):  # completed hours, then the current hour
            first = dashboard.hourly_counts(HALF_PAST_NOON)
        make_run(job, ago=timedelta(seconds=1))
        with django_assert_num_queries(1):  # the current hour only
            second = dashboard.hourly_counts(HALF_PAST_NOON)
    assert sum(hour.total for hour in second) == sum(hour.total for hour in first) + 1
    cache.clear()


@pytest.mark.django_db
def test_a_new_hour_counts_only_the_hour_that_just_ended(
    settings, django_assert_num_queries
) -> None:
    settings.JOBS_DASHBOARD_CACHE_SECONDS = 30
    cache.clear()
    dashboard.hourly_counts(HALF_PAST_NOON)
    with django_assert_num_queries(2):
        hours = dashboard.hourly_counts(HALF_PAST_NOON + timedelta(hours=1))
    assert hours[-1].start == datetime(2026, 11, 30, 13, tzinfo=UTC)
    cache.clear()


@pytest.mark.django_db
def test_an_empty_chart_says_so_and_draws_no_scale(signed_in: Client) -> None:
    response = signed_in.get("/")
    assert response.context["chart"].empty
    assert "No runs in this period" in response.text
    assert "chart-label" not in response.text and "runs-chart" not in response.text


@pytest.mark.django_db
@time_machine.travel(HALF_PAST_NOON, tick=False)
def test_a_chart_of_one_run_has_a_scale_of_0_and_1_and_bars_in_percent(signed_in: Client) -> None:
    make_run(make_job(), ago=timedelta(minutes=1))
    response = signed_in.get("/")
    chart = response.context["chart"]
    assert [line.value for line in chart.grid] == [0, 1]
    # Percentages of the plot's width: the bars span it whatever the card's width.
    assert chart.bars[0].x > 0 and chart.bars[-1].x + chart.bars[-1].width < 100
    assert chart.bars[-1].x + chart.bars[-1].width > 99
    assert "viewBox" not in response.text.split('class="chart-frame"')[1].split("</figure>")[0]
