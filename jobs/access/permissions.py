"""Who may do what: the permission names every entry point checks, and the groups.

The dashboard, the API and the admin ask the same questions through these names, so one
rule holds at all three. Superusers have every permission (Django's ModelBackend).
docs/permissions.md "Who can do what" is the user-facing table; keep them together.
"""

from __future__ import annotations

from typing import Any, NamedTuple

VIEW_JOB = "jobs.view_job"  # see jobs and runs: any page or API read
ADD_JOB = "jobs.add_job"
CHANGE_JOB = "jobs.change_job"  # edit, enable or disable, restore an earlier version
DELETE_JOB = "jobs.delete_job"
RUN_JOB = "jobs.run_job"  # run now, retry a run, cancel a run
USE_SHELL = "jobs.use_shell"  # create or change a job whose executor runs shell commands
PAUSE_SCHEDULER = "jobs.pause_scheduler"  # pause and resume the whole scheduler


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
    ("view_job", "add_job", "change_job", "delete_job", "run_job", "pause_scheduler"),
)
GROUPS = (JOB_VIEWERS, JOB_OPERATORS, JOB_ADMINS)


def codename(permission: str) -> str:
    """ "jobs.run_job" -> "run_job"."""
    return permission.partition(".")[2]


# Which jobs need jobs.use_shell is each kind's rule (jobs.executors.kinds), applied to
# every entry point in one place (jobs.models.gate).


def may_use_shell(user: Any) -> bool:
    return bool(user is not None and user.has_perm(USE_SHELL))
