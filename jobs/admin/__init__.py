"""The Django admin as a second console for operators.

Thin by design: state changes go through `jobs.engine` (run now, enable/disable, retry)
or `Job.save()` (which recomputes the schedule), and validation is `Job.clean()` reached
through the ModelForm, never a copy of its rules.

The run table grows without bound, so its pages avoid anything that scales with it:
no full COUNT(*) (a capped count instead), no facet counts, sorting only the newest-first
way the indexes serve, a search that finds the jobs first, and a date hierarchy built
from two index look-ups (jobs/templatetags/jobs_admin.py). `manage.py benchmark
--scenario pages` measures the lists with 10,000 jobs and 1,000,000 runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import model_ngettext
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import get_script_prefix, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import capfirst, smart_split, unescape_string_literal
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from jobs import engine
from jobs.models import (
    NAME_MAX_LENGTH,
    Job,
    JobHistory,
    JobState,
    NotificationAttempt,
)
from jobs.web.forms import TimeZoneSelect, mark_schedule_switch

# Counting runs stops here: "more than 10,000" costs a bounded scan, an exact count a full one.
RUN_COUNT_CAP = 10_000
# Runs shown on a job's admin page; the rest are one link away.
LATEST_RUNS_SHOWN = 20
# Retrying is a few queries per run; a select-all over the history must not run for minutes.
MAX_RUNS_PER_RETRY = 1000
# The same bound for cancelling (a statement or two per run).
MAX_RUNS_PER_CANCEL = 1000
# Per-job failures listed by name in one message before "and N more".
FAILURES_LISTED = 5
COPY_SUFFIX = " (copy)"
# A run search matching at most this many jobs reads their runs by job (see
# JobHistoryAdmin.get_search_results).
FEW_JOBS_MATCHED = 20
# Rows per list page (see LeanListMixin).
LIST_PER_PAGE = 50

admin.site.site_header = _("Job scheduler")
admin.site.site_title = _("Job scheduler")
admin.site.index_title = _("Console")


# --- helpers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CappedCount:
    """A row count that stopped at a cap: `value` is exact unless `capped`."""

    value: int
    capped: bool


def capped_count(queryset: QuerySet, cap: int | None = None) -> CappedCount:
    """Count at most cap + 1 rows (SELECT COUNT(*) FROM (... LIMIT cap + 1)).

    The ordering is dropped so the database may stop at the first cap + 1 rows it finds.
    """
    cap = RUN_COUNT_CAP if cap is None else cap
    counted = queryset.order_by()[: cap + 1].count()
    return CappedCount(value=min(counted, cap), capped=counted > cap)


class CappedCountPaginator(Paginator):
    """A paginator whose count stops at RUN_COUNT_CAP + 1.

    Pages up to the cap are real; beyond it the list says "more than 10,000" and the
    filters (status, date, job) narrow it down. This keeps the run list's cost flat
    however long the history grows.
    """

    cap = RUN_COUNT_CAP

    @cached_property
    def count(self) -> int:
        counted = capped_count(self.object_list, self.cap)
        return counted.value + 1 if counted.capped else counted.value

    @property
    def is_capped(self) -> bool:
        return self.count > self.cap


def dashboard_path(job: Job) -> str:
    # DESIGN.md fixes /jobs/<id>/ as the job's page; its URL name belongs to the dashboard
    # (built in parallel), so the admin links by path, under the site's script prefix.
    return f"{get_script_prefix()}jobs/{job.pk}/"


def runs_of_job_url(job: Job) -> str:
    return f"{reverse('admin:jobs_jobhistory_changelist')}?{RunJobFilter.parameter_name}={job.pk}"


def format_time(value: datetime | None) -> str | None:
    """Local time to the second ("2026-03-01 12:00:05"); None (shown as "-") when unset.

    Runs are seconds apart, which Django's default DATETIME_FORMAT ("March 1, 2026, noon")
    hides; and strftime costs a fraction of Django's localised formatting per cell.
    """
    if value is None:
        return None
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S")


def time_column(field: str, description: str) -> Callable[[Any, Any], str | None]:
    """A column or read-only field showing `field` with format_time, sortable by it."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> str | None:
        return format_time(getattr(obj, field))

    return column


