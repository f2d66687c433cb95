"""Who may do what: the permission names every entry point checks, and the groups.

The dashboard, the API and the admin ask the same questions through these names, so one
rule holds at all three. Superusers have every permission (Django's ModelBackend).
docs/permissions.md "Who can do what" is the user-facing table; keep them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from jobs import kinds

VIEW_JOB = "jobs.view_job"  # see jobs and runs: any page or API read
ADD_JOB = "jobs.add_job"
CHANGE_JOB = "jobs.change_job"  # edit, enable or disable, restore an earlier version
DELETE_JOB = "jobs.delete_job"
RUN_JOB = "jobs.run_job"  # run now, retry a run, cancel a run
USE_SHELL = "jobs.use_shell"  # create or change a job whose executor runs shell commands
PAUSE_SCHEDULER = "jobs.pause_scheduler"  # pause and resume the whole scheduler


# Business calendars and blackout windows: kept by job admins (everyone who may read jobs
# reads them).
ADD_CALENDAR = "jobs.add_calendar"
CHANGE_CALENDAR = "jobs.change_calendar"
DELETE_CALENDAR = "jobs.delete_calendar"
ADD_BLACKOUT = "jobs.add_blackout"
CHANGE_BLACKOUT = "jobs.change_blackout"
DELETE_BLACKOUT = "jobs.delete_blackout"
CALENDAR_CODENAMES = tuple(
    f"{verb}_{model}" for model in ("calendar", "blackout") for verb in ("add", "change", "delete")
)

# Alert channels (Apprise URLs): who may change one may also send it a test message.
ADD_CHANNEL = "jobs.add_notificationchannel"
CHANGE_CHANNEL = "jobs.change_notificationchannel"  # edit, and "Send a test"
DELETE_CHANNEL = "jobs.delete_notificationchannel"


class GroupGrant(NamedTuple):
    """A group made by the migrations and the permissions (codenames in the jobs app)
    it holds."""

    name: str
    codenames: tuple[str, ...]


JOB_VIEWERS = GroupGrant("Job viewers", ("view_job",))
JOB_OPERATORS = GroupGrant("Job operators", ("view_job", "run_job", "change_job"))
# Everything but use_shell: running arbitrary commands on the server is granted one
# user at a time, never by being an admin of jobs.
JOB_ADMINS = GroupGrant(
    "Job admins",
    (
        "view_job",
        "add_job",
        "change_job",
        "delete_job",
        "run_job",
        "pause_scheduler",
        *CALENDAR_CODENAMES,
    ),
)
GROUPS = (JOB_VIEWERS, JOB_OPERATORS, JOB_ADMINS)


def codename(permission: str) -> str:
    """ "jobs.run_job" -> "run_job"."""
    return permission.partition(".")[2]


# --- what only users with jobs.use_shell may choose ------------------------------------
# Which jobs need it is each kind's rule (jobs.kinds: a shell job always, a management
# command job unless its command is one known to be harmless, judged on the words the
# executor runs); jobs.models.gate applies it to every entry point, for the acting user.


def needs_shell_permission(job_or_values: Any) -> bool:
    """Whether creating, changing, enabling, chaining to or restoring a job like this,
    running it with other arguments or reading its secrets needs jobs.use_shell.

    Takes a Job, or the values a form or request gives ({"executor": ..., "command":
    ...}). Ask it of the job as it is and as it will be: turning a shell job into
    another kind is a change of a shell job.
    """
    if isinstance(job_or_values, Mapping):
        executor = job_or_values.get("executor")
        command = job_or_values.get("command")
    else:
        executor = getattr(job_or_values, "executor", "")
        command = getattr(job_or_values, "command", "")
    return kinds.needs_use_shell(str(executor or ""), str(command or ""))


def may_use_shell(user: Any) -> bool:
    return bool(user is not None and user.has_perm(USE_SHELL))


def may_change_job_like(user: Any, *jobs_or_values: Any) -> bool:
    """Whether `user` may turn a job from one of these into another (each a Job or
    values; None is skipped): jobs.use_shell when any of them needs it."""
    if may_use_shell(user):
        return True
    return not any(needs_shell_permission(item) for item in jobs_or_values if item is not None)
