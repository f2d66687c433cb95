"""The admin console: every page opens, actions do what they say, bad input is refused,
and the lists cost the same number of queries however big the tables are."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.db import connection
from django.db.models import BooleanField
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from jobs import admin as jobs_admin
from jobs.access.permissions import JOB_VIEWERS
from jobs.models import (
    NAME_MAX_LENGTH,
    CappedCount,
    Job,
    JobHistory,
    JobState,
    RunStatus,
    ScheduleType,
    Trigger,
)
from jobs.models import run as run_models
from jobs.tests.factories import NOW, make_user
from jobs.tests.forms import admin_form

JOBS_URL = "admin:jobs_job_changelist"
RUNS_URL = "admin:jobs_jobhistory_changelist"


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def job(make_job, make_run) -> Job:
    """A job with a run of every status, so every page has something to show."""
    job = make_job(
        name="nightly <b>backup</b>", description="Copies the database.", interval_unit="minute"
    )
    for minutes, status in enumerate(RunStatus.values, start=1):
        at = NOW - timedelta(minutes=minutes)
        # Every run has started and finished on one worker, whatever its status.
        finished = at + timedelta(seconds=2)
        make_run(job, at=at, status=status, started_at=at, finished_at=finished, worker="host:1-0")
    return job


def bulk_jobs(count: int, start: int = 0) -> list[Job]:
    return Job.objects.bulk_create(
        Job(
            name=f"job {n:05d}",
            command=f"run {n}",
            interval=n % 50 + 1,
            interval_unit="minute",
            next_run_at=NOW + timedelta(minutes=n % 50 + 1),
            last_run_status=[RunStatus.SUCCESS, RunStatus.FAILED, ""][n % 3],
        )
        for n in range(start, start + count)
    )


def bulk_runs(jobs: list[Job], count: int, start: int = 0) -> None:
    statuses = [RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.RUNNING, RunStatus.PENDING]
    runs = []
    for n in range(start, start + count):
        at = NOW - timedelta(seconds=n)
        runs.append(
            JobHistory(
                job=jobs[n % len(jobs)],
                scheduled_for=at,
                not_before=at,
                created_at=at,
                status=statuses[n % len(statuses)],
                started_at=at,
                finished_at=at + timedelta(seconds=1),
                worker="host:1-0",
                log="exit status 0",
            )
        )
    JobHistory.objects.bulk_create(runs, batch_size=2000)


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def run_action(client: Client, url_name: str, action: str, objects: list[Any]):
    return client.post(
        reverse(url_name),
        {"action": action, "_selected_action": [str(o.pk) for o in objects]},
        follow=True,
    )


def job_form_data(**fields: Any) -> dict[str, Any]:
    """What the admin's job form posts for a valid every-10-minutes job."""
    return admin_form(**fields)


# --- every page opens --------------------------------------------------------------------


def admin_pages(job: Job) -> list[str]:
    run = job.runs.order_by("-created_at").first()
    job_url = reverse(JOBS_URL)
    runs_url = reverse(RUNS_URL)
    return [
        reverse("admin:index"),
        job_url,
        *(f"{job_url}?state={state}" for state in JobState.values),
        f"{job_url}?is_active__exact=1&schedule_type__exact=interval",
        f"{job_url}?q=backup",
        f"{job_url}?o=4",  # sorted by state
        reverse("admin:jobs_job_add"),
        reverse("admin:jobs_job_change", args=[job.pk]),
        reverse("admin:jobs_job_delete", args=[job.pk]),
        reverse("admin:jobs_job_history", args=[job.pk]),
        runs_url,
        f"{runs_url}?status__exact=failed",
        f"{runs_url}?job={job.pk}",
        f"{runs_url}?job=not-a-uuid",
        f"{runs_url}?q=nightly",
        f"{runs_url}?created_at__year=2026",
        f"{runs_url}?created_at__year=2026&created_at__month=3",
        f"{runs_url}?created_at__year=2026&created_at__month=3&created_at__day=1",
        f"{runs_url}?created_at__gte=2026-03-01+00%3A00%3A00%2B00%3A00",
        reverse("admin:jobs_jobhistory_change", args=[run.pk]),
        reverse("admin:jobs_jobhistory_delete", args=[run.pk]),
        reverse("admin:jobs_jobhistory_history", args=[run.pk]),
    ]


