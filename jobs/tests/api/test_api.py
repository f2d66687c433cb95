"""The JSON API: CRUD and actions with a token, validation per field, permissions, ids."""

from __future__ import annotations

import uuid
from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from jobs import engine
from jobs.models import (
    ApiToken,
    Job,
    JobHistory,
    NotificationAttempt,
    RunStatus,
    Trigger,
    find_token,
)
from jobs.tests.api_helpers import finish_run, make_user, token_client
from jobs.tests.factories import make_job

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs/"
RUNS = "/api/v1/runs/"


@pytest.fixture
def staff():
    return token_client(make_user("ops", staff=True))


@pytest.fixture
def reader():
    return token_client(make_user("viewer"))


def job_url(job: Job, action: str = "") -> str:
    return f"{JOBS}{job.pk}/{action + '/' if action else ''}"


VALID = {
    "name": "nightly report",
    "command": "python report.py",
    "schedule_type": "interval",
    "interval": 5,
    "interval_unit": "minute",
}


# --- CRUD and actions ------------------------------------------------------------------


def test_staff_creates_reads_updates_and_deletes_a_job_with_a_token(staff):
    created = staff.post(JOBS, VALID, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    job = Job.objects.get(pk=body["id"])
    assert body["name"] == "nightly report"
    assert body["state"] == "waiting"
    assert body["schedule_text"] == "every 5 minutes"
    assert body["next_run_at"] is not None
    assert body["last_run_status"] == ""

    read = staff.get(job_url(job))
    assert read.status_code == 200
    assert read.json()["command"] == "python report.py"

    replaced = staff.put(
        job_url(job), {**VALID, "name": "weekly report", "interval": 7}, format="json"
    )
    assert replaced.status_code == 200, replaced.json()
    assert replaced.json()["schedule_text"] == "every 7 minutes"

    patched = staff.patch(job_url(job), {"description": "sends the numbers"}, format="json")
    assert patched.status_code == 200
    job.refresh_from_db()
    assert (job.name, job.interval, job.description) == ("weekly report", 7, "sends the numbers")

    deleted = staff.delete(job_url(job))
    assert deleted.status_code == 204
    assert not Job.objects.filter(pk=job.pk).exists()


def test_read_only_fields_sent_by_the_client_are_ignored(staff):
    sent = {
        **VALID,
        "id": str(uuid.uuid4()),
        "next_run_at": "2000-01-01T00:00:00Z",
        "last_run_at": "2000-01-01T00:00:00Z",
        "state": "failed",
        "schedule_text": "whenever",
        "created_at": "2000-01-01T00:00:00Z",
    }
    response = staff.post(JOBS, sent, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["id"] != sent["id"]
    assert body["next_run_at"] > timezone.now().isoformat()[:4]
    assert body["last_run_at"] is None
    assert body["state"] == "waiting"


def test_run_now_creates_a_pending_manual_run(staff):
    job = make_job()
    response = staff.post(job_url(job, "run"))
    assert response.status_code == 201
    run = JobHistory.objects.get(job=job)
    assert response.json()["id"] == str(run.pk)
    assert response["Location"].endswith(f"{RUNS}{run.pk}/")
    assert (run.status, run.trigger) == (RunStatus.PENDING, Trigger.MANUAL)


def test_disable_and_enable_move_the_next_run(staff):
    job = make_job()
    disabled = staff.post(job_url(job, "disable"))
    assert disabled.status_code == 200
    assert disabled.json()["is_active"] is False
    assert disabled.json()["next_run_at"] is None

    enabled = staff.post(job_url(job, "enable"))
    assert enabled.status_code == 200
    assert enabled.json()["is_active"] is True
    assert enabled.json()["next_run_at"] is not None


def test_enabling_a_one_off_job_whose_time_passed_is_a_400_at_the_field(staff):
    when = timezone.now() + timedelta(hours=1)
    job = make_job(schedule_type="once", scheduled_at=when, interval=None, interval_unit="")
    staff.post(job_url(job, "disable"))
    with time_machine.travel(when + timedelta(hours=1)):
        response = staff.post(job_url(job, "enable"))
    assert response.status_code == 400
    assert "scheduled_at" in response.json()
    job.refresh_from_db()
    assert job.is_active is False


# --- validation through Job.clean --------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"schedule_type": "once", "scheduled_at": None}, "scheduled_at"),
        ({"schedule_type": "once", "scheduled_at": "2001-01-01T00:00:00Z"}, "scheduled_at"),
        ({"interval": None}, "interval"),
        ({"interval": 0}, "interval"),
        ({"interval": 3651, "interval_unit": "day"}, "interval"),
        # Would overflow a timedelta if computed naively: still a 400, never a 500.
        ({"interval": 2_000_000_000, "interval_unit": "day"}, "interval"),
        ({"interval_unit": "fortnight"}, "interval_unit"),
        ({"interval_unit": ""}, "interval_unit"),
        ({"schedule_type": "yearly"}, "schedule_type"),
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"command": "y" * 1001}, "command"),
        ({"max_retries": 11}, "max_retries"),
        ({"notify_on_failure": True}, "webhook_url"),
        ({"webhook_url": "ftp://example.com/hook"}, "webhook_url"),
        ({"webhook_url": "not a url"}, "webhook_url"),
        ({"notify_emails": "ops@example.com, nobody"}, "notify_emails"),
    ],
)
def test_invalid_jobs_are_refused_with_a_message_at_the_field(staff, change, field):
    response = staff.post(JOBS, {**VALID, **change}, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert field in errors, errors
    assert all(isinstance(message, str) and message for message in errors[field])
    assert not Job.objects.exists()


def test_the_api_gives_the_same_messages_as_job_clean(staff):
    response = staff.post(
        JOBS, {**VALID, "schedule_type": "once", "scheduled_at": None}, format="json"
    )
    assert response.json() == {"scheduled_at": ["A one-off job needs a date and time to run at."]}


def test_a_partial_update_is_validated_as_the_whole_job(staff):
    job = make_job()
    response = staff.patch(job_url(job), {"schedule_type": "once"}, format="json")
    assert response.status_code == 400
    assert "scheduled_at" in response.json()
    job.refresh_from_db()
    assert job.schedule_type == "interval"


def test_renaming_a_one_off_job_whose_time_passed_is_allowed(staff):
    when = timezone.now() + timedelta(minutes=5)
    job = make_job(schedule_type="once", scheduled_at=when, interval=None, interval_unit="")
    with time_machine.travel(when + timedelta(minutes=5)):
        response = staff.patch(job_url(job), {"name": "renamed"}, format="json")
    assert response.status_code == 200, response.json()


def test_alert_settings_are_saved_when_valid(staff):
    response = staff.post(
        JOBS,
        {
            **VALID,
            "notify_on_failure": True,
            "notify_on_recovery": True,
            "webhook_url": "https://hooks.example.com/x",
            "notify_emails": "ops@example.com\ndev@example.com",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    job = Job.objects.get()
    assert job.notify_email_list == ["ops@example.com", "dev@example.com"]


def test_malformed_json_is_a_400(staff):
    response = staff.generic("POST", JOBS, "{not json", content_type="application/json")
    assert response.status_code == 400


# --- permissions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", JOBS), ("post", JOBS), ("get", RUNS), ("get", "job"), ("post", "job/run")],
)
def test_anonymous_requests_are_refused_with_401(method, path):
    job = make_job()
    path = {"job": job_url(job), "job/run": job_url(job, "run")}.get(path, path)
    response = getattr(APIClient(), method)(path)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert not JobHistory.objects.exists()


def test_a_wrong_token_is_refused():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get(JOBS).status_code == 401


def test_a_user_who_is_not_staff_can_read_but_not_write(reader):
    job = make_job()
    assert reader.get(JOBS).status_code == 200
    assert reader.get(job_url(job)).status_code == 200
    assert reader.get(RUNS).status_code == 200
    assert reader.get(job_url(job, "runs")).status_code == 200
    refused = [
        reader.post(JOBS, VALID, format="json"),
        reader.put(job_url(job), VALID, format="json"),
        reader.patch(job_url(job), {"name": "mine"}, format="json"),
        reader.delete(job_url(job)),
        reader.post(job_url(job, "run")),
        reader.post(job_url(job, "disable")),
        reader.post(job_url(job, "enable")),
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    job.refresh_from_db()
    assert job.is_active and job.name != "mine"
    assert Job.objects.count() == 1
    assert not JobHistory.objects.exists()


def test_a_logged_in_browser_session_can_use_the_api():
    user = make_user("admin", staff=True)
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get(JOBS).status_code == 200
    # Session writes need the CSRF token, like every form of the site.
    assert client.post(JOBS, VALID, format="json").status_code == 403


# --- unknown and malformed ids -------------------------------------------------------------


# The ids are fixed so that every pytest-xdist worker collects the same tests (a random
# UUID in the id differs between workers, and xdist then refuses to run at all).
@pytest.mark.parametrize(
    "bad_id", [str(uuid.uuid4()), "not-a-uuid", "123"], ids=["unknown-uuid", "not-a-uuid", "123"]
)
def test_unknown_or_malformed_ids_are_404_with_a_json_body(staff, bad_id):
    paths = [
        f"{JOBS}{bad_id}/",
        f"{JOBS}{bad_id}/runs/",
        f"{RUNS}{bad_id}/",
    ]
    for path in paths:
        response = staff.get(path)
        assert response.status_code == 404, path
        assert "detail" in response.json()
    for action in ("run", "enable", "disable"):
        assert staff.post(f"{JOBS}{bad_id}/{action}/").status_code == 404
    assert staff.delete(f"{JOBS}{bad_id}/").status_code == 404
    assert staff.patch(f"{JOBS}{bad_id}/", {"name": "x"}, format="json").status_code == 404


# --- listing, filters, pagination ----------------------------------------------------------


def test_the_job_list_filters_and_paginates(staff):
    make_job(name="backup db", command="pg_dump", description="nightly copy")
    make_job(name="send mail", is_active=False)
    make_job(
        name="cleanup",
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(days=1),
        interval=None,
        interval_unit="",
    )

    def names(query: str) -> list[str]:
        response = staff.get(f"{JOBS}?{query}")
        assert response.status_code == 200, response.json()
        return [job["name"] for job in response.json()["results"]]

    assert names("") == ["backup db", "cleanup", "send mail"]
    assert names("is_active=false") == ["send mail"]
    assert names("is_active=true") == ["backup db", "cleanup"]
    assert names("schedule_type=once") == ["cleanup"]
    assert names("search=PG_DUMP") == ["backup db"]
    assert names("search=nightly backup") == ["backup db"]
    assert names("search=mail") == ["send mail"]

    first = staff.get(f"{JOBS}?page_size=2").json()
    assert first["count"] == 3
    assert [j["name"] for j in first["results"]] == ["backup db", "cleanup"]
    second = staff.get(first["next"]).json()
    assert [j["name"] for j in second["results"]] == ["send mail"]
    assert staff.get(f"{JOBS}?page=9").status_code == 404


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("is_active=maybe", "is_active"),
        ("schedule_type=weekly", "schedule_type"),
        ("search=" + "s" * 201, "search"),
    ],
)
def test_bad_job_filters_are_a_400_at_the_parameter(staff, query, field):
    response = staff.get(f"{JOBS}?{query}")
    assert response.status_code == 400
    assert field in response.json()


def test_the_job_list_costs_the_same_queries_for_3_or_30_jobs(staff):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert staff.get(JOBS).status_code == 200
        return len(captured)

    for _ in range(3):
        make_job()
    queries()  # the token's first use notes it (jobs.models.tokens: once a minute)
    few = queries()
    for _ in range(27):
        make_job()
    assert queries() == few


def test_the_run_list_filters_by_job_status_and_time(staff):
    now = timezone.now()
    backup, mail = make_job(name="backup"), make_job(name="mail")
    old_fail = finish_run(backup, succeeded=False, now=now - timedelta(hours=2))
    new_ok = finish_run(backup, succeeded=True, now=now - timedelta(minutes=1))
    mail_ok = finish_run(mail, succeeded=True, now=now - timedelta(minutes=30))

    def ids(query: str) -> set[str]:
        response = staff.get(f"{RUNS}?{query}")
        assert response.status_code == 200, response.json()
        return {run["id"] for run in response.json()["results"]}

    assert ids("") == {str(r.pk) for r in (old_fail, new_ok, mail_ok)}
    assert ids(f"job={backup.pk}") == {str(old_fail.pk), str(new_ok.pk)}
    assert ids("status=failed") == {str(old_fail.pk)}
    after = (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    assert ids(f"scheduled_after={after}") == {str(new_ok.pk), str(mail_ok.pk)}
    assert ids(f"created_before={after}") == {str(old_fail.pk)}
    assert ids(f"job={mail.pk}&status=failed") == set()

    bad = staff.get(f"{RUNS}?status=lost&job=nope&created_after=yesterday")
    assert bad.status_code == 400
    assert set(bad.json()) == {"status", "job", "created_after"}


def test_the_run_list_pages_by_cursor_without_counting_the_table(staff):
    job = make_job()
    now = timezone.now()
    # Five runs created in the same instant (as a claim creates a batch), and two more.
    same = [
        JobHistory(
            job=job, scheduled_for=now + timedelta(seconds=i), not_before=now, created_at=now
        )
        for i in range(5)
    ]
    later = [
        JobHistory(
            job=job,
            scheduled_for=now + timedelta(minutes=i),
            not_before=now,
            created_at=now + timedelta(minutes=i),
        )
        for i in (1, 2)
    ]
    JobHistory.objects.bulk_create(same + later)

    seen: list[str] = []
    url = f"{RUNS}?page_size=2"
    with CaptureQueriesContext(connection) as captured:
        while url:
            page = staff.get(url).json()
            seen += [run["id"] for run in page["results"]]
            url = page["next"]
    assert len(seen) == len(set(seen)) == 7
    assert seen[:2] == [str(later[1].pk), str(later[0].pk)]
    # (The throttles' shared cache counts its own small table when it stores a count.)
    counts = [q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"].upper()]
    assert all("jobs_cache" in sql for sql in counts), counts


@pytest.mark.parametrize("listing", ["all runs", "a job's runs"])
def test_following_next_returns_every_run_once_when_a_batch_shares_one_instant(staff, listing):
    # A claim creates its whole batch with one created_at; paging by that timestamp
    # alone (with an OFFSET to skip equal ones) repeated some runs and lost others.
    job = make_job()
    now = timezone.now()
    batch = [
        JobHistory(
            job=job, scheduled_for=now + timedelta(seconds=i), not_before=now, created_at=now
        )
        for i in range(3000)
    ]
    JobHistory.objects.bulk_create(batch)
    url = f"{RUNS if listing == 'all runs' else job_url(job, 'runs')}?page_size=200"
    seen: list[str] = []
    pages = 0
    while url:
        page = staff.get(url).json()
        seen += [run["id"] for run in page["results"]]
        url = page["next"]
        pages += 1
        assert pages <= 16, "next never ends"
    assert len(seen) == len(set(seen)) == 3000
    assert set(seen) == {str(run.pk) for run in batch}


def test_previous_pages_back_to_the_newest_runs(staff):
    job = make_job()
    now = timezone.now()
    JobHistory.objects.bulk_create(
        JobHistory(
            job=job, scheduled_for=now + timedelta(seconds=i), not_before=now, created_at=now
        )
        for i in range(5)
    )
    first = staff.get(f"{RUNS}?page_size=2").json()
    assert first["previous"] is None
    second = staff.get(first["next"]).json()
    back = staff.get(second["previous"]).json()
    assert back["results"] == first["results"]
    assert staff.get(f"{RUNS}?cursor=garbage").status_code == 404


def test_a_jobs_runs_lists_only_that_job_and_its_filters(staff):
    job, other = make_job(), make_job()
    mine = finish_run(job, succeeded=False)
    finish_run(other, succeeded=False)
    response = staff.get(f"{job_url(job, 'runs')}?status=failed")
    assert response.status_code == 200
    assert [r["id"] for r in response.json()["results"]] == [str(mine.pk)]
    assert staff.get(f"{job_url(job, 'runs')}?status=success").json()["results"] == []


def test_one_run_shows_its_log_and_alert_attempts(staff):
    job = make_job()
    run = finish_run(job, succeeded=False, log="$ echo hello\nboom\n")
    NotificationAttempt.objects.create(
        run=run,
        kind="failure",
        channel="webhook",
        target="http://127.0.0.1:9/x",
        attempt=1,
        status="failed",
        error="ConnectionRefusedError",
    )
    listed = staff.get(RUNS).json()["results"][0]
    assert "log" not in listed
    detail = staff.get(f"{RUNS}{run.pk}/").json()
    assert detail["log"] == "$ echo hello\nboom\n"
    assert detail["status"] == "failed"
    assert detail["job_name"] == job.name
    assert detail["duration_seconds"] == 2.0
    assert [n["status"] for n in detail["notifications"]] == ["failed"]


def test_the_state_of_a_job_follows_its_runs(staff):
    job = make_job()
    finish_run(job, succeeded=False)
    assert staff.get(job_url(job)).json()["state"] == "failed"
    run = engine.run_now(job)
    engine.start([t for t in engine.ready_tickets() if t.run_id == run.pk], "w")
    assert staff.get(job_url(job)).json()["state"] == "running"


# --- tokens, schema, docs ----------------------------------------------------------------


def test_apitoken_prints_a_token_that_authenticates():
    make_user("robot", staff=True)
    out = StringIO()
    call_command("apitoken", "robot", stdout=out)
    key = out.getvalue().strip()
    assert find_token(key).user.username == "robot"

    # Without --name, each call makes another token (the quick start's command, again).
    again = StringIO()
    call_command("apitoken", "robot", stdout=again)
    assert find_token(again.getvalue().strip()).pk != find_token(key).pk
    assert ApiToken.objects.filter(user__username="robot", name__startswith="command ").count() == 2

    # The secret is not kept, so a named token cannot be printed again: --reset replaces it.
    call_command("apitoken", "robot", "--name", "ci", stdout=StringIO())
    with pytest.raises(CommandError, match="already has a token named 'ci'"):
        call_command("apitoken", "robot", "--name", "ci", stdout=StringIO())
    with pytest.raises(CommandError, match="--reset needs the --name"):
        call_command("apitoken", "robot", "--reset", stdout=StringIO())
    first = StringIO()
    call_command("apitoken", "robot", "--name", "replaced", stdout=first)
    key = first.getvalue().strip()
    reset = StringIO()
    call_command("apitoken", "robot", "--name", "replaced", "--reset", stdout=reset)
    new_key = reset.getvalue().strip()
    assert new_key != key

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {new_key}")
    assert client.post(JOBS, VALID, format="json").status_code == 201
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(JOBS).status_code == 401


def test_apitoken_refuses_an_unknown_user():
    with pytest.raises(CommandError, match="no user"):
        call_command("apitoken", "ghost", stdout=StringIO())


def test_tokens_can_be_seen_in_the_admin_but_not_added(client):
    admin = make_user("boss", staff=True)
    admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    assert client.get("/admin/jobs/apitoken/").status_code == 200
    assert client.get("/admin/jobs/apitoken/add/").status_code == 403
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 404


def test_the_schema_and_the_docs_are_served_from_the_repo(client):
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    body = schema.json()
    assert body["openapi"].startswith("3.")
    assert "/api/v1/jobs/{id}/run/" in body["paths"]
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "drf_spectacular_sidecar/swagger-ui-dist" in html
    assert "cdn" not in html.lower()


def test_the_schema_is_valid_openapi_and_generates_without_warnings(tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    assert "/api/v1/runs/{id}/:" in target.read_text()


def test_a_cron_job_is_created_through_the_api_with_its_zone(staff):
    response = staff.post(
        "/api/v1/jobs/",
        {
            "name": "nightly",
            "command": "backup",
            "schedule_type": "cron",
            "cron_expression": "30 2 * * *",
            "timezone": "Europe/Berlin",
            "overlap_policy": "forbid",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["timezone"] == "Europe/Berlin" and body["next_run_at"]
    assert "02:30" in body["schedule_text"]


def test_a_pending_run_is_cancelled_through_the_api_and_not_twice(staff, reader):
    job = make_job()
    run = engine.run_now(job)
    assert reader.post(f"{RUNS}{run.pk}/cancel/").status_code == 403
    response = staff.post(f"{RUNS}{run.pk}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    assert staff.post(f"{RUNS}{run.pk}/cancel/").status_code == 409
