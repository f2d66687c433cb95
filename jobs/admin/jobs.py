"""The job pages of the admin: JobAdmin, which combines its parts.

The parts by meaning, beside it: the form and its checks (job_forms.py), its sections
(job_fieldsets.py), the list's filter and columns (job_list.py), the latest runs on a
job's page (job_runs.py) and the actions (job_actions.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from jobs.access.masking import may_see_secrets
from jobs.admin.common import AdminScreensMixin, LeanListMixin
from jobs.admin.job_actions import JobActionsMixin
from jobs.admin.job_fieldsets import FIELDSETS, MASKED_FIELDS, job_fieldsets
from jobs.admin.job_forms import JobAdminForm, with_code_check, with_shell_check
from jobs.admin.job_list import JobColumnsMixin, JobStateFilter
from jobs.admin.job_runs import LatestRunsInline
from jobs.admin.teams import ScopedAdminMixin
from jobs.models import JOB_SEARCH_FIELDS, Job, JobHistory
from jobs.web.widgets import TimeZoneSelect, mark_schedule_switch


@admin.register(Job)
class JobAdmin(
    ScopedAdminMixin,
    JobColumnsMixin,
    JobActionsMixin,
    AdminScreensMixin,
    LeanListMixin,
    admin.ModelAdmin,
):
    form = JobAdminForm
    # A search as you type (the admin's own, JobQuerySet.search through
    # get_search_results): a select of 10,000 jobs would be a page of its own.
    autocomplete_fields = ("on_success", "on_failure")
    filter_horizontal = ("channels",)
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
        "import_origin",
    )
    fieldsets = FIELDSETS

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
        return with_code_check(with_shell_check(form, request.user, obj), obj)

    def get_fieldsets(self, request: HttpRequest, obj: Job | None = None) -> Sequence:
        if obj is None:
            return self.fieldsets
        return job_fieldsets(obj, request.user)

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
