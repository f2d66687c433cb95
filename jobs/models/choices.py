"""The vocabulary of jobs and runs: choices, status groups, limits, and which fields
each schedule type uses. No models here, so forms, serializers and the engine can import
it without the model classes."""

from __future__ import annotations

from datetime import UTC, datetime

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from jobs.kinds import KINDS
from jobs.schedules import arithmetic as schedules

NAME_MAX_LENGTH = 200
# Appended to the name of a duplicated job (Job.duplicate), within NAME_MAX_LENGTH.
COPY_SUFFIX = " (copy)"
COMMAND_MAX_LENGTH = 1000
# Where a job declared in code is declared (Job.code_source): "billing/tasks.py".
CODE_SOURCE_MAX_LENGTH = 500
# Where an imported job came from: "celery-beat", "django-q2" or "crontab:" and the file's path.
IMPORT_SOURCE_MAX_LENGTH = 500
DESCRIPTION_MAX_LENGTH = 2000
MAX_RETRIES_LIMIT = 10
DEFAULT_RETRY_BACKOFF_SECONDS = 10
MAX_RETRY_BACKOFF_SECONDS = 86400
WEBHOOK_URL_MAX_LENGTH = 500
NOTIFY_EMAILS_MAX_LENGTH = 2000
MAX_NOTIFY_EMAILS = 20
CRON_EXPRESSION_MAX_LENGTH = 120
TIME_ZONE_MAX_LENGTH = 64
# Jobs one job may start after a run (each of on_success and on_failure): every one is a
# run inserted in the transaction that records the outcome, so the fan-out stays small.
MAX_CHAINED_JOBS = 20
# A run longer than a week is a mistake, not a timeout.
MAX_TIMEOUT_SECONDS = 7 * 86400
# A failure alert after this many failed runs in a row at most (jobs/alerts).
MAX_ALERT_AFTER_FAILURES = 100
# The longest simulated run a job may ask for: long enough to try timeouts and cancelling,
# short enough that a typo does not tie up a worker for a day.
MAX_SIM_SECONDS = 3600
# Queues (worker pools): a short name a process is started for (`runscheduler --queues`,
# a Huey queue name), so letters, digits, "-" and "_" only.
DEFAULT_QUEUE = "default"
QUEUE_NAME_MAX_LENGTH = 50
QUEUE_NAME_PATTERN = r"[A-Za-z0-9_-]+"
# Higher first, as in django.tasks.
MIN_PRIORITY = -100
MAX_PRIORITY = 100


# Times outside these bounds overflow when converted to UTC or moved by an interval, and
# no real schedule needs them.
EARLIEST_SCHEDULE_TIME = datetime(2000, 1, 1, tzinfo=UTC)
LATEST_SCHEDULE_TIME = datetime(9000, 1, 1, tzinfo=UTC)


def validate_schedule_time(value: datetime) -> None:
    if not EARLIEST_SCHEDULE_TIME <= value <= LATEST_SCHEDULE_TIME:
        raise ValidationError(
            _("Choose a time between the years 2000 and 9000."), code="out_of_range"
        )


# What a job's runs do (Job.executor); Job.command is read per kind. One member per row
# of jobs.kinds (ExecutorKind.SHELL == "shell"), where each kind is declared.
ExecutorKind = models.TextChoices(
    "ExecutorKind", [(kind.value.upper(), (kind.value, kind.label)) for kind in KINDS]
)


class ScheduleType(models.TextChoices):
    ONCE = "once", _("Once")
    INTERVAL = "interval", _("Every N units")
    CRON = "cron", _("Cron expression")


# Which schedule types use which fields. Job.clean() requires them for these types, and
# a job of any other type stores them empty, whatever was sent (SCHEDULE_FIELD_UNUSED);
# the forms (the dashboard's and the admin's) show a field only for its types
# (jobs/static/jobs/job_form.js); without JavaScript all are shown.
SCHEDULE_TYPE_FIELDS = {
    "scheduled_at": (ScheduleType.ONCE, ScheduleType.INTERVAL),
    "interval": (ScheduleType.INTERVAL,),
    "interval_unit": (ScheduleType.INTERVAL,),
    "cron_expression": (ScheduleType.CRON,),
    "timezone": (ScheduleType.CRON,),
    # A one-off job runs once, late if the scheduler was down: it misses nothing it
    # could skip, and no earlier occurrence of its own can still be going.
    "misfire_policy": (ScheduleType.INTERVAL, ScheduleType.CRON),
    "overlap_policy": (ScheduleType.INTERVAL, ScheduleType.CRON),
}


class IntervalUnit(models.TextChoices):
    SECOND = schedules.SECOND, _("seconds")
    MINUTE = schedules.MINUTE, _("minutes")
    HOUR = schedules.HOUR, _("hours")
    DAY = schedules.DAY, _("days")


