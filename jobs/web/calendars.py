"""The screens of business calendars and blackout windows: lists, forms and deletion,
with the model permissions the migration grants (jobs.add_calendar, ...); anyone who
may view jobs reads them. A calendar in use is not deleted: the answer (409) names its
jobs and nothing changes."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.contrib import messages
from django.db.models import Count, Model, ProtectedError
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods

from jobs.access.permissions import (
    ADD_BLACKOUT,
    ADD_CALENDAR,
    CHANGE_BLACKOUT,
    CHANGE_CALENDAR,
    DELETE_BLACKOUT,
    DELETE_CALENDAR,
    VIEW_JOB,
)
from jobs.calendars.words import day_off_reason
from jobs.models import Blackout, Calendar
from jobs.schedules import arithmetic as schedules
from jobs.web.forms.calendars import BlackoutForm, CalendarForm
from jobs.web.views import needs

# The calendar page's preview: its next days off.
DAYS_OFF_SHOWN = 10
# A list page shows at most this many (calendars and windows are a few, kept by hand).
ROWS_SHOWN = 500


StrOrPromise = str | Promise


class DayOffLine(NamedTuple):
    day: Any  # datetime.date
    reason: str


class Kind(NamedTuple):
    """What differs between the two screens' families."""

    form: type[ModelForm]
    model: type[Model]
    list_url: str
    saved: StrOrPromise
    created: StrOrPromise
    deleted: StrOrPromise


CALENDARS = Kind(
    CalendarForm,
    Calendar,
    "jobs:calendar_list",
    _("Calendar “%(name)s” saved."),
    _("Calendar “%(name)s” created."),
    _("Calendar “%(name)s” deleted."),
)
BLACKOUTS = Kind(
    BlackoutForm,
    Blackout,
    "jobs:blackout_list",
    _("Blackout window “%(name)s” saved."),
    _("Blackout window “%(name)s” created."),
    _("Blackout window “%(name)s” deleted."),
)


def next_days_off(calendar: Calendar) -> list[DayOffLine]:
    """The calendar's next days off from today in its zone, each with why."""
    days = calendar.business_days()
    today = timezone.now().astimezone(schedules.time_zone(calendar.zone_name)).date()
    return [
        DayOffLine(off.day, day_off_reason(days, off))
        for off in days.days_off_from(today, DAYS_OFF_SHOWN)
    ]


def _form_page(request: HttpRequest, kind: Kind, instance: Model | None) -> HttpResponse:
    # The saved calendar's: before the form puts the values posted on it.
    days_off = next_days_off(instance) if isinstance(instance, Calendar) else None
    form = kind.form(request.POST or None, instance=instance)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        text = kind.saved if instance is not None else kind.created
        messages.success(request, str(text) % {"name": saved})
        return redirect(kind.list_url)
    context: dict[str, Any] = {
        "section": "calendars",
        "form": form,
        "item": instance,
        "list_url": kind.list_url,
    }
    if days_off is not None:
        context["days_off"] = days_off
    status = 400 if request.method == "POST" else 200
    template = "jobs/calendar_form.html" if kind is CALENDARS else "jobs/blackout_form.html"
    return render(request, template, context, status=status)


def _delete_page(request: HttpRequest, kind: Kind, item: Model) -> HttpResponse:
    context: dict[str, Any] = {"section": "calendars", "item": item, "list_url": kind.list_url}
    if isinstance(item, Calendar):
        context["in_use"] = item.jobs_in_use()
    if request.method == "POST":
        try:
            item.delete()
        except ProtectedError:
            # A job came onto the calendar since the page was drawn: refused, said why.
            context["in_use"] = item.jobs_in_use()  # type: ignore[attr-defined]
            return render(request, "jobs/calendar_confirm_delete.html", context, status=409)
        messages.success(request, str(kind.deleted) % {"name": item})
        return redirect(kind.list_url)
    return render(request, "jobs/calendar_confirm_delete.html", context)


# --- calendars -----------------------------------------------------------------------------


@require_GET
@needs(VIEW_JOB)
def calendar_list(request: HttpRequest) -> HttpResponse:
    calendars = Calendar.objects.annotate(job_count=Count("jobs")).order_by("name")[:ROWS_SHOWN]
    return render(
        request, "jobs/calendar_list.html", {"section": "calendars", "calendars": calendars}
    )


@require_http_methods(["GET", "POST"])
@needs(ADD_CALENDAR)
def calendar_create(request: HttpRequest) -> HttpResponse:
    return _form_page(request, CALENDARS, None)


@require_http_methods(["GET", "POST"])
@needs(CHANGE_CALENDAR)
def calendar_edit(request: HttpRequest, calendar_id: int) -> HttpResponse:
    return _form_page(request, CALENDARS, get_object_or_404(Calendar, pk=calendar_id))


@require_http_methods(["GET", "POST"])
@needs(DELETE_CALENDAR)
def calendar_delete(request: HttpRequest, calendar_id: int) -> HttpResponse:
    return _delete_page(request, CALENDARS, get_object_or_404(Calendar, pk=calendar_id))


# --- blackout windows ----------------------------------------------------------------------


@require_GET
@needs(VIEW_JOB)
def blackout_list(request: HttpRequest) -> HttpResponse:
    windows = Blackout.objects.annotate(job_count=Count("jobs")).order_by("name")[:ROWS_SHOWN]
    return render(request, "jobs/blackout_list.html", {"section": "calendars", "windows": windows})


@require_http_methods(["GET", "POST"])
@needs(ADD_BLACKOUT)
def blackout_create(request: HttpRequest) -> HttpResponse:
    return _form_page(request, BLACKOUTS, None)


@require_http_methods(["GET", "POST"])
@needs(CHANGE_BLACKOUT)
def blackout_edit(request: HttpRequest, blackout_id: int) -> HttpResponse:
    return _form_page(request, BLACKOUTS, get_object_or_404(Blackout, pk=blackout_id))


@require_http_methods(["GET", "POST"])
@needs(DELETE_BLACKOUT)
def blackout_delete(request: HttpRequest, blackout_id: int) -> HttpResponse:
    return _delete_page(request, BLACKOUTS, get_object_or_404(Blackout, pk=blackout_id))
