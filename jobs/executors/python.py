"""The python executor: calls a registered task (jobs/pytasks/registry.py) with the run's arguments.

The task is looked up by the job's command (its registered name) when the run starts,
and its arguments are bound again then: a task removed or changed since the job was
saved fails the run with a line saying why. What the task prints or logs goes to the
run's log (jobs/executors/capture.py), then its return value (repr, capped) or, when it
raises, the traceback. A task sees its run, and whether it should stop, through
``jobs.current_run()``.

JOBS_PYTHON_ISOLATION says where the task runs: "thread" (the default), in the worker's
own thread, where stopping is cooperative; or "process", in a child process per run
(jobs/executors/python_process.py), which a cancel or a timeout ends for real.
"""

from __future__ import annotations

import traceback
from typing import NamedTuple

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext

from jobs import conf
from jobs.executors import python_process as isolated
from jobs.executors.base import ExecutionContext, Outcome
from jobs.executors.capture import capturing
from jobs.executors.command_line import command_line
from jobs.executors.output import RunOutput
from jobs.executors.running import CurrentRun, running
from jobs.pytasks import registry, signature
from jobs.runs import RunTicket

# How much of a return value's repr goes to the log.
RESULT_MAX_CHARS = 2000
THREAD = "thread"
PROCESS = "process"
ISOLATIONS = (THREAD, PROCESS)


def task_problem(name: str) -> str | None:
    """Why a python job naming `name` cannot run, or None."""
    if registry.get_task(name) is None:
        return gettext(
            "the Python task “%(name)s” is not registered (JOBS_TASK_MODULES, @jobs.register)"
        ) % {"name": name[:200]}
    return None


def isolation() -> str:
    """How python runs are executed: "thread" or "process" (JOBS_PYTHON_ISOLATION)."""
    value = conf.python_isolation()
    if value not in ISOLATIONS:
        raise ImproperlyConfigured(
            f"JOBS_PYTHON_ISOLATION must be one of {', '.join(ISOLATIONS)}, got {value!r}"
        )
    return value


class Prepared(NamedTuple):
    """A task found and its arguments bound, or the Outcome saying why it cannot run."""

    task: signature.RegisteredTask | None
    bound: signature.BoundArguments | None
    refused: Outcome | None


def prepare(ticket: RunTicket, output: RunOutput) -> Prepared:
    """Find the run's task and bind its arguments (again: the task may have changed
    since the job was saved); the lines saying why not go to `output`."""
    task = registry.get_task(ticket.command)
    output.line(command_line("python", ticket.command))
    if task is None:
        output.line(f"not run: {task_problem(ticket.command)}.")
        return Prepared(None, None, Outcome(succeeded=False, log=output.text()))
    try:
        bound = signature.bind_arguments(task, ticket.arguments or {}, ticket.scheduled_for)
    except signature.ArgumentsError as error:
        output.line(f"not run: the arguments do not fit {task.signature_text}:")
        for name, messages in error.errors.items():
            output.line(f"  {name}: {' '.join(messages)}")
        return Prepared(task, None, Outcome(succeeded=False, log=output.text()))
    return Prepared(task, bound, None)


def call_task(
    task: signature.RegisteredTask,
    bound: signature.BoundArguments,
    ticket: RunTicket,
    context: ExecutionContext,
    output: RunOutput,
) -> bool:
    """Call the task with what it prints and logs captured into `output`, then its
    return value or traceback; whether it succeeded. The same in a worker thread and in
    the child process of an isolated run (jobs/executors/python_child.py)."""
    current = CurrentRun(ticket, context, dict(ticket.arguments or {}))
    try:
        with capturing(output), running(current):
            result = task.call(bound)
    except Exception:
        output.line("the task raised an exception:")
        output.write(traceback.format_exc())
        return False
    except SystemExit as exit_:
        # sys.exit() in a task ends the task, not the worker thread running it.
        output.line(f"the task called sys.exit({exit_.code!r}).")
        return exit_.code in (None, 0)
    if context.stop_requested:
        output.line(f"the task returned after it was asked to stop ({context.stop_words()}).")
        return False
    output.line(f"returned: {signature.short_repr(result, RESULT_MAX_CHARS)}")
    return True


class PythonExecutor:
    """Runs the task in the worker's thread, or (JOBS_PYTHON_ISOLATION=process) in a
    child process of its own that a cancel or a timeout kills (jobs/executors/python_child.py).

    In a thread, stopping is cooperative: only the task can end its call, by looking at
    current_run().stop. The context says so (`cooperative`): the worker reports a task
    still running past the kill grace after it was asked to stop, and its thread (the
    worker's slot) stays busy until the task returns."""

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        output = RunOutput()
        context.output = output  # read by the live log
        task, bound, refused = prepare(ticket, output)
        if refused is not None:
            return refused
        assert task is not None and bound is not None
        if isolation() == PROCESS:
            return isolated.execute(ticket, context, output)
        context.cooperative = True
        succeeded = call_task(task, bound, ticket, context, output)
        return Outcome(succeeded=succeeded, log=output.text())
