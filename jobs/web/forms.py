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
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.forms.utils import ErrorDict
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs import kinds
from jobs.access import masking
from jobs.access import permissions as access
from jobs.executors.command import allowed_commands
from jobs.executors.shell import shell_enabled
from jobs.forecasts import upcoming
from jobs.forecasts.preview import PREVIEW_FIELDS
from jobs.models import (
    MAX_ALERT_AFTER_FAILURES,
    MAX_PRIORITY,
    MIN_PRIORITY,
    NAME_MAX_LENGTH,
    SCHEDULE_TYPE_FIELDS,
    ExecutorKind,
    Job,
    JobState,
    RunStatus,
    ScheduleType,
    gate,
)
from jobs.models import code as code_rules
from jobs.models.chains import CHAIN_FIELDS
from jobs.outbound.signing import SECRET_MAX_LENGTH
from jobs.pytasks import registry
from jobs.web import arguments, code_fields
from jobs.web.chains import ChainFieldsMixin, JobPicker
from jobs.web.widgets import (
    EXECUTOR_FIELDS,
    LOCAL_INPUT_FORMATS,
    LocalDateTimeInput,
    TaskSelect,
    TimeZoneSelect,
    mark_executor_switch,
    mark_schedule_switch,
)

EARLIEST_DAY = date(1970, 1, 1)
LATEST_DAY = date(9000, 1, 1)


# A submit button of the job form without JavaScript: show the fields of the task chosen
# (the form is shown again, nothing is saved).
SHOW_TASK = "show_task"


def offered_executors(user: object, current: str | None = None) -> list[tuple[str, str]]:
    """The executors `user` may choose (jobs.kinds.offered_to: shell only while
    JOBS_SHELL_ENABLED and for users with jobs.use_shell), and the job's own, so that its
    form shows what it is."""
    offered = {kind.value for kind in kinds.offered_to(access.may_use_shell(user))}
    return [
        (value, label)
        for value, label in ExecutorKind.choices
        if value in offered or value == current
    ]


def missing_shell_hint(user: Any, offered: set[str]) -> str:
    """Why "Shell command" is not in the executor list, for staff (who can change that);
    "" when it is listed, or for other users, to whom the setting means nothing."""
    if ExecutorKind.SHELL in offered or not getattr(user, "is_staff", False):
        return ""
    if not shell_enabled():
        return gettext(
            "Shell commands are switched off on this site: JOBS_SHELL_ENABLED=true switches "
            "them on."
        )
    return gettext(
        "Shell commands are on, but only for users with the permission “Can create or "
        "change jobs that run shell commands” (jobs.use_shell)."
    )


def task_choices(current: str = "") -> list[tuple[str, str]]:
    """The registered tasks, "name: description"; the job's task too when it is gone."""
    tasks = registry.registered_tasks()
    choices = [("", gettext("Choose a task"))]
    for task in tasks:
        label = f"{task.name}: {task.description}" if task.description else task.name
        choices.append((task.name, label[:200]))
    if current and all(task.name != current for task in tasks):
        choices.append((current, gettext("%(name)s (not registered)") % {"name": current}))
    return choices


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
        # URL credentials are shown to nobody; sent back as shown, the stored URL stays
        # (jobs.access.masking.restore_field, in clean_webhook_url).
        self.stored_webhook_url = self.instance.webhook_url
        if "webhook_url" in self.fields and self.stored_webhook_url:
            self.initial["webhook_url"] = masking.mask_urls(self.stored_webhook_url)
        if self.instance.webhook_secret:
            self.fields["webhook_secret"].widget.attrs["placeholder"] = _(
                "A secret is set; leave blank to keep it"
            )
        else:
            del self.fields["remove_webhook_secret"]

    def clean_webhook_url(self) -> str:
        return masking.restore_field(
            "webhook_url", self.cleaned_data.get("webhook_url") or "", self.stored_webhook_url
        )

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


