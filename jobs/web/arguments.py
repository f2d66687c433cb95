"""A job's arguments (Job.arguments) as form fields, per executor.

- python: one field per parameter of the chosen task, typed from its annotation
  (jobs.pytasks.signature.TaskParameter.kind): a number, a checkbox, a date or date-time picker,
  a choice for an Enum or a Literal, text, and a JSON box for lists, dicts and
  parameters without an annotation; a JSON box for more keyword arguments when the task
  takes ``**kwargs``. A field left blank gives no argument: the task's default applies.
- http: the method, the headers (one ``Name: value`` a line), the body (text, or JSON)
  and the statuses expected.
- shell: the extra environment variables (one ``NAME=value`` a line).
- command and simulated jobs take none.

The job form and the "run now" form both add a section's fields to themselves and read
the arguments back with `read()`, which says what is wrong by field. The arguments are
then checked as the model checks them (bind_arguments for a task, the executors' own
rules for http and shell), so a message lands at the field that caused it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from django import forms
from django.utils.html import format_html
from django.utils.translation import gettext as _

from jobs import kinds
from jobs.executors import http as http_executor
from jobs.executors import shell as shell_executor
from jobs.models import ExecutorKind
from jobs.pytasks import registry, signature
from jobs.pytasks.signature import REQUIRED, RegisteredTask, TaskParameter
from jobs.web.widgets import LOCAL_INPUT_FORMATS

# Form field names: a task's parameter "day" is the field "arg-day".
TASK_PREFIX = "arg-"
# The JSON object of further keyword arguments, for a task that takes **kwargs.
TASK_MORE = "task_more"
HTTP_METHOD = "http_method"
HTTP_HEADERS = "http_headers"
HTTP_BODY = "http_body"
HTTP_BODY_JSON = "http_body_json"
HTTP_EXPECT_STATUS = "http_expect_status"
SHELL_ENV = "shell_env"

# Input caps: an argument is a value, not a file.
TEXT_MAX_CHARS = 5000
JSON_MAX_CHARS = 20000
HTTP_BODY_MAX_CHARS = 65536
LINES_MAX_CHARS = 10000


class Reading(NamedTuple):
    """A section's arguments read from a form's cleaned data, and its messages by form
    field name (None: the form's own, not one field's)."""

    arguments: dict[str, Any]
    errors: dict[str | None, list[str]]


def _add(errors: dict[str | None, list[str]], field: str | None, message: str) -> None:
    errors.setdefault(field, []).append(message)


def _blank(value: Any) -> bool:
    return value is None or value == ""


def _keep(name: str, value: Any, default: Any, given: Mapping[str, Any]) -> bool:
    """A value that a control always sends (a checkbox, a method) is stored when it was
    stored before or differs from the default: saving an unrelated change must not add
    every default to the job's arguments."""
    return name in given or value != default


class JSONText(forms.CharField):
    """A JSON value typed as text; cleans to ``(value,)``, or None when left blank (a
    tuple, so that a JSON null is told apart from nothing)."""

    widget = forms.Textarea

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", JSON_MAX_CHARS)
        super().__init__(strip=True, **kwargs)
        self.widget.attrs.update(
            {"rows": 2, "class": "font-monospace", "spellcheck": "false", "autocomplete": "off"}
        )

    def clean(self, value: Any) -> tuple[Any] | None:
        text = super().clean(value)
        if not text:
            return None
        try:
            return (json.loads(text),)
        except ValueError as error:
            raise forms.ValidationError(
                _("Enter valid JSON (%(error)s).") % {"error": str(error)[:200]}, code="json"
            ) from None


def json_text(value: Any) -> str:
    """A stored value as the JSON box shows it."""
    return json.dumps(value, ensure_ascii=False)


# --- python: a form built from the task's signature -----------------------------------


def task_field_name(parameter: str) -> str:
    return TASK_PREFIX + parameter


def _choice_key(value: Any) -> str:
    # JSON text keeps 1 and "1" apart, and reads back to the very value.
    return json.dumps(value, sort_keys=True)


def _choice_label(value: Any) -> str:
    return value if isinstance(value, str) else signature.short_repr(value)


