"""What a Python task takes: its parameters described from its signature, and a job's
arguments (JSON) bound and coerced to them.

`describe` reads a function's signature and annotations into a RegisteredTask: one
TaskParameter per parameter, of a kind a form can offer a field for, with its bounds
(``Annotated[int, Between(1, 1000)]``). `bind_arguments` reads a job's arguments back into
the values the function's annotations ask for (``"2026-12-01"`` for a ``date``, an Enum's
value for the Enum) and says, by parameter, what is missing, unknown or of the wrong type:
Job.clean() calls it when a job is saved, the python executor again when the run starts
(the task may have changed since). `normalize` gives the bound values back as the JSON a
job stores.

Registering and finding tasks by name is jobs/pytasks/registry.py's.
"""

from __future__ import annotations

import collections.abc
import enum
import inspect
import json
import math
import types
import typing
from collections.abc import Callable, Mapping
from datetime import date, datetime
from functools import lru_cache
from typing import Any, NamedTuple

from django.utils.translation import gettext as _

BoundArguments = inspect.BoundArguments

# The kinds of parameter a form can offer a field for (TaskParameter.kind).
KINDS = ("int", "float", "bool", "str", "date", "datetime", "choice", "json")

# How long a default or a choice may be shown in a signature before it is cut.
_REPR_MAX_CHARS = 60


class _Required:
    """The default of a parameter that has none (TaskParameter.default)."""

    _instance: _Required | None = None

    def __new__(cls) -> _Required:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "REQUIRED"

    def __bool__(self) -> bool:
        return False


REQUIRED: Any = _Required()


class TaskParameter(NamedTuple):
    """One parameter a job's arguments may give, as a form would offer it.

    `kind`: one of KINDS ("json" for lists, dicts, unannotated and other parameters).
    `default`: the function's default, or REQUIRED. `choices`: the values an Enum or a
    Literal allows (Enum members by their value), else (). `nullable`: the annotation
    allows None (``int | None``). `annotation_text`: the annotation as written.
    """

    name: str
    kind: str
    default: Any
    required: bool
    choices: tuple[Any, ...]
    annotation_text: str
    nullable: bool = False
    # The annotation without its None (an Enum, list[int], ...), for coerce().
    value_type: Any = None
    # The bounds of an int or float parameter (Annotated[int, Between(...)]), or None.
    bounds: Between | None = None


class Between(NamedTuple):
    """The bounds of a number parameter, written in its annotation:
    ``times: Annotated[int, Between(1, 1000)] = 1``. A value outside them is refused
    with a message at the field, when a job is saved and when its run starts; the form's
    number field has them as its min and max. Either may be None (no bound)."""

    minimum: float | None = None
    maximum: float | None = None

    def check(self, value: float) -> None:
        """ValueError with the user's message when `value` is out of bounds."""
        low, high = self.minimum, self.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:
                message = _("Enter a number from %(low)s to %(high)s.")
            elif low is not None:
                message = _("Enter a number of at least %(low)s.")
            else:
                message = _("Enter a number of at most %(high)s.")
            raise ValueError(message % {"low": low, "high": high})


class RegisteredTask(NamedTuple):
    """A task a python job may run.

    `name`: what Job.command holds; `description`: the first paragraph of its docstring
    (or the one given to @register); `signature_text`: its signature in words, like
    ``send_invoices(day: str = 'today')``; `parameters`: the parameters its arguments
    may give, in order. `target`: the function, or the django.tasks task (run with its
    ``.call()``); `accepts_any`: it takes ``**kwargs``, so any other name is passed on.
    """

    name: str
    description: str
    signature_text: str
    parameters: tuple[TaskParameter, ...]
    target: Any
    accepts_any: bool = False

    def call(self, bound: BoundArguments) -> Any:
        """Run the task with arguments from bind_arguments()."""
        if is_django_task(self.target):
            return self.target.call(*bound.args, **bound.kwargs)
        if inspect.iscoroutinefunction(self.target):
            from asgiref.sync import async_to_sync

            return async_to_sync(self.target)(*bound.args, **bound.kwargs)
        return self.target(*bound.args, **bound.kwargs)

    @property
    def function(self) -> Callable[..., Any]:
        """The plain function (a django.tasks task's own)."""
        return function_of(self.target)