def test_every_admin_page_answers_200_for_a_superuser(admin_client: Client, job: Job) -> None:
    for url in admin_pages(job):
        response = admin_client.get(url)
        assert response.status_code == 200, url


def test_a_user_who_is_not_staff_is_sent_to_the_login(
    client: Client, django_user_model, job: Job
) -> None:
    user = django_user_model.objects.create_user("visitor", password="pw")
    client.force_login(user)
    for url in admin_pages(job):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("admin:login")), url


def test_the_site_is_titled_and_the_index_shows_job_and_run_counts(
    admin_client: Client, job: Job, make_job
) -> None:
    make_job(name="paused", is_active=False)
    response = admin_client.get(reverse("admin:index"))
    page = response.content.decode()
    assert "<title>Console | Job scheduler</title>" in page
    assert '<a href="/admin/">Job scheduler</a>' in page
    counts = response.context["counts"]
    assert counts["jobs"] == 2
    assert counts["active_jobs"] == 1
    assert counts["runs"] == CappedCount(len(RunStatus.values), capped=False)
    assert counts["pending"].value == counts["running"].value == 1
    assert counts["recent_failures"].value == 1
    assert 'id="scheduler-counts"' in page


def test_the_index_stops_counting_runs_at_the_cap(
    admin_client: Client, job: Job, monkeypatch
) -> None:
    monkeypatch.setattr(run_models, "RUN_COUNT_CAP", 2)
    response = admin_client.get(reverse("admin:index"))
    assert response.context["counts"]["runs"] == CappedCount(2, capped=True)
    assert "over 2" in response.content.decode()


# --- the job pages ------------------------------------------------------------------------


def test_the_job_list_shows_schedule_in_words_and_state(
    admin_client: Client, job: Job, make_run
) -> None:
    response = admin_client.get(reverse(JOBS_URL))
    page = response.content.decode()
    assert "every 10 minutes" in page
    # The latest run is running: the badge says so, from the with_running() annotation.
    assert 'class="jobs-badge jobs-state-running"' in page
    # Names are escaped.
    assert "nightly &lt;b&gt;backup&lt;/b&gt;" in page


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (JobState.RUNNING, {"running"}),
        (JobState.SUCCEEDED, {"succeeded"}),
        (JobState.FAILED, {"failed"}),
        (JobState.WAITING, {"never ran", "pending only"}),
    ],
)
def test_the_state_filter_matches_job_state(
    admin_client: Client, make_job, make_run, state: str, expected: set[str]
) -> None:
    running = make_job(name="running", last_run_status=RunStatus.FAILED)
    make_run(running, status=RunStatus.RUNNING)
    make_job(name="succeeded", last_run_status=RunStatus.SUCCESS)
    make_job(name="failed", last_run_status=RunStatus.FAILED)
    make_job(name="never ran")
    make_job(name="pending only", last_run_status=RunStatus.PENDING)
    response = admin_client.get(reverse(JOBS_URL), {"state": state})
    listed = {j.name for j in response.context["cl"].result_list}
    assert listed == expected
    assert {j.state for j in response.context["cl"].result_list} == {state}


def test_search_looks_at_name_description_and_command(admin_client: Client, make_job) -> None:
    make_job(name="a", description="rotates the logs")
    make_job(name="b", command="vacuum.sh")
    make_job(name="zeta")
    for term, name in [("rotates", "a"), ("vacuum", "b"), ("zeta", "zeta")]:
        response = admin_client.get(reverse(JOBS_URL), {"q": term})
        assert [j.name for j in response.context["cl"].result_list] == [name]


def test_the_job_page_links_to_the_dashboard_and_to_all_its_runs(
    admin_client: Client, job: Job
) -> None:
    response = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk]))
    page = response.content.decode()
    assert f'href="/jobs/{job.pk}/"' in page
    assert f'href="{reverse(RUNS_URL)}?job={job.pk}"' in page
    # "View on site" goes to the dashboard page too.
    assert f"/jobs/{job.pk}/" in page
    titles = [fieldset.name for fieldset in response.context["adminform"]]
    assert [str(t) for t in titles] == [
        "General",
        "What runs",
        "Schedule",
        "Runs",
        "Chains",
        "Simulation",
        "Alerts",
        "Status",
    ]


