"""A celery job's arguments as form fields (its row in jobs.kinds names this section).

When this process has the task (the host's Celery app registers it here too), the
fields are its parameters, typed from its signature as a python task's are
(jobs.web.arguments.TaskSection), and the arguments are kept as ``kwargs``. Otherwise
the task lives only in the workers' code: two JSON boxes, ``args`` (a list) and
``kwargs`` (an object), checked as the model checks them (jobs/executors/celery_names.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.utils.translation import gettext as _

from jobs.executors import celery_names
from jobs.models import ExecutorKind
from jobs.pytasks.signature import RegisteredTask
from jobs.web.arguments import JSONText, Reading, TaskSection, json_text

CELERY_ARGS = "celery_args"
CELERY_KWARGS = "celery_kwargs"
# The typed fields' names: the parameter "day" is the field "celery-arg-day".
CELERY_PREFIX = "celery-arg-"
CELERY_MORE = "celery_more"


def local_task(name: str) -> RegisteredTask | None:
    """The Celery task `name` described from its signature, when Celery is installed and
    this process's app has the task; else None (nothing of Celery is imported without it)."""
    if not name or not celery_names.celery_installed():
        return None
    from jobs.executors import celery_app

    return celery_app.described_task(name)


class CelerySection:
    """The JSON boxes of a celery job whose task this process does not have."""

    executor = ExecutorKind.CELERY
    message_field = "command"  # a message about the arguments as a whole: at the task name

    @classmethod
    def for_job(
        cls, command: str, given: Any, *, secrets_visible: bool = True
    ) -> CelerySection | CeleryTaskSection:
        task = local_task(command)
        if task is not None:
            return CeleryTaskSection(task, given)
        return cls(given)

    def __init__(self, given: Mapping[str, Any] | None = None) -> None:
        self.given: Mapping[str, Any] = given if isinstance(given, Mapping) else {}

    def fields(self) -> dict[str, forms.Field]:
        given = self.given
        return {
            CELERY_ARGS: JSONText(
                label=_("Positional arguments (args)"),
                required=False,
                help_text=_('A JSON list, such as [1, "fr"]. Blank: none.'),
                initial=json_text(given["args"]) if given.get("args") else None,
            ),
            CELERY_KWARGS: JSONText(
                label=_("Keyword arguments (kwargs)"),
                required=False,
                help_text=_('A JSON object, such as {"day": "2026-12-01"}. Blank: none.'),
                initial=json_text(given["kwargs"]) if given.get("kwargs") else None,
            ),
        }

    def read(self, cleaned: Mapping[str, Any], fallback: str | None = None) -> Reading:
        arguments: dict[str, Any] = {}
        for name, field in (("args", CELERY_ARGS), ("kwargs", CELERY_KWARGS)):
            if cleaned.get(field) is not None:
                arguments[name] = cleaned[field][0]
        errors: dict[str | None, list[str]] = {}
        fields = {"args": CELERY_ARGS, "kwargs": CELERY_KWARGS}
        for name, message in celery_names.argument_errors(arguments).items():
            errors.setdefault(fields.get(name, fallback), []).append(message)
        return Reading(arguments, errors)


class CeleryTaskSection(TaskSection):
    """The typed fields of a Celery task this process has, read back as its kwargs."""

    executor = ExecutorKind.CELERY
    message_field = "command"
    prefix, more_field = CELERY_PREFIX, CELERY_MORE

    def __init__(self, task: RegisteredTask, given: Mapping[str, Any] | None = None) -> None:
        self.stored: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
        call = celery_names.call_arguments(self.stored)
        try:
            named = celery_names.named_arguments(task.function, call)
        except TypeError:
            named = {}  # they do not fit the task: its fields start empty
        super().__init__(task, named)

    def read(self, cleaned: Mapping[str, Any], fallback: str | None = None) -> Reading:
        posted = cleaned.get("command")
        if posted is not None and posted.strip() != self.task.name:
            # The job form, posted with another task: these fields are the old task's.
            # The stored arguments are kept, and the model checks them against the new one.
            return Reading(dict(self.stored), {})
        reading = super().read(cleaned, fallback)
        return Reading({"kwargs": reading.arguments} if reading.arguments else {}, reading.errors)
