"""The alert settings (alert_after_failures, expected_seconds, webhook_secret) in the API,
the dashboard's job form and the admin: validated by Job.clean() (a 400 or a message at
the field, nothing saved), and the secret write-only everywhere, the audit trail too."""

from __future__ import annotations

import base64
import os

import pytest
from django.test import Client

from jobs.access.masking import SECRET_CHANGED
from jobs.models import Job, JobChange
from jobs.tests.api_helpers import make_user, token_client
from jobs.tests.factories import make_job
from jobs.tests.forms import admin_form, dashboard_form

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs/"
VALID = {
    "name": "nightly report",
    "command": "python report.py",
    "schedule_type": "interval",
    "interval": 5,
    "interval_unit": "minute",
    "notify_on_failure": True,
    "webhook_url": "https://hooks.example.com/x",
}


def new_secret(size: int = 32) -> str:
    return "whsec_" + base64.b64encode(os.urandom(size)).decode()


SHORT = "whsec_" + base64.b64encode(b"x" * 10).decode()
BAD_VALUES = [
    ({"alert_after_failures": 0}, "alert_after_failures"),
    ({"alert_after_failures": 101}, "alert_after_failures"),
    ({"expected_seconds": 0}, "expected_seconds"),
    ({"expected_seconds": 7 * 86400 + 1}, "expected_seconds"),
    ({"webhook_secret": "not-a-secret"}, "webhook_secret"),
    ({"webhook_secret": SHORT}, "webhook_secret"),
    ({"webhook_secret": "whsec_" + "A" * 200}, "webhook_secret"),
]


@pytest.fixture
def staff():
    return token_client(make_user("ops", staff=True))


def no_secret_in(text: str, secret: str) -> bool:
    return secret not in text and secret.removeprefix("whsec_") not in text


# --- the API -----------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "field"), BAD_VALUES)
def test_the_api_refuses_bad_values_at_the_field_and_saves_nothing(staff, change, field):
    response = staff.post(JOBS, {**VALID, **change}, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field], errors
    assert len(errors[field]) == 1, errors
    if field == "webhook_secret":
        assert no_secret_in(response.content.decode(), change[field])
    assert not Job.objects.exists()


def test_the_api_takes_the_settings_and_never_returns_the_secret(staff):
    secret = new_secret()
    created = staff.post(
        JOBS,
        {**VALID, "alert_after_failures": 3, "expected_seconds": 600, "webhook_secret": secret},
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["alert_after_failures"], body["expected_seconds"]) == (3, 600)
    assert body["has_webhook_secret"] is True and body["consecutive_failures"] == 0
    assert "webhook_secret" not in body
    job = Job.objects.get()
    assert job.webhook_secret == secret
    url = f"{JOBS}{job.pk}/"
    read = staff.get(url)
    assert no_secret_in(read.content.decode(), secret)
    # A PUT of what was read keeps the secret; an empty string removes it.
    replaced = staff.put(url, {**read.json(), "name": "renamed"}, format="json")
    assert replaced.status_code == 200, replaced.json()
    job.refresh_from_db()
    assert job.webhook_secret == secret
    removed = staff.patch(url, {"webhook_secret": ""}, format="json")
    assert removed.json()["has_webhook_secret"] is False
    job.refresh_from_db()
    assert job.webhook_secret == ""


def test_the_failure_count_is_read_only_in_the_api(staff):
    job = make_job(notify_on_failure=True, webhook_url="https://hooks.example.com/x")
    Job.objects.filter(pk=job.pk).update(consecutive_failures=4)
    response = staff.patch(f"{JOBS}{job.pk}/", {"consecutive_failures": 0}, format="json")
    assert response.status_code == 200
    assert response.json()["consecutive_failures"] == 4


def test_the_schema_documents_the_settings(staff):
    schema = staff.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    job = schema["components"]["schemas"]["Job"]["properties"]
    assert {"alert_after_failures", "expected_seconds", "has_webhook_secret"} <= set(job)
    assert "webhook_secret" not in job  # write-only: only in the request's schema
    request = schema["components"]["schemas"]["JobRequest"]["properties"]
    assert request["webhook_secret"]["writeOnly"] is True


# --- the dashboard's job form --------------------------------------------------------------


ALERTS = {
    "notify_on_failure": "on",
    "webhook_url": "https://hooks.example.com/x",
}


@pytest.mark.parametrize(("change", "field"), BAD_VALUES)
def test_the_job_form_refuses_bad_values_at_the_field(signed_in: Client, change, field):
    response = signed_in.post("/jobs/new/", dashboard_form(**ALERTS, **change))
    assert response.status_code == 200
    assert list(response.context["form"].errors) == [field], response.context["form"].errors
    assert not Job.objects.exists()
    if field == "webhook_secret":
        assert no_secret_in(response.content.decode(), change[field])