def format_duration(duration: timedelta | None) -> str | None:
    """How long, in words: "0.4 s", "3 min 12 s", "2 h 5 min"; None (shown as "-") if unknown."""
    if duration is None:
        return None
    seconds = duration.total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def badge(kind: str, value: str, label: str) -> SafeString:
    """A coloured label; the colours live in jobs/static/jobs/admin.css."""
    return format_html('<span class="jobs-badge jobs-{}-{}">{}</span>', kind, value, label)


def run_status_badge(run: JobHistory) -> SafeString:
    return badge("run", run.status, run.get_status_display())


def describe_failures(failures: Sequence[tuple[Job, str]]) -> str:
    """'“a”: reason; “b”: reason; and 3 more' for a message after a bulk action."""
    listed = "; ".join(f"“{job}”: {reason}" for job, reason in failures[:FAILURES_LISTED])
    hidden = len(failures) - FAILURES_LISTED
    if hidden > 0:
        listed += str(_("; and %(count)d more") % {"count": hidden})
    return listed


def validation_text(error: ValidationError) -> str:
    return " ".join(error.messages)


class LeanListMixin:
    """List pages that render quickly.

    Rendering, not the database, dominates these pages: each row costs about 1 ms of
    Django's change-list machinery on a small server, so a page holds 50 rows, not 100;
    and Django draws each row's action checkbox through the form widget templates, a
    quarter of the rest, which format_html does for almost nothing.
    """

    list_per_page = LIST_PER_PAGE

    def action_checkbox(self, obj: Any) -> SafeString:
        return format_html(
            '<input type="checkbox" name="{}" value="{}" class="action-select" aria-label="{}">',
            ACTION_CHECKBOX_NAME,
            obj.pk,
            format_html(gettext("Select this object for an action - {}"), str(obj)),
        )


# --- filters -----------------------------------------------------------------------------


class JobStateFilter(admin.SimpleListFilter):
    """Filter by Job.state, in SQL: the same rule, on last_run_status and running runs."""

    title = _("state")
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> Iterable:
        return JobState.choices

    def queryset(self, request: HttpRequest, queryset: QuerySet[Job]) -> QuerySet[Job]:
        state = self.value()
        if state not in JobState.values:
            return queryset
        # The dashboard's rule (JobQuerySet.in_state): the few running runs through their
        # partial index, rather than an EXISTS per job over each job's history.
        return queryset.in_state(state)


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


# --- jobs --------------------------------------------------------------------------------


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
        self.queryset = self.queryset.filter(pk__in=latest_ids).order_by(*self.newest_first)


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


def duplicate_job(job: Job) -> tuple[Job, str | None]:
    """Save a copy of `job` named "<name> (copy)"; returns it and why it was disabled, if.

    A copy that would not validate as active (a one-off whose time has passed) is saved
    disabled rather than refused, so the operator can fix the time and enable it.
    """
    copy = Job(
        name=job.name[: NAME_MAX_LENGTH - len(COPY_SUFFIX)] + COPY_SUFFIX,
        **{
            field.name: getattr(job, field.name)
            for field in Job._meta.concrete_fields
            if field.editable and not field.primary_key and field.name != "name"
        },
    )
    disabled_because = None
    try:
        copy.full_clean()
    except ValidationError as error:
        if not copy.is_active:
            raise
        disabled_because = validation_text(error)
        copy.is_active = False
        copy.full_clean()  # still invalid when disabled: the caller reports it
    copy.save()  # computes anchor_at and next_run_at
    return copy, disabled_because


