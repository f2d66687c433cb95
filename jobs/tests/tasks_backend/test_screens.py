"""An enqueued task is a job like any other on every screen: its job page says where its
runs come from, its code fields are read-only, its runs show their call, and "Run again"
enqueues the same call again."""

from __future__ import annotations

import pytest
from django.urls import reverse

from jobs.models import Job, JobHistory, Trigger
from jobs.tests import enqueued_tasks as tasks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff(django_user_model, client):
    user = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return client


def test_pages_of_an_enqueued_task_open(staff):
    result = tasks.echo.using(priority=7, queue_name="reports").enqueue(1, word="two")
    job = Job.objects.get(enqueued_task=True)
    pages = [
        reverse("jobs:job_detail", args=[job.pk]),
        reverse("jobs:job_edit", args=[job.pk]),
        reverse("jobs:run_detail", args=[result.id]),
        reverse("jobs:history"),
        reverse("jobs:job_list"),
        "/",
        reverse("admin:jobs_job_change", args=[job.pk]),
        reverse("admin:jobs_jobhistory_change", args=[result.id]),
    ]
    for page in pages:
        response = staff.get(page)
        assert response.status_code == 200, page
    detail = staff.get(reverse("jobs:job_detail", args=[job.pk])).content.decode()
    assert "Enqueued Django task" in detail and "enqueue()" in detail
    run_page = staff.get(reverse("jobs:run_detail", args=[result.id])).content.decode()
    assert "&quot;word&quot;: &quot;two&quot;" in run_page or '"word": "two"' in run_page


def test_run_again_enqueues_the_same_call_on_the_same_queue(staff):
    result = tasks.echo.using(priority=7, queue_name="reports").enqueue(1, word="two")
    JobHistory.objects.filter(pk=result.id).update(status="success")

    response = staff.post(reverse("jobs:run_again", args=[result.id]), {"how": "again"})

    assert response.status_code == 302
    again = JobHistory.objects.exclude(pk=result.id).get()
    assert again.arguments == {"args": [1], "kwargs": {"word": "two"}}
    assert (again.queue, again.priority, again.trigger) == ("reports", 7, Trigger.ENQUEUE)


def test_the_code_fields_of_a_tasks_job_cannot_be_changed_by_the_api(staff):
    tasks.noop_task.enqueue()
    job = Job.objects.get(enqueued_task=True)
    response = staff.patch(
        f"/api/v1/jobs/{job.pk}/", {"command": "os.system"}, content_type="application/json"
    )
    assert response.status_code == 400
    job.refresh_from_db()
    assert job.command == tasks.noop_task.module_path


def test_no_form_offers_the_kind_and_no_other_job_may_take_it(staff):
    form = staff.get(reverse("jobs:job_create")).content.decode()
    assert 'value="task"' not in form
    response = staff.post(
        "/api/v1/jobs/",
        {
            "name": "sneaky",
            "executor": "task",
            "command": "os.system",
            "schedule_type": "cron",
            "cron_expression": "* * * * *",
            "timezone": "UTC",
        },
        content_type="application/json",
    )
    assert response.status_code == 400
    assert not Job.objects.filter(name="sneaky").exists()


def test_the_api_says_which_jobs_are_enqueued_tasks(staff, make_job):
    tasks.noop_task.enqueue()
    make_job(name="scheduled")
    jobs = staff.get("/api/v1/jobs/").json()["results"]
    assert {job["name"]: job["enqueued_task"] for job in jobs} == {
        tasks.noop_task.module_path: True,
        "scheduled": False,
    }
