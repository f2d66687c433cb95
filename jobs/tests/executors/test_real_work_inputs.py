"""Bad input for jobs that do real work, refused at the field with nothing saved (the
model, the API with 400 or 403, the admin), the shell permission, masking of secret
arguments, run now with arguments, and the list of registered tasks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.urls import reverse

from jobs.access.permissions import JOB_ADMINS, JOB_OPERATORS, JOB_VIEWERS, USE_SHELL
from jobs.models import ChangeAction, Job, JobChange, JobHistory, gate
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import make_job, make_user
from jobs.tests.forms import admin_form

pytestmark = pytest.mark.django_db

TASK = "jobs.tests.sample_tasks.record"


def job_values(**fields: Any) -> dict[str, Any]:
    """An API payload for a valid job, every 10 minutes."""
    return {
        "name": "real work",
        "command": TASK,
        "executor": "python",
        "arguments": {"key": "k"},
        "schedule_type": "interval",
        "interval": 10,
        "interval_unit": "minute",
        **fields,
    }


@pytest.fixture
def admin_user():
    return make_user("jobadmin", JOB_ADMINS)


@pytest.fixture
def shell_admin():
    return make_user("shelladmin", JOB_ADMINS, permissions=(USE_SHELL,))


@pytest.fixture
def shell_on(settings):
    settings.JOBS_SHELL_ENABLED = True
    return settings


# Each bad input: the payload's changes, the field the message is at.
BAD_INPUTS = [
    pytest.param({"executor": "rocket"}, "executor", id="unknown executor"),
    pytest.param({"command": "os.system"}, "command", id="unregistered task (a dotted path)"),
    pytest.param(
        {"command": "jobs.tests.sample_tasks.not_registered"},
        "command",
        id="importable, not registered",
    ),
    pytest.param({"arguments": {}}, "arguments", id="a required argument missing"),
    pytest.param({"arguments": {"key": "k", "nope": 1}}, "arguments", id="an unknown argument"),
    pytest.param({"arguments": {"key": 5}}, "arguments", id="an argument of the wrong type"),
    pytest.param({"arguments": [1, 2]}, "arguments", id="arguments not an object"),
    pytest.param(
        {"executor": "command", "command": "nosuchcommand", "arguments": {}},
        "command",
        id="a command that does not exist",
    ),
    pytest.param(
        {"executor": "command", "command": "check --no-such-option", "arguments": {}},
        "command",
        id="options its parser refuses",
    ),
    pytest.param(
        {"executor": "command", "command": "diffsettings", "arguments": {}},
        "command",
        id="a command not listed",
    ),
    pytest.param(
        {"executor": "command", "command": "check", "arguments": {"x": 1}},
        "arguments",
        id="arguments for a command",
    ),
    pytest.param(
        {"executor": "http", "command": "http://127.0.0.1:8000/", "arguments": {}},
        "command",
        id="http to loopback",
    ),
    pytest.param(
        {"executor": "http", "command": "http://169.254.169.254/latest/", "arguments": {}},
        "command",
        id="http to the metadata service",
    ),
    pytest.param(
        {"executor": "http", "command": "ftp://example.com/", "arguments": {}},
        "command",
        id="not an http URL",
    ),
    pytest.param(
        {"executor": "http", "command": "https://example.com/", "arguments": {"method": "BREW"}},
        "arguments",
        id="an unknown method",
    ),
    pytest.param(
        {
            "executor": "http",
            "command": "https://example.com/",
            "arguments": {"headers": {"X-A": "a\r\nInjected: 1"}},
        },
        "arguments",
        id="a header with a line break",
    ),
]


@pytest.mark.parametrize(("changes", "field"), BAD_INPUTS)
def test_bad_input_is_a_400_at_the_field_and_nothing_is_saved(admin_user, changes, field):
    response = token_client(admin_user).post("/api/v1/jobs/", job_values(**changes), format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json(), response.json()
    assert not Job.objects.exists()


@pytest.mark.parametrize(("changes", "field"), BAD_INPUTS)
def test_bad_input_is_refused_by_job_clean_at_the_field(changes, field):
    values = job_values(**changes)
    job = Job(**values)
    with pytest.raises(ValidationError) as caught:
        job.full_clean()
    assert field in caught.value.message_dict


def test_argument_messages_name_each_parameter():
    job = Job(**job_values(command="samples.typed", arguments={"ratio": "x", "extra": 1}))
    with pytest.raises(ValidationError) as caught:
        job.full_clean()
    messages = caught.value.message_dict["arguments"]
    assert any(m.startswith("count: ") for m in messages)
    assert any(m.startswith("ratio: ") for m in messages)
    assert any(m.startswith("extra: ") for m in messages)


def test_arguments_with_a_nul_are_refused():
    job = Job(**job_values(arguments={"key": "a\x00b"}))
    with pytest.raises(ValidationError) as caught:
        job.full_clean()
    assert "NUL" in " ".join(caught.value.message_dict["arguments"])


def test_a_shell_job_while_shell_is_off_is_a_400_even_with_the_permission(shell_admin):
    response = token_client(shell_admin).post(
        "/api/v1/jobs/",
        job_values(executor="shell", command="echo hi", arguments={}),
        format="json",
    )
    assert response.status_code == 400
    assert "JOBS_SHELL_ENABLED" in response.json()["executor"][0]
    assert not Job.objects.exists()


def test_a_shell_job_by_a_user_without_use_shell_is_a_403_and_nothing_is_saved(
    admin_user, shell_on
):
    response = token_client(admin_user).post(
        "/api/v1/jobs/",
        job_values(executor="shell", command="echo hi", arguments={}),
        format="json",
    )
    assert response.status_code == 403
    assert USE_SHELL in response.json()["detail"]
    assert not Job.objects.exists()


def test_a_user_with_use_shell_creates_a_shell_job(shell_admin, shell_on):
    response = token_client(shell_admin).post(
        "/api/v1/jobs/",
        job_values(executor="shell", command="echo hi", arguments={"env": {"A": "1"}}),
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert Job.objects.get().executor == "shell"


def test_changing_a_shell_job_even_away_from_shell_needs_use_shell(admin_user, shell_on):
    job = make_job(executor="shell", command="echo hi")
    client = token_client(admin_user)
    for change in ({"name": "renamed"}, {"executor": "simulated"}, {"arguments": {"env": {}}}):
        response = client.patch(f"/api/v1/jobs/{job.pk}/", change, format="json")
        assert response.status_code == 403, change
    job.refresh_from_db()
    assert (job.name, job.executor) == ("backup", "shell")


def test_a_dangerous_listed_command_needs_use_shell(admin_user, shell_admin, settings):
    settings.JOBS_MANAGEMENT_COMMANDS = ["check", "flush"]
    values = job_values(executor="command", command="flush --no-input", arguments={})
    assert token_client(admin_user).post("/api/v1/jobs/", values, format="json").status_code == 403
    response = token_client(shell_admin).post("/api/v1/jobs/", values, format="json")
    assert response.status_code == 201, response.json()


def test_a_dangerous_command_not_listed_is_refused_at_the_command_even_with_use_shell(
    shell_admin,
):
    values = job_values(executor="command", command="flush --no-input", arguments={})
    response = token_client(shell_admin).post("/api/v1/jobs/", values, format="json")
    assert response.status_code == 400
    assert "JOBS_MANAGEMENT_COMMANDS" in response.json()["command"][0]


def test_needs_use_shell_reads_jobs_and_values():
    assert gate.needs_use_shell({"executor": "shell", "command": "x"})
    assert gate.needs_use_shell(Job(executor="command", command="dbshell"))
    assert not gate.needs_use_shell({"executor": "command", "command": "check"})
    assert not gate.needs_use_shell(Job(executor="python", command="shell"))


# --- run now with arguments ----------------------------------------------------------------


def test_run_now_with_arguments_stores_them_and_without_keeps_the_jobs(admin_user):
    job = make_job(executor="python", command=TASK, arguments={"key": "own"})
    client = token_client(admin_user)
    response = client.post(
        f"/api/v1/jobs/{job.pk}/run/", {"arguments": {"key": "other", "value": 2}}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["arguments"] == {"key": "other", "value": 2}
    response = client.post(f"/api/v1/jobs/{job.pk}/run/", format="json")
    assert response.status_code == 201
    assert response.json()["arguments"] == {"key": "own"}


def test_run_now_with_arguments_that_do_not_bind_is_a_400_and_makes_no_run(admin_user):
    job = make_job(executor="python", command=TASK, arguments={"key": "own"})
    response = token_client(admin_user).post(
        f"/api/v1/jobs/{job.pk}/run/", {"arguments": {"value": 1}}, format="json"
    )
    assert response.status_code == 400
    assert "key: This argument is required." in response.json()["arguments"]
    assert not JobHistory.objects.exists()


def test_run_now_of_a_shell_job_with_other_arguments_needs_use_shell(shell_on):
    operator = make_user("operator", JOB_OPERATORS)
    job = make_job(executor="shell", command="env", arguments={"env": {"A": "1"}})
    client = token_client(operator)
    other = {"arguments": {"env": {"A": "2"}}}
    assert client.post(f"/api/v1/jobs/{job.pk}/run/", other, format="json").status_code == 403
    assert not JobHistory.objects.exists()
    # Its own arguments: the run permission is enough.
    assert client.post(f"/api/v1/jobs/{job.pk}/run/", format="json").status_code == 201


# --- restore -----------------------------------------------------------------------------


def test_restoring_a_shell_version_needs_use_shell(shell_on):
    job = make_job(executor="shell", command="echo hi", arguments={})
    shell_version = JobChange.objects.filter(job_id=job.pk).latest("created_at")
    job.executor, job.command = "simulated", "echo hi"
    job.save()
    user = make_user("plain admin", JOB_ADMINS)
    assert not job.may_restore(shell_version, user)
    with pytest.raises(PermissionDenied):
        job.restore(shell_version, user=user)
    job.refresh_from_db()
    assert job.executor == "simulated"
    allowed = make_user("shell admin", JOB_ADMINS, permissions=(USE_SHELL,))
    assert job.restore(shell_version, user=allowed)
    assert Job.objects.get(pk=job.pk).executor == "shell"
    assert (
        JobChange.objects.filter(job_id=job.pk).latest("created_at").action == ChangeAction.RESTORE
    )


# --- masking -----------------------------------------------------------------------------


def secret_http_job() -> Job:
    return make_job(
        executor="http",
        command="https://example.com/hook",
        arguments={
            "method": "POST",
            "headers": {"Authorization": "Bearer abc123secret", "X-Trace": "visible"},
        },
    )


def test_secret_header_values_are_masked_for_users_who_may_not_change_jobs(admin_user):
    job = secret_http_job()
    viewer = make_user("viewer", JOB_VIEWERS)
    shown = token_client(viewer).get(f"/api/v1/jobs/{job.pk}/").json()["arguments"]
    # Every value: a credential hides under any name.
    assert shown["headers"] == {"Authorization": "…", "X-Trace": "…"}
    whole = token_client(admin_user).get(f"/api/v1/jobs/{job.pk}/").json()["arguments"]
    assert whole["headers"]["Authorization"] == "Bearer abc123secret"
    # The audit trail too.
    changes = token_client(viewer).get(f"/api/v1/jobs/{job.pk}/changes/").json()["results"]
    assert "abc123secret" not in json.dumps(changes)
    assert "abc123secret" in json.dumps(
        token_client(admin_user).get(f"/api/v1/jobs/{job.pk}/changes/").json()
    )


def test_secret_env_values_are_masked_in_a_runs_arguments_and_log(shell_on):
    job = make_job(
        executor="shell",
        command="env",
        arguments={"env": {"DEPLOY_TOKEN": "tok-0123456789", "REGION": "eu"}},
    )
    run = JobHistory.objects.create(
        job=job,
        scheduled_for=job.created_at,
        not_before=job.created_at,
        arguments=job.arguments,
        log="DEPLOY_TOKEN=tok-0123456789\nREGION=eu\n",
    )
    viewer = make_user("viewer", JOB_VIEWERS)
    data = token_client(viewer).get(f"/api/v1/runs/{run.pk}/").json()
    assert data["arguments"] == {"env": {"DEPLOY_TOKEN": "…", "REGION": "…"}}
    assert "tok-0123456789" not in data["log"] and "REGION=eu" in data["log"]
    # A shell job's secrets are for users who may create it (jobs.use_shell) only.
    admin = make_user("admin", JOB_ADMINS)
    assert "tok-0123456789" not in token_client(admin).get(f"/api/v1/runs/{run.pk}/").json()["log"]
    sheller = make_user("sheller", JOB_ADMINS, permissions=(USE_SHELL,))
    assert "tok-0123456789" in token_client(sheller).get(f"/api/v1/runs/{run.pk}/").json()["log"]


# --- the registered tasks ------------------------------------------------------------------


def test_the_registered_tasks_are_listed_for_users_who_may_view_jobs():
    viewer = make_user("viewer", JOB_VIEWERS)
    tasks = token_client(viewer).get("/api/v1/tasks/").json()
    names = [task["name"] for task in tasks]
    assert names == sorted(names) and TASK in names
    invoices = next(t for t in tasks if t["name"] == "jobs.tests.sample_tasks.send_invoices")
    assert invoices == {
        "name": "jobs.tests.sample_tasks.send_invoices",
        "description": "Send the day's invoices.",
        "signature": "send_invoices(day: str = 'today')",
        "parameters": [
            {
                "name": "day",
                "kind": "str",
                "required": False,
                "default": "today",
                "choices": [],
                "annotation_text": "str",
                "nullable": False,
            }
        ],
    }
    nobody = make_user("nobody")
    assert token_client(nobody).get("/api/v1/tasks/").status_code == 403


# --- the admin ---------------------------------------------------------------------------


def admin_client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(("changes", "field"), BAD_INPUTS)
def test_the_admin_refuses_bad_input_at_the_field(changes, field):
    root = make_user("root", superuser=True)
    values = {"executor": "python", "command": TASK, "arguments": {"key": "k"}, **changes}
    values["arguments"] = json.dumps(values["arguments"])
    data = admin_form(**values)
    response = admin_client_of(root).post(reverse("admin:jobs_job_add"), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors, errors
    assert not Job.objects.exists()


def test_the_admin_refuses_a_shell_job_to_a_user_without_use_shell(shell_on):
    staff = make_user("staff", JOB_ADMINS, staff=True)
    data = admin_form(executor="shell", command="echo hi", arguments="{}")
    response = admin_client_of(staff).post(reverse("admin:jobs_job_add"), data)
    assert response.status_code == 200
    assert "executor" in response.context["adminform"].form.errors
    assert not Job.objects.exists()
    shell_staff = make_user("shell staff", JOB_ADMINS, staff=True, permissions=(USE_SHELL,))
    response = admin_client_of(shell_staff).post(reverse("admin:jobs_job_add"), data)
    assert response.status_code == 302
    assert Job.objects.get().executor == "shell"


def test_the_admins_run_now_keeps_the_jobs_own_arguments():
    root = make_user("root", superuser=True)
    job = make_job(executor="python", command=TASK, arguments={"key": "own"})
    response = admin_client_of(root).post(
        reverse("admin:jobs_job_changelist"),
        {"action": "run_now", "_selected_action": [str(job.pk)]},
    )
    assert response.status_code == 302
    assert JobHistory.objects.get().arguments == {"key": "own"}


def test_the_admins_run_page_masks_secret_env_values_for_users_who_may_not_change_jobs(shell_on):
    job = make_job(executor="shell", command="env", arguments={"env": {"API_KEY": "k-98765"}})
    run = JobHistory.objects.create(
        job=job,
        scheduled_for=job.created_at,
        not_before=job.created_at,
        arguments=job.arguments,
        log="API_KEY=k-98765\n",
    )
    url = reverse("admin:jobs_jobhistory_change", args=[run.pk])
    viewer = make_user("staff viewer", JOB_VIEWERS, staff=True)
    page = admin_client_of(viewer).get(url).content.decode()
    assert "k-98765" not in page and "API_KEY=…" in page
    root = make_user("root", superuser=True)
    assert "k-98765" in admin_client_of(root).get(url).content.decode()