def _help(parameter: TaskParameter) -> str:
    """The annotation, and what a blank field means: "date: default None, blank uses it"."""
    annotation = parameter.annotation_text or _("no annotation")
    if parameter.required:
        rule = _("required")
    elif parameter.kind == "bool":
        rule = _("default %(default)s") % {"default": signature.short_repr(parameter.default)}
    else:
        rule = _("default %(default)s; leave blank to use it") % {
            "default": signature.short_repr(parameter.default)
        }
    if parameter.kind == "json":
        rule = _("JSON; %(rule)s") % {"rule": rule}
    bounds = parameter.bounds
    if bounds is not None and None not in bounds:
        rule = _("%(low)s to %(high)s; %(rule)s") % {
            "low": bounds.minimum,
            "high": bounds.maximum,
            "rule": rule,
        }
    return format_html("<code>{}</code> · {}", annotation, rule)


def _initial(parameter: TaskParameter, given: Mapping[str, Any]) -> Any:
    """What the field shows: the job's argument, else nothing (the default is in the
    placeholder and the help), a checkbox its default."""
    if parameter.name not in given:
        if parameter.kind == "bool":
            return parameter.default is True
        return None
    value = given[parameter.name]
    if parameter.kind == "choice":
        return _choice_key(value)
    if parameter.kind == "json":
        return json_text(value)
    if parameter.kind == "datetime" and isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, dict | list):
        return json_text(value)
    return value


def parameter_field(parameter: TaskParameter, given: Mapping[str, Any]) -> forms.Field:
    """The form field for one parameter, showing the job's value for it."""
    common: dict[str, Any] = {
        "label": parameter.name,
        "required": parameter.required and parameter.kind != "bool",
        "help_text": _help(parameter),
        "initial": _initial(parameter, given),
    }
    placeholder = "" if parameter.required else str(parameter.default)
    if parameter.default is None or parameter.default is REQUIRED:
        placeholder = ""
    kind = parameter.kind
    bounds = parameter.bounds or signature.Between()
    if kind == "int":
        field: forms.Field = forms.IntegerField(
            min_value=bounds.minimum, max_value=bounds.maximum, **common
        )
    elif kind == "float":
        field = forms.FloatField(min_value=bounds.minimum, max_value=bounds.maximum, **common)
        field.widget.attrs["step"] = "any"
    elif kind == "bool":
        field = forms.BooleanField(**common)
    elif kind == "date":
        field = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}), **common)
        field.input_formats = ["%Y-%m-%d"]
    elif kind == "datetime":
        field = forms.DateTimeField(
            widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
            **common,
        )
        field.widget.format = "%Y-%m-%dT%H:%M:%S"
        field.input_formats = LOCAL_INPUT_FORMATS
    elif kind == "choice":
        empty = (
            _("Choose…")
            if parameter.required
            else _("Default (%(default)s)")
            % {"default": _choice_label(signature.json_value(parameter.default))}
        )
        choices = [("", empty)] + [
            (_choice_key(value), _choice_label(value)) for value in parameter.choices
        ]
        field = forms.ChoiceField(choices=choices, **common)
        placeholder = ""
    elif kind == "str":
        field = forms.CharField(max_length=TEXT_MAX_CHARS, strip=False, **common)
    else:
        field = JSONText(**common)
        if not parameter.required and parameter.default is not None:
            placeholder = json_text(signature.json_value(parameter.default))
    if placeholder and kind not in ("bool", "date", "datetime"):
        field.widget.attrs["placeholder"] = placeholder[:200]
    return field


def _task_value(parameter: TaskParameter, value: Any) -> Any:
    """A cleaned field as the JSON a job stores."""
    if parameter.kind == "choice":
        return json.loads(value)
    if parameter.kind == "json":
        return value[0]
    return signature.json_value(value)


