"""A job's queue and priority: validated at the field on every way in (the model, the
dashboard, the admin, the API), filterable in each list, and held by the database."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from jobs.models import Job
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import make_job
from jobs.tests.forms import admin_form, dashboard_form

pytestmark = pytest.mark.django_db

BAD_QUEUES = ["", "two words", "reports!", "ü-queue", "a/b", "x" * 51]
BAD_PRIORITIES = [-101, 101, 1000]


@pytest.fixture
def superuser():  # type: ignore[no-untyped-def]
    return personas.superuser()


signed_in = personas.signed_in


def test_a_new_job_is_in_the_default_queue_at_priority_zero():
    job = make_job()
    assert (job.queue, job.priority) == ("default", 0)


@pytest.mark.parametrize("queue", BAD_QUEUES)
def test_a_bad_queue_name_is_refused_by_the_model(queue):
    job = make_job()
    job.queue = queue
    with pytest.raises(ValidationError) as refused:
        job.full_clean()
    assert "queue" in refused.value.message_dict


@pytest.mark.parametrize("priority", BAD_PRIORITIES)
def test_a_priority_out_of_range_is_refused_by_the_model(priority):
    job = make_job()
    job.priority = priority
    with pytest.raises(ValidationError) as refused:
        job.full_clean()
    assert refused.value.message_dict["priority"] == [
        "The priority must be a whole number from -100 to 100."
    ]


def test_the_database_refuses_what_the_model_refuses():
    job = make_job()
    for change in ({"priority": 101}, {"queue": ""}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Job.objects.filter(pk=job.pk).update(**change)


def test_the_dashboard_form_saves_queue_and_priority_and_refuses_bad_ones(superuser):
    client = signed_in(superuser)
    response = client.post("/jobs/new/", dashboard_form(queue="two words", priority="500"))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "queue" in errors and "priority" in errors
    assert not Job.objects.exists()
    response = client.post("/jobs/new/", dashboard_form(queue="reports", priority="10"))
    assert response.status_code == 302
    job = Job.objects.get()
    assert (job.queue, job.priority) == ("reports", 10)


def test_the_admin_refuses_a_bad_queue_and_changes_nothing(superuser):
    job = make_job(name="report")
    client = signed_in(superuser)
    response = client.post(
        f"/admin/jobs/job/{job.pk}/change/", admin_form(queue="a/b", priority="-101")
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "queue" in errors and "priority" in errors
    job.refresh_from_db()
    assert (job.queue, job.priority) == ("default", 0)


def test_the_api_refuses_bad_values_and_filters_by_queue(superuser):
    client = token_client(superuser)
    reports = make_job(name="reports", queue="reports", priority=5)
    make_job(name="other")
    response = client.patch(
        f"/api/v1/jobs/{reports.pk}/", {"queue": "no spaces", "priority": 200}, format="json"
    )
    assert response.status_code == 400
    assert set(response.json()) >= {"queue", "priority"}
    reports.refresh_from_db()
    assert (reports.queue, reports.priority) == ("reports", 5)
    listed = client.get("/api/v1/jobs/", {"queue": "reports"}).json()["results"]
    assert [(j["name"], j["queue"], j["priority"]) for j in listed] == [("reports", "reports", 5)]
    assert client.get("/api/v1/jobs/", {"queue": "bad name"}).status_code == 400


def test_the_job_list_filters_by_queue_and_shows_it(superuser):
    make_job(name="reports", queue="reports")
    make_job(name="other")
    page = signed_in(superuser).get("/jobs/", {"queue": "reports"})
    names = [job.name for job in page.context["page"]]
    assert names == ["reports"]
    assert 'data-cell="queue"' in page.text and '<option value="reports" selected>' in page.text


def test_the_job_page_shows_the_queue_and_priority(superuser):
    job = make_job(queue="reports", priority=-5)
    page = signed_in(superuser).get(f"/jobs/{job.pk}/").text
    assert '<a href="/jobs/?queue=reports">reports</a>, priority -5' in page
