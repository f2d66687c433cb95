"""Clean text in jobs (jobs/text.py) and secrets shown whole only to users who may change
jobs (jobs/access/masking.py), through the dashboard form, the API, the screens and the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core import mail

from jobs import alerts, text
from jobs.alerts import InlineDispatcher
from jobs.models import Job, NotificationAttempt
from jobs.tests import personas
from jobs.tests.api_helpers import finish_run, token_client
from jobs.tests.factories import make_job
from jobs.tests.forms import dashboard_form

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs/"
RUNS = "/api/v1/runs/"
HOOK = "https://user:pw@hooks.example.com/services/T0K3N?key=abc"
BAD = ["\x00", "\r", "\v", "\x1b", "\u202e", "\u2066"]


@pytest.fixture
def superuser():
    return personas.superuser()


@pytest.fixture
def viewer():
    """May see jobs and runs (also in the admin), not change them."""
    user = get_user_model().objects.create_user("viewer", password="pw-not-used", is_staff=True)
    for codename in ("view_job", "view_jobhistory"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return user


signed_in = personas.signed_in


def form(**overrides: str) -> dict[str, str]:
    cron = {"schedule_type": "cron", "cron_expression": "30 2 * * *", "timezone": ""}
    return dashboard_form(**{**cron, "interval": "", **overrides})


# --- clean text ----------------------------------------------------------------------------


@pytest.mark.parametrize("char", BAD)
@pytest.mark.parametrize("field", ["name", "cron_expression", "command"])
def test_control_characters_and_bidi_overrides_are_refused_in_the_dashboard_form(
    superuser, field, char
):
    value = {"name": "a{}b", "cron_expression": "30 2{} * * *", "command": "echo{} hi"}[field]
    response = signed_in(superuser).post("/jobs/new/", form(**{field: value.format(char)}))
    if char == "\x00":
        # Refused before any view runs, anywhere in a request (jobs.web.middleware).
        assert response.status_code == 400
        assert "NUL character is not allowed" in response.text
    else:
        assert response.status_code == 200  # the form again
        errors = response.context["form"].errors
        assert field in errors, errors
        assert text.code_point(char) in errors[field][0]
    assert not Job.objects.exists()


@pytest.mark.parametrize("char", BAD)
@pytest.mark.parametrize("field", ["name", "cron_expression", "command"])
def test_control_characters_and_bidi_overrides_are_refused_by_the_api(superuser, field, char):
    body = {
        "name": "nightly",
        "command": "echo hi",
        "schedule_type": "cron",
        "cron_expression": "30 2 * * *",
    }
    body[field] = body[field][:2] + char + body[field][2:]
    response = token_client(superuser).post(JOBS, body, format="json")
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert not Job.objects.exists()


def test_a_command_keeps_its_tabs_and_line_breaks(superuser):
    script = "set -e\n\tcd /srv\r\n\techo done"
    response = signed_in(superuser).post("/jobs/new/", form(command=script))
    assert response.status_code == 302, response.context["form"].errors
    # Line breaks as a browser sends them (CR LF) are stored as LF.
    assert Job.objects.get().command == "set -e\n\tcd /srv\n\techo done"
    api = token_client(superuser).post(
        JOBS,
        {
            "name": "two",
            "command": "a\r\nb\tc",
            "schedule_type": "cron",
            "cron_expression": "* * * * *",
        },
        format="json",
    )
    assert api.status_code == 201, api.json()
    assert Job.objects.get(name="two").command == "a\nb\tc"


def test_a_tab_or_line_break_is_still_refused_in_a_name():
    job = Job(name="a\tb", command="echo", interval=5, interval_unit="minute")
    with pytest.raises(Exception) as refused:
        job.full_clean()
    assert "name" in refused.value.message_dict


def test_an_e_mail_subject_stays_one_line_whatever_the_name_holds(
    django_capture_on_commit_callbacks,
):
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    try:
        job = make_job(
            name="backup\v\f\r\nBcc: victim@example.com\u2028\x85x",
            notify_on_failure=True,
            notify_emails="ops@example.com",
        )
        with django_capture_on_commit_callbacks(execute=True):
            run = finish_run(job, succeeded=False)
    finally:
        alerts.use_dispatcher(previous)
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.subject == "[scheduler] backup Bcc: victim@example.com x failed"
    assert message.to == ["ops@example.com"] and not message.bcc
    header = message.message()["Subject"]
    assert "\n" not in str(header) and "\r" not in str(header)
    assert NotificationAttempt.objects.get(run=run).status == "sent"


def test_clean_remote_text_removes_escapes_and_caps():
    assert text.clean_remote("\x1b[1;31mboom\x1b[0m\r\nnext\x00 \u202eline") == "boom next line"
    assert text.clean_remote("\x1b]0;title\x07ok") == "ok"
    assert len(text.clean_remote("x" * 5000)) == text.REMOTE_TEXT_MAX_CHARS
    assert text.one_line("a\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029b" + "c" * 300) == "a b" + "c" * 197


# --- masking -------------------------------------------------------------------------------


def job_with_secrets() -> Job:
    return make_job(
        name="reports",
        notify_on_failure=True,
        webhook_url=HOOK,
        notify_emails="ops@example.com, cto@example.com",
    )


def attempts_of(job: Job):  # type: ignore[no-untyped-def]
    run = finish_run(job, succeeded=False)
    NotificationAttempt.objects.create(
        run=run,
        kind="failure",
        channel="webhook",
        target="https://hooks.example.com",
        attempt=1,
        status="failed",
        response_code=502,
        error="ConnectionRefusedError: port 6379 closed",
    )
    NotificationAttempt.objects.create(
        run=run,
        kind="failure",
        channel="email",
        target="ops@example.com, cto@example.com",
        attempt=1,
        status="sent",
    )
    return run


def test_the_api_masks_secrets_for_users_who_may_not_change_jobs(viewer, superuser):
    job = job_with_secrets()
    run = attempts_of(job)
    seen = token_client(viewer).get(f"{JOBS}{job.pk}/").json()
    assert seen["webhook_url"] == "https://hooks.example.com/…"
    assert seen["notify_emails"] == "2 addresses"
    listed = token_client(viewer).get(JOBS).json()["results"][0]
    assert listed["webhook_url"] == "https://hooks.example.com/…"
    detail = token_client(viewer).get(f"{RUNS}{run.pk}/").json()
    assert [
        (n["target"], n["status"], n["response_code"], n["error"]) for n in detail["notifications"]
    ] == [
        ("https://hooks.example.com/…", "failed", None, ""),
        ("2 addresses", "sent", None, ""),
    ]

    admin = token_client(superuser)
    # Who may change the job reads the URL but not its credentials (user:password and
    # query values), which no one reads back.
    shown = admin.get(f"{JOBS}{job.pk}/").json()["webhook_url"]
    assert shown == "https://…@hooks.example.com/services/T0K3N?key=…"
    full = admin.get(f"{RUNS}{run.pk}/").json()["notifications"]
    assert full[0]["error"] == "ConnectionRefusedError: port 6379 closed"
    assert full[0]["response_code"] == 502
    assert full[1]["target"] == "ops@example.com, cto@example.com"


def test_a_masked_value_written_back_keeps_the_stored_one(superuser):
    job = job_with_secrets()
    client = token_client(superuser)
    response = client.patch(
        f"{JOBS}{job.pk}/",
        {"webhook_url": "https://hooks.example.com/…", "name": "renamed"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    job.refresh_from_db()
    assert job.webhook_url == HOOK and job.name == "renamed"
    # A real change goes through.
    response = client.patch(
        f"{JOBS}{job.pk}/", {"webhook_url": "https://hooks.example.com/new"}, format="json"
    )
    assert response.status_code == 200, response.json()
    job.refresh_from_db()
    assert job.webhook_url == "https://hooks.example.com/new"


def test_the_job_and_run_pages_mask_secrets_for_viewers(viewer, superuser):
    job = job_with_secrets()
    run = attempts_of(job)
    page = signed_in(viewer).get(f"/jobs/{job.pk}/").text
    assert "https://hooks.example.com/…" in page and "2 addresses" in page
    assert "T0K3N" not in page and "ops@example.com" not in page
    run_page = signed_in(viewer).get(f"/runs/{run.pk}/").text
    assert "https://hooks.example.com/…" in run_page and "2 addresses" in run_page
    # "(502)" is how the outcome shows the code; a bare "502" may be part of a UUID.
    assert "6379" not in run_page and "(502)" not in run_page
    assert "ops@example.com" not in run_page

    full = signed_in(superuser).get(f"/jobs/{job.pk}/").text
    assert "T0K3N" in full and "ops@example.com" in full
    full_run = signed_in(superuser).get(f"/runs/{run.pk}/").text
    assert "Failed (502): ConnectionRefusedError: port 6379 closed" in full_run


def test_the_admin_masks_secrets_on_the_read_only_pages(viewer, superuser):
    job = job_with_secrets()
    run = attempts_of(job)
    page = signed_in(viewer).get(f"/admin/jobs/job/{job.pk}/change/")
    assert page.status_code == 200
    assert "https://hooks.example.com/…" in page.text and "2 addresses" in page.text
    assert "T0K3N" not in page.text and "ops@example.com" not in page.text
    run_page = signed_in(viewer).get(f"/admin/jobs/jobhistory/{run.pk}/change/")
    assert run_page.status_code == 200
    assert "2 addresses" in run_page.text
    assert "6379" not in run_page.text and "ops@example.com" not in run_page.text

    full = signed_in(superuser).get(f"/admin/jobs/job/{job.pk}/change/").text
    assert "T0K3N" in full
    full_run = signed_in(superuser).get(f"/admin/jobs/jobhistory/{run.pk}/change/").text
    assert "ConnectionRefusedError: port 6379 closed" in full_run
