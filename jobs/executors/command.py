"""The command executor: runs a Django management command line in a child process.

The line (``clearsessions``, ``prunehistory --dry-run``) is split with shell quoting
rules by command_argv(), the one reading of a line: what it returns is what the child
runs, and what the permission rule (needs_use_shell) judges, so no quoting can make the
two disagree. Its first word must be a command listed in JOBS_MANAGEMENT_COMMANDS, no
word may be one of Django's options that change what code the child loads, and the rest
must pass the command's own argument parser, both when the job is saved
(check_command_line, from jobs.models.job_rules) and when the run starts. The command
runs as ``python -m django <line>`` with this process's settings and environment (it is
the site's own code), in a process group of its own so that stopping the run stops it
(jobs/executors/processes.py); its stdout and stderr go to the log, and a non-zero exit
status (a CommandError is one) fails the run.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import sys
import time
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.core.management import get_commands, load_command_class
from django.core.management.base import CommandError
from django.utils.translation import gettext

from jobs import conf
from jobs.executors.base import ExecutionContext, Outcome
from jobs.executors.command_line import command_line
from jobs.executors.output import RunOutput
from jobs.executors.processes import run_child
from jobs.observability import traceparent
from jobs.runs import SCHEDULED_FOR_VARIABLE, RunTicket, scheduled_for_text


class CommandRefused(ValueError):
    """The command line may not run; str() says why, for the user."""


def allowed_commands() -> list[str]:
    return conf.management_commands()


# Commands known to be harmless: they read, or tidy only within the site's own rules
# (expired sessions, runs past the retention settings), and hand out no data, secret or
# code. Any user who may change jobs may choose one of these (if JOBS_MANAGEMENT_COMMANDS
# lists it); every other command, whatever it is called, needs jobs.use_shell: a list of
# the dangerous ones is never complete (new apps bring new commands).
SAFE_COMMANDS = frozenset(
    {"check", "checkhealth", "clearsessions", "prunehistory", "showmigrations"}
)

# Django's options of every command: --settings and --pythonpath make the child import
# other code than the site's, --traceback prints its internals. Never a job's.
REFUSED_GLOBAL_OPTIONS = ("--settings", "--pythonpath", "--traceback")


def command_argv(line: str) -> list[str]:
    """The words the child runs as ``python -m django <words>``: the line split with
    shell quoting rules (``"dumpdata"``, ``d\\umpdata`` and ``dumpdat"a"`` are all
    ``dumpdata``). The executor and the permission rule both read a line through this.
    Raises CommandRefused for a line that cannot be split (an unclosed quote)."""
    try:
        return shlex.split(line or "")
    except ValueError as error:
        raise CommandRefused(f"the command line cannot be split: {error}") from None


def refused_global_option(words: list[str]) -> str | None:
    """The first word that is (or abbreviates, as argparse allows) one of
    REFUSED_GLOBAL_OPTIONS, in any spelling: ``--settings=x`` or ``--settings x``."""
    for word in words:
        name = word.partition("=")[0]
        abbreviates = any(option.startswith(name) for option in REFUSED_GLOBAL_OPTIONS)
        if len(name) > 2 and name.startswith("--") and abbreviates:
            return word
    return None


def needs_use_shell(line: str) -> bool:
    """Whether choosing this command line needs jobs.use_shell: any command but the
    SAFE_COMMANDS, judged on the words the executor would run. A line that cannot be
    split cannot be judged, so it needs it too (it is refused as invalid anyway)."""
    try:
        words = command_argv(line)
    except CommandRefused:
        return True
    return bool(words) and words[0] not in SAFE_COMMANDS


def command_problem(line: str) -> str | None:
    """Why a command job with this line can no longer run (not listed, no such command),
    without parsing its options; None when it can."""
    try:
        words = command_argv(line)
    except CommandRefused as error:
        return str(error)
    if not words:
        return gettext("no management command given")
    name = words[0]
    if name not in allowed_commands():
        return gettext(
            "the management command “%(name)s” is not listed in JOBS_MANAGEMENT_COMMANDS"
        ) % {"name": name[:100]}
    if name not in get_commands():
        return gettext("there is no management command “%(name)s”") % {"name": name[:100]}
    option = refused_global_option(words[1:])
    if option is not None:
        return gettext(
            "%(option)s is not allowed in a job: --settings, --pythonpath and --traceback "
            "would make the command load other code than the site's"
        ) % {"option": option[:100]}
    return None


def check_command_line(line: str) -> list[str]:
    """The words of a command line that may run; raises CommandRefused saying why not:
    empty, not listed in JOBS_MANAGEMENT_COMMANDS, no such command, or options the
    command's own parser refuses."""
    problem = command_problem(line)
    if problem is not None:
        raise CommandRefused(problem)
    name, *options = command_argv(line)
    if any(option in ("-h", "--help", "--version") for option in options):
        raise CommandRefused("--help and --version print and exit; they are not a job")
    try:
        command = load_command_class(get_commands()[name], name)
        parser = command.create_parser("manage.py", name)
        # The parser writes usage and errors to stderr before raising: keep it quiet.
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(options)
    except CommandError as error:
        message = str(error).removeprefix("Error: ")
        raise CommandRefused(f"{name}: {message}") from None
    except SystemExit:
        raise CommandRefused(f"{name}: the options are not valid") from None
    return [name, *options]


