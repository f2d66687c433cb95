"""The forms of business calendars, blackout windows and a backfill's range.

The rules are the models' (Calendar.clean(), Blackout.clean()) and the engine's
(jobs.engine.backfill): these forms only read the inputs and put each message at its field.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from jobs import engine
from jobs.calendars.days import MONDAY_TO_FRIDAY
from jobs.models import Blackout, Calendar, Job
from jobs.models.calendars import BLACKOUT_FIELDS, CALENDAR_FIELDS, MAX_EXTRA_DATES
from jobs.web.chains import JobPicker
from jobs.web.forms.layout import plain_helper
from jobs.web.widgets import LOCAL_INPUT_FORMATS, LocalDateTimeInput, TimeZoneSelect

WEEKDAYS = [
    (0, _("Monday")),
    (1, _("Tuesday")),
    (2, _("Wednesday")),
    (3, _("Thursday")),
    (4, _("Friday")),
    (5, _("Saturday")),
    (6, _("Sunday")),
]
# A date list's text: a browser's textarea of MAX_EXTRA_DATES dates of 11 characters.
DATES_TEXT_MAX_LENGTH = MAX_EXTRA_DATES * 11


class DateListField(forms.CharField):
    """Dates as text, one a line (or separated by commas or spaces); the model checks
    each one and says which is not a date."""

    widget = forms.Textarea(attrs={"rows": 3, "placeholder": "2026-12-31", "spellcheck": "false"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, max_length=DATES_TEXT_MAX_LENGTH, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(str(item) for item in value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value)
        return [word for word in re.split(r"[\s,]+", text) if word]


class Drawn:
    """A form the templates draw with {% bootstrap_form %}: its fields in order."""

    @property
    def helper(self) -> Any:
        return plain_helper()


class CalendarForm(Drawn, forms.ModelForm):
    weekdays = forms.TypedMultipleChoiceField(
        label=_("Working weekdays"),
        choices=WEEKDAYS,
        coerce=int,
        initial=list(MONDAY_TO_FRIDAY),  # a declared field does not take the model's default
        required=False,  # none ticked: the model's message, at the field
        widget=forms.CheckboxSelectMultiple,
    )
    extra_days_off = DateListField(
        label=_("Extra days off"), help_text=_("Dates (YYYY-MM-DD), one a line.")
    )
    extra_working_days = DateListField(
        label=_("Extra working days"),
        help_text=_("Dates that count although a weekday off or a holiday."),
    )

    class Meta:
        model = Calendar
        fields = list(CALENDAR_FIELDS)
        widgets = {"timezone": TimeZoneSelect()}


class BlackoutForm(Drawn, forms.ModelForm):
    starts_at = forms.DateTimeField(
        label=_("Starts at"),
        required=False,
        widget=LocalDateTimeInput(),
        input_formats=LOCAL_INPUT_FORMATS,
        help_text=_("A fixed range: its start and end, in your time zone."),
    )
    ends_at = forms.DateTimeField(
        label=_("Ends at"),
        required=False,
        widget=LocalDateTimeInput(),
        input_formats=LOCAL_INPUT_FORMATS,
    )
    jobs = forms.ModelMultipleChoiceField(
        label=_("Chosen jobs"),
        queryset=Job.objects.all(),
        required=False,
        widget=JobPicker(),
        help_text=_("The jobs it covers when it applies to chosen jobs."),
    )

    class Meta:
        model = Blackout
        fields = list(BLACKOUT_FIELDS)
        widgets = {
            "timezone": TimeZoneSelect(),
            "cron_expression": forms.TextInput(
                attrs={"placeholder": "0 22 * * 5", "spellcheck": "false", "autocomplete": "off"}
            ),
        }


class BackfillForm(Drawn, forms.Form):
    """A past range of a job: its occurrences (those a backfill would run) once valid."""

    start = forms.DateTimeField(
        label=_("From"),
        widget=LocalDateTimeInput(),
        input_formats=LOCAL_INPUT_FORMATS,
        help_text=_("Included."),
    )
    end = forms.DateTimeField(
        label=_("Until"),
        widget=LocalDateTimeInput(),
        input_formats=LOCAL_INPUT_FORMATS,
        help_text=_("Excluded; in the past."),
    )

    def __init__(self, job: Job, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.job = job
        self.occurrences: list[datetime] = []

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if "start" in cleaned and "end" in cleaned:
            try:
                self.occurrences = engine.backfill_occurrences(
                    self.job, cleaned["start"], cleaned["end"], timezone.now()
                )
            except engine.BackfillRefused as refused:
                self.add_error(refused.field, str(refused))
        return cleaned
