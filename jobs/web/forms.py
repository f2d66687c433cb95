"""Forms of the screens.

The rules of a valid job live in Job (field validators and Job.clean()); a ModelForm
runs them through full_clean() and puts each message at its field. The forms here
only add what is theirs: widgets, layout, and reading text input (local date-times,
filters).
"""

from __future__ import annotations

import copy
from datetime import date, datetime, time, timedelta
from typing import Any

from crispy_bootstrap5.bootstrap5 import Switch
from crispy_forms.helper import FormHelper
from crispy_forms.layout import HTML, Column, Div, Fieldset, Layout, Row
from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from jobs import upcoming
from jobs.models import (
    MAX_ALERT_AFTER_FAILURES,
    NAME_MAX_LENGTH,
    Job,
    JobState,
    RunStatus,
    ScheduleType,
)
from jobs.preview import PREVIEW_FIELDS
from jobs.signing import SECRET_MAX_LENGTH
from jobs.web.widgets import LocalDateTimeInput, TimeZoneSelect, mark_schedule_switch

EARLIEST_DAY = date(1970, 1, 1)
LATEST_DAY = date(9000, 1, 1)
# What a browser's datetime-local input sends (with or without seconds).
LOCAL_INPUT_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"]


class JobAlertsForm(forms.ModelForm):
    """The alert fields of the job forms (the dashboard's and the admin's).

    The write-only webhook_secret is a password input that never shows the stored
    secret: left blank, the job keeps its secret; "remove" (offered only when one is set)
    clears it. A value typed is checked by Job.clean() like any field, and not shown
    again when refused. alert_after_failures left out of a post keeps the job's value
    (the default, 1, for a new job); sent blank, Job.clean() refuses it.
    """

    webhook_secret = forms.CharField(
        label=capfirst(Job._meta.get_field("webhook_secret").verbose_name),
        help_text=Job._meta.get_field("webhook_secret").help_text,
        required=False,
        max_length=SECRET_MAX_LENGTH,
        widget=forms.PasswordInput(
            render_value=False, attrs={"autocomplete": "new-password", "spellcheck": "false"}
        ),
    )
    remove_webhook_secret = forms.BooleanField(
        label=_("Remove the signing secret (webhooks are then signed with the site's, if any)"),
        required=False,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "alert_after_failures" in self.fields:
            self.fields["alert_after_failures"].required = False
        if self.instance.webhook_secret:
            self.fields["webhook_secret"].widget.attrs["placeholder"] = _(
                "A secret is set; leave blank to keep it"
            )
        else:
            del self.fields["remove_webhook_secret"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if not cleaned.get("webhook_secret"):
            if cleaned.pop("remove_webhook_secret", False):
                # On the instance too: a ModelForm leaves a field it was not sent at all
                # as the instance has it.
                cleaned["webhook_secret"] = self.instance.webhook_secret = ""
            else:
                cleaned["webhook_secret"] = self.instance.webhook_secret
        return cleaned


def job_form_field(field: models.Field, **kwargs: Any) -> forms.Field | None:
    """The dashboard's form field for a job field: a URL typed without a scheme is read
    as https:// (what Django 6 does anyway; Job.clean() then checks it)."""
    if isinstance(field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return field.formfield(**kwargs)


class JobForm(JobAlertsForm):
    class Meta:
        model = Job
        formfield_callback = job_form_field
        fields = [
            "name",
            "description",
            "command",
            "schedule_type",
            "scheduled_at",
            "interval",
            "interval_unit",
            "cron_expression",
            "timezone",
            "misfire_policy",
            "overlap_policy",
            "timeout_seconds",
            "max_retries",
            "retry_backoff_seconds",
            "sim_failure_rate",
            "sim_min_seconds",
            "sim_max_seconds",
            "is_active",
            "notify_on_failure",
            "notify_on_recovery",
            "webhook_url",
            "notify_emails",
            "alert_after_failures",
            "expected_seconds",
            "webhook_secret",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "scheduled_at": LocalDateTimeInput(),
            "cron_expression": forms.TextInput(
                attrs={"placeholder": "30 2 * * *", "spellcheck": "false", "autocomplete": "off"}
            ),
            "timezone": TimeZoneSelect(),
            "notify_emails": forms.Textarea(attrs={"rows": 2}),
        }
        field_classes = {"scheduled_at": forms.DateTimeField}

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.fields["scheduled_at"].input_formats = LOCAL_INPUT_FORMATS
        self.fields["interval"].widget.attrs["min"] = 1
        self.fields["timeout_seconds"].widget.attrs["min"] = 1
        for name in ("sim_failure_rate", "sim_min_seconds", "sim_max_seconds"):
            self.fields[name].widget.attrs.update({"min": 0, "step": "any"})
        self.fields["sim_failure_rate"].widget.attrs["max"] = 1
        self.fields["alert_after_failures"].widget.attrs.update(
            {"min": 1, "max": MAX_ALERT_AFTER_FAILURES}
        )
        self.fields["expected_seconds"].widget.attrs["min"] = 1
        # Read by jobs/static/jobs/job_form.js, which shows only the chosen schedule's
        # fields (all of them stay visible without JavaScript).
        mark_schedule_switch(self.fields)
        # What the schedule preview sends (job_form.html, SchedulePreviewForm).
        for name in (*PREVIEW_FIELDS, "is_active"):
            self.fields[name].widget.attrs["data-preview-field"] = ""
        self.helper = FormHelper()
        self.helper.form_tag = False  # the template writes the <form> and its buttons
        self.helper.layout = Layout(
            "name",
            "description",
            "command",
            "schedule_type",
            Div(
                "scheduled_at",
                css_class="js-schedule",
                data_schedule=f"{ScheduleType.ONCE} {ScheduleType.INTERVAL}",
            ),
            Div(
                Row(Column("interval"), Column("interval_unit")),
                css_class="js-schedule",
                data_schedule=ScheduleType.INTERVAL,
            ),
            Div(
                Row(Column("cron_expression"), Column("timezone")),
                css_class="js-schedule",
                data_schedule=ScheduleType.CRON,
            ),
            "misfire_policy",
            Row(Column("overlap_policy"), Column("timeout_seconds")),
            Row(Column("max_retries"), Column("retry_backoff_seconds")),
            Fieldset(
                _("Simulation"),
                HTML(
                    format_html(
                        '<p class="small text-body-secondary">{}</p>',
                        _(
                            "How this job's simulated runs behave. Blank fields use the "
                            "defaults; a failure rate of 1 makes every run fail, to try retries."
                        ),
                    )
                ),
                Row(
                    Column("sim_failure_rate"),
                    Column("sim_min_seconds"),
                    Column("sim_max_seconds"),
                ),
            ),
            Fieldset(
                _("Alerts"),
                Row(Column(Switch("notify_on_failure")), Column(Switch("notify_on_recovery"))),
                "webhook_url",
                "notify_emails",
                Row(Column("alert_after_failures"), Column("expected_seconds")),
                "webhook_secret",
                *(["remove_webhook_secret"] if "remove_webhook_secret" in self.fields else []),
                css_id="job-form-alerts",
            ),
            Switch("is_active"),
        )


class SchedulePreviewForm(forms.Form):
    """The job form's schedule fields alone, read exactly as the job form reads them (the
    same fields: local date-times in the viewer's zone, the same messages), for the
    preview shown as one types (jobs/preview.py). `is_active` too: a disabled one-off
    job may keep a time that has passed, an enabled one may not."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        job_form = JobForm.base_fields
        self.fields = {
            name: copy.deepcopy(job_form[name]) for name in (*PREVIEW_FIELDS, "is_active")
        }
        self.fields["scheduled_at"].input_formats = LOCAL_INPUT_FORMATS


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
