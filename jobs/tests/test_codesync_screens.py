"""Jobs declared in code on the dashboard, in the admin and in the API: they say where
they are defined; a change to a field the code owns is refused with a message and
changes nothing; is_active (and the fields the code does not set) stay the operator's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from jobs.access.permissions import JOB_ADMINS
from jobs.models import Job, JobChange
from jobs.pytasks import registry
from jobs.tests.api_helpers import token_client
from jobs.tests.declaring import TASK, code_job, syncjobs
from jobs.tests.factories import make_user

pytestmark = pytest.mark.django_db

SOURCE = "jobs/tests/declaring.py"
REFUSAL = f"This field is set in code, in {SOURCE}: change it there"


@pytest.fixture
def job(clock, declare) -> Job:
    """A job declared in code: every 10 minutes, three retries, with arguments."""
    declare(every=timedelta(minutes=10), max_retries=3, arguments={"day": "monday"})
    syncjobs()
    return code_job()


@pytest.fixture
def operator() -> Any:
    return make_user("olive", JOB_ADMINS, staff=True)


@pytest.fixture
def dashboard(operator) -> Client:
    client = Client()
    client.force_login(operator)
    return client


def stored(job: Job) -> dict:
    return Job.objects.values().get(pk=job.pk)


# What a browser posts from the form of `job`: the fields the code does not own (the
# others are disabled, and a browser never sends a disabled field).
BROWSER_POST = {
    "misfire_policy": "coalesce",
    "overlap_policy": "allow",
    "retry_backoff_seconds": "10",
    "alert_after_failures": "1",
    "queue": "default",
    "priority": "0",
    "is_active": "on",
}


# --- the dashboard ------------------------------------------------------------------------


def test_the_job_page_says_where_the_job_is_defined(dashboard, job):
    page = dashboard.get(reverse("jobs:job_detail", args=[job.pk])).text

    assert f"Defined in code: {SOURCE}." in page
    assert "read-only here" in page


def test_the_list_marks_the_jobs_from_code(dashboard, job, make_job):
    mine = make_job(name="made on the dashboard")

    page = dashboard.get(reverse("jobs:job_list")).text

    row = page[page.index(f'id="job-{job.pk}"') :]
    assert f'data-code title="Defined in code: {SOURCE}"' in row[: row.index("</tr>")]
    row = page[page.index(f'id="job-{mine.pk}"') :]
    assert "data-code" not in row[: row.index("</tr>")]


def test_a_job_whose_declaration_is_gone_says_so_on_its_page(dashboard, job):
    registry.unregister(TASK)
    syncjobs()

    page = dashboard.get(reverse("jobs:job_detail", args=[job.pk])).text

    assert "No longer declared in code." in page
    assert f"It was defined in {SOURCE}" in page


def test_the_form_shows_the_fields_the_code_owns_disabled(dashboard, job):
    form = dashboard.get(reverse("jobs:job_edit", args=[job.pk])).context["form"]

    owned = ("name", "description", "executor", "task", "command", "schedule_type", "interval")
    for name in (*owned, "interval_unit", "max_retries", "arg-day", "arg-count"):
        assert form.fields[name].disabled, name
        assert "data-code-owned" in form.fields[name].widget.attrs, name
    for name in ("is_active", "overlap_policy", "timeout_seconds", "notify_emails"):
        assert not form.fields[name].disabled, name
    assert (
        f"Defined in code: {SOURCE}." in dashboard.get(reverse("jobs:job_edit", args=[job.pk])).text
    )


def test_the_form_saves_what_the_operator_owns_and_keeps_what_the_code_owns(dashboard, job):
    before = stored(job)
    data = {**BROWSER_POST, "is_active": "", "timeout_seconds": "60"}

    response = dashboard.post(reverse("jobs:job_edit", args=[job.pk]), data)

    assert response.status_code == 302, response.context["form"].errors
    after = stored(job)
    assert (after["is_active"], after["timeout_seconds"]) == (False, 60)
    for name in job.code_fields:
        assert after[name] == before[name], name
    # And the next sync leaves the operator's choices as they are.
    assert "1 unchanged" in syncjobs().output
    assert (stored(job)["is_active"], stored(job)["timeout_seconds"]) == (False, 60)


@pytest.mark.parametrize(
    ("posted", "field"),
    [
        ({"interval": "5", "interval_unit": "minute"}, "interval"),
        ({"schedule_type": "cron", "cron_expression": "0 * * * *"}, "schedule_type"),
        ({"name": "mine now"}, "name"),
        ({"max_retries": "0"}, "max_retries"),
        ({"executor": "python", "task": "jobs.example_tasks.say_hello"}, "task"),
        ({"arg-day": "friday"}, "arg-day"),
    ],
)
def test_a_post_changing_a_field_the_code_owns_is_refused_and_changes_nothing(
    dashboard, job, posted, field
):
    before = stored(job)
    changes = JobChange.objects.count()

    response = dashboard.post(reverse("jobs:job_edit", args=[job.pk]), {**BROWSER_POST, **posted})

    assert response.status_code == 200
    assert any(REFUSAL in message for message in response.context["form"].errors[field])
    assert stored(job) == before
    assert JobChange.objects.count() == changes


def test_the_switch_still_disables_and_enables_a_job_from_code(dashboard, job):
    dashboard.post(reverse("jobs:job_toggle", args=[job.pk]))
    assert not stored(job)["is_active"]
    dashboard.post(reverse("jobs:job_toggle", args=[job.pk]), {"active": "1"})
    assert stored(job)["is_active"]


def test_the_schedule_preview_of_a_job_from_code_reads_its_schedule(dashboard, job):
    # Its schedule fields are disabled in the form, so the preview is sent none of them.
    response = dashboard.get(reverse("jobs:schedule_preview"), {"job": str(job.pk)})

    assert response.status_code == 200
    assert response.context["errors"] == []
    assert len(response.context["preview"].occurrences) > 0


def test_restoring_an_old_version_leaves_the_fields_the_code_owns(dashboard, job, declare):
    first = JobChange.objects.filter(job_id=job.pk).earliest("id")
    dashboard.post(
        reverse("jobs:job_edit", args=[job.pk]), {**BROWSER_POST, "timeout_seconds": "60"}
    )
    declare(every=timedelta(minutes=20), max_retries=3, arguments={"day": "monday"})
    syncjobs()

    dashboard.post(reverse("jobs:job_restore", args=[job.pk, first.pk]))

    restored = stored(job)
    assert restored["timeout_seconds"] is None  # the operator's field, put back
    assert restored["interval"] == 20  # the code's, kept


# --- the admin ------------------------------------------------------------------------------


def admin_post(**fields: Any) -> dict[str, Any]:
    """What the admin's change page of `job` posts: its editable fields, and the empty
    management form of the runs inline."""
    return {
        **BROWSER_POST,
        "runs-TOTAL_FORMS": "0",
        "runs-INITIAL_FORMS": "0",
        "runs-MIN_NUM_FORMS": "0",
        "runs-MAX_NUM_FORMS": "0",
        **fields,
    }


def test_the_admin_shows_where_the_job_is_defined_and_the_code_fields_read_only(admin_client, job):
    response = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk]))

    page = response.text
    assert "Defined in code" in page and f"{SOURCE} (key {TASK})" in page
    form = response.context["adminform"].form
    for name in ("name", "command", "arguments", "interval", "max_retries", "schedule_type"):
        assert name not in form.fields, name
    assert "is_active" in form.fields and "timeout_seconds" in form.fields


def test_the_admin_saves_what_the_operator_owns(admin_client, job):
    response = admin_client.post(
        reverse("admin:jobs_job_change", args=[job.pk]),
        admin_post(is_active="", timeout_seconds="60"),
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    after = stored(job)
    assert (after["is_active"], after["timeout_seconds"], after["interval"]) == (False, 60, 10)


@pytest.mark.parametrize(
    "posted",
    [{"interval": "5"}, {"name": "mine now"}, {"command": "jobs.example_tasks.say_hello"}],
)
def test_the_admin_refuses_a_post_changing_a_field_the_code_owns(admin_client, job, posted):
    before = stored(job)

    response = admin_client.post(
        reverse("admin:jobs_job_change", args=[job.pk]), admin_post(**posted)
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.non_field_errors()
    assert any(REFUSAL in message and next(iter(posted)) in message for message in errors)
    assert stored(job) == before


# --- the API --------------------------------------------------------------------------------


def test_the_api_says_the_job_is_defined_in_code(operator, job):
    body = token_client(operator).get(f"/api/v1/jobs/{job.pk}/").json()

    assert (body["code_key"], body["code_source"], body["declared_in_code"]) == (
        TASK,
        SOURCE,
        True,
    )
    assert "interval" in body["code_fields"] and "is_active" not in body["code_fields"]


@pytest.mark.parametrize(
    "changes",
    [
        {"interval": 5},
        {"cron_expression": "0 * * * *", "schedule_type": "cron"},
        {"arguments": {"day": "friday"}},
        {"max_retries": 0},
        {"command": "jobs.example_tasks.say_hello", "arguments": {}},
    ],
)
def test_the_api_refuses_a_change_of_a_field_the_code_owns_at_that_field(operator, job, changes):
    before = stored(job)

    response = token_client(operator).patch(f"/api/v1/jobs/{job.pk}/", changes, format="json")

    assert response.status_code == 400
    body = response.json()
    for name in changes:
        assert body[name] == [f"{REFUSAL} (manage.py syncjobs brings the change here)."]
    assert stored(job) == before


def test_the_api_lets_the_operator_pause_and_change_what_the_code_does_not_own(operator, job):
    api = token_client(operator)
    url = f"/api/v1/jobs/{job.pk}/"

    paused = api.patch(url, {"is_active": False, "interval": 10}, format="json")  # same interval
    assert paused.status_code == 200, paused.json()
    assert api.post(f"{url}enable/").status_code == 200
    assert api.post(f"{url}disable/").status_code == 200
    assert api.patch(url, {"timeout_seconds": 60}, format="json").status_code == 200

    after = stored(job)
    assert (after["is_active"], after["timeout_seconds"], after["interval"]) == (False, 60, 10)
