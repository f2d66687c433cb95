"""The task benchmarks/tasks_backend.py enqueues, through either backend (the scheduler's
as defined, django-tasks' database backend with .using(backend="db"))."""

from __future__ import annotations

from jobs.pytasks import framework

_module = framework.framework()
assert _module is not None, "the task benchmark needs django.tasks or django_tasks"


@_module.task()
def noop(number: int) -> int:
    """Does nothing: the benchmark measures the backend, not the task."""
    return number
