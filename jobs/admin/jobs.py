"""The job pages of the admin: the list, the form with its latest runs, the actions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import get_script_prefix, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from jobs import engine
from jobs.admin.common import (
    LeanListMixin,
    badge,
    describe_failures,
    format_duration,
    run_status_badge,
    time_column,
    validation_text,
)
from jobs.admin.runs import RunJobFilter
from jobs.models import NAME_MAX_LENGTH, Job, JobHistory, JobState
from jobs.web.widgets import TimeZoneSelect, mark_schedule_switch

# Runs shown on a job's admin page; the rest are one link away.
LATEST_RUNS_SHOWN = 20
COPY_SUFFIX = " (copy)"


def dashboard_path(job: Job) -> str:
    # DESIGN.md fixes /jobs/<id>/ as the job's page; its URL name belongs to the dashboard
    # (built in parallel), so the admin links by path, under the site's script prefix.
    return f"{get_script_prefix()}jobs/{job.pk}/"


def runs_of_job_url(job: Job) -> str:
    return f"{reverse('admin:jobs_jobhistory_changelist')}?{RunJobFilter.parameter_name}={job.pk}"


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
