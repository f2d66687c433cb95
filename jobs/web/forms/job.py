"""The job form: the job's fields, its executor, and the arguments of that executor.

Its set-up is a few named steps (JobForm.__init__); what it offers and the bounds of its
inputs are in fields.py, the argument sections in sections.py, the layout in layout.py.
"""

from __future__ import annotations

import copy

from django import forms
from django.contrib.auth.models import Group
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db.models import Q
from django.forms.utils import ErrorDict
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs import kinds
from jobs.access import masking
from jobs.executors.command import allowed_commands
from jobs.executors.shell import shell_enabled
from jobs.forecasts.preview import PREVIEW_FIELDS
from jobs.models import ExecutorKind, Job, gate, teams
from jobs.models import code as code_rules
from jobs.models.chains import CHAIN_FIELDS
from jobs.pytasks import signature
from jobs.web import arguments, code_fields
from jobs.web.chains import ChainFieldsMixin, JobPicker
from jobs.web.forms.alerts import JobAlertsForm, job_form_field
from jobs.web.forms.fields import (
    bound_inputs,
    missing_shell_hint,
    offered_executors,
    task_choices,
    task_select,
)
from jobs.web.forms.layout import job_form_helper
from jobs.web.forms.sections import argument_sections
from jobs.web.widgets import (
    LocalDateTimeInput,
    TimeZoneSelect,
    mark_executor_switch,
    mark_schedule_switch,
)

# A submit button of the job form without JavaScript: show the fields of the task chosen
# (the form is shown again, nothing is saved).
SHOW_TASK = "show_task"


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
            "team",
            "executor",
            "command",
            "schedule_type",
            "scheduled_at",
            "interval",
            "interval_unit",
            "cron_expression",
            "timezone",
            "misfire_policy",
            "calendar",
            "calendar_policy",
            "jitter_seconds",
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
            "channels",
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
            "channels": forms.CheckboxSelectMultiple(),
        }
        field_classes = {"scheduled_at": forms.DateTimeField}

    # For jobs/_job_form_task.html, which names the button.
    SHOW_TASK = SHOW_TASK

    def __init__(self, *args, user: object = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.user = user
        # Job.clean() applies the jobs.use_shell rule to the values this form cleaned,
        # for this user (jobs.models.gate).
        self.instance.acting_user = user
        # A new job has its id already (a UUID default): ask whether it is stored.
        existing = not self.instance._state.adding
        bound_inputs(self.fields)
        self._offer_what_runs(existing)
        self._add_argument_sections(existing)
        self._mark_switches()
        self._lock_code_fields()
        self._offer_teams()
        self.helper = job_form_helper(self)

    def _offer_teams(self) -> None:
        """The teams this user may choose from: theirs (and the job's own), every group
        for a superuser. Job.clean() judges what is posted (jobs.models.teams)."""
        field = self.fields.get("team")
        user = self.user
        if field is None or user is None or getattr(user, "is_superuser", False):
            return
        keep = Q(pk=self.instance.team_id) if self.instance.team_id else Q(pk__in=[])
        mine = Q(pk__in=teams.teams_of(user))
        field.queryset = Group.objects.filter(mine | keep).order_by("name")

    def _offer_what_runs(self, existing: bool) -> None:
        """The executor, and the command or the task: the executors this user may choose,
        the registered tasks; which of them was chosen (posted, else the job's)."""
        stored = self.instance
        self.fields["executor"].widget = forms.Select(
            choices=offered_executors(self.user, stored.executor if existing else None)
        )
        self.fields["executor"].initial = stored.executor or ExecutorKind.SIMULATED
        # Required per executor, in clean(): a python job names its task instead.
        self.fields["command"].required = False
        self.fields["command"].help_text = ""  # jobs/_command_help.html says it per executor
        self.fields["command"].widget.attrs.update({"spellcheck": "false", "autocomplete": "off"})
        stored_task = stored.command if stored.executor == ExecutorKind.PYTHON else ""
        self.fields["task"].choices = task_choices(stored_task)
        self.fields["task"].widget = task_select(
            self.fields["task"].choices, stored, existing=existing
        )
        self.fields["task"].initial = stored_task
        self.stored_task = stored_task
        self.chosen_executor = self._chosen("executor") or stored.executor
        self.chosen_task = self._chosen("task") or stored_task

    def _add_argument_sections(self, existing: bool) -> None:
        """The fields of each executor's arguments (sections.py), and the stored values
        that masked ones sent back stand for (put back in clean())."""
        stored = self.instance
        self.stored_command = stored.command
        self.stored_arguments = copy.deepcopy(stored.arguments)
        if existing:
            self.initial["command"] = masking.mask_urls(stored.command or "")
        offered = {value for value, _label in self.fields["executor"].widget.choices}
        self.sections: dict[str, arguments.Section] = argument_sections(
            self.user,
            stored,
            existing=existing,
            offered=offered,
            stored_task=self.stored_task,
            chosen_task=self.chosen_task,
        )
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
        self.fields["executor"].help_text = missing_shell_hint(self.user, offered)
        self.management_commands = allowed_commands()

    def _mark_switches(self) -> None:
        """Marks read by jobs/static/jobs/job_form.js, which shows only the chosen
        schedule's and executor's fields (all of them stay visible without JavaScript)."""
        mark_schedule_switch(self.fields)
        # What the schedule preview sends (job_form.html, SchedulePreviewForm).
        for name in (*PREVIEW_FIELDS, "is_active"):
            self.fields[name].widget.attrs["data-preview-field"] = ""
        mark_executor_switch(self.fields)
        self.fields["command"].widget.attrs.update(
            {f"data-label-{kind}": str(label) for kind, label in arguments.COMMAND_LABELS.items()}
        )

    def _lock_code_fields(self) -> None:
        """A job declared in code: the fields its code owns are shown, not edited."""
        stored = self.instance
        self.code_owned = stored.code_fields
        self.code_values = {name: copy.deepcopy(getattr(stored, name)) for name in self.code_owned}
        self.locked_fields = code_fields.lock(self, self._form_fields_of(self.code_owned))

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
    def chosen_registered_task(self) -> signature.RegisteredTask | None:
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
        self._clean_what_runs(cleaned, executor)
        self._read_arguments(cleaned, executor)
        if self.locked_fields:
            self._keep_code_values(cleaned)
        return cleaned

    def _clean_what_runs(self, cleaned: dict, executor: str | None) -> None:
        """The job's command: a python job's is its task; the others' is the command
        typed, its masked URL credentials put back from the stored one."""
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

    def _read_arguments(self, cleaned: dict, executor: str | None) -> None:
        """The job's arguments, read from the chosen executor's section (the masked
        parts sent back put back from the stored ones)."""
        section = self.sections.get(executor) if executor else None
        if (
            executor == ExecutorKind.PYTHON
            and section is not None
            and section.task.name != cleaned.get("command")
        ):
            section = None  # the fields of another task than the one posted
        if section is None:
            if executor is not None:
                # Simulated and command jobs take none; a task with no parameters neither.
                self.instance.arguments = {}
            return
        assert executor is not None  # a section is an executor's
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