class TaskSection:
    """The fields of one registered task's parameters."""

    executor = ExecutorKind.PYTHON
    message_field = "task"  # where a message about the arguments as a whole goes
    # Its fields' names (another kind's typed section, in the same form, has its own).
    prefix, more_field = TASK_PREFIX, TASK_MORE

    @classmethod
    def for_job(
        cls, command: str, given: Any, *, secrets_visible: bool = True
    ) -> TaskSection | None:
        """The section of a job running the task `command` (None: not registered)."""
        task = registry.get_task(command) if command else None
        return cls(task, given) if task is not None else None

    def __init__(self, task: RegisteredTask, given: Mapping[str, Any] | None = None) -> None:
        self.task = task
        self.given: Mapping[str, Any] = given if isinstance(given, Mapping) else {}

    def fields(self) -> dict[str, forms.Field]:
        fields = {
            self.prefix + parameter.name: parameter_field(parameter, self.given)
            for parameter in self.task.parameters
        }
        if self.task.accepts_any:
            known = {parameter.name for parameter in self.task.parameters}
            more = {key: value for key, value in self.given.items() if key not in known}
            fields[self.more_field] = JSONText(
                label=_("More keyword arguments"),
                required=False,
                help_text=_("A JSON object: the task takes **kwargs."),
                initial=json_text(more) if more else None,
            )
        return fields

    def dropped(self) -> list[str]:
        """The job's argument names this task does not take (dropped when saved)."""
        if self.task.accepts_any:
            return []
        known = {parameter.name for parameter in self.task.parameters}
        return [str(name) for name in self.given if name not in known]

    def read(self, cleaned: Mapping[str, Any], fallback: str | None = None) -> Reading:
        """The arguments from the fields; messages from bind_arguments at the fields of
        their parameters (`fallback` for those of none)."""
        arguments: dict[str, Any] = {}
        errors: dict[str | None, list[str]] = {}
        incomplete = False
        for parameter in self.task.parameters:
            name = self.prefix + parameter.name
            if name not in cleaned:
                incomplete = True  # invalid: its field has its message already
                continue
            value = cleaned[name]
            if parameter.kind == "bool":
                if _keep(parameter.name, value, parameter.default, self.given):
                    arguments[parameter.name] = value
            elif not _blank(value):
                arguments[parameter.name] = _task_value(parameter, value)
        if self.task.accepts_any and cleaned.get(self.more_field) is not None:
            more = cleaned[self.more_field][0]
            if not signature.is_json_object(more):
                _add(errors, self.more_field, _('Enter a JSON object, such as {"key": 1}.'))
            else:
                clashing = sorted(set(more) & set(arguments))
                if clashing:
                    _add(
                        errors,
                        self.more_field,
                        _("Given in their own fields already: %(names)s.")
                        % {"names": ", ".join(clashing)},
                    )
                arguments.update(more)
        if errors or incomplete:
            # Binding what is left would only repeat the messages the fields have.
            return Reading(arguments, errors)
        try:
            arguments = signature.normalize(self.task, arguments)
        except signature.ArgumentsError as error:
            known = {parameter.name for parameter in self.task.parameters}
            for key, messages in error.errors.items():
                if key in known:
                    field = self.prefix + key
                elif self.task.accepts_any and key != "__all__":
                    field = self.more_field
                else:
                    field = fallback
                for message in messages:
                    _add(errors, field, message)
        return Reading(arguments, errors)


# --- http --------------------------------------------------------------------------------


def _header_lines(headers: Any) -> str:
    if not isinstance(headers, Mapping):
        return ""
    return "\n".join(f"{name}: {value}" for name, value in headers.items())


def _status_text(expected: Any) -> str:
    if isinstance(expected, list):
        return ", ".join(str(value) for value in expected)
    return "" if expected is None else str(expected)