class JobForm(ChainFieldsMixin, JobAlertsForm):
    """The job form: the job's fields, its executor, and the arguments of that executor
    (jobs/web/arguments.py).

    What runs is Job.command, read per executor: a registered task chosen in `task` for
    python, the text of `command` for the others. Every executor's fields are in the
    form; jobs/static/jobs/job_form.js shows (and submits) only the chosen one's, and
    without JavaScript the server reads only the chosen one's.
    """

    # A CharField over a select, so that a shell job posted while shell is not offered
    # gets words saying why rather than "not one of the choices".
    executor = forms.CharField(label=_("Executor"), required=False)
    task = forms.ChoiceField(
        label=_("Task"),
        required=False,
        help_text=_(
            "The registered Python tasks (@jobs.register in a tasks module of an app, or "
            "in a module JOBS_TASK_MODULES names)."
        ),
    )

    class Meta:
        model = Job
        formfield_callback = job_form_field
        fields = [
            "name",
            "description",
            "executor",
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
            "queue",
            "priority",
            "max_retries",
            "retry_backoff_seconds",
            "on_success",
            "on_failure",
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
            "on_success": JobPicker(),
            "on_failure": JobPicker(),
        }
        field_classes = {"scheduled_at": forms.DateTimeField}

    def __init__(self, *args, user: object = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.user = user
        stored = self.instance
        # Job.clean() applies the jobs.use_shell rule to the values this form cleaned,
        # for this user (jobs.models.gate).
        stored.acting_user = user
        # A new job has its id already (a UUID default): ask whether it is stored.
        existing = not stored._state.adding
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
        self.fields["priority"].widget.attrs.update({"min": MIN_PRIORITY, "max": MAX_PRIORITY})
        self.fields["queue"].widget.attrs.update({"spellcheck": "false", "autocomplete": "off"})

        # What runs: the executor, and the command or the task.
        self.fields["executor"].widget = forms.Select(
            choices=offered_executors(user, stored.executor if existing else None)
        )
        self.fields["executor"].initial = stored.executor or ExecutorKind.SIMULATED
        # Required per executor, in clean(): a python job names its task instead.
        self.fields["command"].required = False
        self.fields["command"].help_text = ""  # jobs/_command_help.html says it per executor
        self.fields["command"].widget.attrs.update({"spellcheck": "false", "autocomplete": "off"})
        stored_task = stored.command if stored.executor == ExecutorKind.PYTHON else ""
        self.fields["task"].choices = task_choices(stored_task)
        self.fields["task"].widget = TaskSelect(
            choices=self.fields["task"].choices,
            attrs={
                # Another task chosen: htmx fetches its fields (jobs.web.views.task_arguments).
                "hx-get": reverse("jobs:task_arguments")
                + (f"?job={stored.pk}" if existing else ""),
                "hx-trigger": "change",
                "hx-target": "#task-arguments",
                "hx-swap": "innerHTML",
            },
        )
        self.fields["task"].initial = stored_task
        self.chosen_executor = self._chosen("executor") or stored.executor
        self.chosen_task = self._chosen("task") or stored_task

        # The arguments of every executor that has fields of its own; the python ones
        # for the chosen task (htmx swaps them when another task is chosen).
        # As the user may read them (jobs.access.masking): URL credentials masked, put back from
        # the stored values in clean(); a job whose secrets the user may not read (a shell
        # job, to a user without jobs.use_shell) shows no headers or environment at all.
        self.stored_command = stored.command
        self.stored_arguments = copy.deepcopy(stored.arguments)
        secrets_visible = masking.may_see_secrets(user, stored) if existing else True
        if existing:
            self.initial["command"] = masking.mask_urls(stored.command or "")
        given = masking.shown_field(user, stored, "arguments", stored.arguments)
        given = given if isinstance(given, dict) else {}
        self.sections: dict[str, arguments.Section] = {}
        offered = {value for value, _label in self.fields["executor"].widget.choices}
        for kind in kinds.KINDS:
            # A python job's section is its task's, made below.
            if kind.section and kind.value in offered and kind.value != ExecutorKind.PYTHON:
                own = given if stored.executor == kind.value else {}
                self.sections[kind.value] = arguments.section_for(
                    kind.value, "", own, secrets_visible=secrets_visible
                )
        task = registry.get_task(self.chosen_task) if self.chosen_task else None
        if task is not None:
            own = (
                given if stored.executor == ExecutorKind.PYTHON and task.name == stored_task else {}
            )
            self.sections[ExecutorKind.PYTHON] = arguments.TaskSection(task, own)
        # The names of each section's fields, by executor.
        self.section_fields: dict[str, list[str]] = {}
        for kind, section in self.sections.items():
            built = section.fields()
            self.fields.update(built)
            self.section_fields[kind] = list(built)
        self.task_section = self.sections.get(ExecutorKind.PYTHON)
        self.arguments_reported = False  # set by clean()
        # For jobs/_command_help.html.
        self.shell_offered = ExecutorKind.SHELL in offered
        self.fields["executor"].help_text = missing_shell_hint(user, offered)
        self.management_commands = allowed_commands()

        # Read by jobs/static/jobs/job_form.js, which shows only the chosen schedule's
        # and executor's fields (all of them stay visible without JavaScript).
        mark_schedule_switch(self.fields)
        # What the schedule preview sends (job_form.html, SchedulePreviewForm).
        for name in (*PREVIEW_FIELDS, "is_active"):
            self.fields[name].widget.attrs["data-preview-field"] = ""
        mark_executor_switch(self.fields)
        self.fields["command"].widget.attrs.update(
            {f"data-label-{kind}": str(label) for kind, label in arguments.COMMAND_LABELS.items()}
        )
        # A job declared in code: the fields its code owns are shown, not edited.
        self.code_owned = stored.code_fields
        self.code_values = {name: copy.deepcopy(getattr(stored, name)) for name in self.code_owned}
        self.locked_fields = code_fields.lock(self, self._form_fields_of(self.code_owned))
        self.helper = FormHelper()
        self.helper.form_tag = False  # the template writes the <form> and its buttons
        self.helper.layout = Layout(
            "name",
            "description",
            "executor",
            Div(
                "command",
                HTML('{% include "jobs/_command_help.html" %}'),
                css_class="js-executor",
                data_executor=" ".join(EXECUTOR_FIELDS["command"]),
            ),
            Div(
                "task",
                HTML(
                    format_html(
                        '<noscript><button type="submit" name="{}" value="1" '
                        'class="btn btn-sm btn-outline-secondary mb-3">{}</button></noscript>',
                        SHOW_TASK,
                        gettext("Show the chosen task's arguments"),
                    )
                    + '<div id="task-arguments">{% include "jobs/_task_arguments.html" %}</div>'
                ),
                css_class="js-executor",
                data_executor=ExecutorKind.PYTHON,
            ),
            Fieldset(
                _("Request"),
                Row(
                    Column(arguments.HTTP_METHOD, css_class="col-md-4"),
                    Column(arguments.HTTP_EXPECT_STATUS),
                ),
                arguments.HTTP_HEADERS,
                arguments.HTTP_BODY,
                arguments.HTTP_BODY_JSON,
                css_class="js-executor",
                data_executor=ExecutorKind.HTTP,
            ),
            *(
                [
                    Div(
                        arguments.SHELL_ENV,
                        css_class="js-executor",
                        data_executor=ExecutorKind.SHELL,
                    )
                ]
                if ExecutorKind.SHELL in self.sections
                else []
            ),
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
            Div(
                "misfire_policy",
                css_class="js-schedule",
                data_schedule=" ".join(SCHEDULE_TYPE_FIELDS["misfire_policy"]),
            ),
            Row(
                Column(
                    Div(
                        "overlap_policy",
                        css_class="js-schedule",
                        data_schedule=" ".join(SCHEDULE_TYPE_FIELDS["overlap_policy"]),
                    )
                ),
                Column("timeout_seconds"),
            ),
            Row(Column("queue"), Column("priority")),
            Row(Column("max_retries"), Column("retry_backoff_seconds")),
            Fieldset(_("Chains"), Row(Column("on_success"), Column("on_failure"))),
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
                css_class="js-executor",
                data_executor=ExecutorKind.SIMULATED,
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

    def _form_fields_of(self, names: frozenset[str]) -> list[str]:
        """The form's fields showing the job's fields `names`: a python job's command is
        its task, its arguments the fields of every executor's section."""
        shown = []
        for name in sorted(names):
            if name == "command":
                shown += ["command", "task"]
            elif name == "arguments":
                shown += [field for fields in self.section_fields.values() for field in fields]
            else:
                shown.append(name)
        return shown

    @property
    def shell_refusal(self) -> str:
        """The jobs.use_shell rule's refusal of what was posted (at the executor, or at a
        chain list adding a job that needs it), or ""."""
        for name in ("executor", *CHAIN_FIELDS):
            if self.has_error(name, gate.CODE):
                return " ".join(self.errors[name])
        return ""

    def hide_errors(self) -> None:
        """Show the posted form again as it is, unchecked: no messages. (A form checks
        itself when its errors are first read; an empty ErrorDict is what it leaves
        when it finds none.)"""
        self._errors = ErrorDict()

    def _chosen(self, name: str) -> str:
        """What the form was posted with for `name`, else its initial value."""
        if self.is_bound:
            return str(self.data.get(self.add_prefix(name)) or "")
        return str(self.initial.get(name) or "")

    @property
    def task_argument_fields(self) -> list[forms.BoundField]:
        """The chosen task's fields, for jobs/_task_arguments.html."""
        return [self[name] for name in self.section_fields.get(ExecutorKind.PYTHON, [])]

    @property
    def chosen_registered_task(self) -> registry.RegisteredTask | None:
        return self.task_section.task if self.task_section is not None else None

    def clean_executor(self) -> str:
        value = self.cleaned_data.get("executor") or self.instance.executor
        value = value or ExecutorKind.SIMULATED
        offered = {choice for choice, _label in self.fields["executor"].widget.choices}
        if value not in ExecutorKind.values:
            raise ValidationError(
                gettext("Choose one of %(kinds)s.") % {"kinds": ", ".join(ExecutorKind.values)},
                code="invalid_choice",
            )
        if value not in offered:
            # Only shell is ever left out: switched off, or not the user's to choose.
            if not shell_enabled():
                raise ValidationError(
                    gettext("Shell commands are switched off on this site (JOBS_SHELL_ENABLED)."),
                    code="shell_off",
                )
            raise ValidationError(gate.change_message(), code=gate.CODE)
        return value

    def clean(self) -> dict:
        cleaned = super().clean()
        executor = cleaned.get("executor")
        # The fields of the executors not chosen are not read: no messages about them
        # (without JavaScript they were shown, and may hold anything).
        for kind, names in self.section_fields.items():
            if kind != executor:
                for name in names:
                    self.errors.pop(name, None)
        if executor == ExecutorKind.PYTHON:
            # A task that is not registered (the job's own, since gone) is refused by
            # Job.clean(), whose message the form shows at the task.
            task = cleaned.get("task") or ""
            if not task and "task" not in self.errors:
                self.add_error("task", gettext("Choose the task this job runs."))
            cleaned["command"] = task
        elif executor and not cleaned.get("command", "").strip() and "command" not in self.errors:
            self.add_error("command", gettext("This field is required."))
        elif "command" in cleaned:
            try:
                cleaned["command"] = masking.restore_field(
                    "command", cleaned["command"], self.stored_command
                )
            except ValidationError as error:
                self.add_error("command", error)
        section = self.sections.get(executor) if executor else None
        if (
            executor == ExecutorKind.PYTHON
            and section is not None
            and section.task.name != cleaned.get("command")
        ):
            section = None  # the fields of another task than the one posted
        if section is not None:
            reading = section.read(cleaned, fallback=self._arguments_field(executor))
            for field, messages in reading.errors.items():
                for message in messages:
                    self.add_error(field, message)
            try:
                self.instance.arguments = masking.restore_field(
                    "arguments", reading.arguments, self.stored_arguments
                )
            except ValidationError as error:
                self.add_error(self._arguments_field(executor), error)
            # Job.clean() checks the arguments again; when the fields have said what is
            # wrong already, its messages would only repeat theirs.
            self.arguments_reported = bool(reading.errors) or any(
                name in self.errors for name in self.section_fields[executor]
            )
        elif executor is not None:
            # Simulated and command jobs take none; a task with no parameters neither.
            self.instance.arguments = {}
        if self.locked_fields:
            self._keep_code_values(cleaned)
        return cleaned

    def _keep_code_values(self, cleaned: dict) -> None:
        """Refuse a post that changes a field the code owns, and keep the code's values
        whatever was read."""
        refusal = code_rules.refusal(self.instance)
        for name in code_fields.posted_changes(self, self.locked_fields, self.instance):
            self.add_error(name, refusal)
        for name, value in self.code_values.items():
            if name in cleaned:
                cleaned[name] = copy.deepcopy(value)
        if "arguments" in self.code_values:
            self.instance.arguments = copy.deepcopy(self.code_values["arguments"])

    def _arguments_field(self, executor: str) -> str:
        """Where a message about the arguments as a whole is shown: the field the kind's
        section names (jobs.kinds), else the command."""
        kind = kinds.kind_of(executor)
        field = kinds.load(kind.section).message_field if kind and kind.section else ""
        return field if field in self.fields else "command"

    def _update_errors(self, errors: ValidationError) -> None:
        # Job.clean() speaks of the model's fields; put each message where this form
        # shows what it is about (a python job's command is its task, its arguments
        # are the fields of the chosen executor).
        executor = self.cleaned_data.get("executor") or self.instance.executor
        where = {"arguments": self._arguments_field(executor)}
        if executor == ExecutorKind.PYTHON:
            where["command"] = "task"
        placed: dict[str, list] = {}
        for field, messages in errors.error_dict.items() if hasattr(errors, "error_dict") else ():
            if field == "arguments" and self.arguments_reported:
                continue
            target = where.get(field, field)
            if target not in self.fields:
                target = NON_FIELD_ERRORS
            placed.setdefault(target, []).extend(messages)
        if not hasattr(errors, "error_dict"):
            placed[NON_FIELD_ERRORS] = errors.error_list
        super()._update_errors(ValidationError(placed))


class RunNowForm(forms.Form):
    """ "Run now" with arguments: the fields of the job's executor (jobs/web/arguments.py),
    prefilled with the job's own arguments.

    Values that may be secret (an http job's headers, a shell job's environment) are
    offered only to users who may see them (jobs.change_job), and a shell job's only to
    users who may change it (jobs.use_shell); for anyone else the job's own are kept.
    """

    # Posted with the form, so that job_run tells it from the one-click button.
    with_arguments = forms.CharField(widget=forms.HiddenInput, initial="1", required=False)

    def __init__(self, job: Job, *args, user: object = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.job = job
        # Prefilled as the user may read them (jobs.access.masking); the masked parts sent back
        # are put back by Job.run_arguments.
        visible = masking.may_see_secrets(user, job)
        given = masking.shown_arguments(user, job.arguments, job)
        self.section = arguments.section_for(
            job.executor, job.command, given, secrets_visible=visible
        )
        if self.section is not None:
            self.fields.update(self.section.fields())
        self.arguments: dict = {}

    @property
    def has_arguments(self) -> bool:
        """Whether there is anything to fill in (else the one-click button is enough)."""
        return len(self.fields) > 1

    @property
    def task(self) -> registry.RegisteredTask | None:
        return self.section.task if isinstance(self.section, arguments.TaskSection) else None

    @property
    def argument_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name != "with_arguments"]

    def clean(self) -> dict:
        cleaned = super().clean()
        if self.section is None:
            self.arguments = dict(self.job.arguments or {})
            return cleaned
        reading = self.section.read(cleaned, fallback=None)
        for field, messages in reading.errors.items():
            for message in messages:
                self.add_error(field, message)
        self.arguments = reading.arguments
        return cleaned


class SchedulePreviewForm(forms.Form):
    """The job form's schedule fields alone, read exactly as the job form reads them (the
    same fields: local date-times in the viewer's zone, the same messages), for the
    preview shown as one types (jobs/forecasts/preview.py). `is_active` too: a disabled one-off
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
