"""The Python tasks a job may run: registered by name, described from their signature.

A task is a plain function decorated with `@register` (``from jobs import register``), or
a ``django.tasks`` task (Django 6's ``@task``, or the ``django-tasks`` backport's on
Django 5.2) defined in a module the scheduler imports. The modules are each installed
app's ``tasks`` module (as Huey finds its tasks) and every module named in
``JOBS_TASK_MODULES``; they are imported once, on the first question asked here.

Only registered names can be chosen. A job names its task by its registered name (by
default the function's dotted path, ``billing.tasks.send_invoices``); that name is looked
up in the registry and never imported, so a job cannot name ``os.system``.

What a task takes, and how a job's arguments are bound to it, is
jobs/pytasks/signature.py's.
"""

from __future__ import annotations

import importlib
import logging
import threading
import types
from collections.abc import Callable
from typing import Any

from django.utils.module_loading import module_has_submodule

from jobs.pytasks import declarations

# Task modules import Between from here (the documented place, docs/executors.md).
from jobs.pytasks.signature import Between as Between
from jobs.pytasks.signature import RegisteredTask, describe, function_of, is_django_task

logger = logging.getLogger("jobs.pytasks.registry")

# --- registering -------------------------------------------------------------------------

_tasks: dict[str, RegisteredTask] = {}
# Guards _tasks, held only for a dict operation. Discovery has a lock of its own, held
# while it imports: a thread importing a task module (holding that module's import lock)
# then registers without waiting for discovery, which may be waiting for that module.
_lock = threading.RLock()
_discovery_lock = threading.RLock()
_discovered = False
_discovery_problems: list[str] = []


def register(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    cron: str | None = None,
    timezone: str | None = None,
    every: Any = None,
    at: Any = None,
    key: str | None = None,
    **options: Any,
) -> Any:
    """Make a function (or a django.tasks task) a task python jobs may run.

    ``@register`` names it by its dotted path (``billing.tasks.send_invoices``);
    ``@register(name="invoices.send", description="...")`` chooses both. Returns the
    function unchanged. A second registration under a name another function holds is
    refused (ValueError): a job must never run something else than it was saved with.

    With a schedule it also declares a job that runs the task (jobs/pytasks/declarations.py,
    docs/scheduling.md "Schedules in code"): ``cron=`` (and ``timezone=``), ``every=`` (a
    timedelta) or ``at=`` (an aware datetime), ``key=`` to tell apart stacked schedules of
    one task, and any job option by its field name (``max_retries=3``). `manage.py syncjobs`
    checks the declarations and brings the database to them.
    """
    words = {"cron": cron, "timezone": timezone, "every": every, "at": at, "key": key}

    def decorate(target: Callable[..., Any]) -> Callable[..., Any]:
        entry = add(target, name=name, description=description)
        if declarations.wanted(words) or options:
            declarations.declare(function_of(target), entry.name, **words, options=options)
        return target

    if function is not None:
        return decorate(function)
    return decorate


def add(target: Any, *, name: str | None = None, description: str | None = None) -> RegisteredTask:
    """Register `target` (what @register does); returns its entry."""
    function = function_of(target)
    if not callable(function):
        raise TypeError(f"only functions can be registered as tasks, not {target!r}")
    task_name = name or f"{function.__module__}.{function.__qualname__}"
    with _lock:
        held = _tasks.get(task_name)
    if description is None and held is not None and function_of(held.target) is function:
        # Stacked decorators: the description one of them gave stays.
        description = held.description
    entry = describe(target, task_name, description)
    with _lock:
        held = _tasks.get(task_name)
        if held is not None and function_of(held.target) is not function:
            if _same_definition(function_of(held.target), function):
                # The module was imported again (a reload, or under a second name):
                # the newer definition replaces the old one.
                pass
            else:
                raise ValueError(f"a task named {task_name!r} is already registered")
        _tasks[task_name] = entry
    return entry


def unregister(name: str) -> None:
    """Forget a task (for tests, and for code that registers tasks at run time)."""
    with _lock:
        _tasks.pop(name, None)
    declarations.forget(name)


def _same_definition(one: Callable[..., Any], other: Callable[..., Any]) -> bool:
    return getattr(one, "__module__", None) == getattr(other, "__module__", None) and getattr(
        one, "__qualname__", None
    ) == getattr(other, "__qualname__", None)


# --- finding them ------------------------------------------------------------------------


def task_modules() -> list[str]:
    """The modules imported to find tasks: each installed app's `tasks` module that
    exists, then JOBS_TASK_MODULES."""
    from django.apps import apps

    from jobs import conf

    names = [
        f"{config.name}.tasks"
        for config in apps.get_app_configs()
        if module_has_submodule(config.module, "tasks")
    ]
    for module in conf.task_modules():
        if module not in names:
            names.append(module)
    return names


def discover(*, force: bool = False) -> None:
    """Import the task modules (once; again with `force`) and register the django.tasks
    tasks defined in them. A module that fails to import is logged and skipped (see
    discovery_problems()): a broken task module must not stop the scheduler; the jobs
    that name its tasks fail their runs saying the task is not registered."""
    global _discovered
    if _discovered and not force:
        return
    with _discovery_lock:
        if _discovered and not force:
            return
        _discovery_problems.clear()
        for module_name in task_modules():
            try:
                module = importlib.import_module(module_name)
            except Exception as error:  # any error in someone's module
                logger.exception("could not import the task module %s", module_name)
                _discovery_problems.append(f"{module_name}: {type(error).__name__}: {error}")
                continue
            _register_django_tasks(module)
        _discovered = True


def discovery_problems() -> list[str]:
    """The task modules that could not be imported, with the error of each."""
    discover()
    return list(_discovery_problems)


def _register_django_tasks(module: types.ModuleType) -> None:
    """Register the django.tasks tasks a module defines (not the ones it imports)."""
    for value in list(vars(module).values()):
        if not is_django_task(value):
            continue
        function = function_of(value)
        if getattr(function, "__module__", None) != module.__name__:
            continue
        with _lock:
            known = any(function_of(t.target) is function for t in _tasks.values())
        if known:
            continue  # registered with @register already, maybe under another name
        if getattr(value, "takes_context", False):
            # Its first argument is a TaskContext that only a task backend makes.
            logger.warning(
                "task %s.%s takes a context and cannot be run by the scheduler",
                module.__name__,
                function.__qualname__,
            )
            continue
        add(value)


# --- the public questions ----------------------------------------------------------------


def registered_tasks() -> list[RegisteredTask]:
    """Every registered task, sorted by name (the task modules imported first)."""
    discover()
    with _lock:
        return sorted(_tasks.values(), key=lambda task: task.name)


def get_task(name: str) -> RegisteredTask | None:
    """The task registered as `name`, or None. Never imports anything `name` says."""
    discover()
    with _lock:
        return _tasks.get(name)
