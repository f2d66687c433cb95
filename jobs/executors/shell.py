"""The shell executor: runs a command line, without a shell, as a child process.

Off unless JOBS_SHELL_ENABLED is true; only users with jobs.use_shell may create or
change such a job (jobs/access/permissions.py). The rules (docs/executors.md "Shell commands"):

- the line is split with shell quoting rules (shlex) and run **without** a shell: no
  pipes, globs or variables unless the job says ``sh -c '...'``;
- the child leads a process group of its own; stopping the run (cancel, timeout,
  shutdown past the grace) stops the whole group (jobs/executors/processes.py);
- its environment is built from nothing: PATH and LANG from this process, HOME and the
  working directory a fresh empty directory of the run's own (removed afterwards, or by
  the reaper when the worker died; see work_directory), the
  run's identity (JOB_ID, JOB_NAME, RUN_ID, SCHEDULED_FOR, ATTEMPT; JOBS_RUN marks
  every process of the run for the reaper, jobs/executors/leftovers.py) and the job's
  ``env``; never this process's SECRET_KEY, DATABASE_URL, REDIS_URL, EMAIL_* or
  METRICS_TOKEN;
- stdin is closed; stdout and stderr go to the log; exit status 0 is success;
- every run has a timeout: the job's, else JOBS_SHELL_DEFAULT_TIMEOUT, and never more
  than JOBS_SHELL_MAX_TIMEOUT (a job saved above it before the limit, or written by raw
  SQL, is stopped there all the same).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shlex
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.utils.translation import gettext

from jobs import conf
from jobs.executors.base import STOP_DEADLINE, ExecutionContext, Outcome
from jobs.executors.command_line import command_line
from jobs.executors.output import RunOutput
from jobs.executors.processes import run_child
from jobs.observability import traceparent
from jobs.runs import SCHEDULED_FOR_VARIABLE, RunTicket, scheduled_for_text

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Names the run's identity takes; a job's env cannot replace them.
IDENTITY_NAMES = (
    "JOB_ID",
    "JOB_NAME",
    "RUN_ID",
    "SCHEDULED_FOR",
    SCHEDULED_FOR_VARIABLE,
    "ATTEMPT",
    "JOBS_RUN",
)


def shell_enabled() -> bool:
    return conf.shell_enabled()


def shell_problem() -> str | None:
    """Why shell jobs cannot run now, or None."""
    if not shell_enabled():
        return gettext("shell jobs are switched off on this site (JOBS_SHELL_ENABLED)")
    return None


def split_command(line: str) -> list[str]:
    """The argv of a shell job's command line; ValueError saying why it has none."""
    try:
        words = shlex.split(line or "")
    except ValueError as error:
        raise ValueError(f"the command line cannot be split: {error}") from None
    if not words:
        raise ValueError("no command given")
    return words


def environment_errors(env: Any) -> list[str]:
    """What is wrong with a job's `env` (a JSON object of names to text)."""
    if env is None:
        return []
    if not isinstance(env, Mapping):
        return ["env must be a JSON object of variable names to text"]
    errors = []
    for name, value in env.items():
        if not isinstance(name, str) or not ENV_NAME.match(name):
            errors.append(f"{str(name)[:50]!r} is not a variable name (letters, digits, _)")
        elif name in IDENTITY_NAMES:
            errors.append(f"{name} is set by the scheduler for each run")
        elif not isinstance(value, str):
            errors.append(f"the value of {name} must be text")
        elif "\x00" in value:
            errors.append(f"the value of {name} holds a NUL character")
    return errors


def run_environment(ticket: RunTicket, home: str) -> dict[str, str]:
    """The child's whole environment (nothing else of this process's is passed)."""
    env = {
        "PATH": os.environ.get("PATH") or DEFAULT_PATH,
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "HOME": home,
    }
    extra = (ticket.arguments or {}).get("env") or {}
    if isinstance(extra, Mapping):
        env.update({str(name): str(value) for name, value in extra.items()})
    env.update(
        {
            "JOB_ID": str(ticket.job_id),
            "JOB_NAME": ticket.job_name,
            "RUN_ID": str(ticket.run_id),
            "SCHEDULED_FOR": ticket.scheduled_for.isoformat(),
            SCHEDULED_FOR_VARIABLE: scheduled_for_text(ticket.scheduled_for),
            "ATTEMPT": str(ticket.attempt),
        }
    )
    # The run's span as the parent of whatever the command traces (W3C trace context).
    traceparent.add_to_environment(env)
    return env


