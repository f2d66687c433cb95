"""The jobs.use_shell rule: what a user without it may not make a job do.

Whether a job needs the permission is its kind's rule (jobs.kinds: a shell
job always, a management command job unless its command is one known to be harmless),
judged on the words the executor will run. The rule is applied here, to the values an
entry point has cleaned and with the user who acts, and every entry point comes
through here:

- saving a job (the dashboard's form, the admin's, the API, restoring a version of the
  audit trail, enabling, setting its chains): Job.clean() asks change_refusal();
- running a job with arguments other than its own (run now with arguments, run again
  and retry of a run that had others): the engine's actions ask check_run().

The user who acts is the one given, else the audit trail's actor (jobs.models.changes),
which the dashboard, the admin and the API set for every request: an entry point cannot
forget to say who acts. With neither (the site's own code: syncjobs, the scheduler,
scripts) nothing is refused.

A user without jobs.use_shell may not create such a job, change one (even away from its
kind), restore a version of one, enable one, add one to a job's chains, or run one with
arguments other than its own. Disabling one stays theirs (stopping work is never the
danger), and so does running one as it is: it then does only what a user with the
permission saved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.utils.translation import gettext

from jobs.access import permissions as access
from jobs.executors.command import SAFE_COMMANDS
from jobs.models import changes
from jobs.models.chains import CHAIN_FIELDS, pending

# The code of the ValidationError Job.clean() raises for a refusal, so that an entry
# point can answer it as a refusal (403) rather than as a bad value (400).
CODE = "shell_permission"


class ShellPermissionRequired(PermissionDenied):
    """A refusal of the jobs.use_shell rule; str() says why, for the user."""


class Refusal(NamedTuple):
    """Why a change is refused, and the job's field it is about."""

    field: str
    message: str


def change_message() -> str:
    return gettext(
        "Only users with the permission %(permission)s may create, change, restore or "
        "enable a job that runs shell commands or a management command other than the "
        "harmless ones (%(safe)s)."
    ) % {"permission": access.USE_SHELL, "safe": ", ".join(sorted(SAFE_COMMANDS))}


def chain_message() -> str:
    return gettext(
        "Only users with the permission %(permission)s may make a job start one that "
        "runs shell commands or a management command other than the harmless ones."
    ) % {"permission": access.USE_SHELL}


def run_message() -> str:
    return gettext(
        "Only users with the permission %(permission)s may run this job with other "
        "arguments than its own. Run it with its own instead."
    ) % {"permission": access.USE_SHELL}


def needs_use_shell(job_or_values: Any) -> bool:
    """Whether a job (a Job, or its values as a mapping) is one only users with
    jobs.use_shell may create, change or run with other arguments (its kind's rule)."""
    return access.needs_shell_permission(job_or_values)


def acting_user(user: Any = None) -> Any:
    """`user`, else the user the audit trail records as acting (None: the site's code)."""
    return user if user is not None else changes.current_actor().user


def change_refusal(user: Any, job: models.Model) -> Refusal | None:
    """Why the acting user (`user`, else the audit trail's) may not save `job` as it now
    is (against its values as loaded), or None."""
    user = acting_user(user)
    if user is None or access.may_use_shell(user):
        return None
    before = None if job._state.adding else job._values_as_loaded()  # type: ignore[attr-defined]
    after = changes.job_values(job)
    involved = needs_use_shell(after) or (before is not None and needs_use_shell(before))
    if involved and not _only_disabled(before, after):
        return Refusal("executor", change_message())
    field = _chain_to_refused(job)
    return Refusal(field, chain_message()) if field else None


def refusal_of(error: ValidationError) -> str | None:
    """The refusal's words if `error` (from Job.full_clean) is one, else None."""
    for messages in getattr(error, "error_dict", {}).values():
        for message in messages:
            if message.code == CODE:
                return " ".join(message.messages)
    return None


def may_change_arguments(user: Any, job: models.Model) -> bool:
    """Whether the acting user may run `job` with other arguments than its own."""
    user = acting_user(user)
    return user is None or access.may_use_shell(user) or not needs_use_shell(job)


def run_refusal(user: Any, job: models.Model, arguments: Any) -> str | None:
    """Why the acting user may not run `job` with `arguments` (None: the job's own), or
    None."""
    if arguments is None or arguments == (job.arguments or {}):  # type: ignore[attr-defined]
        return None
    return None if may_change_arguments(user, job) else run_message()


def check_run(user: Any, job: models.Model, arguments: Any) -> None:
    """Raise ShellPermissionRequired when run_refusal() refuses."""
    message = run_refusal(user, job, arguments)
    if message is not None:
        raise ShellPermissionRequired(message)


def _only_disabled(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> bool:
    """Whether the change switches the job off and does nothing else."""
    if before is None or not before.get("is_active") or after.get("is_active"):
        return False
    return all(after.get(name) == value for name, value in before.items() if name != "is_active")


def _chain_to_refused(job: models.Model) -> str:
    """The chain list being set that adds a job needing jobs.use_shell, or ""."""
    wanted = pending(job)
    if wanted is None:
        return ""
    model = type(job)
    for name in CHAIN_FIELDS:
        ids = getattr(wanted, name)
        if not ids:
            continue
        added = set(ids)
        if not job._state.adding:
            through = getattr(model, name).through
            added -= set(
                through.objects.filter(from_job_id=job.pk).values_list("to_job_id", flat=True)
            )
        targets = model.objects.filter(pk__in=added).values("executor", "command")  # type: ignore[attr-defined]
        if added and any(needs_use_shell(target) for target in targets):
            return name
    return ""
