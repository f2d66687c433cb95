"""The task backend against the cases of Django's own backend tests (Django's
tests/tasks/: enqueue, results, errors, context, validation), written for a backend whose
runs execute later, in the scheduler: each result is READY when enqueue() returns and
reaches its end after a scheduler pass (`run_enqueued`), read back with refresh() or
get_result()."""

from __future__ import annotations

import uuid

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from jobs.models import Job, JobHistory, RunStatus, Trigger
from jobs.tasks_backend import SchedulerBackend
from jobs.tests import enqueued_tasks as tasks
from jobs.tests.tasks_backend.helpers import (
    FAILED,
    READY,
    SUCCESSFUL,
    backend,
    exceptions,
    run_enqueued,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_default_backend_is_the_schedulers():
    assert isinstance(backend(), SchedulerBackend)
    assert backend().alias == "default"
    assert backend().options == {}
    features = ("supports_defer", "supports_async_task", "supports_get_result", "supports_priority")
    assert all(getattr(backend(), feature) for feature in features)


@pytest.mark.parametrize("task", [tasks.noop_task, tasks.noop_task_async])
def test_an_enqueued_task_is_ready_then_successful_after_a_pass(task):
    result = task.enqueue(1, two=3)

    assert result.status == READY and result.is_finished is False
    assert result.enqueued_at is not None and result.started_at is None
    assert (result.args, result.kwargs, result.attempts, result.task) == ([1], {"two": 3}, 0, task)
    with pytest.raises(ValueError, match="Task has not finished yet"):
        result.return_value  # noqa: B018 - reading it raises

    run_enqueued()
    result.refresh()

    assert result.status == SUCCESSFUL and result.is_finished is True
    assert result.enqueued_at <= result.started_at <= result.finished_at
    assert result.last_attempted_at == result.started_at
    assert result.return_value is None
    assert (result.args, result.kwargs, result.attempts) == ([1], {"two": 3}, 1)


@pytest.mark.parametrize("task", [tasks.noop_task, tasks.noop_task_async])
def test_aenqueue_and_arefresh_do_the_same(task):
    result = async_to_sync(task.aenqueue)()
    assert result.status == READY

    run_enqueued()
    async_to_sync(result.arefresh)()

    assert result.status == SUCCESSFUL
    assert (result.args, result.kwargs, result.attempts) == ([], {}, 1)


def test_the_result_holds_the_return_value():
    result = backend().enqueue(tasks.calculate_meaning_of_life, [], {})
    run_enqueued()

    assert backend().get_result(result.id).return_value == 42
    assert async_to_sync(backend().aget_result)(result.id).return_value == 42
    assert tasks.calculate_meaning_of_life.get_result(result.id).status == SUCCESSFUL


def test_the_result_id_is_the_runs_id_and_the_run_keeps_the_call():
    result = tasks.echo.enqueue(1, [2, "3"], four={"five": None})

    run = JobHistory.objects.select_related("job").get(pk=uuid.UUID(result.id))
    assert run.status == RunStatus.PENDING and run.trigger == Trigger.ENQUEUE
    assert run.arguments == {"args": [1, [2, "3"]], "kwargs": {"four": {"five": None}}}
    assert run.job.command == tasks.echo.module_path
    run_enqueued()
    assert tasks.echo.get_result(result.id).return_value == {
        "args": [1, [2, "3"]],
        "kwargs": {"four": {"five": None}},
    }


@pytest.mark.parametrize(
    ("task", "exception", "message"),
    [
        (tasks.failing_task_value_error, ValueError, "This task failed due to ValueError"),
        (tasks.failing_task_system_exit, SystemExit, "This task failed due to SystemExit"),
    ],
)
def test_a_task_that_raises_fails_with_its_exception_and_traceback(task, exception, message):
    result = task.enqueue()
    run_enqueued()
    result.refresh()

    assert result.status == FAILED and result.is_finished is True
    with pytest.raises(ValueError, match="Task failed"):
        result.return_value  # noqa: B018 - reading it raises
    assert result.enqueued_at <= result.started_at <= result.finished_at
    assert result.errors[0].exception_class is exception
    assert result.errors[0].traceback.endswith(f"{exception.__name__}: {message}\n")
    assert (result.args, result.kwargs) == ([], {})


def test_a_complex_exception_is_kept_as_raised():
    result = tasks.complex_exception.enqueue()
    run_enqueued()
    result.refresh()

    assert result.status == FAILED and result._return_value is None
    assert result.errors[0].exception_class is ValueError
    assert 'ValueError(ValueError("This task failed"))' in result.errors[0].traceback


def test_a_return_value_json_cannot_hold_fails_the_task():
    result = tasks.complex_return_value.enqueue()
    run_enqueued()
    result.refresh()

    assert result.status == FAILED and result._return_value is None
    assert result.errors[0].exception_class is TypeError
    assert "Unsupported type" in result.errors[0].traceback or "JSON" in result.errors[0].traceback


def test_a_task_that_takes_its_context_gets_its_result():
    result = tasks.get_task_id.enqueue()
    checked = tasks.check_context.enqueue(1)
    run_enqueued()

    assert tasks.get_task_id.get_result(result.id).return_value == result.id
    assert tasks.check_context.get_result(checked.id).status == SUCCESSFUL


@pytest.mark.parametrize("result_id", [str(uuid.uuid4()), "123", "not a uuid", ""])
def test_an_unknown_result_does_not_exist(result_id):
    with pytest.raises(exceptions.TaskResultDoesNotExist):
        backend().get_result(result_id)
    with pytest.raises(exceptions.TaskResultDoesNotExist):
        async_to_sync(backend().aget_result)(result_id)


def test_the_run_of_another_job_is_no_task_result(make_job):
    run = JobHistory.objects.create(
        job=make_job(), scheduled_for=_now(), not_before=_now(), created_at=_now()
    )
    with pytest.raises(exceptions.TaskResultDoesNotExist):
        backend().get_result(str(run.pk))


def test_a_result_read_through_another_task_is_a_mismatch():
    result = tasks.noop_task.enqueue()
    with pytest.raises(exceptions.TaskResultMismatch):
        tasks.calculate_meaning_of_life.get_result(result.id)


def test_arguments_json_cannot_hold_are_refused_and_nothing_is_enqueued():
    with pytest.raises(TypeError):
        tasks.noop_task.enqueue(object())
    with pytest.raises(TypeError):
        tasks.noop_task.enqueue(when={1, 2})
    assert not JobHistory.objects.exists()


def test_a_task_gets_one_job_however_often_it_is_enqueued_marked_as_the_backends():
    ids = {tasks.noop_task.enqueue(n).id for n in range(5)}
    tasks.calculate_meaning_of_life.enqueue()

    assert len(ids) == 5
    job = Job.objects.get(command=tasks.noop_task.module_path)
    assert job.enqueued_task and job.executor == "task" and not job.is_active
    assert job.runs.count() == 5
    assert {"name", "executor", "command"} <= job.code_fields
    assert Job.objects.filter(enqueued_task=True).count() == 2


def test_options_the_backend_does_not_take_are_refused():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="takes no options"):
        SchedulerBackend("other", {"OPTIONS": {"POLL": 1}})
    with pytest.raises(ImproperlyConfigured, match="not a queue name"):
        SchedulerBackend("other", {"QUEUES": ["no spaces"]})