class ArgumentsError(ValueError):
    """The arguments do not bind to the task; `.errors` holds the messages by parameter
    name (or "__all__" for what belongs to none)."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__(
            "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items())
        )


def is_django_task(value: object) -> bool:
    """A task made by django.tasks' @task (Django 6) or the django-tasks backport's."""
    kind = type(value)
    return (
        kind.__name__ == "Task"
        and kind.__module__.split(".")[0] in ("django", "django_tasks")
        and callable(getattr(value, "call", None))
        and callable(getattr(value, "func", None))
    )


def function_of(target: Any) -> Any:
    """The plain function of a task target (a django.tasks task's own)."""
    return target.func if is_django_task(target) else target


# --- describing a signature --------------------------------------------------------------


def describe(target: Any, name: str, description: str | None = None) -> RegisteredTask:
    """The registry entry for `target` under `name`."""
    function = function_of(target)
    signature = inspect.signature(function)
    hints = _type_hints(function)
    bounds = _bounds(function)
    parameters = []
    accepts_any = False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_any = True
            continue
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue  # JSON objects name their values: nothing can go to *args
        parameters.append(_parameter(parameter, hints)._replace(bounds=bounds.get(parameter.name)))
    if description is None:
        description = _first_paragraph(inspect.getdoc(function) or "")
    return RegisteredTask(
        name=name,
        description=description,
        signature_text=_signature_text(function, signature, hints),
        parameters=tuple(parameters),
        target=target,
        accepts_any=accepts_any,
    )


def _type_hints(function: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:
        # A name the annotations use is not importable: those parameters take JSON.
        return {}


def _bounds(function: Callable[..., Any]) -> dict[str, Between]:
    """The Between bounds of the parameters annotated with them (Annotated[int, ...])."""
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception:
        return {}
    found = {}
    for name, annotation in hints.items():
        if typing.get_origin(annotation) is typing.Annotated:
            for extra in annotation.__metadata__:
                if isinstance(extra, Between):
                    found[name] = extra
    return found


def _first_paragraph(doc: str) -> str:
    return " ".join(doc.strip().split("\n\n", 1)[0].split())


def _parameter(parameter: inspect.Parameter, hints: dict[str, Any]) -> TaskParameter:
    annotation = hints.get(parameter.name, parameter.annotation)
    kind, choices, nullable, value_type = _kind_of(annotation)
    has_default = parameter.default is not inspect.Parameter.empty
    return TaskParameter(
        name=parameter.name,
        kind=kind,
        default=parameter.default if has_default else REQUIRED,
        required=not has_default,
        choices=choices,
        annotation_text=annotation_text(annotation),
        nullable=nullable or (has_default and parameter.default is None),
        value_type=value_type,
    )


class _Kind(NamedTuple):
    kind: str
    choices: tuple[Any, ...]
    nullable: bool
    value_type: Any


def _kind_of(annotation: Any) -> _Kind:
    """What a form offers for an annotation, and whether it allows None."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return _Kind("json", (), True, None)
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        nullable = len(members) != len(typing.get_args(annotation))
        if len(members) == 1:
            inner = _kind_of(members[0])
            return inner._replace(nullable=nullable or inner.nullable)
        return _Kind("json", (), nullable, None)
    if origin is typing.Literal:
        return _Kind("choice", tuple(typing.get_args(annotation)), False, annotation)
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            values = tuple(member.value for member in annotation)
            return _Kind("choice", values, False, annotation)
        for base, kind in _SIMPLE_KINDS:
            if issubclass(annotation, base):
                return _Kind(kind, (), False, annotation)
    return _Kind("json", (), False, annotation)


# In this order: bool is an int, datetime a date.
_SIMPLE_KINDS = (
    (bool, "bool"),
    (int, "int"),
    (float, "float"),
    (str, "str"),
    (datetime, "datetime"),
    (date, "date"),
)


def annotation_text(annotation: Any) -> str:
    """An annotation as a person writes it: `str`, `date`, `list[int]`, `int | None`."""
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__qualname__
    text = repr(annotation).replace("typing.", "")
    for prefix in ("datetime.", "collections.abc."):
        text = text.replace(prefix, "")
    return text


def _signature_text(
    function: Callable[..., Any], signature: inspect.Signature, hints: dict[str, Any]
) -> str:
    parts = []
    for parameter in signature.parameters.values():
        text = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            text = "*" + text
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            text = "**" + text
        annotation = hints.get(parameter.name, parameter.annotation)
        annotated = annotation is not inspect.Parameter.empty
        if annotated:
            text += f": {annotation_text(annotation)}"
        if parameter.default is not inspect.Parameter.empty:
            # PEP 8: "day: str = 'today'", but "day='today'".
            equals = " = " if annotated else "="
            text += equals + short_repr(parameter.default)
        parts.append(text)
    return f"{getattr(function, '__name__', 'task')}({', '.join(parts)})"


def short_repr(value: Any, limit: int = _REPR_MAX_CHARS) -> str:
    """repr(value), cut to `limit` characters ("…" at the end when cut)."""
    enum_member = isinstance(value, enum.Enum)
    text = f"{type(value).__name__}.{value.name}" if enum_member else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- binding arguments -------------------------------------------------------------------


@lru_cache(maxsize=256)
def _signature(function: Callable[..., Any]) -> inspect.Signature:
    """A task function's signature, kept: inspect.signature() was a third of a python
    run's own cost (a task that returns at once), on every run."""
    return inspect.signature(function)


def bind_arguments(task: RegisteredTask, arguments: Mapping[str, Any] | None) -> BoundArguments:
    """The task's call from a job's arguments (a JSON object): each value read into the
    type its annotation asks for. Raises ArgumentsError with every message by parameter:
    a required parameter missing, a name the task does not take, a value of the wrong
    type."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ArgumentsError({"__all__": [_("The arguments must be a JSON object.")]})
    errors: dict[str, list[str]] = {}
    values: dict[str, Any] = {}
    known = {parameter.name: parameter for parameter in task.parameters}
    for key in arguments:
        if key not in known and not task.accepts_any:
            errors.setdefault(str(key), []).append(
                _("%(task)s takes no argument “%(name)s”.")
                % {"task": task.signature_text.split("(", 1)[0], "name": str(key)[:100]}
            )
    for parameter in task.parameters:
        if parameter.name not in arguments:
            if parameter.required:
                errors.setdefault(parameter.name, []).append(_("This argument is required."))
            continue
        try:
            values[parameter.name] = coerce(parameter, arguments[parameter.name])
        except ValueError as error:
            errors.setdefault(parameter.name, []).append(str(error))
    if errors:
        raise ArgumentsError(errors)
    extra = {key: value for key, value in arguments.items() if key not in known}
    signature = _signature(task.function)
    positional = []
    keywords = dict(extra)
    for parameter in signature.parameters.values():
        if parameter.name not in values:
            continue
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional.append(values[parameter.name])
        else:
            keywords[parameter.name] = values[parameter.name]
    try:
        return signature.bind(*positional, **keywords)
    except TypeError as error:
        # A positional-only parameter given after one left out, say.
        raise ArgumentsError({"__all__": [str(error)]}) from None


def coerce(parameter: TaskParameter, value: Any) -> Any:
    """`value` (as JSON or a form gives it) as the parameter's kind wants it; ValueError
    with a message for the user when it cannot be."""
    if value is None:
        if parameter.nullable:
            return None
        raise ValueError(_("A value is required (not null)."))
    kind = parameter.kind
    if parameter.bounds is not None and kind in ("int", "float"):
        number = coerce(parameter._replace(bounds=None), value)
        parameter.bounds.check(number)
        return number
    if kind == "int":
        if isinstance(value, bool):
            raise ValueError(_("Enter a whole number."))
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ValueError(_("Enter a whole number."))
    if kind == "float":
        if isinstance(value, bool):
            raise ValueError(_("Enter a number."))
        number: float | None = None
        if isinstance(value, int | float):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if number is None or not math.isfinite(number):
            raise ValueError(_("Enter a number."))
        return number
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError(_("Enter true or false."))
    if kind == "str":
        if isinstance(value, str):
            return value
        raise ValueError(_("Enter text (a JSON string)."))
    if kind == "datetime":
        return _as_datetime(value)
    if kind == "date":
        if isinstance(value, datetime):
            raise ValueError(_("Enter a date such as 2026-12-01, without a time."))
        if isinstance(value, date):
            return value
        if isinstance(value, str):
            try:
                return date.fromisoformat(value.strip())
            except ValueError:
                pass
        raise ValueError(_("Enter a date such as 2026-12-01."))
    if kind == "choice":
        return _as_choice(parameter, value)
    return _as_json(parameter, value)


def _as_datetime(value: Any) -> datetime:
    from django.utils import timezone

    moment = None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            moment = None
    if moment is None:
        raise ValueError(_("Enter a date and time such as 2026-12-01T09:30:00+00:00."))
    if timezone.is_naive(moment):
        # A time without its offset is read in the site's zone (TIME_ZONE).
        moment = timezone.make_aware(moment)
    return moment


def _as_choice(parameter: TaskParameter, value: Any) -> Any:
    for choice in parameter.choices:
        if value == choice and type(value) is type(choice):
            break
        # A number chosen in a form arrives as its text.
        number = isinstance(choice, int | float) and not isinstance(choice, bool)
        if number and isinstance(value, str) and value.strip() == str(choice):
            value = choice
            break
    else:
        allowed = ", ".join(short_repr(choice) for choice in parameter.choices)
        raise ValueError(_("Choose one of %(choices)s.") % {"choices": allowed})
    kind = parameter.value_type
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(value)
    return value


def _as_json(parameter: TaskParameter, value: Any) -> Any:
    """Lists and dicts are checked for their shape (not their items); anything else
    JSON holds is passed as it is."""
    wanted = typing.get_origin(parameter.value_type) or parameter.value_type
    if isinstance(wanted, type):
        if issubclass(wanted, tuple | list | collections.abc.Sequence) and not issubclass(
            wanted, str
        ):
            if not isinstance(value, list | tuple):
                raise ValueError(_("Enter a list (a JSON array)."))
            return tuple(value) if issubclass(wanted, tuple) else list(value)
        if issubclass(wanted, dict | collections.abc.Mapping):
            if not isinstance(value, dict):
                raise ValueError(_("Enter a JSON object."))
            return value
    return value


def normalize(task: RegisteredTask, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """bind_arguments(), given back as the JSON object a job stores: "12" for an int is
    12, dates and datetimes ISO text, Enum members their value. Raises ArgumentsError."""
    bound = bind_arguments(task, arguments)
    values = {name: json_value(value) for name, value in bound.arguments.items()}
    # **kwargs arrive as one dict: spread them out again.
    for parameter in inspect.signature(task.function).parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and parameter.name in values:
            values.update(values.pop(parameter.name))
    return values


def json_value(value: Any) -> Any:
    """A bound value as JSON holds it."""
    if isinstance(value, enum.Enum):
        return json_value(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, tuple):
        return [json_value(item) for item in value]
    if isinstance(value, list):
        return [json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    return value


def json_problem(value: Any) -> str | None:
    """Why JSON cannot hold `value` as it is (a date, a set, NaN, ...), or None."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as error:
        return str(error)[:200]
    return None


def is_json_object(value: Any) -> bool:
    """A dict that JSON can hold as it is (string keys, JSON values all the way down)."""
    if not isinstance(value, dict):
        return False
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return all(isinstance(key, str) for key in value)
