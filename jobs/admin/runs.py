"""The run pages of the admin: the capped list, a run's page with its alerts, retry
and cancel. The history only grows, so nothing here costs in proportion to it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import model_ngettext
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import smart_split, unescape_string_literal
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from jobs import engine
from jobs.admin.common import (
    CappedCountPaginator,
    LeanListMixin,
    capped_count,
    format_duration,
    run_status_badge,
    time_column,
)
from jobs.models import Job, JobHistory, NotificationAttempt

# Retrying is a few queries per run; a select-all over the history must not run for minutes.
MAX_RUNS_PER_RETRY = 1000
# The same bound for cancelling (a statement or two per run).
MAX_RUNS_PER_CANCEL = 1000
# A run search matching at most this many jobs reads their runs by job (see
# JobHistoryAdmin.get_search_results).
FEW_JOBS_MATCHED = 20


class RunJobFilter(admin.SimpleListFilter):
    """The runs of one job (the "all runs" link on a job's page).

    Offers only the job already chosen: a list of every job would be 10,000 links.
    """

    title = _("job")
    parameter_name = "job"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> Iterable:
        job_id = self.value()
        if not job_id:
            return []
        try:
            return list(Job.objects.filter(pk=job_id).values_list("pk", "name"))
        except ValidationError:  # not a UUID
            return []

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        job_id = self.value()
        if not job_id:
            return queryset
        try:
            return queryset.filter(job_id=job_id)
        except ValidationError:
            return queryset.none()


class NotificationAttemptInline(admin.TabularInline):
    """Every try at sending an alert about the run (jobs/alerts.py), read-only."""

    model = NotificationAttempt
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "created_at",
        "kind",
        "channel",
        "target",
        "attempt",
        "status",
        "response_code",
        "error",
    )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Whoever may see the run sees its alerts.
        return request.user.has_perm("jobs.view_jobhistory")


@admin.register(JobHistory)
class JobHistoryAdmin(LeanListMixin, admin.ModelAdmin):
    list_display = (
        "job_link",
        "scheduled",
        "attempt",
        "status_badge",
        "started",
        "finished",
        "duration_display",
        "worker",
    )
    list_display_links = ("scheduled",)
    list_select_related = ("job",)
    list_filter = ("status", ("created_at", admin.DateFieldListFilter), RunJobFilter)
    date_hierarchy = "created_at"
    search_fields = ("job__name",)
    search_help_text = _("Search by job name.")
    actions = ("retry", "cancel")
    inlines = (NotificationAttemptInline,)
    fields = readonly_fields = (
        "job",
        "scheduled",
        "attempt",
        "status_badge",
        "trigger",
        "not_before_display",
        "started",
        "finished",
        "duration_display",
        "heartbeat",
        "worker",
        "cancelled_by",
        "created",
        "log_display",
    )

    # The history only grows; nothing here may cost in proportion to it.
    paginator = CappedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    # Newest first is what the (created_at) and (status, created_at) indexes serve; sorting a
    # million rows by another column would be a full sort per page view.
    sortable_by = ()

    class Media:
        css = {"all": ("jobs/admin.css",)}

    # Runs are written by the engine only: view here, delete for superusers.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: JobHistory | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: JobHistory | None = None) -> bool:
        return request.user.is_superuser

    def has_retry_permission(self, request: HttpRequest) -> bool:
        # A retry queues a run, like "run now" on the job.
        return request.user.has_perm("jobs.change_job")

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        # Cancelling stops a job's run: the same right as running it.
        return request.user.has_perm("jobs.change_job")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[JobHistory], search_term: str
    ) -> tuple[QuerySet[JobHistory], bool]:
        """Search by job name; when few jobs match, fetch their runs by job.

        Django's search joins each run to its job and tests the name, walking the history
        newest first: quick when many runs match, but a scan of every run when few do
        (two seconds on a million runs, for one job's name). So the jobs are matched
        first (the same rule: every word, or "quoted phrase", in the name), and a handful
        of them is looked up through the (job, created_at) index instead.
        """
        if not search_term:
            return queryset, False
        jobs = Job.objects.all()
        for word in smart_split(search_term):
            if word[0] in "\"'" and word[-1] == word[0]:
                word = unescape_string_literal(word)
            jobs = jobs.filter(name__icontains=word)
        job_ids = list(jobs.values_list("pk", flat=True)[: FEW_JOBS_MATCHED + 1])
        if len(job_ids) <= FEW_JOBS_MATCHED:
            return queryset.filter(job_id__in=job_ids), False
        return super().get_search_results(request, queryset, search_term)

    # --- columns and read-only fields ---

    scheduled = time_column("scheduled_for", _("scheduled for"))
    not_before_display = time_column("not_before", _("not before"))
    started = time_column("started_at", _("started"))
    finished = time_column("finished_at", _("finished"))
    heartbeat = time_column("heartbeat_at", _("heartbeat"))
    created = time_column("created_at", _("created"))

    @admin.display(description=_("job"))
    def job_link(self, run: JobHistory) -> SafeString:
        # To this job's runs: a query string needs no reverse() per row, and the job's
        # own page is a click away on the run's page.
        return format_html(
            '<a href="?{}={}" title="{}">{}</a>',
            RunJobFilter.parameter_name,
            run.job_id,
            gettext("Show only this job's runs"),
            run.job.name,
        )

    @admin.display(description=_("status"))
    def status_badge(self, run: JobHistory) -> SafeString:
        return run_status_badge(run)

    @admin.display(description=_("duration"))
    def duration_display(self, run: JobHistory) -> str | None:
        return format_duration(run.duration)

    @admin.display(description=_("log"))
    def log_display(self, run: JobHistory) -> SafeString | None:
        if not run.log:
            return None
        # <pre> keeps the executor's line breaks and alignment; format_html escapes it.
        return format_html('<pre class="jobs-run-log">{}</pre>', run.log)

    # --- actions ---

    @admin.action(description=_("Retry the selected failed runs"), permissions=["retry"])
    def retry(self, request: HttpRequest, queryset: QuerySet[JobHistory]) -> None:
        runs = queryset.select_related(None).only("job", "scheduled_for", "attempt", "status")
        if capped_count(runs, MAX_RUNS_PER_RETRY).capped:
            self.message_user(
                request,
                _("Select at most %(max)d runs to retry at a time; filter by status first.")
                % {"max": MAX_RUNS_PER_RETRY},
                messages.ERROR,
            )
            return
        retried = 0
        refused: Counter[str] = Counter()
        for run in runs:
            try:
                engine.retry_run(run)
            except engine.RetryRefused as reason:
                refused[str(reason)] += 1
            else:
                retried += 1
        if retried:
            self.message_user(
                request,
                ngettext(
                    "Retrying %(count)d run: its next attempt is pending.",
                    "Retrying %(count)d runs: their next attempts are pending.",
                    retried,
                )
                % {"count": retried},
                messages.SUCCESS,
            )
        for reason, count in refused.items():
            self.message_user(
                request,
                _("%(count)d %(runs)s not retried: %(reason)s")
                % {"count": count, "runs": model_ngettext(self.opts, count), "reason": reason},
                messages.WARNING,
            )

    @admin.action(
        description=_("Cancel the selected pending or running runs"), permissions=["cancel"]
    )
    def cancel(self, request: HttpRequest, queryset: QuerySet[JobHistory]) -> None:
        runs = queryset.select_related(None).only("pk")
        if capped_count(runs, MAX_RUNS_PER_CANCEL).capped:
            self.message_user(
                request,
                _("Select at most %(max)d runs to cancel at a time; filter by status first.")
                % {"max": MAX_RUNS_PER_CANCEL},
                messages.ERROR,
            )
            return
        cancelled = 0
        refused: Counter[str] = Counter()
        by = request.user.get_username()
        for run in runs:
            try:
                engine.cancel_run(run, by=by)
            except engine.CancelRefused as reason:
                refused[str(reason)] += 1
            else:
                cancelled += 1
        if cancelled:
            self.message_user(
                request,
                ngettext(
                    "Cancelled %(count)d run; a running one stops within a few seconds.",
                    "Cancelled %(count)d runs; running ones stop within a few seconds.",
                    cancelled,
                )
                % {"count": cancelled},
                messages.SUCCESS,
            )
        for reason, count in refused.items():
            self.message_user(
                request,
                _("%(count)d %(runs)s not cancelled: %(reason)s")
                % {"count": count, "runs": model_ngettext(self.opts, count), "reason": reason},
                messages.WARNING,
            )
