"""The scheduler's switch in the admin (pause all, resume), and its site-wide record.

The switch's list page is the switch itself: the state, the health, the live processes
and a pause form (the dashboard's PauseForm, so the same rules), for whoever may see jobs;
pausing and resuming need jobs.pause_scheduler. The record (SchedulerEvent) is read-only,
like the jobs' audit trail.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs import engine
from jobs.access.masking import may_see_secrets
from jobs.access.permissions import PAUSE_SCHEDULER, VIEW_JOB
from jobs.admin.common import (
    AdminScreensMixin,
    LeanListMixin,
    RecordedByCodeMixin,
    time_column,
)
from jobs.alerts import health
from jobs.models import SchedulerEvent, SchedulerState
from jobs.web.pause import EVENTS_SHOWN, PauseForm

SWITCH_URL = "admin:jobs_schedulerstate_changelist"


@admin.register(SchedulerState)
class SchedulerStateAdmin(AdminScreensMixin, admin.ModelAdmin):
    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm(VIEW_JOB)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm(PAUSE_SCHEDULER)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = PauseForm(request.POST or None)
        if request.method == "POST":
            if not self.has_change_permission(request):
                raise PermissionDenied
            if "_resume" in request.POST:
                if engine.resume():
                    self.message_user(request, gettext("The scheduler runs again."))
                else:
                    self.message_user(request, gettext("The scheduler was not paused."))
                return HttpResponseRedirect(reverse(SWITCH_URL))
            if form.is_valid():
                try:
                    engine.pause(form.cleaned_data["until"], form.cleaned_data["note"])
                except ValidationError as exc:
                    for field, errors in exc.message_dict.items():
                        for message in errors:
                            form.add_error(field, message)
                else:
                    self.message_user(
                        request, gettext("The scheduler is paused: nothing is claimed now.")
                    )
                    return HttpResponseRedirect(reverse(SWITCH_URL))
            self.message_user(request, gettext("Nothing was changed."), messages.ERROR)
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Scheduler switch"),
            "opts": self.opts,
            "overview": health.overview(),
            "form": form,
            "may_pause": self.has_change_permission(request),
            "events": SchedulerEvent.objects.all()[:EVENTS_SHOWN],
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/jobs/schedulerstate/switch.html", context)

    def change_view(self, request: HttpRequest, object_id: str, *args: Any, **kwargs: Any) -> Any:
        # One row, shown by the list page above.
        return HttpResponseRedirect(reverse(SWITCH_URL))


@admin.register(SchedulerEvent)
class SchedulerEventAdmin(AdminScreensMixin, RecordedByCodeMixin, LeanListMixin, admin.ModelAdmin):
    list_display = ("created", "action", "username", "channel", "note", "until")
    list_display_links = ("created",)
    list_filter = ("action", "channel")
    search_fields = ("username", "note")
    search_help_text = _("Search by username or note.")
    fields = readonly_fields = (
        "created",
        "action",
        "username",
        "channel",
        "note",
        "until",
        "shown_delivery",
    )
    show_facets = admin.ShowFacets.NEVER

    created = time_column("created_at", _("when"))
    until = time_column("paused_until", _("paused until"))

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        event = super().get_object(request, object_id, from_field)
        if event is not None:
            event.see_secrets = may_see_secrets(request.user)
        return event

    @admin.display(description=_("alerts"))
    def shown_delivery(self, event: SchedulerEvent) -> str:
        # It names the alert receiver: for those who may see job webhooks.
        if not getattr(event, "see_secrets", False):
            return "…" if event.delivery else ""
        return event.delivery
