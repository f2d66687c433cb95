"""The job list's actions: run now, enable, disable, duplicate; each through the model or
the engine.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from jobs import engine
from jobs.access import permissions as access
from jobs.access.permissions import CHANGE_JOB, RUN_JOB
from jobs.admin.common import BulkAction
from jobs.admin.teams import acting_on
from jobs.models import Job, gate


class JobActionsMixin:
    """The actions of JobAdmin, each with its permission (has_run_permission for run)."""

    def has_run_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(RUN_JOB)

    @admin.action(description=_("Run the selected jobs now"), permissions=["run"])
    def run_now(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        action = BulkAction(self, request)
        # A job with JOBS_MAX_PENDING_MANUAL_RUNS waiting already is refused: named, the
        # rest go on. Another team's jobs are not acted on (acting_on).
        action.apply(
            acting_on(request, queryset, RUN_JOB), engine.run_now, (engine.ManualRunsExceeded,)
        )
        action.report_done(
            ngettext_lazy(
                "Queued %(count)d run; it starts as soon as a worker is free.",
                "Queued %(count)d runs; they start as soon as workers are free.",
                "count",
            )
        )
        action.report_named(
            ngettext_lazy(
                "Could not run %(count)d job: %(why)s",
                "Could not run %(count)d jobs: %(why)s",
                "count",
            )
        )

    @admin.action(description=_("Enable the selected jobs"), permissions=["change"])
    def enable(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        self._set_active(request, queryset, active=True)

    @admin.action(description=_("Disable the selected jobs"), permissions=["change"])
    def disable(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        self._set_active(request, queryset, active=False)

    def _set_active(self, request: HttpRequest, queryset: QuerySet[Job], *, active: bool) -> None:
        def change(job: Job) -> None:
            job.set_active(active, user=request.user)
            self.log_change(request, job, _("Enabled.") if active else _("Disabled."))

        action = BulkAction(self, request)
        # e.g. a one-off job whose time has passed is refused: reported, the rest go on.
        selected = acting_on(request, queryset, CHANGE_JOB).filter(is_active=not active)
        action.apply(selected, change, (ValidationError,))
        if active:
            action.report_done(
                ngettext_lazy("Enabled %(count)d job.", "Enabled %(count)d jobs.", "count")
            )
        else:
            action.report_done(
                ngettext_lazy("Disabled %(count)d job.", "Disabled %(count)d jobs.", "count")
            )
        if not action.done and not action.refused:
            action.say(
                _("The selected jobs were already enabled.")
                if active
                else _("The selected jobs were already disabled."),
                messages.INFO,
            )
        action.report_named(
            ngettext_lazy(
                "Could not enable %(count)d job: %(why)s",
                "Could not enable %(count)d jobs: %(why)s",
                "count",
            )
            if active
            else ngettext_lazy(
                "Could not disable %(count)d job: %(why)s",
                "Could not disable %(count)d jobs: %(why)s",
                "count",
            )
        )

    @admin.action(
        description=_("Duplicate the selected jobs (as disabled copies)"), permissions=["add"]
    )
    def duplicate(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        def copy(job: Job) -> None:
            if gate.needs_use_shell(job) and not access.may_use_shell(request.user):
                raise ValidationError(gate.change_message())
            # A copy is a draft: an active one would start running its original's work
            # within seconds, before anyone changed what it does. Job.duplicate() copies
            # is_active from the job it is given, so it is given one switched off (this
            # loaded instance only; the job itself stays as it is).
            was_active, job.is_active = job.is_active, False
            try:
                made, _disabled_because = job.duplicate()
            finally:
                job.is_active = was_active
            self.log_addition(request, made, _("Duplicated from “%(name)s”.") % {"name": job})

        action = BulkAction(self, request)
        action.apply(queryset, copy, (ValidationError,))
        action.report_done(
            ngettext_lazy(
                "Copied %(count)d job as disabled: edit it, then enable it.",
                "Copied %(count)d jobs as disabled: edit them, then enable them.",
                "count",
            )
        )
        action.report_named(
            ngettext_lazy(
                "Could not copy %(count)d job: %(why)s",
                "Could not copy %(count)d jobs: %(why)s",
                "count",
            )
        )