@override_settings(
    TASKS={"default": {"BACKEND": "jobs.tasks_backend.SchedulerBackend", "QUEUES": ["queue-1"]}}
)
def test_settings_can_name_the_backend_by_its_dotted_path():
    assert isinstance(backend(), SchedulerBackend)
    assert backend().queues == {"queue-1"}


def _now():
    from django.utils import timezone

    return timezone.now()


def test_a_tasks_job_deleted_by_an_operator_is_made_again_on_the_next_enqueue():
    tasks.noop_task.enqueue(1)
    Job.objects.filter(enqueued_task=True).delete()  # its id is still cached here

    result = tasks.noop_task.enqueue(2)

    run = JobHistory.objects.select_related("job").get(pk=result.id)
    assert run.job.enqueued_task and run.arguments == {"args": [2], "kwargs": {}}


def test_a_cancelled_run_is_failed_with_the_scheduler_ending_it():
    from jobs import engine
    from jobs.pytasks.framework import RunEnded

    result = tasks.noop_task.enqueue()
    engine.cancel_run(JobHistory.objects.get(pk=result.id), by="alice")
    result.refresh()

    assert result.status == FAILED and result.attempts == 0
    assert result.errors[0].exception_class is RunEnded
    assert "cancelled by alice" in result.errors[0].traceback


def test_a_return_value_over_the_cap_fails_the_task_saying_so():
    result = tasks.huge_return_value.enqueue()
    run_enqueued()
    result.refresh()

    assert result.status == FAILED and result.errors[0].exception_class is ValueError
    assert "more than the 1,000,000 a result keeps" in result.errors[0].traceback
    assert JobHistory.objects.get(pk=result.id).result["error"]
