"""Pause all in the dashboard, the admin and the API: the banner on every page, the
switch and who may use it (jobs.pause_scheduler), validation that changes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import QuerySet
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from jobs import engine, metrics
from jobs.access.permissions import JOB_ADMINS, JOB_OPERATORS, JOB_VIEWERS
from jobs.models import Channel, SchedulerAction, SchedulerEvent, SchedulerState, acting
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import NOW, make_job, make_run, make_user

pytestmark = pytest.mark.django_db

SWITCH = reverse("admin:jobs_schedulerstate_changelist")
EVENTS = reverse("admin:jobs_schedulerevent_changelist")


signed_in = personas.signed_in


def pause_events() -> QuerySet[SchedulerEvent]:
    """The scheduler's events but the API tokens' (the API client's token is one)."""
    return SchedulerEvent.objects.exclude(
        action__in=[SchedulerAction.TOKEN_CREATE, SchedulerAction.TOKEN_REVOKE]
    )


@pytest.fixture
def job_admin() -> Client:
    return signed_in(personas.job_admin("alice", staff=True))


@pytest.fixture
def viewer() -> Client:
    return signed_in(personas.viewer("victor", staff=True))


def unchanged() -> bool:
    return not SchedulerState.objects.exists() and not pause_events().exists()


def every_page() -> list[str]:
    job = make_job()
    run = make_run(job)
    return [
        "/",
        "/jobs/",
        "/jobs/new/",
        f"/jobs/{job.pk}/",
        f"/jobs/{job.pk}/edit/",
        f"/jobs/{job.pk}/delete/",
        "/history/",
        f"/runs/{run.pk}/",
        "/scheduler/",
        "/admin/",
        "/admin/jobs/job/",
        f"/admin/jobs/job/{job.pk}/change/",
        "/admin/jobs/jobhistory/",
        SWITCH,
        EVENTS,
    ]


# --- the banner -------------------------------------------------------------------------


def test_every_page_shows_the_banner_while_paused_and_none_otherwise(job_admin, viewer, clock):
    pages = every_page()
    for url in pages:
        page = job_admin.get(url)
        assert page.status_code == 200, url
        assert 'id="scheduler-banner"' not in page.text, url

    with acting(make_user("bob", JOB_OPERATORS), Channel.DASHBOARD):
        engine.pause(until=NOW + timedelta(hours=2), note="Upgrading <the> database")
    for url in pages:
        page = job_admin.get(url)
        assert 'id="scheduler-banner"' in page.text, url
        assert "Paused by bob since 2026-03-01 12:00" in page.text, url
        assert "until 2026-03-01 14:00" in page.text, url
        assert "Upgrading &lt;the&gt; database" in page.text, url  # escaped
    # The resume control for who may resume, in the dashboard's pages.
    assert reverse("jobs:scheduler_resume") in job_admin.get("/jobs/").text
    assert reverse("jobs:scheduler_resume") not in viewer.get("/jobs/").text
    assert 'id="scheduler-banner"' in viewer.get("/jobs/").text

    clock.move_to(NOW + timedelta(hours=2))  # the until has come: no banner, not settled yet
    assert 'id="scheduler-banner"' not in job_admin.get("/").text


def test_the_banner_is_not_shown_to_whoever_may_not_see_jobs(client, clock):
    engine.pause(note="secret maintenance")
    assert "secret maintenance" not in client.get("/accounts/login/").text
    nobody = signed_in(make_user("nobody"))
    assert "secret maintenance" not in nobody.get("/").text


def test_htmx_fragments_do_not_show_the_banner(job_admin, clock):
    engine.pause()
    page = job_admin.get("/jobs/", headers={"HX-Request": "true"})
    assert 'id="scheduler-banner"' not in page.text


# --- the dashboard's switch ---------------------------------------------------------------


def test_the_dashboard_pauses_and_resumes_with_the_permission(job_admin, clock):
    done = job_admin.post(
        reverse("jobs:scheduler_pause"), {"until": "2026-03-01T15:30", "note": "  deploy  "}
    )
    assert done.status_code == 302 and done["Location"] == "/scheduler/"
    switch = SchedulerState.objects.get()
    assert switch.is_paused(timezone.now())
    assert (switch.paused_until, switch.note, switch.paused_by_name, switch.channel) == (
        NOW + timedelta(hours=3, minutes=30),
        "deploy",
        "alice",
        "dashboard",
    )
    page = job_admin.get("/scheduler/")
    assert 'data-state="paused"' in page.text
    assert 'data-action="pause"' in page.text  # the record, on the page
    # One message says it is paused: the banner, with no flash repeating it.
    assert 'id="scheduler-banner"' in page.text
    assert "nothing is claimed now" not in page.text
    assert 'class="alert alert-success' not in page.text

    back = job_admin.post(reverse("jobs:scheduler_resume"), {"next": "/jobs/"})
    assert back["Location"] == "/jobs/"
    assert not SchedulerState.objects.get().is_paused(timezone.now())
    assert list(pause_events().order_by("id").values_list("action", "username")) == [
        ("pause", "alice"),
        ("resume", "alice"),
    ]


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"until": "2026-03-01T11:00"}, "until", "Choose a time in the future"),
        ({"until": "tomorrow"}, "until", "Enter a valid date/time."),
        ({"note": "x" * 501}, "note", "Keep the note to 500 characters"),
        ({"note": "bell \x07"}, "note", "Remove the invisible character U+0007"),
    ],
)
def test_a_bad_pause_gets_a_message_at_its_field_and_changes_nothing(
    job_admin, clock, data, field, message
):
    page = job_admin.post(reverse("jobs:scheduler_pause"), data)
    assert page.status_code == 200
    assert message in str(page.context["form"].errors[field])
    assert "is-invalid" in page.text
    assert unchanged()


