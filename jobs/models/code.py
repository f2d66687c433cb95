"""Jobs declared in code (docs/scheduling.md "Schedules in code"): which of their fields
the code owns.

The one place that says it. A job synced from a declaration (jobs/codesync.py) keeps the
values the code last declared in Job.code_declaration; the code owns exactly those
fields, except is_active, which stays the operator's to switch. The dashboard's form,
the admin and the API all ask `owned_fields()` and refuse a change to one of them with
`refusal()`. A job whose declaration is gone (code_declaration None) is the operator's
again, whole.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from jobs.models.choices import SCHEDULE_FIELDS

# What every declaration sets: the job's name and description (the task's), what it runs
# (its task, with the declared arguments) and its schedule.
DECLARED_FIELDS = (
    "name",
    "description",
    "executor",
    "command",
    "arguments",
    *(name for name in SCHEDULE_FIELDS if name != "is_active"),
)

# Fields a declaration may not give as options, and why.
NOT_DECLARABLE = {
    "name": "the task's",
    "description": "the task's",
    "executor": "run",
    "command": "run",
    "schedule_type": "schedule",
    "scheduled_at": "schedule",
    "interval": "schedule",
    "interval_unit": "schedule",
    "cron_expression": "schedule",
    # A secret does not belong in the code's history: set it on the dashboard (or
    # JOBS_WEBHOOK_SECRET for the site).
    "webhook_secret": "secret",
}

# The field the operator keeps, whatever the code says (unless the declaration changes).
OPERATOR_FIELD = "is_active"


def owned_fields(job: Any) -> frozenset[str]:
    """The fields of `job` the code owns: read-only on the dashboard, in the admin and
    in the API. Empty for a job made there, and for one no longer declared in code."""
    declared = getattr(job, "code_declaration", None)
    if not getattr(job, "code_key", None) or not isinstance(declared, dict):
        return frozenset()
    return frozenset(_FIELD_OF_COLUMN.get(name, name) for name in declared) - {OPERATOR_FIELD}


# A declaration records a foreign key by its column (its value): the field the forms, the
# admin and the API name.
_FIELD_OF_COLUMN = {"calendar_id": "calendar", "team_id": "team"}


def refusal(job: Any) -> str:
    """What a refused change of a code-owned field says: where to change it instead."""
    return _(
        "This field is set in code, in %(source)s: change it there (manage.py syncjobs "
        "brings the change here)."
    ) % {"source": job.code_source or job.code_key}