class HttpSection:
    """The arguments of an http job. `secrets_visible=False` leaves the headers out (their
    values may be credentials): the job's own are kept."""

    executor = ExecutorKind.HTTP
    message_field = HTTP_METHOD

    @classmethod
    def for_job(cls, command: str, given: Any, *, secrets_visible: bool = True) -> HttpSection:
        return cls(given, secrets_visible=secrets_visible)

    def __init__(self, given: Mapping[str, Any] | None = None, *, secrets_visible: bool = True):
        self.given: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        self.secrets_visible = secrets_visible

    def fields(self) -> dict[str, forms.Field]:
        given = self.given
        body = given.get("body")
        body_is_json = "body" in given and not isinstance(body, str) and body is not None
        fields: dict[str, forms.Field] = {
            HTTP_METHOD: forms.ChoiceField(
                label=_("Method"),
                required=False,
                choices=[(method, method) for method in http_executor.METHODS],
                initial=str(given.get("method") or "GET").upper(),
            ),
        }
        if self.secrets_visible:
            fields[HTTP_HEADERS] = forms.CharField(
                label=_("Headers"),
                required=False,
                max_length=LINES_MAX_CHARS,
                widget=forms.Textarea(
                    attrs={"rows": 2, "class": "font-monospace", "spellcheck": "false"}
                ),
                help_text=_("One a line, as Name: value. For example Authorization: Bearer …"),
                initial=_header_lines(given.get("headers")),
            )
        fields[HTTP_BODY] = forms.CharField(
            label=_("Body"),
            required=False,
            strip=False,
            max_length=HTTP_BODY_MAX_CHARS,
            widget=forms.Textarea(attrs={"rows": 3, "class": "font-monospace"}),
            help_text=_("Sent as it is; blank: no body."),
            initial=json_text(body) if body_is_json else (body or ""),
        )
        fields[HTTP_BODY_JSON] = forms.BooleanField(
            label=_("The body is JSON (sent as application/json)"),
            required=False,
            initial=body_is_json,
        )
        fields[HTTP_EXPECT_STATUS] = forms.CharField(
            label=_("Expected status"),
            required=False,
            max_length=200,
            help_text=_(
                "A status, or several separated by commas, such as 200, 204. Blank: any 2xx."
            ),
            initial=_status_text(given.get("expect_status")),
        )
        return fields

    def read(self, cleaned: Mapping[str, Any], fallback: str | None = None) -> Reading:
        arguments: dict[str, Any] = {}
        errors: dict[str | None, list[str]] = {}
        method = cleaned.get(HTTP_METHOD) or "GET"
        if _keep("method", method, "GET", self.given):
            arguments["method"] = method
        if self.secrets_visible:
            headers = self._headers(cleaned.get(HTTP_HEADERS) or "", errors)
        else:
            headers = self.given.get("headers") or {}
        if headers:
            arguments["headers"] = headers
        body = cleaned.get(HTTP_BODY) or ""
        if body.strip():
            if cleaned.get(HTTP_BODY_JSON):
                try:
                    arguments["body"] = json.loads(body)
                except ValueError as error:
                    _add(
                        errors,
                        HTTP_BODY,
                        _("Enter valid JSON, or untick “The body is JSON” (%(error)s).")
                        % {"error": str(error)[:200]},
                    )
            else:
                arguments["body"] = body
        statuses = self._statuses(cleaned.get(HTTP_EXPECT_STATUS) or "", errors)
        if statuses:
            arguments["expect_status"] = statuses[0] if len(statuses) == 1 else statuses
        if not errors:
            # The executor's own rules, the ones Job.clean() applies: a safety net for
            # anything the fields above let through.
            fields = {
                "method": HTTP_METHOD,
                "headers": HTTP_HEADERS if self.secrets_visible else fallback,
                "body": HTTP_BODY,
                "expect_status": HTTP_EXPECT_STATUS,
            }
            for key, message in http_executor.argument_errors(arguments).items():
                _add(errors, fields.get(key, fallback), message)
        return Reading(arguments, errors)

    @staticmethod
    def _headers(text: str, errors: dict[str | None, list[str]]) -> dict[str, str]:
        headers: dict[str, str] = {}
        seen: set[str] = set()
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            name, colon, value = line.partition(":")
            name, value = name.strip(), value.strip()
            if not colon or not name:
                _add(
                    errors,
                    HTTP_HEADERS,
                    _("Line %(number)d: write a header as Name: value.") % {"number": number},
                )
                continue
            if http_executor.argument_errors({"headers": {name: value}}):
                _add(
                    errors,
                    HTTP_HEADERS,
                    _("Line %(number)d: “%(name)s” is not a header name.")
                    % {"number": number, "name": name[:50]},
                )
                continue
            if name.lower() in seen:
                _add(
                    errors,
                    HTTP_HEADERS,
                    _("Line %(number)d: %(name)s is given twice.")
                    % {"number": number, "name": name[:50]},
                )
                continue
            seen.add(name.lower())
            headers[name] = value
        return headers

    @staticmethod
    def _statuses(text: str, errors: dict[str | None, list[str]]) -> list[int]:
        statuses = []
        for part in text.replace(";", ",").split(","):
            part = part.strip()
            if not part:
                continue
            if not part.isdigit() or not 100 <= int(part) <= 599:
                _add(
                    errors,
                    HTTP_EXPECT_STATUS,
                    _("“%(value)s” is not a status: give numbers from 100 to 599.")
                    % {"value": part[:20]},
                )
                return []
            statuses.append(int(part))
        return statuses


