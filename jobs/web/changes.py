"""A job's changes (its audit trail) as the job page shows them: newest first, a page at a
time, each field's old and new value in words, the secret ones masked for users who may
not see them (jobs.access.masking)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import capfirst
from django.utils.translation import gettext

from jobs import times
from jobs.access.masking import (
    SECRET_CHANGED,
    WRITE_ONLY_JOB_FIELDS,
    may_see_change_secrets,
    shown_value,
)
from jobs.models import Job, JobChange
from jobs.models.changes import job_values, version

CHANGES_PER_PAGE = 20
# Pages further back are an OFFSET read; older records are in the admin, searchable.
MAX_PAGE = 500
# The query parameter of the page of changes (the runs page by their own cursor).
PAGE_PARAMETER = "changes"


@dataclass(frozen=True)
class FieldChange:
    label: str
    old: str
    new: str


def shown(field: models.Field | None, value: Any) -> str:
    """A stored value in words: choices by their label, times in the viewer's zone."""
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, list):  # a list of jobs (the chains: jobs.models.chains.entries)
        return ", ".join(
            str(item.get("name", "")) if isinstance(item, dict) else str(item) for item in value
        )
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    if field is not None and field.choices:
        return str(dict(field.flatchoices).get(value, value))
    if isinstance(field, models.DateTimeField) and isinstance(value, str):
        when = parse_datetime(value)
        if when is not None:
            if timezone.is_aware(when):
                return times.moment_text(when)
            return when.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def _secret_words(value: Any) -> str:
    if value == SECRET_CHANGED:
        return gettext("changed")
    return gettext("set") if value else "—"


def field_changes(change: JobChange, see_secrets: bool) -> list[FieldChange]:
    rows = []
    for name, (old, new) in change.changes.items():
        try:
            field: models.Field | None = Job._meta.get_field(name)  # type: ignore[assignment]
        except FieldDoesNotExist:  # a field since removed
            field = None
        label = capfirst(field.verbose_name) if field is not None else name
        if name in WRITE_ONLY_JOB_FIELDS:
            # Only whether it was set and that it changed (jobs.access.masking.concealed_change).
            rows.append(FieldChange(str(label), _secret_words(old), _secret_words(new)))
            continue
        old, new = shown_value(see_secrets, name, old), shown_value(see_secrets, name, new)
        rows.append(FieldChange(str(label), shown(field, old), shown(field, new)))
    return rows


@dataclass
class ChangePage:
    """One page of a job's changes, newest first; `number` counts from 1."""

    number: int
    changes: list[JobChange]
    has_next: bool

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.changes)

    @property
    def object_list(self) -> list[JobChange]:
        return self.changes

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_other_pages(self) -> bool:
        return self.has_previous or self.has_next

    @property
    def next_page_number(self) -> int:
        return self.number + 1

    @property
    def previous_page_number(self) -> int:
        return self.number - 1


def page_number(text: Any) -> int:
    try:
        return max(1, min(int(text), MAX_PAGE))
    except (TypeError, ValueError):
        return 1


def change_page(job: Job, number: Any, user: Any) -> ChangePage:
    """The page `number` of the job's changes: one query (a page and one more row, through
    jobs_change_job_recent; no COUNT). Each change gets `.fields` (FieldChange rows) and
    `.is_current` (its version is the job as it is now)."""
    number = page_number(number)
    start = (number - 1) * CHANGES_PER_PAGE
    changes = JobChange.objects.filter(job_id=job.pk).order_by("-created_at", "-id")
    rows = list(changes[start : start + CHANGES_PER_PAGE + 1])
    page = ChangePage(number, rows[:CHANGES_PER_PAGE], has_next=len(rows) > CHANGES_PER_PAGE)
    now = version(job_values(job))
    for change in page:
        change.fields = field_changes(change, may_see_change_secrets(user, change, job))
        change.is_current = change.snapshot == now
    return page
