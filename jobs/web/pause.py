"""The Scheduler page: the pause switch (maintenance mode), the scheduler's health, its
live processes, and the site-wide record of pauses, resumes and outages.

Thin: the rules of a pause are jobs.models.clean_pause (the same as the admin's and the
API's), the switch is jobs.engine.pause / resume, the health jobs.alerts.health.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from jobs import engine
from jobs.access.masking import may_see_secrets
from jobs.access.permissions import PAUSE_SCHEDULER, VIEW_JOB
from jobs.alerts import health
from jobs.models import PAUSE_NOTE_MAX_LENGTH, SchedulerEvent, pause_errors
from jobs.web.views import _next_url, needs
from jobs.web.widgets import LOCAL_INPUT_FORMATS, LocalDateTimeInput

EVENTS_SHOWN = 20


class PauseForm(forms.Form):
    """Pause every scheduler: until when (optional) and why (optional)."""

    until = forms.DateTimeField(
        label=gettext_lazy("Until"),
        required=False,
        widget=LocalDateTimeInput(),
        input_formats=LOCAL_INPUT_FORMATS,
        help_text=gettext_lazy("Empty: until someone resumes it."),
    )
    # The length is checked with the other rules (pause_errors), once; the browser
    # stops at it too.
    note = forms.CharField(
        label=gettext_lazy("Note"),
        required=False,
        widget=forms.TextInput(
            attrs={"maxlength": PAUSE_NOTE_MAX_LENGTH, "placeholder": gettext_lazy("Why?")}
        ),
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if "until" in cleaned and "note" in cleaned:
            for field, message in pause_errors(
                cleaned["until"], cleaned["note"], timezone.now()
            ).items():
                self.add_error(field, message)
        return cleaned


def _page(request: HttpRequest, form: PauseForm) -> HttpResponse:
    context = {
        "section": "scheduler",
        "overview": health.overview(),
        "form": form,
        "events": SchedulerEvent.objects.all()[:EVENTS_SHOWN],
        # Where the alerts went names the alert receiver: for those who see job webhooks.
        "show_delivery": may_see_secrets(request.user),
    }
    return render(request, "jobs/scheduler.html", context)


@require_GET
@needs(VIEW_JOB)
def scheduler(request: HttpRequest) -> HttpResponse:
    return _page(request, PauseForm())


@require_POST
@needs(PAUSE_SCHEDULER)
def scheduler_pause(request: HttpRequest) -> HttpResponse:
    form = PauseForm(request.POST)
    if form.is_valid():
        try:
            engine.pause(form.cleaned_data["until"], form.cleaned_data["note"])
        except ValidationError as exc:  # the until passed between the check and now
            for field, errors in exc.message_dict.items():
                for message in errors:
                    form.add_error(field, message)
        else:
            # No message: the banner every page shows from now on says it, with who and until.
            return redirect(_next_url(request, reverse("jobs:scheduler")))
    return _page(request, form)


@require_POST
@needs(PAUSE_SCHEDULER)
def scheduler_resume(request: HttpRequest) -> HttpResponse:
    if engine.resume():
        messages.success(
            request,
            _(
                "The scheduler runs again; what came due meanwhile follows each job's "
                "misfire policy."
            ),
        )
    else:
        messages.info(request, _("The scheduler was not paused."))
    return redirect(_next_url(request, reverse("jobs:scheduler")))