# --- shell -------------------------------------------------------------------------------


def _env_lines(env: Any) -> str:
    if not isinstance(env, Mapping):
        return ""
    return "\n".join(f"{name}={value}" for name, value in env.items())


class ShellSection:
    """The extra environment of a shell job. `secrets_visible=False` leaves it out: the
    job's own is kept."""

    executor = ExecutorKind.SHELL
    message_field = SHELL_ENV

    @classmethod
    def for_job(cls, command: str, given: Any, *, secrets_visible: bool = True) -> ShellSection:
        return cls(given, secrets_visible=secrets_visible)

    def __init__(self, given: Mapping[str, Any] | None = None, *, secrets_visible: bool = True):
        self.given: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        self.secrets_visible = secrets_visible

    def fields(self) -> dict[str, forms.Field]:
        if not self.secrets_visible:
            return {}
        return {
            SHELL_ENV: forms.CharField(
                label=_("Environment variables"),
                required=False,
                max_length=LINES_MAX_CHARS,
                strip=False,
                widget=forms.Textarea(
                    attrs={"rows": 2, "class": "font-monospace", "spellcheck": "false"}
                ),
                help_text=_(
                    "One a line, as NAME=value. Added to the few the command gets (PATH, "
                    "HOME, LANG, JOB_ID, RUN_ID, SCHEDULED_FOR …); nothing else of the "
                    "scheduler's environment is passed on."
                ),
                initial=_env_lines(self.given.get("env")),
            )
        }

    def read(self, cleaned: Mapping[str, Any], fallback: str | None = None) -> Reading:
        errors: dict[str | None, list[str]] = {}
        if not self.secrets_visible:
            env = self.given.get("env") or {}
            return Reading({"env": env} if env else {}, errors)
        env: dict[str, str] = {}
        for number, line in enumerate((cleaned.get(SHELL_ENV) or "").splitlines(), start=1):
            if not line.strip():
                continue
            name, equals, value = line.partition("=")
            name = name.strip()
            if not equals:
                message = _("Line %(number)d: write a variable as NAME=value.")
            elif not shell_executor.ENV_NAME.match(name):
                message = _(
                    "Line %(number)d: “%(name)s” is not a variable name (letters, digits "
                    "and _, not starting with a digit)."
                )
            elif name in shell_executor.IDENTITY_NAMES:
                message = _("Line %(number)d: %(name)s is set by the scheduler for each run.")
            elif name in env:
                message = _("Line %(number)d: %(name)s is given twice.")
            else:
                env[name] = value
                continue
            _add(errors, SHELL_ENV, message % {"number": number, "name": name[:50]})
        if not errors:
            for message in shell_executor.environment_errors(env):
                _add(errors, SHELL_ENV, message)
        return Reading({"env": env} if env else {}, errors)


Section = TaskSection | HttpSection | ShellSection


def section_for(
    executor: str, command: str, given: Any, *, secrets_visible: bool = True
) -> Section | None:
    """The arguments section of a job of this kind, as its row in jobs.kinds
    names it (None: it takes no arguments, or its task is not registered)."""
    kind = kinds.kind_of(executor)
    if kind is None or not kind.section:
        return None
    return kinds.load(kind.section).for_job(command, given, secrets_visible=secrets_visible)


# The labels the command field takes per executor (jobs/static/jobs/job_form.js swaps
# them; without JavaScript the field keeps the first).
COMMAND_LABELS = {kind.value: kind.command_label for kind in kinds.KINDS if kind.command_label}