def _root_path() -> str:
    """`<temp>/jobs-runs-<uid>-<site>`: per OS user, and per database (two sites of one
    user on one host never sweep each other's runs' directories)."""
    db = connections[DEFAULT_DB_ALIAS].settings_dict
    site = "|".join(str(db.get(key) or "") for key in ("ENGINE", "HOST", "PORT", "NAME"))
    tag = hashlib.sha256(site.encode()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"jobs-runs-{os.getuid()}-{tag}")


def _work_root() -> str:
    """The directory of this user's runs' work directories: private (0700), this user's,
    not a link, so that no other user can put anything where a run will look."""
    root = _root_path()
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o700)
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(errno.EPERM, f"{root} is not a private directory of this user")
    return root


def work_directory(run_key: str) -> str:
    """Where the run's work directory is: named by the run, so that the reaper can
    remove the one a dead worker left (jobs/engine/reap.py)."""
    return os.path.join(_root_path(), run_key)


def make_work_directory(run_key: str) -> str:
    """A fresh, empty, private work directory for the run."""
    _work_root()
    path = work_directory(run_key)
    remove_work_directory(run_key)
    os.mkdir(path, 0o700)
    return path


def work_directories() -> list[str]:
    """The run keys of this user's work directories left on this host."""
    try:
        names = os.listdir(_root_path())
    except OSError:
        return []
    return [name for name in names if len(name) == 32 and name.isalnum()]


def remove_work_directory(run_key: str) -> bool:
    """Remove the run's work directory; whether there was one."""
    path = work_directory(run_key)
    if not os.path.lexists(path):
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


class ShellExecutor:
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        output = RunOutput()
        context.output = output
        output.line(command_line("shell", ticket.command))
        problem = shell_problem()
        if problem is not None:
            output.line(f"not run: {problem}.")
            return Outcome(succeeded=False, log=output.text())
        try:
            argv = split_command(ticket.command)
        except ValueError as error:
            output.line(f"not run: {error}.")
            return Outcome(succeeded=False, log=output.text())
        problems = environment_errors((ticket.arguments or {}).get("env"))
        if problems:
            output.line(f"not run: {'; '.join(problems)}.")
            return Outcome(succeeded=False, log=output.text())
        timeout = conf.shell_run_timeout(ticket.timeout_seconds)
        try:
            workdir = make_work_directory(ticket.run_key)
        except OSError as error:
            output.line(f"not run: no work directory: {error.strerror or error}.")
            return Outcome(succeeded=False, log=output.text())
        try:
            finished = run_child(
                argv,
                output=output,
                context=context,
                deadline=time.monotonic() + timeout,
                env=run_environment(ticket, workdir),
                cwd=workdir,
                run_key=ticket.run_key,
            )
        except OSError as error:
            output.line(f"could not start {argv[0]!r}: {error.strerror or error}")
            return Outcome(succeeded=False, log=output.text())
        finally:
            remove_work_directory(ticket.run_key)
        if finished.stopped == STOP_DEADLINE and timeout != ticket.timeout_seconds:
            # Not the job's own timeout: say which setting stopped it.
            own = ticket.timeout_seconds
            setting = "JOBS_SHELL_MAX_TIMEOUT" if own else "JOBS_SHELL_DEFAULT_TIMEOUT"
            output.line(f"timed out after {timeout} s ({setting}): the run was stopped.")
        if finished.stopped:
            return Outcome(succeeded=False, log=output.text())
        output.line(f"exit status {finished.returncode}")
        return Outcome(succeeded=finished.returncode == 0, log=output.text())