@admin.register(Job)
class JobAdmin(LeanListMixin, admin.ModelAdmin):
    list_display = ("name", "schedule", "is_active", "state_badge", "last_run", "next_run")
    list_filter = ("is_active", "schedule_type", "overlap_policy", JobStateFilter)
    search_fields = ("name", "description", "command")
    search_help_text = _("Search the name, description and command.")
    actions = ("run_now", "enable", "disable", "duplicate")
    inlines = (LatestRunsInline,)
    readonly_fields = (
        "state_badge",
        "last_run",
        "next_run",
        "links",
        "created_at",
        "updated_at",
    )
    fieldsets = (
        (_("General"), {"fields": ("name", "description", "command", "is_active")}),
        (
            _("Schedule"),
            {
                "fields": (
                    "schedule_type",
                    "scheduled_at",
                    ("interval", "interval_unit"),
                    ("cron_expression", "timezone"),
                    "misfire_policy",
                ),
                "description": _(
                    "Once: set “run at”. Every N units: set “every” and “unit”; "
                    "“run at” optionally fixes the first run. Cron: set the expression "
                    "and, if not the site's, the time zone."
                ),
            },
        ),
        (
            _("Runs"),
            {
                "fields": (
                    "overlap_policy",
                    "timeout_seconds",
                    ("max_retries", "retry_backoff_seconds"),
                )
            },
        ),
        (
            _("Simulation"),
            {
                "fields": (("sim_failure_rate", "sim_min_seconds", "sim_max_seconds"),),
                "description": _(
                    "How this job's simulated runs behave. Blank fields use the defaults; "
                    "a failure rate of 1 makes every run fail, to try retries."
                ),
            },
        ),
        # Failure alerts (jobs/alerts.py; README "Alerts").
        (
            _("Alerts"),
            {
                "fields": (
                    ("notify_on_failure", "notify_on_recovery"),
                    "webhook_url",
                    "notify_emails",
                )
            },
        ),
    )
    status_fieldset = (
        _("Status"),
        {
            "fields": (
                "state_badge",
                "last_run",
                "next_run",
                "links",
                ("created_at", "updated_at"),
            )
        },
    )

    class Media:
        css = {"all": ("jobs/admin.css",)}
        # Shows only the chosen schedule type's fields, as on the dashboard's form.
        js = ("jobs/job_form.js",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Job]:
        # is_running for the state badge: one EXISTS per listed row, no query per row.
        return super().get_queryset(request).with_running()

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "timezone":
            kwargs["widget"] = TimeZoneSelect()
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def get_form(self, request: HttpRequest, obj: Job | None = None, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, **kwargs)
        mark_schedule_switch(form.base_fields)
        return form

    def get_fieldsets(self, request: HttpRequest, obj: Job | None = None) -> Sequence:
        if obj is None:
            return self.fieldsets
        return (*self.fieldsets, self.status_fieldset)

    def get_inlines(self, request: HttpRequest, obj: Job | None) -> Sequence:
        return self.inlines if obj is not None else ()

    def view_on_site(self, job: Job) -> str:
        return dashboard_path(job)

    # --- columns and read-only fields ---

    last_run = time_column("last_run_at", _("last run"))
    next_run = time_column("next_run_at", _("next run"))

    @admin.display(description=_("schedule"))
    def schedule(self, job: Job) -> str:
        return job.schedule_text

    @admin.display(description=_("state"), ordering="last_run_status")
    def state_badge(self, job: Job) -> SafeString:
        state = job.state
        return badge("state", state, JobState(state).label)

    @admin.display(description=_("links"))
    def links(self, job: Job) -> SafeString:
        return format_html(
            '<a href="{}">{}</a> · <a href="{}">{}</a>',
            dashboard_path(job),
            _("Dashboard page"),
            runs_of_job_url(job),
            _("All runs of this job"),
        )

    # --- deleting ---

    def get_deleted_objects(self, objs: Iterable[Job], request: HttpRequest) -> tuple:
        """Summarise each job's runs by count instead of listing every one.

        Django's confirmation page loads and lists every related row; a job that ran
        every ten seconds for a month has 260,000 runs.
        """
        jobs = list(objs)
        run_counts: dict[Any, int] = dict(
            JobHistory.objects.filter(job__in=jobs)
            .values("job_id")
            .annotate(count=Count("pk"))
            .values_list("job_id", "count")
        )
        deleted_objects: list[Any] = []
        for job in jobs:
            url = reverse("admin:jobs_job_change", args=[job.pk], current_app=self.admin_site.name)
            deleted_objects.append(
                format_html('{}: <a href="{}">{}</a>', capfirst(Job._meta.verbose_name), url, job)
            )
            if runs := run_counts.get(job.pk, 0):
                deleted_objects.append(
                    [ngettext("%(count)d run", "%(count)d runs", runs) % {"count": runs}]
                )
        total_runs = sum(run_counts.values())
        model_count = {Job._meta.verbose_name_plural: len(jobs)}
        perms_needed = set()
        if not self.has_delete_permission(request):
            perms_needed.add(Job._meta.verbose_name)
        if total_runs:
            model_count[JobHistory._meta.verbose_name_plural] = total_runs
            run_admin = self.admin_site.get_model_admin(JobHistory)
            if not run_admin.has_delete_permission(request):
                perms_needed.add(JobHistory._meta.verbose_name)
        return deleted_objects, model_count, perms_needed, []

    # --- actions ---

    @admin.action(description=_("Run the selected jobs now"), permissions=["change"])
    def run_now(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        jobs = list(queryset)
        for job in jobs:
            engine.run_now(job)
        self.message_user(
            request,
            ngettext(
                "Queued %(count)d run; it starts as soon as a worker is free.",
                "Queued %(count)d runs; they start as soon as workers are free.",
                len(jobs),
            )
            % {"count": len(jobs)},
            messages.SUCCESS,
        )

    @admin.action(description=_("Enable the selected jobs"), permissions=["change"])
    def enable(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        self._set_active(request, queryset, active=True)

    @admin.action(description=_("Disable the selected jobs"), permissions=["change"])
    def disable(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        self._set_active(request, queryset, active=False)

    def _set_active(self, request: HttpRequest, queryset: QuerySet[Job], *, active: bool) -> None:
        changed: list[Job] = []
        failures: list[tuple[Job, str]] = []
        for job in queryset.filter(is_active=not active):
            try:
                engine.set_active(job, active)
            except ValidationError as error:
                # e.g. a one-off job whose time has passed: report it, go on with the rest.
                failures.append((job, validation_text(error)))
            else:
                changed.append(job)
                self.log_change(request, job, _("Enabled.") if active else _("Disabled."))
        if changed:
            done = (
                ngettext("Enabled %(count)d job.", "Enabled %(count)d jobs.", len(changed))
                if active
                else ngettext("Disabled %(count)d job.", "Disabled %(count)d jobs.", len(changed))
            )
            self.message_user(request, done % {"count": len(changed)}, messages.SUCCESS)
        elif not failures:
            self.message_user(
                request,
                _("The selected jobs were already enabled.")
                if active
                else _("The selected jobs were already disabled."),
                messages.INFO,
            )
        if failures:
            refused = (
                ngettext(
                    "Could not enable %(count)d job: %(why)s",
                    "Could not enable %(count)d jobs: %(why)s",
                    len(failures),
                )
                if active
                else ngettext(
                    "Could not disable %(count)d job: %(why)s",
                    "Could not disable %(count)d jobs: %(why)s",
                    len(failures),
                )
            )
            self.message_user(
                request,
                refused % {"count": len(failures), "why": describe_failures(failures)},
                messages.ERROR,
            )

    @admin.action(description=_("Duplicate the selected jobs"), permissions=["add"])
    def duplicate(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        copies = 0
        disabled: list[tuple[Job, str]] = []
        failures: list[tuple[Job, str]] = []
        for job in queryset:
            try:
                copy, disabled_because = duplicate_job(job)
            except ValidationError as error:
                failures.append((job, validation_text(error)))
                continue
            copies += 1
            self.log_addition(request, copy, _("Duplicated from “%(name)s”.") % {"name": job})
            if disabled_because:
                disabled.append((copy, disabled_because))
        if copies:
            self.message_user(
                request,
                ngettext("Created %(count)d copy.", "Created %(count)d copies.", copies)
                % {"count": copies},
                messages.SUCCESS,
            )
        if disabled:
            self.message_user(
                request,
                ngettext(
                    "%(count)d copy was saved disabled: %(why)s",
                    "%(count)d copies were saved disabled: %(why)s",
                    len(disabled),
                )
                % {"count": len(disabled), "why": describe_failures(disabled)},
                messages.WARNING,
            )
        if failures:
            self.message_user(
                request,
                ngettext(
                    "Could not copy %(count)d job: %(why)s",
                    "Could not copy %(count)d jobs: %(why)s",
                    len(failures),
                )
                % {"count": len(failures), "why": describe_failures(failures)},
                messages.ERROR,
            )


# --- runs --------------------------------------------------------------------------------


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
