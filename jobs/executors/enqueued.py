"""The executor of enqueued Django tasks (the kind "task"): the runs that
``task.enqueue()`` makes through jobs.tasks_backend.SchedulerBackend.

The job's command is the task's dotted path (``Task.module_path``), the run's arguments
its call (``{"args": [...], "kwargs": {...}}``, jobs.pytasks.framework.TaskCall). The
task is called as Django's own backends call it: with exactly those JSON values, the
task's context first when it takes one. Its return value must be JSON (as Django
requires); it is stored on the run (JobHistory.result) with the error it raised, if any,
for ``get_result()``. What it prints or logs goes to the run's log, as for python jobs.

Only the task backend makes jobs of this kind (the rules below refuse any other), so the
path imported here is always one that `enqueue()` was given a task object for.
"""

from __future__ import annotations

import inspect
import json
import os
import socket
import traceback
from datetime import UTC, datetime
from typing import Any

from django.utils.module_loading import import_string
from django.utils.translation import gettext

from jobs.executors.base import ExecutionContext, Outcome
from jobs.executors.capture import capturing
from jobs.executors.command_line import command_line
from jobs.executors.output import RunOutput
from jobs.executors.running import CurrentRun, running
from jobs.pytasks import framework
from jobs.pytasks.signature import (
    SCHEDULED_FOR,
    is_django_task,
    scheduled_for_keywords,
    short_repr,
)
from jobs.runs import RunTicket

KIND = "task"
# How much of a return value's repr goes to the log (the value itself is stored whole).
RESULT_MAX_CHARS = 2000
# The largest return value kept, as JSON text: a bigger one fails the run saying so
# (a result is read whole by every get_result(); a blob belongs in storage of its own).
RETURN_VALUE_MAX_CHARS = 1_000_000


def find_task(path: str) -> Any:
    """The task object at `path`, or None when there is none (any more)."""
    try:
        target = import_string(path)
    except ImportError:
        return None
    return target if is_django_task(target) else None


def task_problem(path: str) -> str | None:
    """Why a job of this kind naming `path` cannot run now, or None."""
    if not framework.available():
        return gettext("this site has no task framework (django.tasks or django-tasks)")
    if find_task(path) is None:
        return gettext("“%(path)s” is not a Django task (any more)") % {"path": path[:200]}
    return None


def task_errors(job: Any, *, check_arguments: bool = True, command_changed: Any = None) -> dict:
    """The kind's rules: only the task backend makes such jobs, and their runs' arguments
    are a call (args and kwargs)."""
    if not getattr(job, "enqueued_task", False):
        return {
            "executor": gettext(
                "Jobs of this kind are made by the task backend, on a task's first "
                "enqueue(): choose another kind."
            )
        }
    if check_arguments:
        problem = framework.shape_problem(job.arguments)
        if problem is not None:
            return {"arguments": gettext("Not a task's call: %(problem)s.") % {"problem": problem}}
    return {}


def job_problem(job: Any) -> str | None:
    return task_problem(job.command)


def never_offered() -> bool:
    """The kind is never offered on a form: the backend makes its jobs."""
    return False


def task_context(target: Any, ticket: RunTicket, call: framework.TaskCall) -> Any:
    """The TaskContext a task that takes one gets: its result as the run stands. Its id is
    this attempt's run (get_result() takes any attempt's id); its attempts count this
    one (the earlier workers' names are the database's, not the executor's)."""
    now = datetime.now(UTC)
    result = framework.task_result(
        target.using(priority=ticket.priority, queue_name=ticket.queue),
        str(ticket.run_id),
        "RUNNING",
        call,
        started_at=now,
        last_attempted_at=now,
        worker_ids=[""] * (ticket.attempt - 1) + [f"{socket.gethostname()}:{os.getpid()}"],
    )
    return framework.part("base").TaskContext(task_result=result)


def _positional_names(function: Any, count: int) -> set[str]:
    """The names of the parameters the first `count` positional arguments fill."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return set()
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return {p.name for p in parameters if p.kind in positional}.intersection(
        p.name for p in parameters[:count]
    )


class EnqueuedTaskExecutor:
    """Calls an enqueued task in the worker's thread (stopping is the task's own, as for
    python jobs run in a thread)."""

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        output = RunOutput()
        context.output = output  # read by the live log
        output.line(command_line(KIND, ticket.command))
        problem = task_problem(ticket.command)
        if problem is not None:
            output.line(f"not run: {problem}.")
            return Outcome(succeeded=False, log=output.text())
        target = find_task(ticket.command)
        call = framework.call_of(ticket.arguments)
        args = list(call.args)
        if target.takes_context:
            args.insert(0, task_context(target, ticket, call))
        kwargs = dict(call.kwargs)
        if SCHEDULED_FOR not in kwargs:
            # Given by position, it is the caller's: only an unpassed one is the run's.
            given = _positional_names(target.func, len(args))
            if SCHEDULED_FOR not in given:
                kwargs.update(scheduled_for_keywords(target.func, ticket.scheduled_for))
        context.cooperative = True
        current = CurrentRun(ticket, context, dict(ticket.arguments or {}))
        try:
            with capturing(output), running(current):
                value = target.call(*args, **kwargs)
            # Django requires a JSON return value: anything else fails the run, saying so.
            value = framework.normalize(value)
            size = len(json.dumps(value))
            if size > RETURN_VALUE_MAX_CHARS:
                raise ValueError(
                    f"the return value is {size:,} characters of JSON, more than the "
                    f"{RETURN_VALUE_MAX_CHARS:,} a result keeps"
                )
        except (Exception, SystemExit, KeyboardInterrupt) as error:
            # SystemExit and KeyboardInterrupt end the task, never the worker's thread.
            output.line("the task raised an exception:")
            output.write(traceback.format_exc())
            return Outcome(
                succeeded=False, log=output.text(), result=framework.stored_outcome(error=error)
            )
        output.line(f"returned: {short_repr(value, RESULT_MAX_CHARS)}")
        return Outcome(
            succeeded=True, log=output.text(), result=framework.stored_outcome(return_value=value)
        )
