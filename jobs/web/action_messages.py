"""What the job page says after run now and enable (flash messages, shown as HTML)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from jobs.models import Job, JobHistory, ScheduleType


def will_run(job: Job, run: JobHistory) -> str:
    """ "“name” will run in a moment.", linking the run it made: its live log is where
    one looks next. Escaped here (the message is shown as HTML)."""
    return format_html(
        '{} <a href="{}" class="alert-link" data-run-link>{}</a>',
        _("“%(name)s” will run in a moment.") % {"name": job.name},
        reverse("jobs:run_detail", args=[run.pk]),
        _("See the run"),
    )


def not_enabled(job: Job, refusal: ValidationError) -> str:
    """Why `job` was not enabled, naming it, and what to do about it."""
    if job.schedule_type == ScheduleType.ONCE and "scheduled_at" in refusal.message_dict:
        # A one-off job whose time has passed (it ran, or was missed) stays done.
        return _(
            "“%(name)s” was not enabled: it was to run %(schedule)s, and that time has "
            "passed. To run it again, edit it and change its time to a future one, or "
            "use Run now."
        ) % {"name": job.name, "schedule": job.schedule_text}
    return _("“%(name)s” was not enabled: %(why)s") % {
        "name": job.name,
        "why": " ".join(refusal.messages),
    }
