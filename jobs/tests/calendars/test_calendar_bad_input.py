"""Bad calendar, window, jitter and backfill input on every entry point: the admin
(calendar, blackout window, job), the API (calendars, blackouts, jobs, backfill) and the
dashboard's job form each refuse it at its field with its message, and save nothing;
a calendar in use is not deleted, and the refusal names its jobs. (syncjobs and
@register: test_calendar_code.py.)"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from jobs.models import Blackout, Calendar, Job, JobHistory
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import NOW, make_job
from jobs.tests.forms import admin_form, dashboard_form

pytestmark = pytest.mark.django_db

# (what is posted, the field refused, a piece of its message)
BAD_CALENDARS = [
    ({"country": "XX"}, "country", "XX"),
    ({"country": "JP", "subdivision": "ZZ"}, "subdivision", "ZZ"),
    ({"weekdays": []}, "weekdays", "at least one"),
    ({"weekdays": [7]}, "weekdays", "0"),
    ({"timezone": "Mars/Olympus"}, "timezone", "Mars/Olympus"),
]
NIGHTLY = {"cron_expression": "0 23 * * *", "duration_minutes": 180, "timezone": "UTC"}
BAD_WINDOWS = [
    ({"cron_expression": "0 * * * *", "duration_minutes": 120}, "duration_minutes", "shorter"),
    ({"cron_expression": "30 23 * * *", "duration_minutes": 60}, "cron_expression", "overlap"),
]
BAD_JOBS = [
    ({"jitter_seconds": 3601}, "jitter_seconds", "3600"),
    ({"jitter_seconds": -1}, "jitter_seconds", "0"),
    ({"calendar_policy": "whenever"}, "calendar_policy", "whenever"),
]


def _messages(errors: Any, field: str) -> str:
    return " ".join(str(message) for message in errors[field])


@pytest.fixture
def root() -> Client:
    return personas.signed_in(personas.superuser())


@pytest.fixture
def api() -> Any:
    return token_client(personas.superuser("api root"))


def _calendar_values(changes: dict) -> dict:
    return {"name": "Japan", "timezone": "Asia/Tokyo", "weekdays": [0, 1, 2, 3, 4], **changes}


def _admin_calendar(values: dict) -> dict:
    data = dict(values)
    data["weekdays"] = repr(values["weekdays"]).replace("'", '"')
    data["extra_days_off"] = "[]"
    data["extra_working_days"] = "[]"
    data.setdefault("country", "")
    data.setdefault("subdivision", "")
    return data


@pytest.mark.parametrize(("changes", "field", "says"), BAD_CALENDARS)
def test_the_admin_refuses_a_bad_calendar_at_its_field(root, changes, field, says):
    data = _admin_calendar(_calendar_values(changes))
    response = root.post(reverse("admin:jobs_calendar_add"), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert says in _messages(errors, field), errors
    assert not Calendar.objects.exists()


@pytest.mark.parametrize(("changes", "field", "says"), BAD_CALENDARS)
def test_the_api_refuses_a_bad_calendar_at_its_field(api, changes, field, says):
    answer = api.post("/api/v1/calendars/", _calendar_values(changes), format="json")
    assert answer.status_code == 400, answer.content
    assert says in " ".join(answer.json()[field]), answer.json()
    assert not Calendar.objects.exists()


def _existing_nightly() -> Blackout:
    window = Blackout(name="nightly backup", **NIGHTLY)
    window.full_clean()
    window.save()
    return window


def _window_values(changes: dict) -> dict:
    return {"name": "other", "action": "skip", "scope": "all", **NIGHTLY, **changes}


@pytest.mark.parametrize(("changes", "field", "says"), BAD_WINDOWS)
def test_the_admin_refuses_a_bad_window_at_its_field(root, changes, field, says):
    _existing_nightly()
    data = {**_window_values(changes), "is_active": "on", "queue": ""}
    data.update(starts_at_0="", starts_at_1="", ends_at_0="", ends_at_1="")
    response = root.post(reverse("admin:jobs_blackout_add"), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert says in _messages(errors, field), errors
    assert Blackout.objects.count() == 1


@pytest.mark.parametrize(("changes", "field", "says"), BAD_WINDOWS)
def test_the_api_refuses_a_bad_window_at_its_field(api, changes, field, says):
    _existing_nightly()
    answer = api.post("/api/v1/blackouts/", _window_values(changes), format="json")
    assert answer.status_code == 400, answer.content
    assert says in " ".join(answer.json()[field]), answer.json()
    assert Blackout.objects.count() == 1


@pytest.mark.parametrize(("changes", "field", "says"), BAD_JOBS)
def test_the_admin_refuses_a_bad_jitter_or_policy_at_its_field(root, changes, field, says):
    response = root.post(reverse("admin:jobs_job_add"), admin_form(**changes))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert says in _messages(errors, field), errors
    assert not Job.objects.exists()


@pytest.mark.parametrize(("changes", "field", "says"), BAD_JOBS)
def test_the_job_form_refuses_a_bad_jitter_or_policy_at_its_field(root, changes, field, says):
    response = root.post(reverse("jobs:job_create"), dashboard_form(**changes))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert says in _messages(errors, field), errors
    assert not Job.objects.exists()


@pytest.mark.parametrize(("changes", "field", "says"), BAD_JOBS)
def test_the_api_refuses_a_bad_jitter_or_policy_at_its_field(api, changes, field, says):
    body = {"name": "report", "command": "report.sh", "schedule_type": "interval"}
    body.update(interval=10, interval_unit="minute", **changes)
    answer = api.post("/api/v1/jobs/", body, format="json")
    assert answer.status_code == 400, answer.content
    assert says in " ".join(answer.json()[field]), answer.json()
    assert not Job.objects.exists()


@pytest.fixture
def hourly(clock) -> Job:  # type: ignore[no-untyped-def]
    clock.move_to(NOW - timedelta(days=2))
    job = make_job(name="hourly", schedule_type="cron", cron_expression="0 * * * *")
    clock.move_to(NOW)
    return job


@pytest.mark.parametrize(
    ("start", "end", "field", "says"),
    [
        (NOW - timedelta(hours=1), NOW + timedelta(hours=1), "end", "past"),
        (NOW + timedelta(hours=1), NOW + timedelta(hours=2), "end", "past"),
        (NOW - timedelta(hours=10), NOW, "__all__", "more than 3"),
        (NOW - timedelta(hours=1), NOW - timedelta(hours=2), "end", "after"),
    ],
    ids=["ends in the future", "all in the future", "over the limit", "end before start"],
)
@override_settings(JOBS_BACKFILL_MAX_RUNS=3)
def test_the_api_refuses_a_bad_backfill_range_and_creates_nothing(
    hourly, api, start, end, field, says
):
    body = {"start": start.isoformat(), "end": end.isoformat()}
    answer = api.post(f"/api/v1/jobs/{hourly.pk}/backfill/", body, format="json")
    assert answer.status_code == 400, answer.content
    text = " ".join(str(m) for messages in answer.json().values() for m in messages)
    assert says in text, answer.json()
    assert not JobHistory.objects.exists()


@pytest.fixture
def calendar_in_use() -> Calendar:
    calendar = Calendar(name="Japan", country="JP", timezone="Asia/Tokyo")
    calendar.full_clean()
    calendar.save()
    make_job(name="tokyo report", calendar=calendar)
    make_job(name="osaka report", calendar=calendar)
    return calendar


def test_the_api_does_not_delete_a_calendar_in_use_and_names_its_jobs(api, calendar_in_use):
    answer = api.delete(f"/api/v1/calendars/{calendar_in_use.pk}/")
    assert answer.status_code == 409
    assert "osaka report" in answer.json()["detail"]
    assert "tokyo report" in answer.json()["detail"]
    assert Calendar.objects.filter(pk=calendar_in_use.pk).exists()


def test_the_admin_does_not_delete_a_calendar_in_use_and_names_its_jobs(root, calendar_in_use):
    # Django's own refusal page: the protected jobs are listed, nothing is deleted.
    url = reverse("admin:jobs_calendar_delete", args=[calendar_in_use.pk])
    listing = reverse("admin:jobs_calendar_changelist")
    bulk = {"action": "delete_selected", "_selected_action": [calendar_in_use.pk], "post": "yes"}
    for response in (root.post(url, {"post": "yes"}), root.post(listing, bulk)):
        text = response.content.decode()
        assert "protected" in text, text[-3000:]
        assert "tokyo report" in text and "osaka report" in text
        assert Calendar.objects.filter(pk=calendar_in_use.pk).exists()