def test_without_the_permission_the_switch_is_refused_and_not_shown(clock):
    for grant in (JOB_VIEWERS, JOB_OPERATORS):
        client = signed_in(make_user(f"user-{grant.name}", grant))
        assert client.get("/scheduler/").status_code == 200
        assert 'id="pause-form"' not in client.get("/scheduler/").text
        assert client.post(reverse("jobs:scheduler_pause"), {"note": "x"}).status_code == 403
        assert unchanged()
    engine.pause()
    assert client.post(reverse("jobs:scheduler_resume")).status_code == 403
    assert SchedulerState.objects.get().is_paused(timezone.now())
    nobody = signed_in(make_user("nobody"))
    assert nobody.get("/scheduler/").status_code == 403


def test_the_scheduler_page_lists_the_live_processes(job_admin, clock):
    metrics.scheduler_alive("host-a:42", every=0)
    page = job_admin.get("/scheduler/")
    assert "host-a:42" in page.text
    assert page.context["overview"].state == "running"


# --- the admin's switch -------------------------------------------------------------------


def test_the_admin_pauses_and_resumes(job_admin, clock):
    page = job_admin.get(SWITCH)
    assert page.status_code == 200 and 'data-state="down"' in page.text  # no heartbeat yet
    done = job_admin.post(SWITCH, {"until": "", "note": "from the admin", "_pause": "Pause all"})
    assert done.status_code == 302
    switch = SchedulerState.objects.get()
    assert (switch.note, switch.channel, switch.paused_until) == ("from the admin", "admin", None)
    assert 'data-state="paused"' in job_admin.get(SWITCH).text
    job_admin.post(SWITCH, {"_resume": "Resume"})
    assert not SchedulerState.objects.get().is_paused(timezone.now())
    assert list(pause_events().values_list("channel", flat=True)) == ["admin", "admin"]


def test_the_admin_refuses_a_bad_pause_at_its_field(job_admin, clock):
    page = job_admin.post(SWITCH, {"until": "2020-01-01T00:00", "note": ""})
    assert page.status_code == 200
    assert "Choose a time in the future" in page.text
    assert unchanged()


