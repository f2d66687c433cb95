"""The run pages of the admin: the capped list, a run's page with its alerts, retry
and cancel. The history only grows, so nothing here costs in proportion to it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext_lazy
from django.utils.translation import gettext_lazy as _

from jobs import engine
from jobs.access.masking import (
    ATTEMPT_DETAIL_FIELDS,
    masked_target,
    may_see_secrets,
    shown_arguments,
    shown_log,
)
from jobs.access.permissions import RUN_JOB, VIEW_JOB
from jobs.admin.common import (
    AdminScreensMixin,
    BoundedDateChangeList,
    BulkAction,
    CappedCountPaginator,
    LeanListMixin,
    RecordedByCodeMixin,
    format_duration,
    run_status_badge,
    time_column,
)
from jobs.admin.teams import ScopedAdminMixin, acting_on
from jobs.models import Job, JobHistory, NotificationAttempt, gate
from jobs.models.changes import current_actor
from jobs.queues import settings as queues
from jobs.web import scoping

# Retrying is a few queries per run; a select-all over the history must not run for minutes.
MAX_RUNS_PER_RETRY = 1000
# The same bound for cancelling (a statement or two per run).
MAX_RUNS_PER_CANCEL = 1000


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
            jobs = scoping.visible_jobs(request)  # another team's job is not named
            return list(jobs.filter(pk=job_id).values_list("pk", "name"))
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


class RunQueueFilter(admin.SimpleListFilter):
    """The runs of one queue. Offers the queues of the jobs and those with a limit (the
    index jobs_job_queue): Django's own filter would read every run for its names."""

    title = _("queue")
    parameter_name = "queue"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> Iterable:
        names = set(Job.objects.queue_names()) | set(queues.limits())
        if self.value():
            names.add(self.value())  # a queue no job is in any more still has runs
        return [(name, name) for name in sorted(names)]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(queue=self.value()) if self.value() else queryset


