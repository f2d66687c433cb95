"""Quotas: limits against abuse and mistakes that every entry point meets here.

- JOBS_MIN_INTERVAL_SECONDS: a user without jobs.use_shell may not give a job an interval
  shorter than this (Job.clean() asks interval_errors()). The site's code (syncjobs, the
  scheduler, scripts: no acting user), users with jobs.use_shell and jobs declared in
  code are exempt. Cron jobs are not judged: the five-field syntax has no seconds, its
  finest step is a minute, and the setting is at most 60.
- JOBS_MAX_PENDING_MANUAL_RUNS: at most that many pending runs started by hand (trigger
  "manual": run now, run again, the API's run, the admin's action) per job; the engine's
  run_now() asks check_manual_runs() in its write transaction.

JOBS_SHELL_MAX_TIMEOUT is the third quota; being a rule of the job's values alone, it is
with the other timeout rules (jobs/models/job_rules.py timeout_errors).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext, ngettext

from jobs import conf
from jobs.access import permissions as access
from jobs.models import gate
from jobs.models.choices import IntervalUnit, RunStatus, ScheduleType, Trigger
from jobs.schedules import arithmetic as schedules

# The values whose change (or a job switched on) makes the interval rule judge a job
# again: an unchanged job a user with jobs.use_shell saved stays editable, and can
# always be switched off.
INTERVAL_FIELDS = ("schedule_type", "interval", "interval_unit")


# The code of ManualRunsExceeded, for an entry point that answers it as a conflict.
MANUAL_RUNS_CODE = "manual_runs_quota"


class ManualRunsExceeded(ValidationError):
    """run_now() refused: the job has JOBS_MAX_PENDING_MANUAL_RUNS pending runs started
    by hand already; nothing was created. A ValidationError, so that every entry point
    that reports one (the bulk actions, the admin's) says why; .messages say it."""


def interval_seconds(job: models.Model) -> int | None:
    """The interval of an interval job in seconds; None for other jobs and for an
    interval that is not valid (its own rule says so)."""
    unit, count = getattr(job, "interval_unit", ""), getattr(job, "interval", None)
    if job.schedule_type != ScheduleType.INTERVAL or unit not in IntervalUnit.values:  # type: ignore[attr-defined]
        return None
    if not isinstance(count, int) or count < 1:
        return None
    return count * schedules.UNIT_SECONDS[unit]


def interval_errors(job: models.Model, user: Any = None) -> dict[str, str]:
    """{"interval": why} when the acting user (`user`, else the audit trail's) may not
    save `job` with its interval; else empty."""
    seconds, shortest = interval_seconds(job), conf.min_interval_seconds()
    if seconds is None or seconds >= shortest or getattr(job, "code_key", None):
        return {}
    user = gate.acting_user(user)
    if user is None or access.may_use_shell(user) or not _interval_judged(job):
        return {}
    return {
        "interval": ngettext(
            "Without the permission %(permission)s a job runs at most every %(n)d second "
            "(JOBS_MIN_INTERVAL_SECONDS): choose a longer interval.",
            "Without the permission %(permission)s a job runs at most every %(n)d seconds "
            "(JOBS_MIN_INTERVAL_SECONDS): choose a longer interval.",
            shortest,
        )
        % {"permission": access.USE_SHELL, "n": shortest}
    }


def _interval_judged(job: models.Model) -> bool:
    """Whether the save makes the interval (new, changed) or switches the job on."""
    if job._state.adding:
        return True
    before = job._values_as_loaded() or {}  # type: ignore[attr-defined]
    if any(before.get(name) != getattr(job, name) for name in INTERVAL_FIELDS):
        return True
    return bool(job.is_active and not before.get("is_active"))  # type: ignore[attr-defined]


def pending_manual_runs(job: models.Model, cap: int) -> int:
    """The job's pending runs started by hand, counted up to `cap` (a bounded read; through
    the job's `runs`, so that this module needs no import of the run model)."""
    runs = job.runs.filter(status=RunStatus.PENDING, trigger=Trigger.MANUAL)  # type: ignore[attr-defined]
    return runs.order_by()[:cap].count()


def check_manual_runs(job: models.Model) -> None:
    """Raise ManualRunsExceeded when `job` has JOBS_MAX_PENDING_MANUAL_RUNS pending runs
    started by hand. Call it in the write transaction that creates the run: it locks the
    job's row first (SELECT ... FOR UPDATE on PostgreSQL and MySQL; SQLite's transaction
    holds the database's write lock from its start), so two requests for one job count
    one after the other and the limit holds exactly."""
    most = conf.max_pending_manual_runs()
    type(job).objects.select_for_update().filter(pk=job.pk).values_list("pk").first()  # type: ignore[attr-defined]
    if pending_manual_runs(job, most) >= most:
        raise ManualRunsExceeded(
            gettext(
                "“%(name)s” already has %(n)d runs waiting to start that were started by "
                "hand (JOBS_MAX_PENDING_MANUAL_RUNS): nothing was added. Wait for them to "
                "start, or cancel some."
            )
            % {"name": job, "n": most},
            code=MANUAL_RUNS_CODE,
        )
