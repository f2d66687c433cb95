"""The job pages of the admin: the list, the form with its latest runs, the actions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Count, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, ngettext_lazy

from jobs import engine
from jobs.access import permissions as access
from jobs.access.masking import (
    EDITOR_JOB_FIELDS,
    SECRET_JOB_FIELDS,
    WRITE_ONLY_JOB_FIELDS,
    masked,
    may_see_secrets,
    restore_field,
)
from jobs.access.permissions import RUN_JOB
from jobs.admin.changes import changes_of_job_url
from jobs.admin.common import (
    AdminScreensMixin,
    BulkAction,
    LeanListMixin,
    badge,
    format_duration,
    run_status_badge,
    time_column,
)
from jobs.admin.runs import RunJobFilter
from jobs.models import JOB_SEARCH_FIELDS, Job, JobHistory, JobState, gate
from jobs.models import code as code_rules
from jobs.models.chains import CHAIN_FIELDS
from jobs.web import code_fields
from jobs.web.chains import ChainFieldsMixin
from jobs.web.forms import JobAlertsForm, job_form_field
from jobs.web.widgets import TimeZoneSelect, mark_schedule_switch

# Runs shown on a job's admin page; the rest are one link away.
LATEST_RUNS_SHOWN = 20


# Secret fields (jobs.access.masking) -> the read-only field showing them masked; write-only
# ones show only whether they are set, to everyone.
MASKED_FIELDS = {name: f"masked_{name}" for name in (*SECRET_JOB_FIELDS, *WRITE_ONLY_JOB_FIELDS)}
# Form fields with no value to show on a read-only page.
FORM_ONLY_FIELDS = ("remove_webhook_secret",)


def _masked_fields(fields: Sequence) -> tuple:
    return tuple(
        _masked_fields(name) if isinstance(name, (list, tuple)) else MASKED_FIELDS.get(name, name)
        for name in fields
        if name not in FORM_ONLY_FIELDS
    )


def _with_shell_check(form_class: Any, user: Any, job: Job | None) -> Any:
    """The admin's job form, judged by the jobs.use_shell rule (jobs.models.gate) on the
    values it cleaned, for `user`: Job.clean() refuses at the executor a job that needs
    the permission (a shell job, a management command other than the harmless ones),
    whether the job is so now or would be after the change. A form posted without an
    executor (a script written before there were executors) keeps the job's."""
    if "executor" in form_class.base_fields:
        form_class.base_fields["executor"].required = False

    class ShellCheckedForm(form_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.instance.acting_user = user

        def clean(self) -> dict[str, Any]:
            cleaned = super().clean()
            if "executor" in self.fields and not cleaned.get("executor"):
                cleaned["executor"] = job.executor if job is not None else "simulated"
            return cleaned

    # The subclass's metaclass made its fields again from the model: keep the admin's.
    ShellCheckedForm.base_fields = form_class.base_fields
    ShellCheckedForm.__name__ = form_class.__name__
    return ShellCheckedForm


def _with_code_check(form_class: Any, job: Job | None) -> Any:
    """The admin's job form, refusing a post that changes a field the job's code owns
    (jobs.models.code). Those fields are read-only here, so left out of the form: a
    browser never posts them; a hand-made post that does is refused, saying where to
    change them, rather than quietly ignored."""
    owned = job.code_fields if job is not None else frozenset()
    if not owned:
        return form_class

    class CodeCheckedForm(form_class):  # type: ignore[misc, valid-type]
        def clean(self) -> dict[str, Any]:
            cleaned = super().clean()
            changed = code_fields.posted_changes(self, sorted(owned), job)
            if changed:
                names = ", ".join(changed)
                self.add_error(None, f"{names}: {code_rules.refusal(job)}")
            return cleaned

    CodeCheckedForm.base_fields = form_class.base_fields
    CodeCheckedForm.__name__ = form_class.__name__
    return CodeCheckedForm


def _code_fieldset(job: Job) -> tuple:
    """The fieldset saying that (and where) a job is declared in code."""
    if job.declared_in_code:
        note = _(
            "The fields the code sets are read-only here: change them in the code, then "
            "run manage.py syncjobs. Enabling or disabling the job stays yours."
        )
    else:
        note = _(
            "Its declaration is gone: syncjobs disabled it, and its fields are yours to "
            "change. If the declaration comes back, the code takes the job over again."
        )
    return (_("Defined in code"), {"fields": ("code_origin",), "description": note})


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


class JobAdminForm(ChainFieldsMixin, JobAlertsForm):
    """The admin's job form: the dashboard's handling of the alert fields; the chains are
    judged by Job.clean() and recorded with the save, as on the dashboard
    (jobs.web.chains)."""

    class Meta:
        model = Job
        # The admin builds the form with the fields of its fieldsets (get_form).
        fields = CHAIN_FIELDS
        formfield_callback = job_form_field

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # URL credentials are shown to nobody: masked here, put back from the stored
        # values when sent back as shown (jobs.access.masking.restore_field).
        self.stored = {name: getattr(self.instance, name) for name in EDITOR_JOB_FIELDS}
        if not self.instance._state.adding:
            for name, show in EDITOR_JOB_FIELDS.items():
                if name in self.fields and name != "webhook_url" and self.stored[name]:
                    self.initial[name] = show(self.stored[name])

    def clean_command(self) -> str:
        return restore_field("command", self.cleaned_data.get("command"), self.stored["command"])

    def clean_arguments(self) -> Any:
        return restore_field(
            "arguments", self.cleaned_data.get("arguments"), self.stored["arguments"]
        )


@admin.register(Job)
class JobAdmin(AdminScreensMixin, LeanListMixin, admin.ModelAdmin):
    form = JobAdminForm
    # A search as you type (the admin's own, JobQuerySet.search through
    # get_search_results): a select of 10,000 jobs would be a page of its own.
    autocomplete_fields = ("on_success", "on_failure")
    list_display = (
        "name",
        "schedule",
        "queue",
        "is_active",
        "state_badge",
        "last_run",
        "next_run",
    )
    list_filter = ("is_active", "schedule_type", "queue", "overlap_policy", JobStateFilter)
    # Shows the search box and names what it looks in; the search itself is
    # JobQuerySet.search (see get_search_results), the dashboard's and the API's.
    search_fields = JOB_SEARCH_FIELDS
    search_help_text = _("Search the name, description and command.")
    actions = ("run_now", "enable", "disable", "duplicate")
    inlines = (LatestRunsInline,)
    form = JobAdminForm
    readonly_fields = (
        "state_badge",
        "last_run",
        "next_run",
        "consecutive_failures",
        "links",
        "created_at",
        "updated_at",
        "code_origin",
    )
    fieldsets = (
        (_("General"), {"fields": ("name", "description", "is_active")}),
        (
            _("What runs"),
            {
                "fields": ("executor", "command", "arguments"),
                "description": _(
                    "Simulated: the command is only words for the log. Python task: the "
                    "task's registered name, its keyword arguments as a JSON object. "
                    "Management command: the command line. Shell: the command line (needs "
                    'the permission to use shell commands); arguments {"env": {...}}. '
                    "HTTP: the URL; arguments method, headers, body, expect_status."
                ),
            },
        ),
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
                    ("queue", "priority"),
                    ("max_retries", "retry_backoff_seconds"),
                )
            },
        ),
        (
            _("Chains"),
            {
                "fields": ("on_success", "on_failure"),
                "description": _(
                    "Jobs this job starts when one of its runs succeeds, or fails for good "
                    "after its retries. A job cannot start itself again through its chains."
                ),
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
        # Failure alerts (jobs/alerts; docs/alerts.md).
        (
            _("Alerts"),
            {
                # One checkbox a line: side by side, a checkbox's help text ends where
                # the next one's starts, and the two read as one sentence.
                "fields": (
                    "notify_on_failure",
                    "notify_on_recovery",
                    "webhook_url",
                    "notify_emails",
                    ("alert_after_failures", "expected_seconds"),
                    "webhook_secret",
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
                "consecutive_failures",
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

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Job], search_term: str
    ) -> tuple[QuerySet[Job], bool]:
        """JobQuerySet.search: the dashboard's and the API's search, the same words."""
        return queryset.search(search_term), False

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "timezone":
            kwargs["widget"] = TimeZoneSelect()
        if isinstance(db_field, models.URLField):
            # As the dashboard's form reads it (job_form_field): a URL typed without a
            # scheme is https://, what Django 6 does anyway.
            kwargs.setdefault("assume_scheme", "https")
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def get_form(self, request: HttpRequest, obj: Job | None = None, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, **kwargs)
        mark_schedule_switch(form.base_fields)
        return _with_code_check(_with_shell_check(form, request.user, obj), obj)

    def get_fieldsets(self, request: HttpRequest, obj: Job | None = None) -> Sequence:
        if obj is None:
            return self.fieldsets
        fieldsets = (*self.fieldsets, self.status_fieldset)
        if obj.code_key:
            fieldsets = (_code_fieldset(obj), *fieldsets)
        if obj.webhook_secret:
            # Offered by JobAdminForm only when there is a secret to remove.
            fieldsets = tuple(
                (title, {**options, "fields": (*options["fields"], "remove_webhook_secret")})
                if "webhook_secret" in options["fields"]
                else (title, options)
                for title, options in fieldsets
            )
        if may_see_secrets(request.user, obj):
            return fieldsets
        # The read-only page of a user who may not change jobs (or may not read this
        # job's secrets): masked (jobs.access.masking).
        return tuple(
            (title, {**options, "fields": _masked_fields(options["fields"])})
            for title, options in fieldsets
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Job | None = None) -> Sequence:
        readonly = tuple(super().get_readonly_fields(request, obj))
        if obj is not None:
            # The fields the job's code owns (jobs.models.code), as everywhere else.
            readonly += tuple(sorted(obj.code_fields))
        if obj is not None and not may_see_secrets(request.user, obj):
            readonly += tuple(MASKED_FIELDS.values())
        return readonly

    def get_inlines(self, request: HttpRequest, obj: Job | None) -> Sequence:
        return self.inlines if obj is not None else ()

    def view_on_site(self, job: Job) -> str:
        return job.get_absolute_url()

    # --- columns and read-only fields ---

    last_run = time_column("last_run_at", _("last run"))
    next_run = time_column("next_run_at", _("next run"))

    @admin.display(description=_("schedule"))
    def schedule(self, job: Job) -> str:
        return job.schedule_text

    @admin.display(description=_("command"))
    def masked_command(self, job: Job) -> str:
        return masked("command", job.command)

    @admin.display(description=_("webhook URL"))
    def masked_webhook_url(self, job: Job) -> str:
        return masked("webhook_url", job.webhook_url)

    @admin.display(description=_("arguments"))
    def masked_arguments(self, job: Job) -> str:
        return json.dumps(masked("arguments", job.arguments), ensure_ascii=False)

    @admin.display(description=_("alert e-mail addresses"))
    def masked_notify_emails(self, job: Job) -> str:
        return masked("notify_emails", job.notify_emails)

    @admin.display(description=_("webhook signing secret"))
    def masked_webhook_secret(self, job: Job) -> str:
        return _("set") if job.webhook_secret else _("none")

    @admin.display(description=_("state"), ordering="last_run_status")
    def state_badge(self, job: Job) -> SafeString:
        state = job.state
        return badge("state", state, JobState(state).label)

    @admin.display(description=_("defined in code"))
    def code_origin(self, job: Job) -> str:
        if job.declared_in_code:
            return _("%(source)s (key %(key)s)") % {"source": job.code_source, "key": job.code_key}
        return _("no longer declared in code (was %(source)s, key %(key)s): disabled") % {
            "source": job.code_source,
            "key": job.code_key,
        }

    @admin.display(description=_("links"))
    def links(self, job: Job) -> SafeString:
        return format_html(
            '<a href="{}">{}</a> · <a href="{}">{}</a> · <a href="{}">{}</a>',
            job.get_absolute_url(),
            _("Dashboard page"),
            runs_of_job_url(job),
            _("All runs of this job"),
            changes_of_job_url(job.pk),
            _("Changes of this job"),
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

    def has_run_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(RUN_JOB)

    @admin.action(description=_("Run the selected jobs now"), permissions=["run"])
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
        def change(job: Job) -> None:
            job.set_active(active, user=request.user)
            self.log_change(request, job, _("Enabled.") if active else _("Disabled."))

        action = BulkAction(self, request)
        # e.g. a one-off job whose time has passed is refused: reported, the rest go on.
        action.apply(queryset.filter(is_active=not active), change, (ValidationError,))
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
