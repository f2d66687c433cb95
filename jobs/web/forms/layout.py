"""Where the job form's fields go: a crispy Layout of field names, rows and fieldsets.
Markup of its own lives in templates (jobs/templates/jobs/_job_form_*.html and
_command_help.html), included where it goes.

The Divs marked js-executor / js-schedule are what jobs/static/jobs/job_form.js shows or
hides by the executor and the schedule type chosen (all stay visible without JavaScript).
"""

from __future__ import annotations

from crispy_bootstrap5.bootstrap5 import Switch
from crispy_forms.helper import FormHelper
from crispy_forms.layout import HTML, Column, Div, Fieldset, Layout, LayoutObject, Row
from django import forms
from django.utils.translation import gettext_lazy as _

from jobs.models import SCHEDULE_TYPE_FIELDS, ExecutorKind, ScheduleType
from jobs.web import arguments
from jobs.web.widgets import EXECUTOR_FIELDS

# Under the job form's calendar field: where calendars are made and changed.
CALENDARS_LINK = '{% include "jobs/_calendars_link.html" %}'


def plain_helper() -> FormHelper:
    """The crispy helper of a form drawn field after field, without a <form> tag (the
    template writes the <form> and its buttons)."""
    helper = FormHelper()
    helper.form_tag = False
    return helper


def job_form_helper(form: forms.BaseForm) -> FormHelper:
    """The job form's crispy helper: its layout, without a <form> tag (the template
    writes the <form> and its buttons)."""
    helper = FormHelper()
    helper.form_tag = False
    helper.layout = Layout(
        "name",
        "description",
        "team",
        "executor",
        *_what_runs(form),
        "schedule_type",
        *_schedule(),
        Row(Column("queue"), Column("priority")),
        Row(Column("max_retries"), Column("retry_backoff_seconds")),
        Fieldset(_("Chains"), Row(Column("on_success"), Column("on_failure"))),
        _simulation(),
        _alerts(form),
        Switch("is_active"),
    )
    return helper


def _executor_part(*fields: object, executor: str, fieldset: object = None) -> LayoutObject:
    """Fields shown only for `executor` (a space-separated list of kinds); in a
    fieldset when it has a legend."""
    if fieldset is not None:
        return Fieldset(fieldset, *fields, css_class="js-executor", data_executor=executor)
    return Div(*fields, css_class="js-executor", data_executor=executor)


def _what_runs(form: forms.BaseForm) -> list[LayoutObject]:
    """The command (or the task) and the arguments of each executor."""
    parts = [
        _executor_part(
            "command",
            HTML('{% include "jobs/_command_help.html" %}'),
            executor=" ".join(EXECUTOR_FIELDS["command"]),
        ),
        _executor_part(
            "task", HTML('{% include "jobs/_job_form_task.html" %}'), executor=ExecutorKind.PYTHON
        ),
        _executor_part(
            Row(
                Column(arguments.HTTP_METHOD, css_class="col-md-4"),
                Column(arguments.HTTP_EXPECT_STATUS),
            ),
            arguments.HTTP_HEADERS,
            arguments.HTTP_BODY,
            arguments.HTTP_BODY_JSON,
            executor=ExecutorKind.HTTP,
            fieldset=_("Request"),
        ),
    ]
    # A celery job's arguments: typed by its task, or two JSON boxes (celery_arguments.py).
    celery_fields = getattr(form, "section_fields", {}).get(ExecutorKind.CELERY, [])
    if celery_fields:
        parts.append(
            _executor_part(
                *celery_fields, executor=ExecutorKind.CELERY, fieldset=_("Task arguments")
            )
        )
    # Only when shell is offered (its section's fields are in the form then).
    if arguments.SHELL_ENV in form.fields:
        parts.append(_executor_part(arguments.SHELL_ENV, executor=ExecutorKind.SHELL))
    return parts


def _schedule_part(*fields: object, types: str) -> Div:
    """Fields shown only for the schedule types `types` (space-separated)."""
    return Div(*fields, css_class="js-schedule", data_schedule=types)


def _schedule() -> list[LayoutObject]:
    """The fields of each schedule type, the policies, and the timeout beside them."""
    return [
        _schedule_part("scheduled_at", types=f"{ScheduleType.ONCE} {ScheduleType.INTERVAL}"),
        _schedule_part(
            Row(Column("interval"), Column("interval_unit")), types=ScheduleType.INTERVAL
        ),
        _schedule_part(Row(Column("cron_expression"), Column("timezone")), types=ScheduleType.CRON),
        _schedule_part("misfire_policy", types=" ".join(SCHEDULE_TYPE_FIELDS["misfire_policy"])),
        _schedule_part(
            Row(
                Column("calendar", HTML(CALENDARS_LINK)),
                Column("calendar_policy"),
                Column("jitter_seconds"),
            ),
            types=f"{ScheduleType.INTERVAL} {ScheduleType.CRON}",
        ),
        Row(
            Column(
                _schedule_part(
                    "overlap_policy", types=" ".join(SCHEDULE_TYPE_FIELDS["overlap_policy"])
                )
            ),
            Column("timeout_seconds"),
        ),
    ]


def _simulation() -> LayoutObject:
    return _executor_part(
        HTML('{% include "jobs/_job_form_simulation.html" %}'),
        Row(Column("sim_failure_rate"), Column("sim_min_seconds"), Column("sim_max_seconds")),
        executor=ExecutorKind.SIMULATED,
        fieldset=_("Simulation"),
    )


def _alerts(form: forms.BaseForm) -> Fieldset:
    return Fieldset(
        _("Alerts"),
        Row(Column(Switch("notify_on_failure")), Column(Switch("notify_on_recovery"))),
        "webhook_url",
        "notify_emails",
        "channels",
        Row(Column("alert_after_failures"), Column("expected_seconds")),
        "webhook_secret",
        # Offered only when the job has a secret to remove (JobAlertsForm).
        *(["remove_webhook_secret"] if "remove_webhook_secret" in form.fields else []),
        css_id="job-form-alerts",
    )
