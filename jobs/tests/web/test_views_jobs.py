"""The job list, the job form, the job page and the actions on a job."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from jobs.models import IntervalUnit, Job, JobHistory, RunStatus, ScheduleType, Trigger
from jobs.tests.factories import NOW, make_job, make_run

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

XSS = "<script>alert(1)</script>"


def _form(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {
        "name": "nightly backup",
        "description": "",
        "command": "backup --all",
        "schedule_type": ScheduleType.INTERVAL,
        "scheduled_at": "",
        "interval": "10",
        "interval_unit": IntervalUnit.MINUTE,
        "misfire_policy": "coalesce",
        "overlap_policy": "allow",
        "max_retries": "0",
        "retry_backoff_seconds": "10",
        "queue": "default",
        "priority": "0",
        "is_active": "on",
    }
    data.update(overrides)
    return data


# --- the list -----------------------------------------------------------------------


def test_the_list_shows_name_schedule_state_and_times(signed_in: Client) -> None:
    job = make_job(name="reports", interval=10, interval_unit=IntervalUnit.MINUTE)
    make_run(job, status=RunStatus.RUNNING)
    response = signed_in.get("/jobs/")
    assert response.status_code == 200
    row = response.text.split(f'id="job-{job.pk}"')[1].split("</tr>")[0]
    assert "reports" in row
    assert "every 10 minutes" in row
    assert 'data-state="running"' in row
    assert "9\xa0minutes from now" in row or "10\xa0minutes from now" in row
    assert "never" in row
    assert "Run now" in row and f"/jobs/{job.pk}/edit/" in row
    assert 'role="switch"' in row and " checked" in row


def test_the_list_searches_by_name_and_filters_by_state_and_active(signed_in: Client) -> None:
    ok = make_job(name="backup ok")
    make_run(ok, status=RunStatus.SUCCESS)
    Job.objects.filter(pk=ok.pk).update(last_run_status=RunStatus.SUCCESS)
    failing = make_job(name="backup failing")
    Job.objects.filter(pk=failing.pk).update(last_run_status=RunStatus.FAILED)
    running = make_job(name="report running")
    make_run(running, status=RunStatus.RUNNING)
    idle = make_job(name="report idle", is_active=False)

    def names(query: str) -> set[str]:
        page = signed_in.get(f"/jobs/?{query}").context["page"]
        return {job.name for job in page.object_list}

    assert names("q=BACKUP") == {"backup ok", "backup failing"}
    assert names("state=succeeded") == {"backup ok"}
    assert names("state=failed") == {"backup failing"}
    assert names("state=running") == {"report running"}
    assert names("state=waiting") == {"report idle"}
    assert names("active=no") == {idle.name}
    assert names("active=yes&q=report") == {"report running"}


def test_a_bad_filter_is_reported_and_the_others_still_apply(signed_in: Client) -> None:
    make_job(name="alpha")
    make_job(name="beta")
    response = signed_in.get("/jobs/?q=alp&state=exploded&page=nonsense")
    assert response.status_code == 200
    assert {job.name for job in response.context["page"].object_list} == {"alpha"}
    assert "Select a valid choice" in response.text


def test_the_list_shows_50_jobs_a_page(signed_in: Client) -> None:
    for index in range(51):
        make_job(name=f"job {index:02d}")
    first = signed_in.get("/jobs/")
    assert len(first.context["page"].object_list) == 50
    assert "Page 1 of 2" in first.text
    second = signed_in.get("/jobs/?page=2")
    assert [job.name for job in second.context["page"].object_list] == ["job 50"]
    assert signed_in.get("/jobs/?page=999").context["page"].number == 2


def test_the_list_polls_and_htmx_gets_only_the_table(signed_in: Client) -> None:
    make_job(name="polled")
    page = signed_in.get("/jobs/?q=pol")
    assert 'hx-get="/jobs/?q=pol"' in page.text
    # Polled by app.js (no hx-trigger filter, which htmx would eval), not while a row is ticked.
    assert 'hx-trigger="jobs:poll" data-poll-ms="3000"' in page.text
    assert 'data-poll-unless="#job-table [data-pick]:checked"' in page.text
    fragment = signed_in.get("/jobs/?q=pol", headers={"HX-Request": "true"})
    assert "polled" in fragment.text
    assert "<html" not in fragment.text
    assert fragment["Vary"].count("HX-Request") == 1


# --- the form -----------------------------------------------------------------------


@time_machine.travel(NOW, tick=False)
def test_creating_an_interval_job_computes_its_next_run(signed_in: Client) -> None:
    response = signed_in.post("/jobs/new/", _form())
    job = Job.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/jobs/{job.pk}/"
    assert job.next_run_at == NOW + timedelta(minutes=10)
    assert job.schedule_text == "every 10 minutes"


@time_machine.travel(NOW, tick=False)
def test_a_once_time_is_read_in_the_users_time_zone(signed_in: Client) -> None:
    signed_in.cookies["tz"] = "Asia/Tokyo"
    signed_in.post(
        "/jobs/new/",
        _form(schedule_type=ScheduleType.ONCE, scheduled_at="2026-12-01T09:00", interval=""),
    )
    job = Job.objects.get()
    # 09:00 in Tokyo is midnight UTC.
    assert job.scheduled_at == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    assert job.next_run_at == job.scheduled_at
    form = signed_in.get(f"/jobs/{job.pk}/edit/")
    assert 'value="2026-12-01T09:00"' in form.text
    assert "Asia/Tokyo" in form.text


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"name": ""}, "name", "This field is required."),
        ({"name": "x" * 201}, "name", "at most 200 characters"),
        ({"command": ""}, "command", "This field is required."),
        ({"interval": "0"}, "interval", "The interval must be at least 1."),
        ({"interval": "-5"}, "interval", "at least 1"),
        ({"interval": "ten"}, "interval", "Enter a whole number."),
        ({"interval": ""}, "interval", "Say how often the job runs"),
        ({"interval": "3651", "interval_unit": "day"}, "interval", "at most 3650 days"),
        ({"interval_unit": "fortnight"}, "interval_unit", "Select a valid choice"),
        ({"schedule_type": "yearly"}, "schedule_type", "Select a valid choice"),
        ({"schedule_type": "once", "scheduled_at": ""}, "scheduled_at", "needs a date and time"),
        (
            {"schedule_type": "once", "scheduled_at": "2020-01-01T10:00"},
            "scheduled_at",
            "already passed",
        ),
        ({"scheduled_at": "31/02/2026"}, "scheduled_at", "Enter a valid date/time."),
        ({"scheduled_at": "9999-12-31T23:59"}, "scheduled_at", "between the years 2000 and 9000"),
        ({"max_retries": "11"}, "max_retries", "less than or equal to 10"),
        ({"retry_backoff_seconds": "-1"}, "retry_backoff_seconds", "greater than or equal to"),
        ({"misfire_policy": "whenever"}, "misfire_policy", "Select a valid choice"),
    ],
)
def test_a_bad_value_gets_a_message_at_its_field_and_nothing_is_saved(
    signed_in: Client, overrides: dict, field: str, message: str
) -> None:
    response = signed_in.post("/jobs/new/", _form(**overrides))
    assert response.status_code == 200
    assert any(message in error for error in response.context["form"].errors[field])
    assert 'class="invalid-feedback"' in response.text
    assert not Job.objects.exists()


def test_a_bad_edit_changes_nothing(signed_in: Client) -> None:
    job = make_job(name="steady", interval=5)
    response = signed_in.post(f"/jobs/{job.pk}/edit/", _form(name="", interval="0"))
    assert response.status_code == 200
    assert set(response.context["form"].errors) == {"name", "interval"}
    job.refresh_from_db()
    assert (job.name, job.interval) == ("steady", 5)


@time_machine.travel(NOW, tick=False)
def test_editing_the_schedule_moves_the_next_run(signed_in: Client) -> None:
    job = make_job(interval=10)
    response = signed_in.post(
        f"/jobs/{job.pk}/edit/", _form(name="renamed", interval="1", interval_unit="hour")
    )
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.name == "renamed"
    assert job.next_run_at == NOW + timedelta(hours=1)


def test_the_form_shows_the_schedule_switch_and_loads_its_script(signed_in: Client) -> None:
    response = signed_in.get("/jobs/new/")
    assert "data-schedule-switch" in response.text
    assert 'data-schedule="once interval"' in response.text
    assert 'data-schedule="interval"' in response.text
    assert 'type="datetime-local"' in response.text
    assert "/static/jobs/job_form.js" in response.text
    assert "csrfmiddlewaretoken" in response.text


# --- the job page -------------------------------------------------------------------


def test_the_job_page_shows_settings_counts_rate_and_duration(signed_in: Client) -> None:
    job = make_job(name="stats", description="Line one\nline two", max_retries=2)
    for _ in range(3):
        make_run(job, status=RunStatus.SUCCESS, took=timedelta(seconds=2))
    make_run(job, status=RunStatus.FAILED, took=timedelta(seconds=6))
    make_run(job, status=RunStatus.RUNNING)
    response = signed_in.get(f"/jobs/{job.pk}/")
    text = response.text
    assert "Line one<br>line two" in text
    assert "echo hello" in text
    assert "5 in all: 3 succeeded, 1 failed, 1 running, 0 pending" in text
    assert "75.0 %" in text
    assert "3.0 s" in text  # (2 + 2 + 2 + 6) / 4
    assert 'data-state="running"' in text
    assert "2 retries, first after 10 s" in text
    assert len(response.context["runs"].runs) == 5


def test_the_job_page_pages_its_runs_newer_and_older(signed_in: Client) -> None:
    job = make_job()
    runs = [make_run(job, ago=timedelta(minutes=index)) for index in range(45)]
    first = signed_in.get(f"/jobs/{job.pk}/").context["runs"]
    assert [run.pk for run in first.runs] == [run.pk for run in runs[:20]]
    assert first.newer is None
    second = signed_in.get(f"/jobs/{job.pk}/?before={first.older}").context["runs"]
    assert [run.pk for run in second.runs] == [run.pk for run in runs[20:40]]
    third = signed_in.get(f"/jobs/{job.pk}/?before={second.older}").context["runs"]
    assert [run.pk for run in third.runs] == [run.pk for run in runs[40:]]
    assert third.older is None
    back = signed_in.get(f"/jobs/{job.pk}/?after={third.newer}").context["runs"]
    assert [run.pk for run in back.runs] == [run.pk for run in runs[20:40]]


def test_a_run_page_shows_the_full_log(signed_in: Client) -> None:
    job = make_job()
    log = "".join(f"line {index}\n" for index in range(2000))
    run = make_run(job, status=RunStatus.FAILED, log=log)
    response = signed_in.get(f"/runs/{run.pk}/")
    assert "line 0\n" in response.text and "line 1999\n" in response.text
    assert 'data-status="failed"' in response.text


# --- actions ------------------------------------------------------------------------


def test_run_now_creates_a_pending_run_at_once_and_returns_to_the_page(
    signed_in: Client,
) -> None:
    job = make_job(is_active=False)
    response = signed_in.post(f"/jobs/{job.pk}/run/", {"next": "/jobs/?q=x"})
    assert response["Location"] == "/jobs/?q=x"
    run = JobHistory.objects.get()
    assert (run.job_id, run.status, run.trigger) == (job.pk, RunStatus.PENDING, Trigger.MANUAL)
    assert run.not_before <= timezone.now()


def test_actions_never_redirect_to_another_site(signed_in: Client) -> None:
    job = make_job()
    response = signed_in.post(f"/jobs/{job.pk}/run/", {"next": "https://evil.example/"})
    assert response["Location"] == f"/jobs/{job.pk}/"


def test_the_switch_disables_and_enables_a_job(signed_in: Client) -> None:
    job = make_job()
    signed_in.post(f"/jobs/{job.pk}/toggle/")  # the unchecked switch sends no "active"
    job.refresh_from_db()
    assert not job.is_active and job.next_run_at is None
    # A second click on a stale page asks for the same state: nothing flips back.
    signed_in.post(f"/jobs/{job.pk}/toggle/")
    job.refresh_from_db()
    assert not job.is_active
    signed_in.post(f"/jobs/{job.pk}/toggle/", {"active": "1"})
    job.refresh_from_db()
    assert job.is_active and job.next_run_at is not None


def test_enabling_a_once_job_whose_time_passed_says_why_and_changes_nothing(
    signed_in: Client,
) -> None:
    with time_machine.travel(NOW - timedelta(days=2), tick=False):
        job = make_job(
            schedule_type=ScheduleType.ONCE,
            scheduled_at=NOW - timedelta(days=1),
            interval=None,
            interval_unit="",
        )
    Job.objects.filter(pk=job.pk).update(is_active=False, next_run_at=None)
    job.refresh_from_db()
    response = signed_in.post(f"/jobs/{job.pk}/toggle/", {"active": "1"}, follow=True)
    assert response.status_code == 200
    # It names the job and says what to do.
    assert (
        f"“{job.name}” was not enabled: it was to run {job.schedule_text}, and that time "
        "has passed. To run it again, edit it and change its time to a future one, or use "
        "Run now."
    ) in response.text.replace("&ldquo;", "“").replace("&rdquo;", "”")
    job.refresh_from_db()
    assert not job.is_active


def test_deleting_a_job_deletes_its_runs(signed_in: Client) -> None:
    job = make_job(name="doomed")
    make_run(job)
    response = signed_in.post(f"/jobs/{job.pk}/delete/", follow=True)
    assert response.redirect_chain == [("/jobs/", 302)]
    assert "Job “doomed” deleted." in response.text
    assert not Job.objects.exists()
    assert not JobHistory.objects.exists()


# --- escaping -----------------------------------------------------------------------


def test_a_job_named_like_a_script_shows_as_text_everywhere(signed_in: Client) -> None:
    job = make_job(name=XSS, description=XSS, command=XSS)
    run = make_run(job, status=RunStatus.FAILED, log=XSS)
    make_run(job, status=RunStatus.RUNNING)
    pages = [
        "/",
        "/jobs/",
        f"/jobs/{job.pk}/",
        f"/jobs/{job.pk}/edit/",
        f"/jobs/{job.pk}/delete/",
        "/history/",
        f"/runs/{run.pk}/",
        f"/history/?job_name={XSS}",
        f"/jobs/?q={XSS}",
    ]
    for url in pages:
        text = signed_in.get(url).text
        assert XSS not in text, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text, url
    followed = signed_in.post(f"/jobs/{job.pk}/run/", follow=True).text
    assert XSS not in followed
    assert "“&lt;script&gt;alert(1)&lt;/script&gt;” will run in a moment." in followed
