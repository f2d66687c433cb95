"""The argument sections of the job form: for each kind of job that takes arguments
(jobs.kinds names its section, in jobs.web.arguments), the fields of those arguments."""

from __future__ import annotations

from collections.abc import Collection

from jobs import kinds
from jobs.access import masking
from jobs.models import ExecutorKind, Job
from jobs.pytasks import registry
from jobs.web import arguments


def argument_sections(
    user: object,
    job: Job,
    *,
    existing: bool,
    offered: Collection[str],
    stored_task: str,
    chosen_task: str,
) -> dict[str, arguments.Section]:
    """The sections of every executor offered that has fields of its own; the python one
    for the chosen task (htmx swaps it when another task is chosen).

    Filled with the job's own arguments as the user may read them (jobs.access.masking):
    URL credentials masked (the form puts them back from the stored values when it
    cleans); a job whose secrets the user may not read (a shell job, to a user without
    jobs.use_shell) shows no headers or environment at all. Another executor's section,
    or another task's, starts empty.
    """
    secrets_visible = masking.may_see_secrets(user, job) if existing else True
    given = masking.shown_field(user, job, "arguments", job.arguments)
    given = given if isinstance(given, dict) else {}
    sections: dict[str, arguments.Section] = {}
    for kind in kinds.KINDS:
        # A python job's section is its task's, made below.
        if kind.section and kind.value in offered and kind.value != ExecutorKind.PYTHON:
            mine = job.executor == kind.value
            # The job's own command: a celery job's section is typed by its task.
            sections[kind.value] = arguments.section_for(
                kind.value,
                job.command if mine else "",
                given if mine else {},
                secrets_visible=secrets_visible,
            )
    task = registry.get_task(chosen_task) if chosen_task else None
    if task is not None:
        own = given if job.executor == ExecutorKind.PYTHON and task.name == stored_task else {}
        sections[ExecutorKind.PYTHON] = arguments.TaskSection(task, own)
    return sections