def child_command(words: list[str]) -> list[str]:
    """`python -m django <words>` with this process's interpreter."""
    return [sys.executable, "-m", "django", *words]


def child_environment(scheduled_for: datetime | None = None) -> dict[str, str]:
    """This process's environment (the command is the site's own code and needs its
    settings), naming the settings module this process uses, and the time the run was
    meant for (JOBS_SCHEDULED_FOR)."""
    env = dict(os.environ)
    if scheduled_for is not None:
        env[SCHEDULED_FOR_VARIABLE] = scheduled_for_text(scheduled_for)
    env["DJANGO_SETTINGS_MODULE"] = os.environ.get(
        "DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE
    )
    project = str(project_directory())
    paths = [part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]
    if project not in paths:
        env["PYTHONPATH"] = os.pathsep.join([project, *paths])
    # The run's span as the parent of whatever the command traces (W3C trace context),
    # in place of one this process may have inherited.
    env.pop(traceparent.ENVIRONMENT_VARIABLE, None)
    traceparent.add_to_environment(env)
    return env


def project_directory() -> Path:
    """Where the settings package is found (BASE_DIR in this project)."""
    return conf.project_dir()


class CommandExecutor:
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        output = RunOutput()
        context.output = output
        output.line(command_line("command", ticket.command))
        try:
            words = check_command_line(ticket.command)
        except CommandRefused as error:
            output.line(f"not run: {error}.")
            return Outcome(succeeded=False, log=output.text())
        # The Heartbeater stops the run at the job's own timeout too; this is the child's
        # own bound, for a worker whose Heartbeater is busy, and the only one of a job
        # without a timeout (JOBS_SHELL_DEFAULT_TIMEOUT) or above JOBS_SHELL_MAX_TIMEOUT.
        timeout = conf.shell_run_timeout(ticket.timeout_seconds)
        deadline = time.monotonic() + timeout + (1.0 if timeout == ticket.timeout_seconds else 0.0)
        try:
            finished = run_child(
                child_command(words),
                output=output,
                context=context,
                deadline=deadline,
                env=child_environment(ticket.scheduled_for),
                cwd=str(project_directory()),
                run_key=ticket.run_key,
            )
        except OSError as error:
            output.line(f"could not start the command: {error}")
            return Outcome(succeeded=False, log=output.text())
        if finished.stopped:
            return Outcome(succeeded=False, log=output.text())
        output.line(f"exit status {finished.returncode}")
        return Outcome(succeeded=finished.returncode == 0, log=output.text())
