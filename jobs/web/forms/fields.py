"""What the job form offers and how its inputs are bounded: the executors a user may
choose, the registered tasks, the browser's bounds of the number inputs, the task select
that fetches the chosen task's fields."""

from __future__ import annotations

from django import forms
from django.urls import reverse
from django.utils.translation import gettext

from jobs import conf, kinds
from jobs.access import permissions as access
from jobs.models import MAX_ALERT_AFTER_FAILURES, MAX_PRIORITY, MIN_PRIORITY, ExecutorKind, Job
from jobs.pytasks import registry
from jobs.web.widgets import LOCAL_INPUT_FORMATS, TaskSelect


def offered_executors(user: object, current: str | None = None) -> list[tuple[str, str]]:
    """The executors `user` may choose (jobs.kinds.offered_to: shell only while
    JOBS_SHELL_ENABLED and for users with jobs.use_shell), and the job's own, so that its
    form shows what it is."""
    offered = {kind.value for kind in kinds.offered_to(access.may_use_shell(user))}
    return [
        (value, label)
        for value, label in ExecutorKind.choices
        if value in offered or value == current
    ]


def missing_shell_hint(user: object, offered: set[str]) -> str:
    """Why "Shell command" is not in the executor list, for staff (who can change that);
    "" when it is listed, or for other users, to whom the setting means nothing."""
    if ExecutorKind.SHELL in offered or not getattr(user, "is_staff", False):
        return ""
    if not conf.shell_enabled():
        return gettext(
            "Shell commands are switched off on this site: JOBS_SHELL_ENABLED=true switches "
            "them on."
        )
    return gettext(
        "Shell commands are on, but only for users with the permission “Can create or "
        "change jobs that run shell commands” (jobs.use_shell)."
    )


def task_choices(current: str = "") -> list[tuple[str, str]]:
    """The registered tasks, "name: description"; the job's task too when it is gone."""
    tasks = registry.registered_tasks()
    choices = [("", gettext("Choose a task"))]
    for task in tasks:
        label = f"{task.name}: {task.description}" if task.description else task.name
        choices.append((task.name, label[:200]))
    if current and all(task.name != current for task in tasks):
        choices.append((current, gettext("%(name)s (not registered)") % {"name": current}))
    return choices


def bound_inputs(fields: dict[str, forms.Field]) -> None:
    """The browser's bounds of the job form's inputs (the model's validators are the
    rule; these only spare a round trip), and no spelling checks on names of things."""
    fields["scheduled_at"].input_formats = LOCAL_INPUT_FORMATS
    fields["interval"].widget.attrs["min"] = 1
    fields["timeout_seconds"].widget.attrs["min"] = 1
    for name in ("sim_failure_rate", "sim_min_seconds", "sim_max_seconds"):
        fields[name].widget.attrs.update({"min": 0, "step": "any"})
    fields["sim_failure_rate"].widget.attrs["max"] = 1
    fields["alert_after_failures"].widget.attrs.update({"min": 1, "max": MAX_ALERT_AFTER_FAILURES})
    fields["expected_seconds"].widget.attrs["min"] = 1
    fields["priority"].widget.attrs.update({"min": MIN_PRIORITY, "max": MAX_PRIORITY})
    fields["queue"].widget.attrs.update({"spellcheck": "false", "autocomplete": "off"})


def task_select(choices: list[tuple[str, str]], job: Job, *, existing: bool) -> TaskSelect:
    """The task select: another task chosen, htmx fetches its fields
    (jobs.web.views.task_arguments), for this job when it is stored."""
    return TaskSelect(
        choices=choices,
        attrs={
            "hx-get": reverse("jobs:task_arguments") + (f"?job={job.pk}" if existing else ""),
            "hx-trigger": "change",
            "hx-target": "#task-arguments",
            "hx-swap": "innerHTML",
        },
    )
