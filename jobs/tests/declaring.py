"""Schedules declared in code by a test (jobs/pytasks/declarations.py), and `manage.py syncjobs`
run in this process.

`declaring(names)` is what the `declare` fixture (conftest.py) calls: it registers a
fresh function as the task "tests.report" (or `name=`) with the schedule words and
options given and returns it; `function=f` stacks one more declaration on `f`. The
fixture unregisters every task it registered at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from typing import Any, NamedTuple

from django.core.management import CommandError, call_command

from jobs.models import Job
from jobs.pytasks import registry

TASK = "tests.report"


class Synced(NamedTuple):
    """What a `manage.py syncjobs` run printed, and its exit status."""

    output: str
    status: int


def syncjobs(*args: str) -> Synced:
    out = StringIO()
    try:
        call_command("syncjobs", *args, stdout=out)
    except CommandError as error:
        return Synced(out.getvalue() + str(error), error.returncode)
    return Synced(out.getvalue(), 0)


def code_job(key: str = TASK) -> Job:
    return Job.objects.get(code_key=key)


def declaring(names: set[str]) -> Callable[..., Callable[..., Any]]:
    def declare(
        *, name: str = TASK, function: Callable[..., Any] | None = None, **words: Any
    ) -> Callable[..., Any]:
        if function is None:

            def report(day: str = "today", count: int = 1) -> str:
                """Send the report."""
                return f"{count} for {day}"

            function = report
        registry.register(name=name, **words)(function)
        names.add(name)
        return function

    return declare
