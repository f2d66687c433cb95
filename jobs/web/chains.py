"""Editing chains in a job form: the job picker widget and the form mixin.

With 10,000 jobs a <select> of every job is a page of its own. The picker renders only
the jobs chosen (ticked boxes) and a search box; typing asks the server, through htmx,
for the first jobs that match (the `job_choices` view), as more boxes to tick.
Everything is rendered on the server; job_picker.js only moves a ticked result into the
chosen list, so that the next search does not take it away.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any, NamedTuple

from django import forms
from django.db.models import QuerySet
from django.urls import reverse
from django.utils.translation import gettext as _

from jobs.access.permissions import VIEW_JOB
from jobs.models import Job, teams
from jobs.models.chains import CHAIN_FIELDS

# Results shown per search: type more to narrow them.
CHOICES_SHOWN = 20


def _uuids(values: Iterable[Any]) -> list[uuid.UUID]:
    ids = []
    for value in values:
        try:
            ids.append(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))
        except ValueError:
            continue  # the field reports it; nothing to show
    return ids


class JobPicker(forms.Widget):
    """A multiple choice of jobs: the chosen ones as ticked boxes, and a search box.

    Renders no list of every job, so its cost does not grow with the number of jobs:
    one query for the names of the chosen ones.
    """

    template_name = "jobs/widgets/job_picker.html"
    use_fieldset = True
    allow_multiple_selected = True

    class Media:
        js = ("jobs/job_picker.js",)

    def __init__(self, attrs: dict | None = None) -> None:
        super().__init__(attrs)
        self.exclude: uuid.UUID | None = None  # the job being edited: not offered
        # The job of the form: its acting_user, once the form set it, is who looks.
        self.for_job: Job | None = None

    def format_value(self, value: Any) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            value = [value]
        return [str(getattr(item, "pk", item)) for item in value]

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[str]:
        getter = getattr(data, "getlist", None)
        if getter is not None:
            return getter(name)
        value = data.get(name)
        return [] if value is None else list(value) if isinstance(value, list | tuple) else [value]

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        # Like SelectMultiple: a browser sends nothing when no box is ticked.
        return False

    def id_for_label(self, id_: str) -> str:
        return f"{id_}_search" if id_ else id_

    def get_context(self, name: str, value: Any, attrs: dict | None) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        ids = _uuids(context["widget"]["value"])
        names = dict(Job.objects.filter(pk__in=ids).values_list("pk", "name")) if ids else {}
        viewer = getattr(self.for_job, "acting_user", None)
        scope = teams.jobs_visible_to(viewer, VIEW_JOB) if names and viewer else None
        if scope:  # a team-scoped user: a chosen job they may not see keeps its id only
            seen = set(Job.objects.filter(scope, pk__in=names).values_list("pk", flat=True))
            other = _("a job of another team")
            names = {pk: label if pk in seen else other for pk, label in names.items()}
        base = context["widget"]["attrs"].get("id") or f"id_{name}"
        context["widget"].update(
            chosen=[(pk, names[pk]) for pk in ids if pk in names],
            base_id=base,
            choices_url=reverse("jobs:job_choices"),
            search_name=f"{name}_search",
            hx_vals=json.dumps({"field": name, "exclude": str(self.exclude or "")}),
        )
        return context


class Choices(NamedTuple):
    jobs: list[tuple[uuid.UUID, str]]  # (id, name), by name
    more: bool  # more jobs match than are shown


def job_choices(
    text: str, *, exclude: Iterable[Any] = (), among: QuerySet[Job] | None = None
) -> Choices:
    """The first CHOICES_SHOWN jobs whose name, description or command holds every word
    of `text` (the one search, JobQuerySet.search), without the `exclude` ones; `among`
    the jobs the user may chain to (jobs.web.scoping.chainable_jobs)."""
    if not text.strip():
        return Choices([], False)
    jobs = (
        (Job.objects.all() if among is None else among)
        .search(text)
        .exclude(pk__in=_uuids(exclude))
        .order_by("name", "pk")
    )
    found = list(jobs.values_list("pk", "name")[: CHOICES_SHOWN + 1])
    return Choices(found[:CHOICES_SHOWN], len(found) > CHOICES_SHOWN)


class ChainFieldsMixin:
    """For a Job ModelForm with the on_success / on_failure fields (the dashboard's and
    the admin's): it hands the chosen jobs to Job.set_chains() before the model is
    validated, so Job.clean() judges them (a loop, too many) with its message at the
    field, and Job.save() writes them and records them in the audit trail."""

    instance: Job
    fields: dict[str, forms.Field]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        for name in CHAIN_FIELDS:
            widget = self.fields[name].widget if name in self.fields else None
            if isinstance(widget, JobPicker):
                widget.for_job = self.instance
            if isinstance(widget, JobPicker) and not self.instance._state.adding:
                widget.exclude = self.instance.pk

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()  # type: ignore[misc]
        wanted = {name: cleaned[name] for name in CHAIN_FIELDS if name in cleaned}
        if wanted:
            self.instance.set_chains(**wanted)
        return cleaned


def read_exclusions(data: Any, field: str) -> list[uuid.UUID]:
    """The ids a picker's search leaves out (from its query string): the job being
    edited and the ones already chosen."""
    ids = list(data.getlist(field)) if field in CHAIN_FIELDS else []
    return _uuids([*ids, data.get("exclude", "")])
