"""The job list's bulk actions: enable, disable or run now the jobs ticked on the page.

Each job goes through what its own button does (Job.set_active, engine.run_now), with
the permission that button needs (jobs.access.permissions), so the rules, refusals and audit entries
are those of the single actions, one job at a time. A job the user may not act on, or
that refuses (a one-off whose time has passed cannot be enabled), is reported by name
and left as it was; the others are done.

A selection that is not a list of the page's jobs (no job, a malformed or unknown id,
more jobs than a page shows, an unknown action) is refused whole: nothing changes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from jobs import engine
from jobs.access.permissions import CHANGE_JOB, RUN_JOB, VIEW_JOB
from jobs.models import Job
from jobs.web import scoping
from jobs.web.views import JOBS_PER_PAGE, _next_url, needs

# At most one page of the list at a time.
MAX_BULK_JOBS = JOBS_PER_PAGE
# Names listed in a message; the rest are counted.
NAMES_SHOWN = 10
ACTION_FIELD = "bulk_action"
JOB_FIELD = "job"


class BulkAction(NamedTuple):
    permission: str  # the single action's (jobs/access/permissions.py)
    apply: Callable[[Job], Any]  # the single action's own model or engine function
    done: Any  # "Enabled: “a”, “b”." (lazy text with %(names)s)


def _enable(job: Job) -> None:
    job.set_active(True)


def _disable(job: Job) -> None:
    job.set_active(False)


ACTIONS = {
    "enable": BulkAction(CHANGE_JOB, _enable, gettext_lazy("Enabled: %(names)s.")),
    "disable": BulkAction(CHANGE_JOB, _disable, gettext_lazy("Disabled: %(names)s.")),
    # With the job's own arguments, as the list's one-click "Run now" button.
    "run": BulkAction(RUN_JOB, engine.run_now, gettext_lazy("Will run in a moment: %(names)s.")),
}


class BulkOutcome(NamedTuple):
    done: list[str]  # names of the jobs acted on
    refused: list[str]  # names of the jobs the user may not act on
    failed: list[tuple[str, str]]  # (name, why) of the jobs that refused the action


class BadSelection(Exception):
    """The posted selection is not one to act on; the message says why."""


def read_selection(
    action_name: str, values: Sequence[str], visible: QuerySet[Job] | None = None
) -> tuple[BulkAction, list[Job]]:
    """The action and the jobs a bulk post names, in the order of their names; raises
    BadSelection when either is not valid."""
    action = ACTIONS.get(action_name)
    if action is None:
        raise BadSelection(_("Choose enable, disable or run now."))
    if not values:
        raise BadSelection(_("Tick the jobs to act on first."))
    if len(values) > MAX_BULK_JOBS:
        raise BadSelection(
            _("At most %(count)d jobs at a time, the jobs of one page.") % {"count": MAX_BULK_JOBS}
        )
    try:
        ids = {uuid.UUID(value) for value in values}
    except ValueError:
        raise BadSelection(_("The list of jobs is not valid.")) from None
    # Among the jobs the user may see: another team's is as unknown as a deleted one.
    visible = Job.objects.all() if visible is None else visible
    jobs = list(visible.filter(pk__in=ids).order_by("name", "id"))
    if len(jobs) != len(ids):
        raise BadSelection(
            _("Some of the ticked jobs no longer exist: reload the list and tick them again.")
        )
    return action, jobs


def apply_to_jobs(request: Any, action: BulkAction, jobs: Sequence[Job]) -> BulkOutcome:
    """Do `action` to each job the user may act on, one job at a time, each in the
    action's own transaction (its audit entry with it)."""
    outcome = BulkOutcome(done=[], refused=[], failed=[])
    for job in jobs:
        # The single action's question, asked for every job: no job slips through on
        # the strength of another.
        if not scoping.may(request, action.permission, job):
            outcome.refused.append(job.name)
            continue
        try:
            action.apply(job)
        except ValidationError as error:
            outcome.failed.append((job.name, " ".join(error.messages)))
        else:
            outcome.done.append(job.name)
    return outcome


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(f"“{name}”" for name in names[:NAMES_SHOWN])
    if len(names) > NAMES_SHOWN:
        shown += " " + _("and %(count)d more") % {"count": len(names) - NAMES_SHOWN}
    return shown


@require_POST
@needs(VIEW_JOB)
def job_bulk(request: HttpRequest) -> HttpResponse:
    """Enable, disable or run now the ticked jobs; says what was done and what was not."""
    back = redirect(_next_url(request, reverse("jobs:job_list")))
    try:
        action, jobs = read_selection(
            request.POST.get(ACTION_FIELD, ""),
            request.POST.getlist(JOB_FIELD),
            scoping.visible_jobs(request),
        )
    except BadSelection as refusal:
        messages.error(request, _("Nothing was changed: %(why)s") % {"why": refusal})
        return back
    outcome = apply_to_jobs(request, action, jobs)
    if outcome.done:
        messages.success(request, action.done % {"names": _names(outcome.done)})
    if outcome.refused:
        messages.error(
            request,
            _("Not changed, you may not do this: %(names)s.") % {"names": _names(outcome.refused)},
        )
    for name, why in outcome.failed[:NAMES_SHOWN]:
        messages.error(
            request, _("“%(name)s” was not changed: %(why)s") % {"name": name, "why": why}
        )
    if len(outcome.failed) > NAMES_SHOWN:
        left = len(outcome.failed) - NAMES_SHOWN
        messages.error(request, _("%(count)d more jobs were not changed.") % {"count": left})
    return back
