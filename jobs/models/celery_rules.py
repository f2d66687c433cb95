"""The rules of a celery job (its row in jobs.kinds names them), called by
jobs.models.job_rules.executor_errors and execution_problem like every kind's."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from jobs.executors import celery_names

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
        if problems:
            errors["arguments"] = [
                message if name == "__all__" else f"{name}: {message}"
                for name, message in problems.items()
            ]
    return errors


def celery_problem(job: JobModel) -> str | None:
    return celery_names.celery_problem()
