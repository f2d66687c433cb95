"""The admin's job list: its state filter and the columns and read-only fields it shows."""

from __future__ import annotations

import json
from collections.abc import Iterable

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from jobs.access.masking import masked
from jobs.admin.changes import changes_of_job_url
from jobs.admin.common import badge, time_column
from jobs.admin.runs import RunJobFilter
from jobs.models import Job, JobState


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


class JobColumnsMixin:
    """The columns of the job list and the read-only fields of a job's page."""

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
        if job.enqueued_task:
            return _("enqueued Django task %(path)s") % {"path": job.command}
        if job.declared_in_code:
            return _("%(source)s (key %(key)s)") % {"source": job.code_source, "key": job.code_key}
        return _("no longer declared in code (was %(source)s, key %(key)s): disabled") % {
            "source": job.code_source,
            "key": job.code_key,
        }

    @admin.display(description=_("imported from"))
    def import_origin(self, job: Job) -> str:
        return _("%(source)s (key %(key)s)") % {"source": job.import_source, "key": job.import_key}

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
