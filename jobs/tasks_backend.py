"""Django's task backend: every ``task.enqueue()`` becomes a run of this scheduler.

    TASKS = {"default": {"BACKEND": "jobs.tasks_backend.SchedulerBackend",
                         "QUEUES": ["default", "reports"]}}

On Django 6.0+ it is a ``django.tasks`` backend, on Django 5.2 one of the ``django-tasks``
backport (``django_tasks``); the same class, whichever this process has
(jobs.pytasks.framework). Each task gets an implicit job (one per task path, made on its
first enqueue: jobs.engine.enqueue), and each enqueue a pending run of it, inserted in
the caller's transaction; `runscheduler` (or Huey's workers) run it as any other run,
with its history, live log, retries, queue and priority, limits, cancel and alerts.

What a result says (docs/django-tasks.md "Statuses"): its id is the run's id (the first
attempt's); its status follows the occurrence's latest attempt: pending is READY (also
while a retry waits), running RUNNING, success SUCCESSFUL, and failed, cancelled,
skipped or timed out FAILED. Its errors are one per failed attempt: the exception the
task raised with its traceback, or, when the scheduler ended the attempt (a cancel, a
timeout, a lost worker), jobs.pytasks.framework.RunEnded with the end of the run's log.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from jobs.engine import enqueue
from jobs.executors.enqueued import find_task
from jobs.models import RunStatus
from jobs.pytasks import framework
from jobs.queues.settings import QueueError, check_name

logger = logging.getLogger("jobs.tasks_backend")

# How much of a run's log an error made from it (RunEnded) carries.
LOG_TAIL_CHARS = 2000

if framework.available():
    _Base: Any = framework.part("backends.base").BaseTaskBackend
else:  # the module imports without a task framework; the backend cannot be made

    class _Base:
        def __init__(self, alias: str, params: dict) -> None:
            raise ImproperlyConfigured(
                "jobs.tasks_backend needs django.tasks (Django 6) or django-tasks (Django 5.2)"
            )


class SchedulerBackend(_Base):
    """Enqueued tasks as runs of this scheduler (see the module's docstring)."""

    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict) -> None:
        super().__init__(alias, params)
        if self.options:
            raise ImproperlyConfigured(
                f"TASKS[{alias!r}]['OPTIONS']: the scheduler's backend takes no options, "
                f"got {', '.join(sorted(map(str, self.options)))}"
            )
        for name in self.queues:
            try:
                check_name(str(name), f"TASKS[{alias!r}]['QUEUES']")
            except QueueError as error:
                raise ImproperlyConfigured(str(error)) from None

    def validate_task(self, task: Any) -> None:
        super().validate_task(task)
        try:
            check_name(task.queue_name, "queue_name")
        except QueueError as error:
            raise framework.invalid_task_error()(str(error)) from None

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        """One pending run of the task's job, in the caller's transaction."""
        self.validate_task(task)
        call = framework.TaskCall(framework.normalize(list(args)), framework.normalize(kwargs))
        now = timezone.now()
        info = _task_info(task)
        options = {"queue": task.queue_name, "priority": task.priority, "run_after": task.run_after}
        try:
            run = enqueue.enqueue_run(enqueue.task_job_id(info, now), call, now=now, **options)
        except enqueue.JobGone:
            # Deleted by an operator since this process cached its id: made again.
            enqueue.forget_job_ids()
            run = enqueue.enqueue_run(enqueue.task_job_id(info, now), call, now=now, **options)
        logger.debug("task id=%s path=%s enqueued", run.pk, task.module_path)
        return framework.task_result(task, str(run.pk), "READY", call, enqueued_at=run.created_at)

    def get_result(self, result_id: Any) -> Any:
        """The result of the run `result_id` (any attempt's id), read from the runs."""
        missing = framework.part("exceptions").TaskResultDoesNotExist
        try:
            run_id = uuid.UUID(str(result_id))
        except ValueError:
            raise missing(result_id) from None
        found = enqueue.enqueued(run_id)
        target = find_task(found.task_path) if found is not None else None
        if found is None or target is None:
            raise missing(result_id)
        return _result(self.alias, target, found)


def _task_info(task: Any) -> enqueue.TaskInfo:
    doc = (task.func.__doc__ or "").strip().split("\n\n", 1)[0]
    source = f"{task.func.__module__.replace('.', '/')}.py"
    return enqueue.TaskInfo(task.module_path, " ".join(doc.split()), source)


# The run statuses that are not a failure; every other one is FAILED.
_STATUSES = {
    RunStatus.PENDING: "READY",
    RunStatus.RUNNING: "RUNNING",
    RunStatus.SUCCESS: "SUCCESSFUL",
}
_UNFINISHED = (RunStatus.PENDING, RunStatus.RUNNING)


def _result(alias: str, target: Any, found: enqueue.Enqueued) -> Any:
    base = framework.part("base")
    attempts = list(found.attempts)
    last = attempts[-1]
    task = target.using(
        priority=found.priority,
        queue_name=found.queue,
        backend=alias,
        run_after=found.not_before if found.not_before > found.scheduled_for else None,
    )
    started = [a for a in attempts if a.started_at is not None]
    result = framework.task_result(
        task,
        str(found.run_id),
        _STATUSES.get(last.status, "FAILED"),
        framework.call_of(found.arguments),
        enqueued_at=attempts[0].created_at,
        started_at=started[0].started_at if started else None,
        finished_at=None if last.status in _UNFINISHED else last.finished_at,
        last_attempted_at=started[-1].started_at if started else None,
        errors=[_error(base, a) for a in attempts if a.status not in _STATUSES],
        worker_ids=[a.worker for a in started],
    )
    if last.status == RunStatus.SUCCESS and isinstance(last.result, dict):
        object.__setattr__(result, "_return_value", last.result.get("return_value"))
    return result


def _error(base: Any, attempt: enqueue.Attempt) -> Any:
    stored = attempt.result.get("error") if isinstance(attempt.result, dict) else None
    if isinstance(stored, dict):
        return base.TaskError(
            exception_class_path=str(stored.get("exception_class_path", "")),
            traceback=str(stored.get("traceback", "")),
        )
    return base.TaskError(
        exception_class_path=framework.RUN_ENDED_ERROR,
        traceback=f"{framework.RunEnded.__name__}: the run ended {attempt.status}:\n"
        f"{attempt.log[-LOG_TAIL_CHARS:]}",
    )
