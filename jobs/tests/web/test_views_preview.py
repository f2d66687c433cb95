"""The job form's schedule preview (/jobs/schedule-preview/, asked for by htmx as one
types): the next runs in the job's zone and the viewer's, or the schedule's messages."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from jobs.access.permissions import JOB_VIEWERS
from jobs.tests.factories import NOW, make_job, make_user

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

URL = "/jobs/schedule-preview/"


def _times(html: str) -> list[str]:
    return re.findall(r'<tr data-at="([^"]+)">', html)


def test_a_cron_schedule_in_berlin_in_the_jobs_zone_and_the_viewers(
    signed_in: Client, clock
) -> None:  # type: ignore[no-untyped-def]
    clock.move_to(datetime(2026, 3, 28, 12, 0, tzinfo=UTC))
    signed_in.cookies["tz"] = "Asia/Tokyo"
    response = signed_in.get(
        URL,
        {"schedule_type": "cron", "cron_expression": "30 2 * * *", "timezone": "Europe/Berlin"},
    )
    html = response.text
    assert response.status_code == 200
    assert len(_times(html)) == 10
    assert _times(html)[0] == "2026-03-29T01:00:00Z"
    assert "In Europe/Berlin" in html and "Your time (Asia/Tokyo)" in html
    assert "Sun 29 Mar 2026, 03:00:00 CEST" in html  # the job's zone
    assert "Sun 29 Mar 2026, 10:00:00 JST" in html  # the viewer's
    assert "02:30 does not exist on 29 March 2026: runs at 03:00 CEST" in html


def test_one_column_when_the_viewer_is_in_the_jobs_zone(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    html = signed_in.get(
        URL, {"schedule_type": "interval", "interval": "5", "interval_unit": "minute"}
    ).text
    assert "In UTC" in html and "Your time" not in html
    assert _times(html)[:2] == ["2026-03-01T12:05:00Z", "2026-03-01T12:10:00Z"]


def test_a_one_off_time_is_read_in_the_viewers_zone_like_the_form(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    signed_in.cookies["tz"] = "Asia/Tokyo"
    html = signed_in.get(
        URL, {"schedule_type": "once", "scheduled_at": "2026-03-02T09:00", "is_active": "on"}
    ).text
    assert _times(html) == ["2026-03-02T00:00:00Z"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"schedule_type": "cron", "cron_expression": "61 * * * *"},
            "<strong>Cron expression</strong>: The minute field “61” is not valid.",
        ),
        (
            {"schedule_type": "interval", "interval": "often", "interval_unit": "minute"},
            "<strong>Every</strong>: Enter a whole number.",
        ),
        (
            {"schedule_type": "interval", "interval": "0", "interval_unit": "minute"},
            "<strong>Every</strong>: The interval must be at least 1.",
        ),
        (
            {"schedule_type": "once", "scheduled_at": "2021-01-01T09:00", "is_active": "on"},
            "<strong>Run at</strong>: This time has already passed.",
        ),
        (
            {"schedule_type": "once", "scheduled_at": "tomorrow"},
            "<strong>Run at</strong>: Enter a valid date/time.",
        ),
    ],
)
def test_bad_values_show_their_messages_instead(signed_in: Client, params, message) -> None:  # type: ignore[no-untyped-def]
    html = signed_in.get(URL, params).text
    assert 'id="preview-errors"' in html
    assert message in html.replace("&#x27;", "'")
    assert not _times(html)


def test_a_disabled_one_off_job_may_keep_a_past_time(signed_in: Client) -> None:
    html = signed_in.get(URL, {"schedule_type": "once", "scheduled_at": "2021-01-01T09:00"}).text
    assert 'id="preview-none"' in html


def test_the_edit_form_previews_the_jobs_own_grid(signed_in: Client, clock) -> None:  # type: ignore[no-untyped-def]
    job = make_job(interval=7, interval_unit="minute")
    clock.shift(timedelta(minutes=3))
    same = {"schedule_type": "interval", "interval": "7", "interval_unit": "minute"}
    html = signed_in.get(URL, {**same, "job": str(job.pk)}).text
    assert _times(html)[0] == (NOW + timedelta(minutes=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert signed_in.get(URL, {**same, "job": str(uuid.uuid4())}).status_code == 404
    assert signed_in.get(URL, {**same, "job": "nope"}).status_code == 404


def test_the_forms_ask_for_the_preview(signed_in: Client) -> None:
    new = signed_in.get("/jobs/new/").text
    assert 'hx-get="/jobs/schedule-preview/"' in new
    assert 'hx-trigger="load, schedule-changed delay:400ms"' in new
    assert new.count('data-preview-field=""') == 7  # the schedule fields and "active"
    job = make_job()
    assert f'hx-vals=\'{{"job": "{job.pk}"}}\'' in signed_in.get(f"/jobs/{job.pk}/edit/").text


def test_the_preview_needs_view_job_only() -> None:
    params = {"schedule_type": "interval", "interval": "5", "interval_unit": "minute"}
    nobody, viewer = Client(), Client()
    nobody.force_login(make_user("nobody"))
    viewer.force_login(make_user("viewer", JOB_VIEWERS))
    assert nobody.get(URL, params).status_code == 403
    assert viewer.get(URL, params).status_code == 200
    assert viewer.post(URL, params).status_code == 405


def test_an_every_30_seconds_preview_writes_each_run_to_its_second(  # type: ignore[no-untyped-def]
    signed_in: Client, clock
) -> None:
    clock.move_to(datetime(2026, 12, 1, 23, 15, 49, tzinfo=UTC))
    html = signed_in.get(
        URL, {"schedule_type": "interval", "interval": "30", "interval_unit": "second"}
    ).text
    shown = re.findall(r"<time [^>]*>([^<]+)</time>", html)
    assert shown[:3] == [
        "Tue 1 Dec 2026, 23:16:19 UTC",
        "Tue 1 Dec 2026, 23:16:49 UTC",
        "Tue 1 Dec 2026, 23:17:19 UTC",
    ]
    assert len(set(shown)) == len(shown)


def test_the_first_of_two_ambiguous_times_keeps_its_zone_in_both_columns(  # type: ignore[no-untyped-def]
    client: Client, user, clock
) -> None:
    clock.move_to(datetime(2027, 10, 30, 12, 0, tzinfo=UTC))
    client.force_login(user)  # a session of today's
    signed_in = client
    signed_in.cookies["tz"] = "Europe/Paris"
    html = signed_in.get(
        URL,
        {"schedule_type": "cron", "cron_expression": "30 2 * * *", "timezone": "Europe/Berlin"},
    ).text
    first = html[html.index('<tr data-at="2027-10-31T00:30:00Z">') :].split("</tr>")[0]
    assert first.count("Sun 31 Oct 2027, 02:30:00 CEST") == 2, first


def test_a_new_job_s_empty_form_asks_for_a_schedule_without_a_warning(signed_in: Client) -> None:
    for values in (
        {},
        {"schedule_type": "interval", "interval": "", "interval_unit": ""},
        {"schedule_type": "cron", "cron_expression": " ", "timezone": ""},
        {"schedule_type": "once", "scheduled_at": ""},
    ):
        html = signed_in.get(URL, values).text
        assert "Fill in the schedule to see its next runs." in html, values
        assert "cannot be saved" not in html, values


def test_a_schedule_typed_wrong_still_gets_its_messages(signed_in: Client) -> None:
    html = signed_in.get(URL, {"schedule_type": "interval", "interval": "0"}).text
    assert "This schedule cannot be saved as it is:" in html
    assert "Fill in the schedule" not in html
