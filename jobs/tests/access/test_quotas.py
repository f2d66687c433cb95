"""The quotas at every entry point (jobs/models/quotas.py, job_rules.timeout_errors):

- JOBS_MAX_PENDING_MANUAL_RUNS: run now (the job page, the job list's bulk action, run
  again), the API's run (409) and the admin's action refuse the run past the limit with
  a message, and create nothing;
- JOBS_MIN_INTERVAL_SECONDS: a user without jobs.use_shell may not save a shorter
  interval (the dashboard's form, the admin's, the API), nor switch such a job on; users
  with jobs.use_shell and the site's code (syncjobs) may;
- JOBS_SHELL_MAX_TIMEOUT: a shell or command job's timeout above it is refused at save
  for everyone, the default above it is a system check error, and the executors stop a
  run there whatever its ticket says.

Every refusal leaves the jobs, the runs and the audit trail as they were.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.urls import reverse

from jobs import engine
from jobs.executors.base import ExecutionContext
from jobs.executors.checks import shell_timeout_settings
from jobs.executors.command import CommandExecutor
from jobs.executors.shell import ShellExecutor
from jobs.models import Job, JobChange, JobHistory, RunStatus, Trigger
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.declaring import code_job, syncjobs
from jobs.tests.factories import make_job, make_run, ticket
from jobs.tests.forms import admin_form, dashboard_form

pytestmark = pytest.mark.django_db

signed_in = personas.signed_in


def everything() -> tuple:
    """What a refusal must leave as it was: the jobs, the runs, the audit trail."""
    jobs = list(Job.objects.order_by("pk").values())
    runs = list(JobHistory.objects.order_by("pk").values_list("pk", "status", "trigger"))
    return jobs, runs, JobChange.objects.count()


def messages_of(response: Any) -> str:
    return " ".join(str(message) for message in get_messages(response.wsgi_request))


# --- JOBS_MAX_PENDING_MANUAL_RUNS ------------------------------------------------------


@pytest.fixture
def two_at_most(settings):  # type: ignore[no-untyped-def]
    settings.JOBS_MAX_PENDING_MANUAL_RUNS = 2
    return settings


@pytest.fixture
def full_job(two_at_most) -> Job:  # type: ignore[no-untyped-def]
    """A job with two pending runs started by hand: the limit."""
    job = make_job(name="report", interval=10, interval_unit="minute")
    engine.run_now(job)
    engine.run_now(job)
    return job


def manual_runs(job: Job) -> int:
    return JobHistory.objects.filter(job=job, trigger=Trigger.MANUAL).count()


def test_run_now_past_the_limit_is_refused_and_creates_nothing(full_job):
    before = everything()
    with pytest.raises(engine.ManualRunsExceeded) as refused:
        engine.run_now(full_job)
    assert "JOBS_MAX_PENDING_MANUAL_RUNS" in " ".join(refused.value.messages)
    assert "“report” already has 2 runs waiting" in " ".join(refused.value.messages)
    assert everything() == before


def test_only_pending_runs_started_by_hand_count(full_job):
    # Runs of other triggers waiting do not take the job's manual places...
    make_run(full_job, status=RunStatus.PENDING, trigger=Trigger.SCHEDULE)
    with pytest.raises(engine.ManualRunsExceeded):
        engine.run_now(full_job)
    # ... and one started by hand that began frees a place.
    started = JobHistory.objects.filter(job=full_job, trigger=Trigger.MANUAL).first()
    JobHistory.objects.filter(pk=started.pk).update(status=RunStatus.RUNNING)
    engine.run_now(full_job)
    assert manual_runs(full_job) == 3
    # The limit is per job: another job runs at once.
    other = make_job(name="other")
    engine.run_now(other)
    assert manual_runs(other) == 1


def test_the_job_page_says_why_and_runs_nothing(full_job):
    before = everything()
    client = signed_in(personas.operator())
    response = client.post(reverse("jobs:job_run", args=[full_job.pk]))
    assert response.status_code == 302
    assert "JOBS_MAX_PENDING_MANUAL_RUNS" in messages_of(response)
    assert everything() == before


def test_the_job_lists_bulk_run_says_why(full_job):
    other = make_job(name="other")
    client = signed_in(personas.operator())
    data = {"bulk_action": "run", "job": [str(full_job.pk), str(other.pk)]}
    response = client.post(reverse("jobs:job_bulk"), data)
    said = messages_of(response)
    assert "“report” was not changed" in said
    assert "JOBS_MAX_PENDING_MANUAL_RUNS" in said
    assert manual_runs(full_job) == 2
    assert manual_runs(other) == 1


def test_run_again_says_why_and_runs_nothing(full_job):
    finished = make_run(full_job, status=RunStatus.SUCCESS, trigger=Trigger.SCHEDULE)
    before = everything()
    client = signed_in(personas.operator())
    response = client.post(reverse("jobs:run_again", args=[finished.pk]), {"how": "again"})
    assert response.status_code == 302
    assert "JOBS_MAX_PENDING_MANUAL_RUNS" in messages_of(response)
    assert everything() == before


def test_the_api_answers_409_and_runs_nothing(full_job):
    client = token_client(personas.operator())
    before = everything()
    response = client.post(f"/api/v1/jobs/{full_job.pk}/run/")
    assert response.status_code == 409, response.json()
    assert "JOBS_MAX_PENDING_MANUAL_RUNS" in response.json()["detail"]
    assert everything() == before
    # Below the limit again, the same request runs it.
    JobHistory.objects.filter(job=full_job).update(status=RunStatus.CANCELLED)
    assert client.post(f"/api/v1/jobs/{full_job.pk}/run/").status_code == 201


def test_the_admins_action_names_the_refused_job(full_job):
    other = make_job(name="other")
    client = signed_in(personas.operator(staff=True))
    data = {"action": "run_now", "_selected_action": [str(full_job.pk), str(other.pk)]}
    said = messages_of(client.post(reverse("admin:jobs_job_changelist"), data))
    assert "Queued 1 run" in said
    assert "Could not run 1 job" in said and "JOBS_MAX_PENDING_MANUAL_RUNS" in said
    assert manual_runs(full_job) == 2
    assert manual_runs(other) == 1


# --- JOBS_MIN_INTERVAL_SECONDS ---------------------------------------------------------


def api_values(**fields: Any) -> dict[str, Any]:
    return {
        "name": "often",
        "command": "echo hi",
        "executor": "simulated",
        "arguments": {},
        "schedule_type": "interval",
        "interval": 5,
        "interval_unit": "second",
        **fields,
    }


def test_the_dashboard_form_refuses_a_short_interval_naming_the_minimum():
    before = everything()
    data = dashboard_form(executor="simulated", interval="5", interval_unit="second")
    response = signed_in(personas.job_admin()).post(reverse("jobs:job_create"), data)
    assert response.status_code == 200
    errors = response.context["form"].errors["interval"]
    assert "every 10 seconds (JOBS_MIN_INTERVAL_SECONDS)" in " ".join(errors)
    assert everything() == before


def test_the_admin_form_refuses_a_short_interval():
    before = everything()
    data = admin_form(interval="9", interval_unit="second")
    response = signed_in(personas.job_admin(staff=True)).post(reverse("admin:jobs_job_add"), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["interval"]
    assert "JOBS_MIN_INTERVAL_SECONDS" in " ".join(errors)
    assert everything() == before


def test_the_api_refuses_a_short_interval_on_create_and_update():
    client = token_client(personas.job_admin())
    before = everything()
    response = client.post("/api/v1/jobs/", api_values(), format="json")
    assert response.status_code == 400, response.json()
    assert "JOBS_MIN_INTERVAL_SECONDS" in " ".join(response.json()["interval"])
    assert everything() == before
    job = make_job(name="often", interval=1, interval_unit="minute")
    before = everything()
    response = client.patch(
        f"/api/v1/jobs/{job.pk}/", {"interval": 9, "interval_unit": "second"}, format="json"
    )
    assert response.status_code == 400, response.json()
    assert "interval" in response.json()
    assert everything() == before


def test_ten_seconds_is_allowed_and_the_minimum_is_a_setting(settings):
    client = token_client(personas.job_admin())
    response = client.post("/api/v1/jobs/", api_values(interval=10), format="json")
    assert response.status_code == 201, response.json()
    settings.JOBS_MIN_INTERVAL_SECONDS = 60
    response = client.post("/api/v1/jobs/", api_values(name="b", interval=59), format="json")
    assert response.status_code == 400
    assert "every 60 seconds" in " ".join(response.json()["interval"])


def test_users_with_use_shell_and_the_sites_code_are_exempt():
    client = token_client(personas.shell_admin())
    response = client.post("/api/v1/jobs/", api_values(interval=1), format="json")
    assert response.status_code == 201, response.json()
    # No acting user (syncjobs, scripts): the site's own code.
    make_job(name="by code", interval=1, interval_unit="second", clean=True)


def test_a_job_declared_in_code_is_exempt(declare):
    declare(every=timedelta(seconds=5))
    assert syncjobs().status == 0
    job = code_job()
    assert (job.interval, job.interval_unit) == (5, "second")
    # A user without jobs.use_shell may still change what the code does not own.
    response = token_client(personas.job_admin()).patch(
        f"/api/v1/jobs/{job.pk}/", {"priority": 3}, format="json"
    )
    assert response.status_code == 200, response.json()


def test_an_unchanged_short_interval_stays_editable_and_can_be_switched_off_not_on():
    job = make_job(name="often", interval=2, interval_unit="second")  # saved by the code
    client = token_client(personas.job_admin())
    response = client.patch(f"/api/v1/jobs/{job.pk}/", {"priority": 2}, format="json")
    assert response.status_code == 200, response.json()
    response = client.post(f"/api/v1/jobs/{job.pk}/disable/")
    assert response.status_code == 200, response.json()
    before = everything()
    response = client.post(f"/api/v1/jobs/{job.pk}/enable/")
    assert response.status_code == 400, response.json()
    assert everything() == before


# --- JOBS_SHELL_MAX_TIMEOUT ------------------------------------------------------------


@pytest.fixture
def shell_on(settings):  # type: ignore[no-untyped-def]
    settings.JOBS_SHELL_ENABLED = True
    return settings


@pytest.mark.parametrize("executor,command", [("shell", "echo hi"), ("command", "check")])
def test_the_api_refuses_a_timeout_above_the_most(shell_on, executor, command):
    client = token_client(personas.shell_admin())
    values = api_values(executor=executor, command=command, interval=10, timeout_seconds=86401)
    before = everything()
    response = client.post("/api/v1/jobs/", values, format="json")
    assert response.status_code == 400, response.json()
    message = " ".join(response.json()["timeout_seconds"])
    assert "at most 86400 seconds (JOBS_SHELL_MAX_TIMEOUT)" in message
    assert "the default, 3600 seconds" in message
    assert everything() == before
    values["timeout_seconds"] = 86400
    assert client.post("/api/v1/jobs/", values, format="json").status_code == 201


def test_other_kinds_keep_the_seven_days(shell_on):
    client = token_client(personas.job_admin())
    values = api_values(interval=10, timeout_seconds=604800)
    assert client.post("/api/v1/jobs/", values, format="json").status_code == 201


def test_the_dashboard_form_refuses_a_shell_timeout_above_the_most(shell_on):
    before = everything()
    data = dashboard_form(executor="shell", command="echo hi", timeout_seconds="90000")
    response = signed_in(personas.shell_admin()).post(reverse("jobs:job_create"), data)
    assert response.status_code == 200
    errors = response.context["form"].errors["timeout_seconds"]
    assert "JOBS_SHELL_MAX_TIMEOUT" in " ".join(errors)
    assert everything() == before


def test_the_admin_form_refuses_a_shell_timeout_above_the_most(shell_on):
    job = make_job(name="report", executor="shell", command="echo hi")
    before = everything()
    data = admin_form(name="report", executor="shell", command="echo hi", timeout_seconds="86401")
    url = reverse("admin:jobs_job_change", args=[job.pk])
    response = signed_in(personas.shell_admin(staff=True)).post(url, data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["timeout_seconds"]
    assert "JOBS_SHELL_MAX_TIMEOUT" in " ".join(errors)
    assert everything() == before


def test_syncjobs_is_held_to_the_most_too(settings):
    settings.JOBS_SHELL_MAX_TIMEOUT = 60
    job = make_job(name="c", executor="command", command="check", timeout_seconds=61)
    with pytest.raises(Exception) as refused:
        job.full_clean()
    assert "timeout_seconds" in refused.value.message_dict


def test_a_default_above_the_most_is_a_system_check_error(settings):
    assert shell_timeout_settings() == []
    settings.JOBS_SHELL_DEFAULT_TIMEOUT = 7200
    settings.JOBS_SHELL_MAX_TIMEOUT = 3600
    errors = shell_timeout_settings()
    assert [error.id for error in errors] == ["jobs.E041"]
    assert "JOBS_SHELL_DEFAULT_TIMEOUT (7200 s)" in errors[0].msg
    with pytest.raises(Exception, match=r"jobs\.E041"):
        call_command("check")
    # A host project's settings are not bounded as the site's are.
    settings.JOBS_SHELL_MAX_TIMEOUT = 0
    assert [error.id for error in shell_timeout_settings()] == ["jobs.E040"]


def test_the_shell_executor_stops_a_run_at_the_most_whatever_its_ticket_says(shell_on):
    shell_on.JOBS_SHELL_MAX_TIMEOUT = 1
    shell_on.JOBS_KILL_GRACE_SECONDS = 1
    outcome = ShellExecutor().execute(
        ticket(command="sleep 30", executor="shell", arguments={}, timeout_seconds=3600),
        ExecutionContext(),
    )
    assert not outcome.succeeded
    assert "timed out after 1 s (JOBS_SHELL_MAX_TIMEOUT)" in outcome.log


def test_a_command_run_without_a_timeout_gets_the_default(settings):
    settings.JOBS_SHELL_DEFAULT_TIMEOUT = 2
    settings.JOBS_KILL_GRACE_SECONDS = 1
    settings.JOBS_MANAGEMENT_COMMANDS = ["shell"]
    line = 'shell -c "import time; time.sleep(60)"'
    outcome = CommandExecutor().execute(
        ticket(command=line, executor="command"), ExecutionContext()
    )
    assert not outcome.succeeded
    assert "[stopping process group" in outcome.log, outcome.log