class NotificationAttemptInline(admin.TabularInline):
    """Every try at sending an alert about the run (jobs/alerts), read-only."""

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

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        if may_see_secrets(request.user):
            return self.fields
        # Masked target, only the status (jobs.access.masking.ATTEMPT_DETAIL_FIELDS).
        return tuple(
            {"target": "shown_target"}.get(name, name)
            for name in self.fields
            if name not in ATTEMPT_DETAIL_FIELDS
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        return self.get_fields(request, obj)

    @admin.display(description=_("sent to"))
    def shown_target(self, attempt: NotificationAttempt) -> str:
        return masked_target(attempt.channel, attempt.target)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Whoever may see the run sees its alerts (secrets masked, as above).
        return request.user.has_perm(VIEW_JOB)


@admin.register(JobHistory)
class JobHistoryAdmin(
    ScopedAdminMixin, AdminScreensMixin, RecordedByCodeMixin, LeanListMixin, admin.ModelAdmin
):
    # What fits 1280 px beside the admin's two sidebars, with the time on one line
    # (jobs/static/jobs/admin.css, which also cuts long worker names): the times it
    # started and finished are on the run's page, and the duration says how long it took.
    list_display = (
        "job_link",
        "scheduled",
        "attempt",
        "status_badge",
        "duration_display",
        "worker_column",
    )
    list_display_links = ("scheduled",)
    list_select_related = ("job",)
    list_filter = (
        "status",
        RunQueueFilter,
        ("created_at", admin.DateFieldListFilter),
        RunJobFilter,
    )
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
        "queue",
        "priority",
        "cancelled_by",
        "cause_link",
        "chained_links",
        "created",
        "arguments_display",
        "log_display",
    )

    # The history only grows; nothing here may cost in proportion to it.
    paginator = CappedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    # Newest first is what jobs_run_recent (jobs_run_failed_recent for failed runs) serves;
    # sorting a million rows by another column would be a full sort per page view.
    sortable_by = ()

    class Media:
        css = {"all": ("jobs/admin.css",)}

    def get_queryset(self, request: HttpRequest) -> QuerySet[JobHistory]:
        # A run's str() names its job (the page's title and breadcrumb).
        return super().get_queryset(request).select_related("job")

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[BoundedDateChangeList]:
        # A year the date hierarchy cannot filter by is a bad filter, not a 500.
        return BoundedDateChangeList

    def has_retry_permission(self, request: HttpRequest) -> bool:
        # A retry queues a run, like "run now" on the job.
        return request.user.has_perm(RUN_JOB)

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        # Cancelling stops a job's run: the same right as running it.
        return request.user.has_perm(RUN_JOB)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[JobHistory], search_term: str
    ) -> tuple[QuerySet[JobHistory], bool]:
        """Search by job name: JobHistoryQuerySet.for_job_name, the history page's rule.

        Django's own search would join each run to its job and test the name, walking
        the history newest first: a scan of every run when few jobs match.
        `search_fields` only makes Django show the search box.
        """
        if not search_term:
            return queryset, False
        return queryset.for_job_name(search_term), False

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

    @admin.display(description=_("worker"))
    def worker_column(self, run: JobHistory) -> SafeString | None:
        # Cut to the column's width by admin.css; the whole name on hover.
        if not run.worker:
            return None
        return format_html('<span title="{}">{}</span>', run.worker, run.worker)

    @admin.display(description=_("status"))
    def status_badge(self, run: JobHistory) -> SafeString:
        return run_status_badge(run)

    @admin.display(description=_("duration"))
    def duration_display(self, run: JobHistory) -> str | None:
        return format_duration(run.duration)

    @admin.display(description=_("arguments"))
    def arguments_display(self, run: JobHistory) -> str | None:
        if run.arguments is None:
            return None
        # The viewer is the admin's user (jobs.web.screens.admin_screen): secrets masked
        # for users who may not change jobs (jobs.access.masking).
        shown = shown_arguments(current_actor().user, run.arguments, run.job)
        return json.dumps(shown, ensure_ascii=False)

    @admin.display(description=_("started by"))
    def cause_link(self, run: JobHistory) -> SafeString | None:
        if run.caused_by_id is None:
            return None
        cause = JobHistory.objects.filter(pk=run.caused_by_id).values_list("job__name").first()
        return format_html(
            '<a href="{}">{}</a>',
            reverse("admin:jobs_jobhistory_change", args=[run.caused_by_id]),
            gettext("a run of %(name)s") % {"name": cause[0] if cause else "?"},
        )

    @admin.display(description=_("runs it started"))
    def chained_links(self, run: JobHistory) -> SafeString | None:
        # Through index jobs_run_caused_by; a handful at most.
        started = run.chained_runs.order_by("created_at").values_list("pk", "job__name")
        return (
            format_html_join(
                ", ",
                '<a href="{}">{}</a>',
                (
                    (reverse("admin:jobs_jobhistory_change", args=[pk]), name)
                    for pk, name in started
                ),
            )
            or None
        )

    @admin.display(description=_("log"))
    def log_display(self, run: JobHistory) -> SafeString | None:
        if not run.log:
            return None
        log = shown_log(current_actor().user, run.log, run.arguments, run.job)
        # <pre> keeps the executor's line breaks and alignment; format_html escapes it.
        return format_html('<pre class="jobs-run-log">{}</pre>', log)

    # --- actions ---

    @admin.action(description=_("Retry the selected failed runs"), permissions=["retry"])
    def retry(self, request: HttpRequest, queryset: QuerySet[JobHistory]) -> None:
        queryset = acting_on(request, queryset, RUN_JOB)
        runs = queryset.select_related(None).only("job", "scheduled_for", "attempt", "status")
        action = BulkAction(self, request)
        if action.over_cap(
            runs,
            MAX_RUNS_PER_RETRY,
            _("Select at most %(max)d runs to retry at a time; filter by status first."),
        ):
            return
        # A run with other arguments than its job's is retried only by users who may
        # run the job with them (jobs.models.gate, for the admin's acting user).
        action.apply(runs, engine.retry_run, (engine.RetryRefused, gate.ShellPermissionRequired))
        action.report_done(
            ngettext_lazy(
                "Retrying %(count)d run: its next attempt is pending.",
                "Retrying %(count)d runs: their next attempts are pending.",
                "count",
            )
        )
        action.report_refused_by_reason(_("%(count)d %(runs)s not retried: %(reason)s"))

    @admin.action(
        description=_("Cancel the selected pending or running runs"), permissions=["cancel"]
    )
    def cancel(self, request: HttpRequest, queryset: QuerySet[JobHistory]) -> None:
        runs = acting_on(request, queryset, RUN_JOB).select_related(None).only("pk")
        action = BulkAction(self, request)
        if action.over_cap(
            runs,
            MAX_RUNS_PER_CANCEL,
            _("Select at most %(max)d runs to cancel at a time; filter by status first."),
        ):
            return
        by = request.user.get_username()
        action.apply(runs, lambda run: engine.cancel_run(run, by=by), (engine.CancelRefused,))
        action.report_done(
            ngettext_lazy(
                "Cancelled %(count)d run; a running one stops within a few seconds.",
                "Cancelled %(count)d runs; running ones stop within a few seconds.",
                "count",
            )
        )
        action.report_refused_by_reason(_("%(count)d %(runs)s not cancelled: %(reason)s"))
