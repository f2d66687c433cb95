"""Schedules declared in code: what ``@register(cron=..., ...)`` records, as it was written.

``@register(cron="0 9 * * 1-5", timezone="Asia/Tokyo")``, ``@register(every=timedelta(
minutes=10))`` or ``@register(at=<aware datetime>)``, with any job option by its field
name (``max_retries=3``), declares a job that runs the task on that schedule. Stacking
the decorator declares several, each with its own ``key``.

Nothing is checked here: a bad declaration must not stop its module from importing (the
task module would be skipped, and its jobs would look gone). `manage.py syncjobs`
(jobs/codesync.py) checks every declaration and refuses them all, naming the function,
when one is wrong.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, NamedTuple

# The words of @register that make a declaration, beside the job options.
SCHEDULE_WORDS = ("cron", "timezone", "every", "at", "key")


class Declaration(NamedTuple):
    """One schedule of a task, as the decorator was given it.

    `task_name`: the registered task it runs; `function`: the plain function (named in
    messages); `key`: tells apart the schedules of one task ("" when it has one);
    `cron`, `timezone`, `every`, `at`: the schedule words as given (None when not);
    `options`: the job options by field name; `source`: the file it is in, relative to
    its package's parent ("billing/tasks.py"), so it reads the same on every machine.
    """

    task_name: str
    function: Callable[..., Any]
    key: Any
    cron: Any
    timezone: Any
    every: Any
    at: Any
    options: Mapping[str, Any]
    source: str

    @property
    def code_key(self) -> str:
        """The job's identity in the database (Job.code_key), and its name."""
        return f"{self.task_name}:{self.key}" if self.key else self.task_name

    @property
    def function_path(self) -> str:
        """The function's dotted path, as messages name it."""
        function = self.function
        return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"


_declarations: list[Declaration] = []
_lock = threading.Lock()


def wanted(words: Mapping[str, Any]) -> bool:
    """Whether @register was given anything that declares a job."""
    return any(value is not None for value in words.values())


def declare(
    function: Callable[..., Any],
    task_name: str,
    *,
    cron: Any = None,
    timezone: Any = None,
    every: Any = None,
    at: Any = None,
    key: Any = None,
    options: Mapping[str, Any] | None = None,
) -> Declaration:
    """Record a declaration of `function` (registered as `task_name`)."""
    declaration = Declaration(
        task_name=task_name,
        function=function,
        key="" if key is None else key,
        cron=cron,
        timezone=timezone,
        every=every,
        at=at,
        options=dict(options or {}),
        source=source_of(function),
    )
    with _lock:
        # The module imported again (a reload): its new definition's declarations
        # replace the old one's. The same function object declaring twice (stacked
        # decorators) keeps both.
        _declarations[:] = [
            held
            for held in _declarations
            if held.task_name != task_name
            or held.function is function
            or not _same_definition(held.function, function)
        ]
        _declarations.append(declaration)
    return declaration


def declarations() -> list[Declaration]:
    """Every declaration recorded so far, in the order they were made."""
    with _lock:
        return list(_declarations)


def forget(task_name: str) -> None:
    """Forget the declarations of a task (registry.unregister calls it)."""
    with _lock:
        _declarations[:] = [held for held in _declarations if held.task_name != task_name]


def source_of(function: Callable[..., Any]) -> str:
    """Where `function` is defined, relative to its top package's parent:
    "billing/tasks.py" for billing.tasks, wherever the project is installed."""
    module_name = getattr(function, "__module__", "") or ""
    module = sys.modules.get(module_name)
    filename = getattr(module, "__file__", None)
    if not filename:
        return module_name
    path = PurePath(filename)
    depth = len(module_name.split("."))
    if path.name == "__init__.py":
        depth += 1
    return "/".join(path.parts[-depth:])


def _same_definition(one: Callable[..., Any], other: Callable[..., Any]) -> bool:
    return getattr(one, "__module__", None) == getattr(other, "__module__", None) and getattr(
        one, "__qualname__", None
    ) == getattr(other, "__qualname__", None)
