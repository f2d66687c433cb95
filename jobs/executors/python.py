"""The python executor: calls a registered task (jobs/pytasks/registry.py) with the run's arguments.

The task is looked up by the job's command (its registered name) when the run starts,
and its arguments are bound again then: a task removed or changed since the job was
saved fails the run with a line saying why. What the task prints or logs goes to the
run's log (jobs/executors/capture.py), then its return value (repr, capped) or, when it
raises, the traceback. A task sees its run, and whether it should stop, through
``jobs.current_run()``.
"""

from __future__ import annotations

import traceback

from django.utils.translation import gettext

from jobs.executors.base import ExecutionContext, Outcome
from jobs.executors.capture import capturing
from jobs.executors.command_line import command_line
from jobs.executors.output import RunOutput
from jobs.executors.running import CurrentRun, running
from jobs.pytasks import registry
from jobs.runs import RunTicket

# How much of a return value's repr goes to the log.
RESULT_MAX_CHARS = 2000


def task_problem(name: str) -> str | None:
    """Why a python job naming `name` cannot run, or None."""
    if registry.get_task(name) is None:
        return gettext(
            "the Python task “%(name)s” is not registered (JOBS_TASK_MODULES, @jobs.register)"
        ) % {"name": name[:200]}
    return None


class PythonExecutor:
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        output = RunOutput()
        context.output = output  # read by the live log
        task = registry.get_task(ticket.command)
        output.line(command_line("python", ticket.command))
        if task is None:
            output.line(f"not run: {task_problem(ticket.command)}.")
            return Outcome(succeeded=False, log=output.text())
        arguments = ticket.arguments or {}
        try:
            bound = registry.bind_arguments(task, arguments)
        except registry.ArgumentsError as error:
            output.line(f"not run: the arguments do not fit {task.signature_text}:")
            for name, messages in error.errors.items():
                output.line(f"  {name}: {' '.join(messages)}")
            return Outcome(succeeded=False, log=output.text())
        current = CurrentRun(ticket, context, dict(arguments))
        try:
            with capturing(output), running(current):
                result = task.call(bound)
        except Exception:
            output.line("the task raised an exception:")
            output.write(traceback.format_exc())
            return Outcome(succeeded=False, log=output.text())
        except SystemExit as exit_:
            # sys.exit() in a task ends the task, not the worker thread running it.
            output.line(f"the task called sys.exit({exit_.code!r}).")
            return Outcome(succeeded=exit_.code in (None, 0), log=output.text())
        if context.stop_requested:
            output.line(f"the task returned after it was asked to stop ({context.stop_words()}).")
            return Outcome(succeeded=False, log=output.text())
        output.line(f"returned: {registry.short_repr(result, RESULT_MAX_CHARS)}")
        return Outcome(succeeded=True, log=output.text())