class MisfirePolicy(models.TextChoices):
    COALESCE = schedules.COALESCE, _("Run once for all missed occurrences")
    SKIP = schedules.SKIP, _("Skip missed occurrences")


class OverlapPolicy(models.TextChoices):
    """What an occurrence does when the job still has a pending or running run."""

    ALLOW = "allow", _("Run anyway (allow overlap)")
    FORBID = "forbid", _("Skip the new occurrence (forbid overlap)")
    REPLACE = "replace", _("Cancel the old run and start the new one (replace)")


# What a job stores in a SCHEDULE_TYPE_FIELDS field its schedule type does not use: null
# (or the empty text of a text field), and for the policies their defaults.
SCHEDULE_FIELD_UNUSED = {
    "scheduled_at": None,
    "interval": None,
    "interval_unit": "",
    "cron_expression": "",
    "timezone": "",
    "misfire_policy": MisfirePolicy.COALESCE.value,
    "overlap_policy": OverlapPolicy.ALLOW.value,
}


class RunStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    SUCCESS = "success", _("Succeeded")
    FAILED = "failed", _("Failed")
    # Never started: the job's overlap policy (forbid) passed over this occurrence.
    SKIPPED = "skipped", _("Skipped")
    # Stopped by an operator, or replaced by a newer occurrence (overlap policy replace).
    CANCELLED = "cancelled", _("Cancelled")


# Runs that will not change any more.
FINISHED_STATUSES = (RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.SKIPPED, RunStatus.CANCELLED)
# Runs that executed to an outcome of their own: what success rates and durations count.
OUTCOME_STATUSES = (RunStatus.SUCCESS, RunStatus.FAILED)
# Runs that hold their job, for the overlap policy and for cancelling.
ACTIVE_STATUSES = (RunStatus.PENDING, RunStatus.RUNNING)


class JobState(models.TextChoices):
    """A job's state for the lists, derived from its latest run."""

    WAITING = "waiting", _("Waiting")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    SKIPPED = "skipped", _("Skipped")
    CANCELLED = "cancelled", _("Cancelled")


# Job.state for a job that is not running, by its last_run_status.
STATE_BY_LAST_STATUS = {
    RunStatus.SUCCESS: JobState.SUCCEEDED,
    RunStatus.FAILED: JobState.FAILED,
    RunStatus.SKIPPED: JobState.SKIPPED,
    RunStatus.CANCELLED: JobState.CANCELLED,
}


# The cron fields in words, in the order of schedules.CRON_FIELDS.
CRON_FIELD_NAMES = (_("minute"), _("hour"), _("day of month"), _("month"), _("day of week"))


class Trigger(models.TextChoices):
    SCHEDULE = "schedule", _("Schedule")
    MANUAL = "manual", _("Run now")
    RETRY = "retry", _("Retry")
    # Started by another job's run that succeeded or failed for good (Job.on_success,
    # Job.on_failure; jobs/engine/chains.py).
    CHAIN = "chain", _("Chain")
    # Made by task.enqueue() (jobs.tasks_backend), or "run again" of such a run.
    ENQUEUE = "enqueue", _("Enqueued")
    # One run per past occurrence of a range an operator asked for (engine.backfill).
    BACKFILL = "backfill", _("Backfill")


# Fields whose change moves the job to a new schedule (and recomputes next_run_at). All
# but the last (is_active) define the schedule itself; a change there re-anchors the grid.
SCHEDULE_FIELDS = (
    "schedule_type",
    "scheduled_at",
    "interval",
    "interval_unit",
    "cron_expression",
    "timezone",
    "is_active",
)
# Fields whose change plans next_run_at again without moving the grid: the calendar.
PLANNING_FIELDS = ("calendar_id", "calendar_policy")
# Fields the scheduler owns; saving a job edited in a form must not write back stale copies.
SCHEDULER_FIELDS = ("next_run_at", "last_run_at", "last_run_status")
# Fields only the engine writes, counted inside its transactions: no save of a job
# loaded earlier may write its copy back, whatever else changed.
ENGINE_COUNTER_FIELDS = ("consecutive_failures",)
# Alert settings whose change starts the count of failed runs in a row afresh (a streak
# counted under other rules would alert at the wrong run, or never).
STREAK_RULE_FIELDS = ("notify_on_failure", "notify_on_recovery", "alert_after_failures")


# --- alerts --------------------------------------------------------------------------------


class NotificationKind(models.TextChoices):
    FAILURE = "failure", _("Failure")
    RECOVERY = "recovery", _("Recovery")
    RUNNING_LONG = "running_long", _("Running long")
    # A Python task that went on past the kill grace after it was asked to stop.
    NOT_STOPPED = "not_stopped", _("Did not stop")


class DeliveryChannel(models.TextChoices):
    WEBHOOK = "webhook", _("Webhook")
    EMAIL = "email", _("E-mail")


class NotificationStatus(models.TextChoices):
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")
