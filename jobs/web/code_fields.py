"""The fields a job's code owns (jobs.models.code), in the job forms of the dashboard and
the admin: shown but not editable, and a post that changes one anyway is refused at that
field, saying where to change it. (A browser never posts a disabled field: only a
hand-made request can try.)"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from django import forms

from jobs.models import Job

# Set on the widgets of locked fields: jobs/static/jobs/job_form.js enables the fields
# of the chosen schedule type and executor, but never these.
LOCKED_ATTRIBUTE = "data-code-owned"


def lock(form: forms.BaseForm, names: Iterable[str]) -> list[str]:
    """Disable the form's fields among `names`; returns those it has."""
    locked = []
    for name in names:
        field = form.fields.get(name)
        if field is None:
            continue
        field.disabled = True
        field.widget.attrs[LOCKED_ATTRIBUTE] = ""
        locked.append(name)
    return locked


def posted_changes(form: forms.BaseForm, names: Iterable[str], job: Job) -> list[str]:
    """The fields among `names` whose posted value differs from the job's: the form's
    own field when it has one (disabled: read here as if it were not), else the model
    field's default form field (the admin leaves read-only fields out of its form)."""
    changed = []
    for name in names:
        field = form.fields.get(name)
        if field is not None:
            initial = form.get_initial_for_field(field, name)
        else:
            model_field = Job._meta.get_field(name)
            field = model_field.formfield()
            if field is None:
                continue
            initial = getattr(job, name)
        key = form.add_prefix(name)
        if field.widget.value_omitted_from_data(form.data, form.files, key):
            continue
        probe = copy.copy(field)
        probe.disabled = False
        if probe.has_changed(initial, field.widget.value_from_datadict(form.data, form.files, key)):
            changed.append(name)
    return changed