def test_the_job_page_shows_its_20_latest_runs_read_only(
    admin_client: Client, make_job, make_run
) -> None:
    job = make_job()
    other = make_job(name="other")
    runs = [make_run(job, at=NOW - timedelta(minutes=n)) for n in range(25)]
    make_run(other, at=NOW)
    response = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk]))
    (inline,) = response.context["inline_admin_formsets"]
    shown = [form.instance for form in inline.formset.forms]
    assert shown == runs[:20]  # newest first, only this job's
    assert not inline.has_add_permission
    assert not inline.has_change_permission
    assert not inline.has_delete_permission


def test_a_run_is_titled_by_its_job_s_name_on_its_page_and_on_the_job_s_page(
    admin_client: Client, make_job, make_run
) -> None:
    job = make_job(name="Nightly backup")
    run = make_run(job, at=NOW - timedelta(minutes=5))
    title = "Nightly backup @ 2026-03-01 11:55:00 #1"
    assert str(run) == title
    page = admin_client.get(reverse("admin:jobs_jobhistory_change", args=[run.pk])).text
    assert f"<title>{title} | " in page
    # <div class="breadcrumbs"> up to Django 5.2, <ol class="breadcrumbs"> from 6.0.
    breadcrumbs = re.search(r'<(div|ol) class="breadcrumbs">(.*?)</\1>', page, re.S).group(2)
    assert title in breadcrumbs
    assert str(job.pk) not in breadcrumbs
    job_page = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk])).text
    assert title in job_page  # over the run's row of the latest runs
    assert f"{job.pk} @" not in job_page


def test_the_job_page_costs_the_same_queries_for_1_and_20_latest_runs(
    admin_client: Client, make_job, make_run
) -> None:
    job = make_job()
    make_run(job, at=NOW - timedelta(minutes=30))
    url = reverse("admin:jobs_job_change", args=[job.pk])
    one = count_queries(admin_client, url)
    for minutes in range(1, 20):
        make_run(job, at=NOW - timedelta(minutes=minutes))
    assert count_queries(admin_client, url) == one


def test_the_alert_checkboxes_are_on_lines_of_their_own(admin_client: Client, job: Job) -> None:
    """Side by side, one checkbox's help text ran into the next one's ("...it should
    have ended.Send an alert when...")."""
    page = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk])).text
    assert 'class="form-row field-notify_on_failure"' in page
    assert 'class="form-row field-notify_on_recovery"' in page
    booleans = {f.name for f in Job._meta.fields if isinstance(f, BooleanField)}
    for _title, options in jobs_admin.JobAdmin.fieldsets:
        for line in options["fields"]:
            if isinstance(line, tuple):
                assert not booleans & set(line), f"{line}: a checkbox shares its line"


def test_a_viewer_sees_the_masked_fields_under_their_own_labels(client: Client, make_job) -> None:
    viewer = make_user("viewer", JOB_VIEWERS, staff=True)
    client.force_login(viewer)
    job = make_job(notify_emails="a@example.com, b@example.com", arguments={"a": 1})
    response = client.get(reverse("admin:jobs_job_change", args=[job.pk]))
    labels = {
        field.field["name"]: str(field.field["label"])
        for fieldset in response.context["adminform"]
        for line in fieldset
        for field in line
        if field.is_readonly
    }
    assert labels["masked_notify_emails"] == "alert e-mail addresses"
    assert labels["masked_arguments"] == "arguments"


def test_the_add_page_has_no_status_or_runs(admin_client: Client, db) -> None:
    response = admin_client.get(reverse("admin:jobs_job_add"))
    assert [str(f.name) for f in response.context["adminform"]] == [
        "General",
        "What runs",
        "Schedule",
        "Runs",
        "Chains",
        "Simulation",
        "Alerts",
    ]
    assert response.context["inline_admin_formsets"] == []


def test_adding_a_job_in_the_admin_computes_its_next_run(admin_client: Client, db) -> None:
    response = admin_client.post(reverse("admin:jobs_job_add"), job_form_data())
    assert response.status_code == 302
    job = Job.objects.get()
    assert job.next_run_at is not None
    assert job.next_run_at > NOW


