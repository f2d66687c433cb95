"""The filters of the lists (GET): the job list's, the history's, the Upcoming page's."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from jobs.forecasts import upcoming
from jobs.models import NAME_MAX_LENGTH, Job, JobState, RunStatus

EARLIEST_DAY = date(1970, 1, 1)
LATEST_DAY = date(9000, 1, 1)


class UpcomingForm(forms.Form):
    """The Upcoming page's choices (GET): how far ahead it looks. An unknown value is
    reported and the default used."""

    span = forms.ChoiceField(
        label=_("Look ahead"),
        required=False,
        choices=[(span.key, span.label) for span in upcoming.SPANS],
    )

    def chosen_span(self) -> upcoming.Span:
        key = self.cleaned_data.get("span") if self.is_valid() else None
        return upcoming.SPAN_BY_KEY.get(key or "", upcoming.DEFAULT_SPAN)


class JobFilterForm(forms.Form):
    """The job list's search and filters (GET). An invalid value is reported and ignored."""

    # JobQuerySet.search: every word in the name, description or command.
    q = forms.CharField(label=_("Search"), required=False, max_length=NAME_MAX_LENGTH)
    state = forms.ChoiceField(
        label=_("State"), required=False, choices=[("", _("Any state")), *JobState.choices]
    )
    active = forms.ChoiceField(
        label=_("Active"),
        required=False,
        choices=[("", _("Active or not")), ("yes", _("Active")), ("no", _("Inactive"))],
    )
    # The queues jobs are in (one index-only scan of jobs_job_queue), read only when the
    # select is drawn or a queue is asked for: the list's 3-second refresh reads neither.
    queue = forms.ChoiceField(
        label=_("Queue"),
        required=False,
        choices=lambda: [("", _("Any queue")), *((n, n) for n in Job.objects.queue_names())],
    )


class HistoryFilterForm(forms.Form):
    """The history's filters (GET): job, status and a date range in the user's zone.

    It also reads the API's names for the run filters (created_after, created_before,
    scheduled_after, scheduled_before: ISO 8601 times), so a link that works for the API
    works here; run_filters() gives JobHistoryQuerySet.matching the same arguments the
    API gives it.
    """

    job = forms.UUIDField(required=False, widget=forms.HiddenInput)
    job_name = forms.CharField(label=_("Job"), required=False, max_length=NAME_MAX_LENGTH)
    status = forms.ChoiceField(
        label=_("Status"), required=False, choices=[("", _("Any status")), *RunStatus.choices]
    )
    # Bounded, so that a day's start converts to UTC without overflowing.
    date_from = forms.DateField(
        label=_("From"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        validators=[MinValueValidator(EARLIEST_DAY), MaxValueValidator(LATEST_DAY)],
    )
    date_to = forms.DateField(
        label=_("To"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        validators=[MinValueValidator(EARLIEST_DAY), MaxValueValidator(LATEST_DAY)],
    )
    # The API's names; not in the form's layout, kept as hidden inputs when given.
    created_after = forms.DateTimeField(required=False, widget=forms.HiddenInput)
    created_before = forms.DateTimeField(required=False, widget=forms.HiddenInput)
    scheduled_after = forms.DateTimeField(required=False, widget=forms.HiddenInput)
    scheduled_before = forms.DateTimeField(required=False, widget=forms.HiddenInput)

    def clean(self) -> dict:
        cleaned = super().clean()
        start, end = cleaned.get("date_from"), cleaned.get("date_to")
        if start and end and end < start:
            self.add_error("date_to", _("The end date is before the start date."))
        return cleaned

    def created_range(self) -> tuple[datetime | None, datetime | None]:
        """[start, end) in aware datetimes: whole local days, the end day included."""
        start, end = self.cleaned_data.get("date_from"), self.cleaned_data.get("date_to")
        return (
            _local_midnight(start) if start else None,
            _local_midnight(end + timedelta(days=1)) if end else None,
        )

    def run_filters(self) -> dict[str, Any]:
        """The valid filters as JobHistoryQuerySet.matching's arguments. A date range and
        a created_after/created_before given together both apply (the narrower wins)."""
        wanted = self.cleaned_data
        day_start, day_end = self.created_range()
        starts = [t for t in (day_start, wanted.get("created_after")) if t is not None]
        ends = [t for t in (day_end, wanted.get("created_before")) if t is not None]
        return {
            "job": wanted.get("job"),
            "job_name": wanted.get("job_name") or None,
            "status": wanted.get("status") or None,
            "scheduled_after": wanted.get("scheduled_after"),
            "scheduled_before": wanted.get("scheduled_before"),
            "created_after": max(starts, default=None),
            "created_before": min(ends, default=None),
        }


def _local_midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))
