"""A job's changes (its audit trail) as the job page shows them: newest first, a page at a
time, each field's old and new value in words, the secret ones masked for users who may
not see them (jobs.masking)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.core.paginator import Page, Paginator
from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import capfirst
from django.utils.translation import gettext

from jobs.masking import masked, may_see_secrets
from jobs.models import Job, JobChange
from jobs.models.changes import job_values

CHANGES_PER_PAGE = 20
# The query parameter of the page of changes (the runs page by their own cursor).
PAGE_PARAMETER = "changes"


@dataclass(frozen=True)
class FieldChange:
    label: str
    old: str
    new: str


def shown(field: models.Field | None, value: Any) -> str:
    """A stored value in words: choices by their label, times in the viewer's zone."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    if field is not None and field.choices:
        return str(dict(field.flatchoices).get(value, value))
    if isinstance(field, models.DateTimeField) and isinstance(value, str):
        when = parse_datetime(value)
        if when is not None:
            if timezone.is_aware(when):
                when = timezone.localtime(when)
            return when.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def field_changes(change: JobChange, see_secrets: bool) -> list[FieldChange]:
    rows = []
    for name, (old, new) in change.changes.items():
        try:
            field: models.Field | None = Job._meta.get_field(name)  # type: ignore[assignment]
        except FieldDoesNotExist:  # a field since removed
            field = None
        if not see_secrets:
            old, new = masked(name, old), masked(name, new)
        label = capfirst(field.verbose_name) if field is not None else name
        rows.append(FieldChange(str(label), shown(field, old), shown(field, new)))
    return rows


def change_page(job: Job, number: Any, user: Any) -> Page:
    """The page `number` of the job's changes; each change gets `.fields` (FieldChange
    rows) and `.is_current` (its version is the job as it is now)."""
    changes = JobChange.objects.filter(job_id=job.pk).order_by("-created_at", "-id")
    page = Paginator(changes, CHANGES_PER_PAGE).get_page(number)
    see_secrets = may_see_secrets(user)
    now = job_values(job)
    for change in page:
        change.fields = field_changes(change, see_secrets)
        change.is_current = change.snapshot == now
    return page