@pytest.mark.parametrize(
    ("fields", "field_in_error"),
    [
        ({"interval": "0"}, "interval"),
        ({"interval": "-5"}, "interval"),
        ({"interval": "99999999"}, "interval"),
        ({"interval": ""}, "interval"),
        ({"schedule_type": "once"}, "scheduled_at"),
        ({"schedule_type": "once", "scheduled_at_0": "2026-03-01"}, "scheduled_at"),
        (
            {"schedule_type": "once", "scheduled_at_0": "2026-02-01", "scheduled_at_1": "10:00"},
            "scheduled_at",
        ),
        ({"interval_unit": "fortnight"}, "interval_unit"),
        ({"interval_unit": ""}, "interval_unit"),
        ({"schedule_type": "yearly"}, "schedule_type"),
        ({"name": "x" * (NAME_MAX_LENGTH + 1)}, "name"),
        ({"name": ""}, "name"),
        ({"command": "x" * 1001}, "command"),
        ({"max_retries": "11"}, "max_retries"),
    ],
)
def test_a_bad_value_shows_its_error_at_the_field_and_saves_nothing(
    admin_client: Client, make_job, fields: dict[str, str], field_in_error: str
) -> None:
    response = admin_client.post(reverse("admin:jobs_job_add"), job_form_data(**fields))
    assert response.status_code == 200
    assert field_in_error in response.context["adminform"].form.errors
    assert not Job.objects.exists()

    # Editing an existing job the same way leaves it as it was.
    job = make_job(name="kept")
    before = Job.objects.values().get(pk=job.pk)
    response = admin_client.post(
        reverse("admin:jobs_job_change", args=[job.pk]), job_form_data(**fields)
    )
    assert response.status_code == 200
    assert field_in_error in response.context["adminform"].form.errors
    assert Job.objects.values().get(pk=job.pk) == before


def test_deleting_a_job_counts_its_runs_instead_of_listing_them(
    admin_client: Client, make_job, make_run
) -> None:
    job = make_job()
    for n in range(30):
        make_run(job, at=NOW - timedelta(minutes=n))
    url = reverse("admin:jobs_job_delete", args=[job.pk])
    response = admin_client.get(url)
    assert dict(response.context["model_count"]) == {"jobs": 1, "runs": 30}
    assert "30 runs" in response.content.decode()
    assert not re.search(r"jobhistory/[0-9a-f-]{36}/", response.content.decode())

    response = admin_client.post(url, {"post": "yes"})
    assert response.status_code == 302
    assert not Job.objects.exists()
    assert not JobHistory.objects.exists()


def test_deleting_selected_jobs_removes_them_and_their_runs(
    admin_client: Client, make_job, make_run
) -> None:
    jobs = [make_job(name="a"), make_job(name="b")]
    for job in jobs:
        make_run(job)
    kept = make_job(name="kept")
    response = run_action(admin_client, JOBS_URL, "delete_selected", jobs)
    assert dict(response.context["model_count"]) == {"jobs": 2, "runs": 2}
    response = admin_client.post(
        reverse(JOBS_URL),
        {"action": "delete_selected", "_selected_action": [j.pk for j in jobs], "post": "yes"},
    )
    assert response.status_code == 302
    assert list(Job.objects.all()) == [kept]
    assert not JobHistory.objects.exists()


def test_a_staff_user_cannot_delete_a_job_with_runs_without_run_delete_rights(
    client: Client, django_user_model, make_job, make_run
) -> None:
    staff = django_user_model.objects.create_user("operator", password="pw", is_staff=True)
    staff.user_permissions.set(
        Permission.objects.filter(
            codename__in=["view_job", "change_job", "delete_job", "view_jobhistory"]
        )
    )
    client.force_login(staff)
    job = make_job()
    make_run(job)
    response = client.post(reverse("admin:jobs_job_delete", args=[job.pk]), {"post": "yes"})
    assert response.status_code == 403
    assert Job.objects.exists()


# --- job actions -------------------------------------------------------------------------


def test_run_now_creates_a_pending_manual_run(admin_client: Client, make_job) -> None:
    jobs = [make_job(name="a"), make_job(name="b", is_active=False)]
    response = run_action(admin_client, JOBS_URL, "run_now", jobs)
    assert response.status_code == 200
    for job in jobs:
        run = job.runs.get()
        assert run.status == RunStatus.PENDING
        assert run.trigger == Trigger.MANUAL
        assert run.not_before == NOW
    assert messages_of(response) == ["Queued 2 runs; they start as soon as workers are free."]