def test_the_admin_switch_needs_pause_scheduler_and_its_record_is_read_only(viewer, clock):
    assert viewer.get(SWITCH).status_code == 200
    assert 'id="pause-form"' not in viewer.get(SWITCH).text
    assert viewer.post(SWITCH, {"note": "x"}).status_code == 403
    assert unchanged()
    engine.pause(note="by code")
    event = pause_events().get()
    assert viewer.get(EVENTS).status_code == 200
    assert viewer.get(reverse("admin:jobs_schedulerevent_add")).status_code == 403
    change = viewer.get(reverse("admin:jobs_schedulerevent_change", args=[event.pk]))
    assert change.status_code == 200 and "by code" in change.text
    delete = reverse("admin:jobs_schedulerevent_delete", args=[event.pk])
    assert viewer.post(delete).status_code == 403


# --- the API --------------------------------------------------------------------------------


def test_the_api_reads_the_state_with_view_job(clock):
    reader = token_client(make_user("reader", JOB_VIEWERS))
    metrics.scheduler_alive("host-b:7", every=0)
    state = reader.get("/api/v1/scheduler/").json()
    assert state["state"] == "running" and state["paused"] is False
    assert [p["name"] for p in state["schedulers"]] == ["host-b:7"]
    assert state["schedulers"][0]["last_heartbeat"] == "2026-03-01T12:00:00Z"
    nobody = token_client(make_user("nobody"))
    assert nobody.get("/api/v1/scheduler/").status_code == 403


def test_the_api_pauses_and_resumes_with_pause_scheduler(clock):
    api = token_client(make_user("alice", JOB_ADMINS))
    done = api.post(
        "/api/v1/scheduler/pause/",
        {"until": "2026-03-01T13:00:00Z", "note": "deploy"},
        format="json",
    )
    assert done.status_code == 200, done.json()
    state = done.json()
    assert state["state"] == "paused" and state["paused"] is True
    assert state["paused_until"] == "2026-03-01T13:00:00Z"
    assert (state["note"], state["paused_by"]) == ("deploy", "alice")
    assert state["paused_since"] == "2026-03-01T12:00:00Z"
    assert pause_events().get().channel == "api"
    assert api.get("/api/v1/scheduler/").json() == state

    # Both optional: an empty body pauses until a resume.
    assert api.post("/api/v1/scheduler/pause/", {}, format="json").json()["paused_until"] is None
    resumed = api.post("/api/v1/scheduler/resume/")
    assert resumed.status_code == 200
    assert resumed.json()["paused"] is False and resumed.json()["state"] != "paused"


@pytest.mark.parametrize("grant", [JOB_VIEWERS, JOB_OPERATORS])
def test_the_api_refuses_pausing_without_pause_scheduler(clock, grant):
    api = token_client(make_user("someone", grant))
    refused = api.post("/api/v1/scheduler/pause/", {"note": "x"}, format="json")
    assert refused.status_code == 403
    assert "jobs.pause_scheduler" in refused.json()["detail"]
    assert unchanged()
    engine.pause()
    assert api.post("/api/v1/scheduler/resume/").status_code == 403
    assert SchedulerState.objects.get().is_paused(timezone.now())
    assert APIClient().post("/api/v1/scheduler/pause/").status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"until": "2026-03-01T11:59:59Z"}, "until"),
        ({"until": "2026-03-01T12:00:00Z"}, "until"),
        ({"until": "not a time"}, "until"),
        ({"until": "9999-01-01T00:00:00Z"}, "until"),
        ({"note": "x" * 501}, "note"),
        ({"note": "line\nbreak"}, "note"),
        ({"note": "\u202egnp.exe"}, "note"),
        ({"note": None}, "note"),
    ],
)
def test_the_api_answers_400_at_the_field_for_a_bad_pause_and_changes_nothing(clock, body, field):
    api = token_client(make_user("alice", JOB_ADMINS))
    refused = api.post("/api/v1/scheduler/pause/", body, format="json")
    assert refused.status_code == 400
    assert list(refused.json()) == [field]
    assert unchanged()
