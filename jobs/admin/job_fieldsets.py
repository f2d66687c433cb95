"""The job form's sections in the admin, and what a stored job's page shows of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext_lazy as _

from jobs.access.masking import SECRET_JOB_FIELDS, WRITE_ONLY_JOB_FIELDS, may_see_secrets
from jobs.models import Job

# Secret fields (jobs.access.masking) -> the read-only field showing them masked; write-only
# ones show only whether they are set, to everyone.
MASKED_FIELDS = {name: f"masked_{name}" for name in (*SECRET_JOB_FIELDS, *WRITE_ONLY_JOB_FIELDS)}
# Form fields with no value to show on a read-only page.
FORM_ONLY_FIELDS = ("remove_webhook_secret",)


def _masked_fields(fields: Sequence) -> tuple:
    return tuple(
        _masked_fields(name) if isinstance(name, (list, tuple)) else MASKED_FIELDS.get(name, name)
        for name in fields
        if name not in FORM_ONLY_FIELDS
    )


FIELDSETS = (
    (_("General"), {"fields": ("name", "description", "team", "is_active")}),
    (
        _("What runs"),
        {
            "fields": ("executor", "command", "arguments"),
            "description": _(
                "Simulated: the command is only words for the log. Python task: the "
                "task's registered name, its keyword arguments as a JSON object. "
                "Management command: the command line. Shell: the command line (needs "
                'the permission to use shell commands); arguments {"env": {...}}. '
                "HTTP: the URL; arguments method, headers, body, expect_status."
            ),
        },
    ),
    (
        _("Schedule"),
        {
            "fields": (
                "schedule_type",
                "scheduled_at",
                ("interval", "interval_unit"),
                ("cron_expression", "timezone"),
                "misfire_policy",
                ("calendar", "calendar_policy"),
                "jitter_seconds",
            ),
            "description": _(
                "Once: set “run at”. Every N units: set “every” and “unit”; "
                "“run at” optionally fixes the first run. Cron: set the expression "
                "and, if not the site's, the time zone."
            ),
        },
    ),
    (
        _("Runs"),
        {
            "fields": (
                "overlap_policy",
                "timeout_seconds",
                ("queue", "priority"),
                ("max_retries", "retry_backoff_seconds"),
            )
        },
    ),
    (
        _("Chains"),
        {
            "fields": ("on_success", "on_failure"),
            "description": _(
                "Jobs this job starts when one of its runs succeeds, or fails for good "
                "after its retries. A job cannot start itself again through its chains."
            ),
        },
    ),
    (
        _("Simulation"),
        {
            "fields": (("sim_failure_rate", "sim_min_seconds", "sim_max_seconds"),),
            "description": _(
                "How this job's simulated runs behave. Blank fields use the defaults; "
                "a failure rate of 1 makes every run fail, to try retries."
            ),
        },
    ),
    # Failure alerts (jobs/alerts; docs/alerts.md).
    (
        _("Alerts"),
        {
            # One checkbox a line: side by side, a checkbox's help text ends where
            # the next one's starts, and the two read as one sentence.
            "fields": (
                "notify_on_failure",
                "notify_on_recovery",
                "webhook_url",
                "notify_emails",
                "channels",
                ("alert_after_failures", "expected_seconds"),
                "webhook_secret",
            )
        },
    ),
)
STATUS_FIELDSET = (
    _("Status"),
    {
        "fields": (
            "state_badge",
            "last_run",
            "next_run",
            "consecutive_failures",
            "links",
            ("created_at", "updated_at"),
        )
    },
)


def _code_fieldset(job: Job) -> tuple:
    """The fieldset saying that (and where) a job is declared in code."""
    if job.enqueued_task:
        note = _(
            "Made by the task's first enqueue(); each enqueue() is one of its runs. Its "
            "name and what it runs are the code's and read-only here."
        )
    elif job.declared_in_code:
        note = _(
            "The fields the code sets are read-only here: change them in the code, then "
            "run manage.py syncjobs. Enabling or disabling the job stays yours."
        )
    else:
        note = _(
            "Its declaration is gone: syncjobs disabled it, and its fields are yours to "
            "change. If the declaration comes back, the code takes the job over again."
        )
    return (_("Defined in code"), {"fields": ("code_origin",), "description": note})


def _import_fieldset() -> tuple:
    """The fieldset saying where an imported job came from (manage.py importschedules)."""
    note = _(
        "Imported by manage.py importschedules: another import updates the fields its "
        "source sets when that source has changed. Enabling or disabling the job stays yours."
    )
    return (_("Imported"), {"fields": ("import_origin",), "description": note})


def job_fieldsets(obj: Job, user: Any) -> tuple:
    """The fieldsets of a stored job's page: with where it is declared in code, the
    secret's removal when there is one, and masked for a user who may not see secrets."""
    fieldsets = (*FIELDSETS, STATUS_FIELDSET)
    if obj.code_key:
        fieldsets = (_code_fieldset(obj), *fieldsets)
    if obj.import_key:
        fieldsets = (_import_fieldset(), *fieldsets)
    if obj.webhook_secret:
        # Offered by JobAdminForm only when there is a secret to remove.
        fieldsets = tuple(
            (title, {**options, "fields": (*options["fields"], "remove_webhook_secret")})
            if "webhook_secret" in options["fields"]
            else (title, options)
            for title, options in fieldsets
        )
    if may_see_secrets(user, obj):
        return fieldsets
    # The read-only page of a user who may not change jobs (or may not read this
    # job's secrets): masked (jobs.access.masking).
    return tuple(
        (title, {**options, "fields": _masked_fields(options["fields"])})
        for title, options in fieldsets
    )
