"""The audit trail in the admin: every recorded change to a job, read-only, for whoever may
see jobs; a deleted job's records stay here. Secret values are masked for users who may
not see them (jobs.access.masking)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs.access.masking import may_see_change_secrets
from jobs.admin.common import (
    AdminScreensMixin,
    LeanListMixin,
    RecordedByCodeMixin,
    time_column,
)
from jobs.admin.teams import ScopedAdminMixin
from jobs.models import Job, JobChange
from jobs.web.changes import field_changes


def changes_of_job_url(job_id: Any) -> str:
    return f"{reverse('admin:jobs_jobchange_changelist')}?{ChangeJobFilter.parameter_name}={job_id}"


class ChangeJobFilter(admin.SimpleListFilter):
    """The changes of one job (the link on a job's page), deleted or not."""

    title = _("job")
    parameter_name = "job"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> Iterable:
        job_id = self.value()
        if not job_id:
            return []
        try:
            # Among the records the user may see: another team's job is not named.
            records = model_admin.get_queryset(request).filter(job_id=job_id)
            row = records.values_list("job_id", "job_name")[:1]
            return [(str(pk), name) for pk, name in row]
        except ValidationError:  # not a UUID
            return []

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        job_id = self.value()
        if not job_id:
            return queryset
        try:
            return queryset.filter(job_id=job_id)
        except ValidationError:  # not a UUID
            return queryset.none()


@admin.register(JobChange)
class JobChangeAdmin(
    ScopedAdminMixin, AdminScreensMixin, RecordedByCodeMixin, LeanListMixin, admin.ModelAdmin
):
    list_display = ("created", "job_name", "action", "channel", "username", "fields_changed")
    list_display_links = ("created",)
    list_filter = ("action", "channel", ChangeJobFilter)
    search_fields = ("job_name", "username")
    search_help_text = _("Search by job name or username.")
    fields = readonly_fields = (
        "created",
        "job_link",
        "job_name",
        "action",
        "channel",
        "username",
        "run_link",
        "changes_display",
    )
    show_facets = admin.ShowFacets.NEVER

    class Media:
        css = {"all": ("jobs/admin.css",)}

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        change = super().get_object(request, object_id, from_field)
        if change is not None:
            # For changes_display: the viewer decides what is masked.
            change.see_secrets = may_see_change_secrets(request.user, change)
        return change

    created = time_column("created_at", _("when"))

    @admin.display(description=_("fields"))
    def fields_changed(self, change: JobChange) -> str:
        # Names only (no values): nothing to mask in the list.
        return ", ".join(change.changes)

    @admin.display(description=_("job id"))
    def job_link(self, change: JobChange) -> SafeString | str:
        if Job.objects.filter(pk=change.job_id).exists():
            url = reverse("admin:jobs_job_change", args=[change.job_id])
            return format_html('<a href="{}">{}</a>', url, change.job_id)
        return format_html("{} ({})", change.job_id, gettext("deleted"))

    @admin.display(description=_("run"))
    def run_link(self, change: JobChange) -> SafeString | None:
        if change.run_id is None:
            return None
        url = reverse("admin:jobs_jobhistory_change", args=[change.run_id])
        return format_html('<a href="{}">{}</a>', url, change.run_id)

    @admin.display(description=_("changes"))
    def changes_display(self, change: JobChange) -> SafeString | None:
        rows = field_changes(change, getattr(change, "see_secrets", False))
        if not rows:
            return None
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                "<li><strong>{}</strong>: {} → {}</li>",
                ((row.label, row.old, row.new) for row in rows),
            ),
        )