def test_enable_and_disable_go_through_the_engine(admin_client: Client, make_job) -> None:
    job = make_job(is_active=False, interval_unit="minute")
    assert job.next_run_at is None

    response = run_action(admin_client, JOBS_URL, "enable", [job])
    job.refresh_from_db()
    assert job.is_active
    assert job.next_run_at == NOW + timedelta(minutes=10)
    assert messages_of(response) == ["Enabled 1 job."]

    response = run_action(admin_client, JOBS_URL, "disable", [job])
    job.refresh_from_db()
    assert not job.is_active
    assert job.next_run_at is None
    assert messages_of(response) == ["Disabled 1 job."]


def test_enabling_a_one_off_job_whose_time_passed_is_reported_not_crashed(
    admin_client: Client, make_job
) -> None:
    past = make_job(
        name="too late", schedule_type=ScheduleType.ONCE, scheduled_at=NOW - timedelta(hours=1)
    )
    Job.objects.filter(pk=past.pk).update(is_active=False, next_run_at=None)
    fine = make_job(name="fine", is_active=False)
    response = run_action(admin_client, JOBS_URL, "enable", [past, fine])
    assert response.status_code == 200
    past.refresh_from_db()
    fine.refresh_from_db()
    assert not past.is_active
    assert fine.is_active
    notes = messages_of(response)
    assert notes[0] == "Enabled 1 job."
    assert notes[1].startswith("Could not enable 1 job: “too late”: This time has already passed.")


def test_duplicate_copies_a_job_with_its_schedule_computed(admin_client: Client, make_job) -> None:
    job = make_job(
        name="x" * NAME_MAX_LENGTH,
        description="d",
        max_retries=3,
        retry_backoff_seconds=60,
        interval_unit="minute",
    )
    response = run_action(admin_client, JOBS_URL, "duplicate", [job])
    copy = Job.objects.exclude(pk=job.pk).get()
    assert copy.name == "x" * (NAME_MAX_LENGTH - len(" (copy)")) + " (copy)"
    for field in ["description", "command", "schedule_type", "interval", "interval_unit"]:
        assert getattr(copy, field) == getattr(job, field)
    assert (copy.max_retries, copy.retry_backoff_seconds) == (3, 60)
    # A draft to edit first: an active copy would start its original's work at once.
    assert not copy.is_active
    assert copy.next_run_at is None
    assert copy.last_run_at is None
    job.refresh_from_db()
    assert job.is_active
    assert messages_of(response) == ["Copied 1 job as disabled: edit it, then enable it."]
    # Enabled, its schedule is computed.
    run_action(admin_client, JOBS_URL, "enable", [copy])
    copy.refresh_from_db()
    assert copy.is_active
    assert copy.next_run_at == NOW + timedelta(minutes=10)


def test_a_copy_of_a_past_one_off_job_is_saved_disabled(admin_client: Client, make_job) -> None:
    job = make_job(
        name="once", schedule_type=ScheduleType.ONCE, scheduled_at=NOW - timedelta(hours=1)
    )
    response = run_action(admin_client, JOBS_URL, "duplicate", [job])
    copy = Job.objects.get(name="once (copy)")
    assert not copy.is_active
    assert copy.next_run_at is None
    assert messages_of(response) == ["Copied 1 job as disabled: edit it, then enable it."]


# --- the run pages -----------------------------------------------------------------------


def test_runs_are_read_only_and_deletable_by_superusers_only(
    admin_client: Client, client: Client, django_user_model, job: Job
) -> None:
    run = job.runs.first()
    assert admin_client.get(reverse("admin:jobs_jobhistory_add")).status_code == 403
    page = admin_client.get(reverse("admin:jobs_jobhistory_change", args=[run.pk]))
    assert not page.context["has_change_permission"]
    assert page.context["has_delete_permission"]

    staff = django_user_model.objects.create_user("operator", password="pw", is_staff=True)
    staff.user_permissions.set(
        Permission.objects.filter(codename__in=["view_job", "delete_jobhistory"])
    )
    client.force_login(staff)
    assert client.get(reverse(RUNS_URL)).status_code == 200
    response = client.post(reverse("admin:jobs_jobhistory_delete", args=[run.pk]), {"post": "yes"})
    assert response.status_code == 403
    assert JobHistory.objects.filter(pk=run.pk).exists()


