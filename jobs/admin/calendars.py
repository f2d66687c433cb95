"""Business calendars and blackout windows in the admin: validated by the models' own
clean(); a calendar in use is not deleted, and the message names its jobs."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import ProtectedError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _

from jobs.models import Blackout, Calendar


@admin.register(Calendar)
class CalendarAdmin(admin.ModelAdmin):
    list_display = ("name", "country", "subdivision", "timezone", "updated_at")
    search_fields = ("name", "country")
    fields = (
        "name",
        "timezone",
        "weekdays",
        ("country", "subdivision"),
        "extra_days_off",
        "extra_working_days",
    )

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        form = super().get_form(request, obj, change, **kwargs)
        # An empty list is the model's to refuse, with its own message ("at least one
        # weekday"), not the form field's "This field is required".
        form.base_fields["weekdays"].required = False
        return form

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: Any = None
    ) -> HttpResponse:
        try:
            return super().delete_view(request, object_id, extra_context)
        except ProtectedError:
            return self._refused(request, Calendar.objects.filter(pk=object_id))

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        try:
            super().delete_queryset(request, queryset)
        except ProtectedError:
            self._refused(request, queryset)

    def _refused(self, request: HttpRequest, calendars: Any) -> HttpResponse:
        for calendar in calendars:
            if calendar.jobs.exists():
                self.message_user(
                    request,
                    _("The calendar “%(name)s” is in use by these jobs: %(jobs)s.")
                    % {"name": calendar.name, "jobs": ", ".join(calendar.jobs_in_use())},
                    messages.ERROR,
                )
        return HttpResponseRedirect("../" if calendars.count() == 1 else ".")


@admin.register(Blackout)
class BlackoutAdmin(admin.ModelAdmin):
    list_display = ("name", "action", "cron_expression", "duration_minutes", "scope", "is_active")
    list_filter = ("action", "scope", "is_active")
    search_fields = ("name",)
    filter_horizontal = ("jobs",)
    fields = (
        "name",
        "action",
        ("cron_expression", "duration_minutes", "timezone"),
        ("starts_at", "ends_at"),
        ("scope", "queue"),
        "jobs",
        "is_active",
    )
