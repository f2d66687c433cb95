"""The time a run was meant for reaches the work: a python task's parameter
scheduled_for, JOBS_SCHEDULED_FOR for command and shell runs, the Jobs-Scheduled-For
header of an http run (a loopback receiver). Real child processes, a real server."""

from __future__ import annotations

import pytest

from jobs.models import RunStatus
from jobs.pytasks import signature
from jobs.pytasks.registry import get_task
from jobs.runs import scheduled_for_text
from jobs.tests import sample_tasks
from jobs.tests.executors.test_executors import (
    due_now,
    http_job,
    http_server,
    only_run,
    python_job,
    run_all,
)
from jobs.tests.factories import make_job

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_python_task_declaring_scheduled_for_gets_the_runs_occurrence():
    sample_tasks.calls.clear()
    job = python_job("jobs.tests.sample_tasks.meant_for", {"label": "daily"})
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS, run.log
    (call,) = sample_tasks.calls["meant_for"]
    assert call == {"scheduled_for": run.scheduled_for, "label": "daily"}
    assert call["scheduled_for"].tzinfo is not None


def test_scheduled_for_is_no_argument_a_job_may_set():
    task = get_task("jobs.tests.sample_tasks.meant_for")
    assert [p.name for p in task.parameters] == ["label"]
    with pytest.raises(signature.ArgumentsError) as refused:
        signature.bind_arguments(task, {"scheduled_for": "2027-01-01T00:00:00+00:00"})
    assert "scheduled_for" in refused.value.errors


def test_a_command_run_has_jobs_scheduled_for_in_its_environment(settings):
    settings.JOBS_MANAGEMENT_COMMANDS = ["shell"]
    job = make_job(
        name="env",
        executor="command",
        command="shell -c \"import os; print('meant', os.environ['JOBS_SCHEDULED_FOR'])\"",
        clean=True,
    )
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert f"meant {scheduled_for_text(run.scheduled_for)}" in run.log


def test_a_shell_run_has_jobs_scheduled_for_in_its_environment(settings):
    settings.JOBS_SHELL_ENABLED = True
    job = make_job(name="shell env", executor="shell", command="env", clean=True)
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert f"JOBS_SCHEDULED_FOR={scheduled_for_text(run.scheduled_for)}" in run.log.splitlines()


def test_an_http_run_sends_the_jobs_scheduled_for_header(settings):
    settings.JOBS_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    with http_server() as server:
        job = http_job(server["url"])
        due_now(job)
        run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS, run.log
    (request,) = server["requests"]
    assert request["headers"]["Jobs-Scheduled-For"] == scheduled_for_text(run.scheduled_for)
