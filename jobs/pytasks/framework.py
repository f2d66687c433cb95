"""Django's task framework, wherever this process has it: ``django.tasks`` (Django 6.0+)
or the ``django-tasks`` backport (``django_tasks``, Django 5.2). Neither is required: the
app imports this module without either, and `available()` then says False.

Django 6 names its validation error ``InvalidTask``, the backport ``InvalidTaskError``;
`invalid_task_error()` is whichever this process has. What an enqueued run stores is the
same with both: its call (`TaskCall`) and its outcome (`stored_outcome`).
"""

from __future__ import annotations

import importlib
import json
import traceback
from functools import cache
from types import ModuleType
from typing import Any, NamedTuple

# The framework's module names, preferred first: Django's own when both are installed.
MODULE_NAMES = ("django.tasks", "django_tasks")
# Why a run that raised nothing still failed (a cancel, a timeout, a lost worker): the
# exception class an enqueued task's result names for it.
RUN_ENDED_ERROR = "jobs.pytasks.framework.RunEnded"


class RunEnded(Exception):
    """The scheduler ended the run (cancelled, timed out, or its worker was lost): the
    error a result shows when no exception of the task's own is known."""


@cache
def framework() -> ModuleType | None:
    """``django.tasks`` or ``django_tasks`` (its package), or None without either."""
    for name in MODULE_NAMES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "task_backends"):
            return module
    return None


def available() -> bool:
    """Whether this process has a task framework."""
    return framework() is not None


def part(submodule: str) -> ModuleType:
    """The framework's `submodule` ("base", "exceptions", "backends.base")."""
    found = framework()
    if found is None:
        raise ImportError("neither django.tasks (Django 6) nor django_tasks is installed")
    return importlib.import_module(f"{found.__name__}.{submodule}")


def invalid_task_error() -> type[Exception]:
    """The framework's error for a task a backend refuses."""
    exceptions = part("exceptions")
    return getattr(exceptions, "InvalidTask", None) or exceptions.InvalidTaskError


def normalize(value: Any) -> Any:
    """`value` as JSON gives it back (tuples as lists); TypeError for anything JSON cannot
    hold, as the framework itself says it (its normalize_json), so a task's arguments and
    return value are refused alike by every backend."""
    return _normalizer()(value)


@cache
def _normalizer() -> Any:
    for module_name in ("django.utils.json", "django_tasks.utils"):  # Django 6, the backport
        try:
            return importlib.import_module(module_name).normalize_json
        except (ImportError, AttributeError):
            continue
    return lambda value: json.loads(json.dumps(value))


class TaskCall(NamedTuple):
    """What an enqueued run calls its task with: Run.arguments is ``{"args": [...],
    "kwargs": {...}}``."""

    args: list[Any]
    kwargs: dict[str, Any]

    def stored(self) -> dict[str, Any]:
        return {"args": self.args, "kwargs": self.kwargs}


def call_of(arguments: Any) -> TaskCall:
    """The call a run's arguments hold (`shape_problem` says whether they hold one);
    missing parts are empty (a "Run now" of the job itself)."""
    arguments = arguments if isinstance(arguments, dict) else {}
    return TaskCall(list(arguments.get("args") or []), dict(arguments.get("kwargs") or {}))


def shape_problem(arguments: Any) -> str | None:
    """Why `arguments` are no enqueued call, or None: an object with at most "args" (a
    list) and "kwargs" (an object with text keys), every value JSON."""
    if arguments is None:
        return None
    if not isinstance(arguments, dict):
        return "the arguments must be a JSON object"
    unknown = set(arguments) - {"args", "kwargs"}
    if unknown:
        return f"unknown key {sorted(map(str, unknown))[0]!r}: only args and kwargs"
    if not isinstance(arguments.get("args", []), list):
        return "args must be a list"
    kwargs = arguments.get("kwargs", {})
    if not isinstance(kwargs, dict) or not all(isinstance(key, str) for key in kwargs):
        return "kwargs must be an object"
    return None


def task_result(task: Any, result_id: str, status: str, call: TaskCall, **moments: Any) -> Any:
    """The framework's TaskResult of `task` for `call`, with `status` (a TaskResultStatus
    name) and, as given, enqueued_at, started_at, finished_at, last_attempted_at (None
    otherwise), errors and worker_ids ([] otherwise)."""
    base = part("base")
    times = ("enqueued_at", "started_at", "finished_at", "last_attempted_at")
    return base.TaskResult(
        task=task,
        id=result_id,
        status=base.TaskResultStatus[status],
        args=call.args,
        kwargs=call.kwargs,
        backend=task.backend,
        errors=moments.pop("errors", []),
        worker_ids=moments.pop("worker_ids", []),
        **{name: moments.pop(name, None) for name in times},
        **moments,
    )


# The most of a traceback a result keeps: its end, where the error is.
TRACEBACK_MAX_CHARS = 100_000


def error_record(error: BaseException) -> dict[str, str]:
    """A raised exception as a result stores it: its class's dotted path and traceback
    (its last TRACEBACK_MAX_CHARS characters)."""
    kind = type(error)
    return {
        "exception_class_path": f"{kind.__module__}.{kind.__qualname__}",
        "traceback": "".join(traceback.format_exception(error))[-TRACEBACK_MAX_CHARS:],
    }


def stored_outcome(*, return_value: Any = None, error: BaseException | None = None) -> dict:
    """What JobHistory.result holds for an enqueued run: its JSON return value, or the
    error it raised."""
    if error is not None:
        return {"error": error_record(error)}
    return {"return_value": return_value}
