"""Python runs in a process of their own (JOBS_PYTHON_ISOLATION=process): the worker side.

The run is executed by ``python -m jobs.executors.python_child DIRECTORY``, started like
a shell run's command (jobs/executors/processes.py: a supervisor, a process group of its
own, its output read into the run's log as it comes). A cancel, a timeout or the
worker's shutdown sends it SIGTERM, which sets the task's stop signal
(current_run().stop), and SIGKILL after JOBS_KILL_GRACE_SECONDS: a task that never
looks at its stop signal is ended all the same, with everything it started.

The child is a new interpreter (exec, never a fork of the worker): it inherits no open
database connection, lock or thread of the worker's, and sets Django up itself from the
worker's settings module and import path. It gets the worker's environment (a task is
the site's own code, with its settings, as in a thread), the run's ticket in a private
directory, and writes its outcome there. Starting it costs an interpreter and
django.setup() per run: a fraction of a second, for runs worth stopping.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from jobs.executors.base import ExecutionContext, Outcome
from jobs.executors.command import child_environment, project_directory
from jobs.executors.output import RunOutput
from jobs.executors.processes import run_child
from jobs.runs import RunTicket

CHILD_MODULE = "jobs.executors.python_child"
TICKET_FILE = "ticket.json"
OUTCOME_FILE = "outcome.json"
STOP_FILE = "stop"
# The most of the outcome file read back (it holds one small JSON object).
OUTCOME_MAX_BYTES = 4096


def write_ticket(ticket: RunTicket, directory: Path) -> None:
    values = dataclasses.asdict(ticket)
    values["scheduled_for"] = ticket.scheduled_for.isoformat()
    (directory / TICKET_FILE).write_text(json.dumps(values))


def read_ticket(directory: Path) -> RunTicket:
    from datetime import datetime

    values = json.loads((directory / TICKET_FILE).read_text())
    values["scheduled_for"] = datetime.fromisoformat(values["scheduled_for"])
    return RunTicket(**values)


def read_outcome(directory: Path) -> bool | None:
    """Whether the task succeeded, as the child wrote it; None when it wrote nothing."""
    try:
        with open(directory / OUTCOME_FILE, "rb") as file:
            values = json.loads(file.read(OUTCOME_MAX_BYTES))
    except (OSError, ValueError):
        return None
    succeeded = values.get("succeeded") if isinstance(values, dict) else None
    return succeeded if isinstance(succeeded, bool) else None


def child_env() -> dict[str, str]:
    """The worker's environment (its settings module too), with its import path: the
    child imports the same settings, so finds the same task modules."""
    env = child_environment()
    paths = [part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]
    for path in sys.path:
        if path and path not in paths:
            paths.append(path)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def execute(ticket: RunTicket, context: ExecutionContext, output: RunOutput) -> Outcome:
    """Execute the run's task in a child process (its task and arguments were checked)."""
    directory = Path(tempfile.mkdtemp(prefix="jobs-python-"))
    try:
        write_ticket(ticket, directory)

        def before_stop(why: str) -> None:
            # The child's SIGTERM handler reads why, for current_run().stop_reason.
            (directory / STOP_FILE).write_text(context.reason or why)

        deadline = None
        if ticket.timeout_seconds:
            # The Heartbeater stops the run at its timeout; this is the child's own bound.
            deadline = time.monotonic() + ticket.timeout_seconds + 1.0
        try:
            finished = run_child(
                [sys.executable, "-m", CHILD_MODULE, str(directory)],
                output=output,
                context=context,
                deadline=deadline,
                env=child_env(),
                cwd=str(project_directory()),
                before_stop=before_stop,
                run_key=ticket.run_key,
            )
        except OSError as error:
            output.line(f"could not start the task's process: {error}")
            return Outcome(succeeded=False, log=output.text())
        if finished.stopped:
            output.line(f"the task's process was stopped: {context.stop_words()}.")
            return Outcome(succeeded=False, log=output.text())
        succeeded = read_outcome(directory)
        if succeeded is None:
            output.line(
                f"the task's process ended without an outcome (exit status {finished.returncode})."
            )
            return Outcome(succeeded=False, log=output.text())
        return Outcome(succeeded=succeeded, log=output.text())
    finally:
        shutil.rmtree(directory, ignore_errors=True)
