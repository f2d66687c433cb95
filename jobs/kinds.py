"""The kinds of job, one row each: everything the rest of the app knows about a kind.

A job's executor (Job.executor) is one of these. Each row says, once:

- ``value`` and ``label``: the stored value and its name (jobs.models.ExecutorKind is
  built from these rows, so the choices, the constraint and the forms follow them);
- ``executor``: the class that runs its jobs (jobs.executors.routing); "" for the
  simulated kind, which runs on the executor JOBS_EXECUTOR names;
- ``rules``: the function checking a job of the kind when it is saved (called from
  jobs.models.job_rules.executor_errors as ``rules(job, check_arguments=...,
  command_changed=...)`` and returning {field: message});
- ``problem``: the function saying why a saved job of the kind cannot run now (its task
  gone, its command no longer listed, the kind switched off), or None;
- ``section``: the form section holding the kind's arguments (jobs.web.arguments: a
  class with ``for_job(command, given, secrets_visible=...)`` and ``message_field``),
  "" for a kind without arguments;
- ``command_label``: what the job's command field is called for the kind ("" for a kind
  whose form names what runs in a field of its own: a python job's task);
- ``switched_on``: the function saying whether the site offers the kind ("": always);
- ``needs_use_shell``: the permission rule, a function of the job's command saying
  whether choosing it, changing, enabling or chaining to such a job, or running it with
  other arguments needs jobs.use_shell ("": never);
- ``resumes_lost_runs``: a run whose worker was lost is handed back to pending as it is,
  rather than failed and retried, because its work goes on elsewhere and its executor,
  running it again, follows that work instead of starting it twice (a Celery task);
  False for every kind whose work died with its worker.

Everything is named by dotted path and imported on first use: the classes, rules and
form sections sit in the layers above (executors, models, web), which import this
module, and so do the permission rule (jobs.access) and the choices (jobs.models).

To add a kind: a module in jobs/executors/ with its executor class (``execute(ticket, context) ->
Outcome``, see base.py) and its rules, a row below, a form section in
jobs.web.arguments if it takes arguments, and a migration of Job.executor's choices and
its check constraint (``manage.py makemigrations jobs`` writes it).
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from django.utils.functional import Promise
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _


def always(command_line: str) -> bool:
    """The permission rule of a kind every job of which needs jobs.use_shell."""
    return True


class Kind(NamedTuple):
    """One kind of job (see the module's docstring for each field)."""

    value: str
    label: Promise
    executor: str
    rules: str
    problem: str
    section: str
    command_label: Promise | str
    switched_on: str
    needs_use_shell: str
    resumes_lost_runs: bool = False


_RULES = "jobs.models.job_rules"
_SECTIONS = "jobs.web.arguments"

KINDS: tuple[Kind, ...] = (
    Kind(
        value="simulated",
        label=_("Simulated"),
        executor="",
        rules="",
        problem="",
        section="",
        command_label=_("Command"),
        switched_on="",
        needs_use_shell="",
    ),
    Kind(
        value="python",
        label=_("Python task"),
        executor="jobs.executors.python.PythonExecutor",
        rules=f"{_RULES}.python_errors",
        problem=f"{_RULES}.python_problem",
        section=f"{_SECTIONS}.TaskSection",
        command_label="",  # the task is chosen in a field of its own
        switched_on="",
        needs_use_shell="",
    ),
    # Enqueued Django tasks (jobs.tasks_backend): the backend makes one job per task,
    # on its first enqueue(); never offered on a form, never made there.
    Kind(
        value="task",
        label=_("Enqueued Django task"),
        executor="jobs.executors.enqueued.EnqueuedTaskExecutor",
        rules="jobs.executors.enqueued.task_errors",
        problem="jobs.executors.enqueued.job_problem",
        section="",
        command_label=_("Task"),
        switched_on="jobs.executors.enqueued.never_offered",
        needs_use_shell="",
    ),
    Kind(
        value="command",
        label=_("Management command"),
        executor="jobs.executors.command.CommandExecutor",
        rules=f"{_RULES}.command_errors",
        problem=f"{_RULES}.command_problem",
        section="",
        command_label=_("Management command line"),
        switched_on="",
        # Any command but the few known to be harmless (command.SAFE_COMMANDS).
        needs_use_shell="jobs.executors.command.needs_use_shell",
    ),
    Kind(
        value="shell",
        label=_("Shell command"),
        executor="jobs.executors.shell.ShellExecutor",
        rules=f"{_RULES}.shell_errors",
        problem=f"{_RULES}.shell_problem",
        section=f"{_SECTIONS}.ShellSection",
        command_label=_("Command line"),
        switched_on="jobs.executors.shell.shell_enabled",
        needs_use_shell="jobs.kinds.always",
    ),
    Kind(
        value="http",
        label=_("HTTP request"),
        executor="jobs.executors.http.HttpExecutor",
        rules=f"{_RULES}.http_errors",
        problem=f"{_RULES}.http_problem",
        section=f"{_SECTIONS}.HttpSection",
        command_label=_("URL"),
        switched_on="",
        needs_use_shell="",
    ),
    Kind(
        value="celery",
        label=_("Celery task"),
        executor="jobs.executors.celery_executor.CeleryExecutor",
        rules="jobs.models.celery_rules.celery_errors",
        problem="jobs.models.celery_rules.celery_problem",
        section="jobs.web.celery_arguments.CelerySection",
        command_label=_("Celery task name"),
        # Offered only where Celery is installed (the [celery] extra).
        switched_on="jobs.executors.celery_names.celery_installed",
        needs_use_shell="",
        # The task goes on on its Celery worker: a run lost with its scheduler is
        # followed again, never sent twice (jobs/executors/celery_app.py).
        resumes_lost_runs=True,
    ),
)

BY_VALUE: dict[str, Kind] = {kind.value: kind for kind in KINDS}
SIMULATED = "simulated"


def kind_of(value: str) -> Kind | None:
    """The row of a stored executor value; None for one this site does not know."""
    return BY_VALUE.get(value)


@cache
def load(path: str) -> Any:
    """The function or class a row names (imported once)."""
    return import_string(path)


def needs_use_shell(executor: str, command_line: str) -> bool:
    """Whether a job of this kind running this command needs jobs.use_shell to be
    chosen, changed, enabled, chained to or run with other arguments. An unknown kind
    does not (it is refused as invalid anyway)."""
    kind = kind_of(executor)
    if kind is None or not kind.needs_use_shell:
        return False
    return bool(load(kind.needs_use_shell)(command_line or ""))


def resumes_lost_runs(executor: str) -> bool:
    """Whether a lost run of this kind is handed back rather than failed (see the row's
    ``resumes_lost_runs``); False for a kind this site does not know."""
    kind = kind_of(executor)
    return kind is not None and kind.resumes_lost_runs


def switched_on(kind: Kind) -> bool:
    """Whether the site offers this kind now."""
    return not kind.switched_on or bool(load(kind.switched_on)())


def offered_to(may_use_shell: bool) -> list[Kind]:
    """The kinds a user may choose: switched on, and not always needing jobs.use_shell
    unless the user has it (a command job is offered to all; its command decides)."""
    return [
        kind
        for kind in KINDS
        if switched_on(kind) and (may_use_shell or not needs_use_shell(kind.value, ""))
    ]
