"""The Upcoming page says what the calendars, the blackout windows and the jitter do to
the runs it shows, as the preview does, in the viewer's language; and it reads them in
a fixed number of queries, whatever the number of jobs."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from jobs.calendars import planning
from jobs.models import Blackout, BlackoutAction, Calendar, CalendarPolicy, Job, ScheduleType
from jobs.tests.factories import make_job

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

NEW_YEARS_EVE = datetime(2026, 12, 31, 12, tzinfo=UTC)


def _row(html: str, job: Job) -> str:
    match = re.search(rf'<tr id="upcoming-{job.pk}".*?</tr>', html, re.S)
    assert match, f"no row for {job.name}"
    return match.group(0)


def _notes(html: str, job: Job) -> list[str]:
    return re.findall(r"<small[^>]*data-note>(.*?)</small>", _row(html, job))


def _japan() -> Calendar:
    calendar = Calendar(name="Japan", country="JP", timezone="Asia/Tokyo")
    calendar.full_clean()
    calendar.save()
    return calendar


def _nightly_window() -> Blackout:
    window = Blackout(
        name="nightly backup",
        action=BlackoutAction.DEFER,
        cron_expression="0 5 * * *",
        duration_minutes=60,
        timezone="UTC",
    )
    window.full_clean()
    window.save()
    return window


def _cron(name: str, expression: str, **fields) -> Job:
    return make_job(
        name=name, schedule_type=ScheduleType.CRON, cron_expression=expression, **fields
    )


@pytest.fixture
def jobs(clock) -> dict[str, Job]:  # type: ignore[no-untyped-def]
    clock.move_to(NEW_YEARS_EVE)
    _nightly_window()
    return {
        "holiday": _cron(
            "tokyo report",
            "0 9 * * *",
            timezone="Asia/Tokyo",
            calendar=_japan(),
            calendar_policy=CalendarPolicy.SKIP,
        ),
        "deferred": _cron("early", "30 5 * * *", timezone="UTC"),
        "jittered": _cron("spread", "0 18 * * *", timezone="UTC", jitter_seconds=600),
        "plain": _cron("plain", "0 20 * * *", timezone="UTC"),
    }


def test_the_rows_say_what_the_calendar_the_window_and_the_jitter_do(jobs, signed_in: Client):
    html = signed_in.get("/upcoming/").text
    assert _notes(html, jobs["holiday"]) == ["not on 2027-01-01: New Year&#x27;s Day (JP)"]
    assert _notes(html, jobs["deferred"]) == ["deferred to 06:00 by the window “nightly backup”"]
    assert _notes(html, jobs["plain"]) == []
    spread = jobs["jittered"]
    starts = spread.next_run_at + planning.jitter_delay(
        spread.pk.hex, spread.next_run_at, spread.jitter_seconds
    )
    assert starts != spread.next_run_at
    # The viewer's zone is the site's, UTC.
    assert "data-starts>starts <time datetime=" in _row(html, spread)
    assert f">{starts:%H:%M:%S}</time>" in _row(html, spread)
    assert "data-starts" not in _row(html, jobs["plain"])


def test_the_notes_are_in_the_viewers_language(jobs, signed_in: Client):
    html = signed_in.get("/upcoming/", headers={"Accept-Language": "ja,en;q=0.5"}).text
    (holiday,) = _notes(html, jobs["holiday"])
    assert "2027-01-01" in holiday and "元日" in holiday
    (deferred,) = _notes(html, jobs["deferred"])
    assert "06:00" in deferred and "nightly backup" in deferred and "deferred" not in deferred
    assert "data-starts>開始" in _row(html, jobs["jittered"])


def _queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/upcoming/")
    assert response.status_code == 200
    return len(queries)


def test_calendars_and_windows_cost_the_same_queries_for_4_jobs_and_for_200(
    jobs, signed_in: Client
):
    few = _queries(signed_in)
    calendar = Calendar.objects.get()
    for index in range(200):
        _cron(f"more {index:03d}", "0 9 * * *", calendar=calendar if index % 2 else None)
    assert _queries(signed_in) == few
