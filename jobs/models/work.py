"""What a job runs, in words: "Python task billing.tasks.send_invoices(day='today')",
"Shell: backup.sh --full", "Command: clearsessions", "HTTP GET https://example.com/".

One wording for every place that shows it (the job list and page, the admin, the API),
through Job.work_text or describe_work(). Built from the job's fields alone: no query,
no import of the task, so a list of fifty jobs costs nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from jobs.models.choices import ExecutorKind
from jobs.registry import short_repr

# The longest text a job's work is shown as: a task with many arguments stays one line
# in a list. Each argument's value is cut to registry.short_repr's 60 characters first.
WORK_TEXT_MAX_CHARS = 300


def describe_work(executor: str, command: str, arguments: Any) -> str:
    """The job's work in words (at most WORK_TEXT_MAX_CHARS characters)."""
    command = " ".join((command or "").split())  # one line, however it was typed
    values = arguments if isinstance(arguments, Mapping) else {}
    if executor == ExecutorKind.PYTHON:
        given = ", ".join(f"{name}={short_repr(value)}" for name, value in values.items())
        text = _("Python task %(call)s") % {"call": f"{command}({given})"}
    elif executor == ExecutorKind.SHELL:
        text = _("Shell: %(line)s") % {"line": command}
    elif executor == ExecutorKind.COMMAND:
        text = _("Command: %(line)s") % {"line": command}
    elif executor == ExecutorKind.HTTP:
        method = values.get("method") or "GET"
        text = _("HTTP %(method)s %(url)s") % {"method": str(method).upper(), "url": command}
    else:
        text = _("Simulated: %(command)s") % {"command": command}
    if len(text) > WORK_TEXT_MAX_CHARS:
        text = text[: WORK_TEXT_MAX_CHARS - 1] + "…"
    return text