def test_the_run_list_shows_its_columns(admin_client: Client, job: Job) -> None:
    response = admin_client.get(reverse(RUNS_URL))
    page = response.content.decode()
    columns = [name for name in response.context["cl"].list_display if name != "action_checkbox"]
    assert columns == [
        "job_link",
        "scheduled",
        "attempt",
        "status_badge",
        "duration_display",
        "worker_column",
    ]
    for status in RunStatus.values:
        assert f'class="jobs-badge jobs-run-{status}"' in page
    assert "2026-03-01 11:59:00" in page  # times to the second
    assert "2.0 s" in page  # duration
    assert '<span title="host:1-0">host:1-0</span>' in page
    assert f'<a href="?job={job.pk}" title="Show only this job&#x27;s runs">' in page
    run = job.runs.first()
    assert f'name="_selected_action" value="{run.pk}" class="action-select"' in page


def test_the_run_log_is_shown_escaped_in_a_pre(admin_client: Client, make_job, make_run) -> None:
    run = make_run(make_job(), log="line one\n<script>alert('x')</script>\n  indented")
    response = admin_client.get(reverse("admin:jobs_jobhistory_change", args=[run.pk]))
    page = response.content.decode()
    assert (
        '<pre class="jobs-run-log">line one\n&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;'
        "\n  indented</pre>"
    ) in page
    assert "<script>alert(" not in page


def test_the_run_list_filters_by_job_status_and_search(
    admin_client: Client, make_job, make_run
) -> None:
    first = make_job(name="first")
    second = make_job(name="second")
    make_run(first, status=RunStatus.FAILED)
    make_run(second, status=RunStatus.SUCCESS)
    cases = [({"job": first.pk}, "first"), ({"status__exact": "success"}, "second")]
    cases.append(({"q": "sec"}, "second"))
    for params, name in cases:
        response = admin_client.get(reverse(RUNS_URL), params)
        assert [r.job.name for r in response.context["cl"].result_list] == [name], params


@pytest.mark.parametrize("few_jobs", [20, 0])
def test_searching_runs_matches_every_word_of_the_job_name(
    admin_client: Client, make_job, make_run, monkeypatch, few_jobs: int
) -> None:
    # Both ways: by job ids when few jobs match, Django's join when many do.
    monkeypatch.setattr(run_models, "JOB_NAME_LOOKUP_LIMIT", few_jobs)
    for name in ["nightly backup", "weekly backup", "nightly report"]:
        make_run(make_job(name=name))
    for term, expected in [
        ("backup", {"nightly backup", "weekly backup"}),
        ("NIGHTLY backup", {"nightly backup"}),
        ('"y rep"', {"nightly report"}),
        ("nothing", set()),
    ]:
        response = admin_client.get(reverse(RUNS_URL), {"q": term})
        assert {r.job.name for r in response.context["cl"].result_list} == expected, term


def test_the_date_hierarchy_offers_the_periods_between_oldest_and_newest_run(
    admin_client: Client, make_job, make_run
) -> None:
    job = make_job()
    make_run(job, at=datetime(2025, 11, 20, tzinfo=UTC))
    make_run(job, at=datetime(2026, 2, 10, tzinfo=UTC))
    make_run(job, at=datetime(2026, 2, 12, tzinfo=UTC))

    def choices(**params: Any) -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            response = admin_client.get(reverse(RUNS_URL), params)
        # No DISTINCT over the runs (the queue filter's names come from the jobs' index).
        assert not [q for q in queries if "DISTINCT" in q["sql"] and "jobhistory" in q["sql"]]
        # The markup around the links differs between Django versions; the nav's class
        # does not.
        found = re.search(r'<nav[^>]*class="toplinks"[^>]*>(.*?)</nav>', response.text, re.S)
        assert found, "no date hierarchy on the page"
        nav = found.group(1)
        links = [part.split("</a>")[0].split(">")[-1] for part in nav.split("<a ")[1:]]
        return [link.removeprefix("&lsaquo; ") for link in links]

    assert choices() == ["2025", "2026"]
    assert choices(created_at__year=2026) == ["All dates", "February 2026"]
    days = choices(created_at__year=2026, created_at__month=2)
    assert days == ["2026", "February 10", "February 11", "February 12"]


