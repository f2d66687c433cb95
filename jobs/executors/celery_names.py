"""What a celery job is, known without importing Celery: its task name and its arguments.

A celery job's command is the registered name of a Celery task
(``billing.tasks.send_invoices``); its arguments hold ``args`` (a list) and ``kwargs``
(an object), as django-celery-beat stores them. The kind is offered only where Celery
is installed (the ``[celery]`` extra); finding that out imports nothing of it.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from django.utils.translation import gettext

# Celery allows any text as a task's name; these are the ones people write (a dotted
# path, maybe with a colon or a dash), without white space or control characters.
TASK_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:\-]*$")
TASK_NAME_MAX_CHARS = 200
ARGUMENT_NAMES = ("args", "kwargs")


class CallArguments(NamedTuple):
    """A celery job's arguments as Celery's send_task takes them."""

    args: list[Any]
    kwargs: dict[str, Any]


def celery_installed() -> bool:
    """Whether Celery can be imported here (without importing it)."""
    try:
        return importlib.util.find_spec("celery") is not None
    except (ImportError, ValueError):  # an import hook refusing it, a broken install
        return False


def celery_problem() -> str | None:
    """Why celery jobs cannot run on this site, or None."""
    if not celery_installed():
        return gettext(
            "Celery is not installed on this site (install the package with its [celery] extra)"
        )
    return None


def task_name_problem(name: str) -> str | None:
    """What is wrong with a Celery task's name, or None."""
    if not name:
        return gettext("Enter the registered name of a Celery task, like billing.tasks.send.")
    if len(name) > TASK_NAME_MAX_CHARS or not TASK_NAME.match(name):
        return gettext(
            "A Celery task's name is a dotted name without spaces, like billing.tasks.send."
        )
    return None


def argument_errors(arguments: Any) -> dict[str, str]:
    """What is wrong with a celery job's arguments, by argument name ("__all__" for the
    whole): only ``args`` (a list) and ``kwargs`` (an object with text keys). That every
    value is JSON, which is what travels to the worker, is every kind's rule
    (jobs.models.job_rules.arguments_shape_error)."""
    if not isinstance(arguments, Mapping):
        return {"__all__": gettext("the arguments must be a JSON object")}
    errors: dict[str, str] = {}
    for name in arguments:
        if name not in ARGUMENT_NAMES:
            errors[str(name)[:50]] = gettext(
                "not an argument of a Celery job (they are args, a list, and kwargs, an object)"
            )
    if not isinstance(arguments.get("args", []), list):
        errors["args"] = gettext("a JSON list of the task's positional arguments")
    kwargs = arguments.get("kwargs", {})
    if not isinstance(kwargs, Mapping) or not all(isinstance(key, str) for key in kwargs):
        errors["kwargs"] = gettext("a JSON object of the task's keyword arguments")
    return errors


def call_arguments(arguments: Mapping[str, Any] | None) -> CallArguments:
    """The args and kwargs of a run's arguments (both may be left out)."""
    arguments = arguments or {}
    return CallArguments(list(arguments.get("args") or []), dict(arguments.get("kwargs") or {}))


def named_arguments(function: Callable[..., Any], call: CallArguments) -> dict[str, Any]:
    """A call's args and kwargs by the names of the parameters they go to (``**kwargs``
    spread out), as a python task's arguments are kept; TypeError when they do not fit
    the function's signature (too many, or one given twice)."""
    parameters = inspect.signature(function).parameters
    values = dict(inspect.signature(function).bind_partial(*call.args, **call.kwargs).arguments)
    for parameter in parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and parameter.name in values:
            values.update(values.pop(parameter.name))
    return values
