"""Why a job cannot run as it is saved: the flag on its page.

Asked of the executors' own checks, the ones a run makes when it starts (the run then
fails with a line saying the same), so the page and the log agree.
"""

from __future__ import annotations

from typing import Any

from jobs.executors import command as command_executor
from jobs.executors import python as python_executor
from jobs.executors import shell as shell_executor
from jobs.models import ExecutorKind


def run_problem(job: Any) -> str | None:
    """Why `job` cannot run now, or None: its task is not registered, its management
    command is not listed (or does not exist), shell jobs are switched off."""
    if job.executor == ExecutorKind.PYTHON:
        return python_executor.task_problem(job.command)
    if job.executor == ExecutorKind.COMMAND:
        return command_executor.command_problem(job.command)
    if job.executor == ExecutorKind.SHELL:
        return shell_executor.shell_problem()
    return None