def test_the_run_list_never_counts_the_whole_table(admin_client: Client, job: Job) -> None:
    with CaptureQueriesContext(connection) as queries:
        admin_client.get(reverse(RUNS_URL))
        admin_client.get(reverse(RUNS_URL), {"status__exact": "failed"})
        admin_client.get(reverse("admin:index"))
    counts = [q["sql"] for q in queries if "COUNT(" in q["sql"] and "jobhistory" in q["sql"]]
    assert counts
    assert all("LIMIT" in sql for sql in counts), counts


def test_the_run_list_says_more_than_the_cap_instead_of_a_total(
    admin_client: Client, job: Job, monkeypatch
) -> None:
    monkeypatch.setattr(jobs_admin.CappedCountPaginator, "cap", 2)
    monkeypatch.setattr(jobs_admin.JobHistoryAdmin, "list_per_page", 1)
    response = admin_client.get(reverse(RUNS_URL))
    page = response.content.decode()
    assert "More than 2 runs: filter by status, date or job" in page
    assert "Select all matching runs (more than 2)" in page
    # The last page within the cap is reachable; beyond it the admin says the page is wrong.
    assert admin_client.get(reverse(RUNS_URL), {"p": 3}).status_code == 200
    assert admin_client.get(reverse(RUNS_URL), {"p": 4}).status_code == 302


# --- retry -------------------------------------------------------------------------------


def test_retry_creates_the_next_attempt_of_a_failed_run(
    admin_client: Client, make_job, make_run
) -> None:
    failed = make_run(make_job(), status=RunStatus.FAILED, attempt=2)
    response = run_action(admin_client, RUNS_URL, "retry", [failed])
    retry = JobHistory.objects.get(attempt=3)
    assert retry.job_id == failed.job_id
    assert retry.scheduled_for == failed.scheduled_for
    assert retry.status == RunStatus.PENDING
    assert retry.trigger == Trigger.RETRY
    assert retry.not_before == NOW
    assert messages_of(response) == ["Retrying 1 run: its next attempt is pending."]


def test_retry_of_a_run_that_did_not_fail_does_nothing_and_says_why(
    admin_client: Client, job: Job
) -> None:
    not_failed = list(job.runs.exclude(status=RunStatus.FAILED))
    before = JobHistory.objects.count()
    response = run_action(admin_client, RUNS_URL, "retry", not_failed)
    assert JobHistory.objects.count() == before
    assert messages_of(response) == [
        f"{len(not_failed)} runs not retried: Only a failed run can be retried."
    ]


def test_retry_twice_makes_one_new_attempt(admin_client: Client, make_job, make_run) -> None:
    failed = make_run(make_job(), status=RunStatus.FAILED)
    run_action(admin_client, RUNS_URL, "retry", [failed])
    response = run_action(admin_client, RUNS_URL, "retry", [failed])
    assert JobHistory.objects.filter(scheduled_for=failed.scheduled_for).count() == 2
    assert messages_of(response) == ["1 run not retried: This run has already been retried."]


def test_retry_refuses_a_selection_bigger_than_the_limit(
    admin_client: Client, job: Job, monkeypatch
) -> None:
    monkeypatch.setattr(jobs_admin.runs, "MAX_RUNS_PER_RETRY", 2)
    before = JobHistory.objects.count()
    response = run_action(admin_client, RUNS_URL, "retry", list(job.runs.all()))
    assert JobHistory.objects.count() == before
    assert messages_of(response)[0].startswith("Select at most 2 runs")


# --- cost --------------------------------------------------------------------------------


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def test_the_job_list_costs_the_same_queries_for_10_and_1000_jobs(
    admin_client: Client, make_run, db
) -> None:
    jobs = bulk_jobs(10)
    make_run(jobs[0], status=RunStatus.RUNNING)
    small = count_queries(admin_client, reverse(JOBS_URL))
    bulk_jobs(990, start=10)
    large = count_queries(admin_client, reverse(JOBS_URL))
    assert small == large


def test_the_run_list_costs_the_same_queries_for_10_and_10000_runs(
    admin_client: Client, db
) -> None:
    jobs = bulk_jobs(10)
    bulk_runs(jobs, 10)
    small = count_queries(admin_client, reverse(RUNS_URL))
    more_jobs = bulk_jobs(990, start=10)
    bulk_runs(jobs + more_jobs, 9990, start=10)
    assert JobHistory.objects.count() == 10_000
    large = count_queries(admin_client, reverse(RUNS_URL))
    assert small == large
