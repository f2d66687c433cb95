"""The rules of a celery job (its row in jobs.kinds names them), called by
jobs.models.job_rules.executor_errors and execution_problem like every kind's."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from jobs.executors import celery_names
from jobs.models.job_rules import argument_messages
from jobs.pytasks import signature

JobModel = models.Model


def celery_errors(
    job: JobModel, *, check_arguments: bool = True, command_changed: Any = None
) -> dict[str, Any]:
    errors: dict[str, Any] = {}
    if (problem := celery_names.celery_problem()) is not None:
        errors["executor"] = _("Celery jobs cannot be saved: %(reason)s.") % {"reason": problem}
    job.command = (job.command or "").strip()
    if (problem := celery_names.task_name_problem(job.command)) is not None:
        errors["command"] = problem
    if check_arguments:
        problems = celery_names.argument_errors(job.arguments)
        messages = [
            message if name == "__all__" else f"{name}: {message}"
            for name, message in problems.items()
        ]
        if not messages and "command" not in errors:
            messages = signature_errors(job.command, job.arguments)
        if messages:
            errors["arguments"] = messages
    return errors


def signature_errors(name: str, arguments: Any) -> list[str]:
    """What does not fit the task's signature, when this process has the task (its
    Celery app registers it here too); nothing to say of a task only the workers have."""
    if not celery_names.celery_installed():
        return []
    from jobs.executors import celery_app

    task = celery_app.described_task(name)
    if task is None:
        return []
    try:
        named = celery_names.named_arguments(task.function, celery_names.call_arguments(arguments))
    except TypeError as error:
        return [
            _("The arguments do not fit %(signature)s: %(reason)s.")
            % {"signature": task.signature_text, "reason": str(error)}
        ]
    try:
        signature.bind_arguments(task, named)
    except signature.ArgumentsError as error:
        return argument_messages(error)
    return []


def celery_problem(job: JobModel) -> str | None:
    return celery_names.celery_problem()
