"""Django tasks the task backend's tests enqueue (jobs/tests/tasks_backend/).

The same cases as Django's own backend tests use (a task that does nothing, one that
returns a value, ones that raise, one that takes its context), written here. Defined
with whichever framework this process has: django.tasks (Django 6) or django_tasks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jobs.pytasks import framework

_module = framework.framework()
assert _module is not None, "the task backend's tests need django.tasks or django_tasks"
task = _module.task


@task()
def noop_task(*args: Any, **kwargs: Any) -> None:
    """Does nothing, with any arguments."""
    return None


@task()
async def noop_task_async(*args: Any, **kwargs: Any) -> None:
    """Does nothing, as a coroutine."""
    return None


@task()
def echo(*args: Any, **kwargs: Any) -> dict:
    """Gives back what it was called with."""
    return {"args": list(args), "kwargs": kwargs}


@task()
def calculate_meaning_of_life() -> int:
    return 42


@task()
def failing_task_value_error() -> None:
    raise ValueError("This task failed due to ValueError")


@task()
def failing_task_system_exit() -> None:
    raise SystemExit("This task failed due to SystemExit")


@task()
def complex_exception() -> None:
    raise ValueError(ValueError("This task failed"))


@task()
def complex_return_value() -> Any:
    # A value JSON cannot hold: the run fails with the TypeError saying so.
    return {"when": object()}


@task()
def huge_return_value() -> str:
    return "x" * 1_000_001


@task(takes_context=True)
def get_task_id(context: Any) -> str:
    return context.task_result.id


@task(takes_context=True)
def check_context(context: Any, attempt: int) -> None:
    assert isinstance(context, framework.part("base").TaskContext)
    assert context.attempt == attempt


@task()
def append_pid(path: str, tag: str) -> str:
    """Append "tag pid" to the file `path` (the multi-process tests count the lines)."""
    with Path(path).open("a") as handle:
        handle.write(f"{tag} {os.getpid()}\n")
    return tag


@task(queue_name="reports", priority=10)
def report_task() -> str:
    return "report"


@task()
def when_meant(label: str = "", scheduled_for: Any = None) -> dict:
    """Gives back the scheduled_for it got: its type, whether aware, and its text."""
    return {
        "label": label,
        "type": type(scheduled_for).__name__,
        "aware": getattr(scheduled_for, "tzinfo", None) is not None,
        "text": scheduled_for if isinstance(scheduled_for, str) else str(scheduled_for),
    }