def test_the_job_form_keeps_a_blank_secret_and_removes_it_when_asked(signed_in: Client):
    secret = new_secret()
    created = signed_in.post(
        "/jobs/new/",
        dashboard_form(
            **ALERTS, alert_after_failures="3", expected_seconds="90", webhook_secret=secret
        ),
    )
    assert created.status_code == 302
    job = Job.objects.get()
    assert (job.alert_after_failures, job.expected_seconds, job.webhook_secret) == (3, 90, secret)
    edit = signed_in.get(f"/jobs/{job.pk}/edit/")
    page = edit.content.decode()
    assert no_secret_in(page, secret)
    assert 'name="remove_webhook_secret"' in page
    assert "A secret is set" in page
    kept = signed_in.post(
        f"/jobs/{job.pk}/edit/", dashboard_form(**ALERTS, alert_after_failures="3")
    )
    assert kept.status_code == 302
    job.refresh_from_db()
    assert job.webhook_secret == secret
    signed_in.post(f"/jobs/{job.pk}/edit/", dashboard_form(**ALERTS, remove_webhook_secret="on"))
    job.refresh_from_db()
    assert job.webhook_secret == ""
    assert no_secret_in(signed_in.get(f"/jobs/{job.pk}/").content.decode(), secret)


def test_the_job_page_says_how_alerts_go_out(signed_in: Client, settings):
    settings.JOBS_WEBHOOK_SECRET = ""
    job = make_job(
        notify_on_failure=True,
        webhook_url="https://hooks.example.com/x",
        alert_after_failures=3,
        expected_seconds=120,
    )
    page = signed_in.get(f"/jobs/{job.pk}/").content.decode()
    assert "3 failed runs in a row alert" in page
    assert "a run still going after 120 s alerts" in page
    assert "webhooks unsigned" in page


# --- the admin --------------------------------------------------------------------------------


@pytest.fixture
def admin_client(client: Client) -> Client:
    client.force_login(make_user("root", staff=True))
    return client


def test_the_admin_validates_the_settings_and_never_shows_the_secret(admin_client: Client):
    secret = new_secret()
    job = make_job(
        notify_on_failure=True, webhook_url="https://hooks.example.com/x", webhook_secret=secret
    )
    url = f"/admin/jobs/job/{job.pk}/change/"
    page = admin_client.get(url).content.decode()
    assert 'name="webhook_secret"' in page and 'name="alert_after_failures"' in page
    assert no_secret_in(page, secret)
    form = admin_form(notify_on_failure="on", webhook_url="https://hooks.example.com/x")
    refused = admin_client.post(url, {**form, "alert_after_failures": "0"})
    assert refused.status_code == 200
    assert "Choose from 1" in refused.content.decode()
    saved = admin_client.post(url, {**form, "alert_after_failures": "5", "expected_seconds": ""})
    assert saved.status_code == 302, saved.content.decode()[:3000]
    job.refresh_from_db()
    assert (job.alert_after_failures, job.webhook_secret) == (5, secret)


def test_the_admins_read_only_page_says_only_that_a_secret_is_set(client: Client):
    secret = new_secret()
    job = make_job(
        notify_on_failure=True, webhook_url="https://hooks.example.com/x", webhook_secret=secret
    )
    viewer = make_user("viewer")
    viewer.is_staff = True
    viewer.save()
    client.force_login(viewer)
    page = client.get(f"/admin/jobs/job/{job.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert no_secret_in(text, secret)
    assert "webhook signing secret" in text.lower()


# --- the audit trail --------------------------------------------------------------------------


def test_the_audit_trail_records_that_the_secret_changed_never_its_value(staff, signed_in):
    secret = new_secret()
    created = staff.post(JOBS, {**VALID, "webhook_secret": secret}, format="json")
    job = Job.objects.get(pk=created.json()["id"])
    other = new_secret()
    staff.patch(
        f"{JOBS}{job.pk}/", {"webhook_secret": other, "alert_after_failures": 2}, format="json"
    )
    staff.patch(f"{JOBS}{job.pk}/", {"webhook_secret": ""}, format="json")
    records = list(JobChange.objects.filter(job_id=job.pk).order_by("created_at", "id"))
    assert [r.changes.get("webhook_secret") for r in records] == [
        ["", SECRET_CHANGED],
        ["…", SECRET_CHANGED],
        ["…", ""],
    ]
    assert records[1].changes["alert_after_failures"] == [1, 2]
    for record in records:
        assert "webhook_secret" not in (record.snapshot or {})
        stored = str(record.changes) + str(record.snapshot)
        assert no_secret_in(stored, secret) and no_secret_in(stored, other)
    trail = staff.get(f"{JOBS}{job.pk}/changes/").content.decode()
    assert no_secret_in(trail, secret) and no_secret_in(trail, other)
    page = signed_in.get(f"/jobs/{job.pk}/").content.decode()
    assert no_secret_in(page, secret) and no_secret_in(page, other)


def test_restoring_a_version_leaves_the_secret_as_it_is():
    secret = new_secret()
    job = make_job(notify_on_failure=True, webhook_url="https://hooks.example.com/x")
    first = JobChange.objects.get(job_id=job.pk)
    job.webhook_secret = secret
    job.name = "renamed"
    job.save()
    assert job.restore(first)
    job.refresh_from_db()
    assert (job.name, job.webhook_secret) == ("backup", secret)
