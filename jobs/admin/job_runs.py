"""A job's latest runs on its admin page (an inline of the newest few, never all)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import connections
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from jobs.admin.common import format_duration, run_status_badge, time_column
from jobs.models import Job, JobHistory

# Runs shown on a job's admin page; the rest are one link away.
LATEST_RUNS_SHOWN = 20


class LatestRunsFormSet(BaseInlineFormSet):
    """The job's LATEST_RUNS_SHOWN newest runs, not all of them.

    The admin filters an inline's queryset by the job after get_queryset(), and a sliced
    queryset can't be filtered; so the slice goes into a subquery of ids instead.
    """

    # The newest occurrences and, within one, the latest attempt: a backward walk of the
    # unique (job, scheduled_for, attempt) index, however long the job's history.
    newest_first = ("-scheduled_for", "-attempt")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # self.queryset is already this job's runs.
        latest_ids = self.queryset.order_by(*self.newest_first).values("pk")[:LATEST_RUNS_SHOWN]
        if not connections[self.queryset.db].features.allow_sliced_subqueries_with_in:
            # Differs because MySQL/MariaDB refuse a LIMIT inside IN (...) (error 1235): the
            # ids are read first, one more statement of at most LATEST_RUNS_SHOWN rows.
            latest_ids = [row["pk"] for row in latest_ids]
        # Each row is titled by its run's str(), which names the job: joined here, not
        # a query per row.
        self.queryset = (
            self.queryset.filter(pk__in=latest_ids)
            .select_related("job")
            .order_by(*self.newest_first)
        )


class LatestRunsInline(admin.TabularInline):
    model = JobHistory
    formset = LatestRunsFormSet
    verbose_name = _("run")
    verbose_name_plural = _("latest runs")
    fields = readonly_fields = (
        "scheduled",
        "attempt",
        "status_badge",
        "trigger",
        "started",
        "finished",
        "duration_display",
        "worker",
    )
    show_change_link = True
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    scheduled = time_column("scheduled_for", _("scheduled for"))
    started = time_column("started_at", _("started"))
    finished = time_column("finished_at", _("finished"))

    @admin.display(description=_("status"))
    def status_badge(self, run: JobHistory) -> SafeString:
        return run_status_badge(run)

    @admin.display(description=_("duration"))
    def duration_display(self, run: JobHistory) -> str | None:
        return format_duration(run.duration)
