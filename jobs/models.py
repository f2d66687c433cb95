"""Jobs and their runs.

Invariants live in the database (CheckConstraint / UniqueConstraint), not only here:
several scheduler processes write these tables and only the database sees them all.
"""

from __future__ import annotations

import operator
import re
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from functools import reduce
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, validate_email
from django.db import connections, models
from django.db.models import Q
from django.db.models.functions import Substr, TruncHour
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, pgettext

from jobs import conf, schedules

NAME_MAX_LENGTH = 200
COMMAND_MAX_LENGTH = 1000
DESCRIPTION_MAX_LENGTH = 2000
MAX_RETRIES_LIMIT = 10
DEFAULT_RETRY_BACKOFF_SECONDS = 10
MAX_RETRY_BACKOFF_SECONDS = 86400
WEBHOOK_URL_MAX_LENGTH = 500
NOTIFY_EMAILS_MAX_LENGTH = 2000
MAX_NOTIFY_EMAILS = 20
CRON_EXPRESSION_MAX_LENGTH = 120
TIME_ZONE_MAX_LENGTH = 64
# A run longer than a week is a mistake, not a timeout.
MAX_TIMEOUT_SECONDS = 7 * 86400
# The longest simulated run a job may ask for: long enough to try timeouts and cancelling,
# short enough that a typo does not tie up a worker for a day.
MAX_SIM_SECONDS = 3600


# Times outside these bounds overflow when converted to UTC or moved by an interval, and
# no real schedule needs them.
EARLIEST_SCHEDULE_TIME = datetime(2000, 1, 1, tzinfo=UTC)
LATEST_SCHEDULE_TIME = datetime(9000, 1, 1, tzinfo=UTC)


def validate_schedule_time(value: datetime) -> None:
    if not EARLIEST_SCHEDULE_TIME <= value <= LATEST_SCHEDULE_TIME:
        raise ValidationError(
            _("Choose a time between the years 2000 and 9000."), code="out_of_range"
        )


class ScheduleType(models.TextChoices):
    ONCE = "once", _("Once")
    INTERVAL = "interval", _("Every N units")
    CRON = "cron", _("Cron expression")


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
# Fields the scheduler owns; saving a job edited in a form must not write back stale copies.
SCHEDULER_FIELDS = ("next_run_at", "last_run_at", "last_run_status")


class JobQuerySet(models.QuerySet["Job"]):
    def due(self, now: datetime) -> JobQuerySet:
        """Active jobs whose next occurrence has come (index jobs_job_due)."""
        return self.filter(is_active=True, next_run_at__lte=now)

    def with_running(self) -> JobQuerySet:
        """Annotate `is_running`: does the job have a run in progress?

        `id IN (jobs with a running run)`: the database reads the few running runs once
        per query (index jobs_run_status_recent), where a correlated EXISTS would read
        them again for every job, which costs 100 ms when a filter visits 10,000 jobs.
        """
        return self.annotate(
            is_running=models.ExpressionWrapper(
                Q(pk__in=_running_job_ids()), output_field=models.BooleanField()
            )
        )

    def next_due_at(self) -> datetime | None:
        """When the earliest active job comes due (index jobs_job_due)."""
        return (
            self.filter(is_active=True, next_run_at__isnull=False)
            .order_by("next_run_at")
            .values_list("next_run_at", flat=True)
            .first()
        )

    def upcoming(self) -> JobQuerySet:
        """Active jobs with a next run, soonest first (index jobs_job_due)."""
        return self.filter(is_active=True, next_run_at__isnull=False).order_by("next_run_at")

    def in_state(self, state: str) -> JobQuerySet:
        """Jobs whose `state` property is `state` (see Job.state)."""
        if state == JobState.RUNNING:
            return self.filter(pk__in=_running_job_ids())
        idle = self.exclude(pk__in=_running_job_ids())
        for status, state_of_status in STATE_BY_LAST_STATUS.items():
            if state == state_of_status:
                return idle.filter(last_run_status=status)
        return idle.exclude(last_run_status__in=list(STATE_BY_LAST_STATUS))


def _running_job_ids() -> models.QuerySet:
    return JobHistory.objects.filter(status=RunStatus.RUNNING).values("job_id")


class Job(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("name"), max_length=NAME_MAX_LENGTH)
    description = models.TextField(_("description"), blank=True, max_length=DESCRIPTION_MAX_LENGTH)
    command = models.CharField(
        _("command"),
        max_length=COMMAND_MAX_LENGTH,
        help_text=_("What the job runs. Execution is simulated unless another executor is set."),
    )
    schedule_type = models.CharField(
        _("schedule"), max_length=16, choices=ScheduleType.choices, default=ScheduleType.INTERVAL
    )
    scheduled_at = models.DateTimeField(
        _("run at"),
        null=True,
        blank=True,
        validators=[validate_schedule_time],
        help_text=_("Once: when to run. Every N units: when the first run happens (optional)."),
    )
    # A plain integer: Job.clean() gives the one message for a value below 1 (a field
    # validator would add a second), and jobs_job_interval_valid refuses it in the database.
    interval = models.IntegerField(_("every"), null=True, blank=True)
    interval_unit = models.CharField(
        _("unit"), max_length=16, choices=IntervalUnit.choices, blank=True
    )
    # db_default on the new columns: rows inserted by raw SQL that predates them (the
    # benchmark, scripts) still get a value.
    cron_expression = models.CharField(
        _("cron expression"),
        max_length=CRON_EXPRESSION_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_(
            "Five fields: minute, hour, day of month, month, day of week. "
            "For example “30 2 * * *”: 02:30 every day."
        ),
    )
    timezone = models.CharField(
        _("time zone"),
        max_length=TIME_ZONE_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_("The zone the cron expression is read in. Blank: the site's time zone."),
    )
    misfire_policy = models.CharField(
        _("after downtime"),
        max_length=16,
        choices=MisfirePolicy.choices,
        default=MisfirePolicy.COALESCE,
    )
    max_retries = models.PositiveSmallIntegerField(
        _("retries"),
        default=0,
        validators=[MaxValueValidator(MAX_RETRIES_LIMIT)],
        help_text=_("How many times a failed run is tried again."),
    )
    retry_backoff_seconds = models.PositiveIntegerField(
        _("retry backoff (seconds)"),
        default=DEFAULT_RETRY_BACKOFF_SECONDS,
        validators=[MaxValueValidator(MAX_RETRY_BACKOFF_SECONDS)],
        help_text=_("Wait before the first retry; doubles for each further one."),
    )
    overlap_policy = models.CharField(
        _("when the previous run is still going"),
        max_length=16,
        choices=OverlapPolicy.choices,
        default=OverlapPolicy.ALLOW,
        db_default=OverlapPolicy.ALLOW,
    )
    # Plain integers and floats: Job.clean() gives one message per bad value, and the
    # database constraints below refuse them too.
    timeout_seconds = models.IntegerField(
        _("timeout (seconds)"),
        null=True,
        blank=True,
        help_text=_("A run still going after this long is stopped and fails. Blank: no limit."),
    )
    sim_failure_rate = models.FloatField(
        _("simulated failure rate"),
        null=True,
        blank=True,
        help_text=_("From 0 (never fails) to 1 (always fails). Blank: the default."),
    )
    sim_min_seconds = models.FloatField(
        _("shortest simulated run (seconds)"),
        null=True,
        blank=True,
        help_text=_("Blank: the default."),
    )
    sim_max_seconds = models.FloatField(
        _("longest simulated run (seconds)"),
        null=True,
        blank=True,
        help_text=_("Blank: the default."),
    )
    is_active = models.BooleanField(_("active"), default=True)
    # Origin of an interval job's grid: occurrences are anchor_at + k * interval.
    anchor_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_run_at = models.DateTimeField(_("last run"), null=True, blank=True, editable=False)
    last_run_status = models.CharField(
        max_length=16, choices=RunStatus.choices, blank=True, editable=False
    )
    next_run_at = models.DateTimeField(_("next run"), null=True, blank=True, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    # Failure alerts (jobs/alerts.py): where to say that a run failed or a job recovered.
    # Database defaults too, so rows inserted by raw SQL (benchmarks) need not name them.
    notify_on_failure = models.BooleanField(
        _("alert on failure"),
        default=False,
        db_default=False,
        help_text=_("Send an alert each time a run of this job fails."),
    )
    notify_on_recovery = models.BooleanField(
        _("alert on recovery"),
        default=False,
        db_default=False,
        help_text=_("Send an alert when a run succeeds after a failed one."),
    )
    webhook_url = models.URLField(
        _("webhook URL"),
        max_length=WEBHOOK_URL_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_("Alerts are POSTed here as JSON."),
    )
    notify_emails = models.TextField(
        _("alert e-mail addresses"),
        max_length=NOTIFY_EMAILS_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_("Separated by commas or new lines."),
    )

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("job")
        verbose_name_plural = _("jobs")
        indexes = [
            # engine.claim_due: active jobs with next_run_at <= now, ordered by next_run_at;
            # JobQuerySet.next_due_at: the earliest one. Partial, so inactive jobs cost nothing.
            models.Index(fields=["next_run_at"], condition=Q(is_active=True), name="jobs_job_due"),
            # The job list, sorted and searched by name.
            models.Index(fields=["name"], name="jobs_job_name"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(schedule_type__in=ScheduleType.values),
                name="jobs_job_known_schedule_type",
            ),
            models.CheckConstraint(
                condition=~Q(schedule_type=ScheduleType.ONCE) | Q(scheduled_at__isnull=False),
                name="jobs_job_once_has_time",
            ),
            models.CheckConstraint(
                condition=~Q(schedule_type=ScheduleType.INTERVAL)
                | Q(
                    interval__gte=1,
                    interval__lte=schedules.MAX_INTERVAL.total_seconds(),
                    interval_unit__in=IntervalUnit.values,
                ),
                name="jobs_job_interval_valid",
            ),
            models.CheckConstraint(
                condition=Q(misfire_policy__in=MisfirePolicy.values),
                name="jobs_job_known_misfire_policy",
            ),
            models.CheckConstraint(
                condition=Q(max_retries__lte=MAX_RETRIES_LIMIT), name="jobs_job_retries_bounded"
            ),
            models.CheckConstraint(
                condition=~Q(schedule_type=ScheduleType.CRON) | ~Q(cron_expression=""),
                name="jobs_job_cron_has_expression",
            ),
            models.CheckConstraint(
                condition=Q(overlap_policy__in=OverlapPolicy.values),
                name="jobs_job_known_overlap_policy",
            ),
            models.CheckConstraint(
                condition=Q(timeout_seconds__isnull=True)
                | Q(timeout_seconds__gte=1, timeout_seconds__lte=MAX_TIMEOUT_SECONDS),
                name="jobs_job_timeout_bounded",
            ),
            models.CheckConstraint(
                condition=Q(sim_failure_rate__isnull=True)
                | Q(sim_failure_rate__gte=0, sim_failure_rate__lte=1),
                name="jobs_job_sim_rate_bounded",
            ),
            models.CheckConstraint(
                condition=(
                    Q(sim_min_seconds__isnull=True)
                    | Q(sim_min_seconds__gte=0, sim_min_seconds__lte=MAX_SIM_SECONDS)
                )
                & (
                    Q(sim_max_seconds__isnull=True)
                    | Q(sim_max_seconds__gte=0, sim_max_seconds__lte=MAX_SIM_SECONDS)
                )
                & (
                    Q(sim_min_seconds__isnull=True)
                    | Q(sim_max_seconds__isnull=True)
                    | Q(sim_min_seconds__lte=models.F("sim_max_seconds"))
                ),
                name="jobs_job_sim_seconds_bounded",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    # --- loading and saving ---------------------------------------------------------

    @classmethod
    def from_db(cls, db, field_names, values, *args, **kwargs):  # type: ignore[no-untyped-def]
        # *args/**kwargs: Django 6.1 passes fetch_mode, 5.2 does not.
        instance = super().from_db(db, field_names, values, *args, **kwargs)
        # Remember the schedule as loaded, so save() knows whether it changed. With a
        # schedule field deferred (.only()/.defer()) reading it here would load it (and
        # recurse through from_db), so the snapshot is taken at save time instead.
        if not instance.get_deferred_fields() & set(SCHEDULE_FIELDS):
            instance._loaded_schedule = instance._schedule_snapshot()
        return instance

    def _stored_schedule(self) -> tuple | None:
        """The schedule as loaded, or as stored now if it was not loaded."""
        if "_loaded_schedule" not in self.__dict__ and not self._state.adding:
            stored = type(self).objects.filter(pk=self.pk).values_list(*SCHEDULE_FIELDS).first()
            self._loaded_schedule = tuple(stored) if stored is not None else None
        return getattr(self, "_loaded_schedule", None)

    def _schedule_snapshot(self) -> tuple:
        return tuple(getattr(self, name) for name in SCHEDULE_FIELDS)

    @property
    def step(self) -> timedelta | None:
        if self.schedule_type != ScheduleType.INTERVAL or not self.interval:
            return None
        return schedules.interval_step(self.interval, self.interval_unit)

    @property
    def cron_zone_name(self) -> str:
        """The zone a cron expression is read in: the job's, or the site's TIME_ZONE."""
        return self.timezone or settings.TIME_ZONE

    def cron_schedule(self) -> schedules.CronSchedule | None:
        """The cron schedule, or None when this is not a (valid) cron job."""
        if self.schedule_type != ScheduleType.CRON or not self.cron_expression:
            return None
        try:
            return schedules.CronSchedule(self.cron_expression, self.cron_zone_name)
        except schedules.ScheduleError:
            return None

    def _schedule_changed(self) -> bool:
        loaded = self._stored_schedule()
        return loaded is None or loaded != self._schedule_snapshot()

    def refresh_schedule(self, now: datetime | None = None) -> None:
        """Recompute the anchor and the next occurrence after the schedule changed.

        Called by save(); the scheduler itself moves next_run_at with its own updates.
        """
        now = now or timezone.now()
        loaded = self._stored_schedule()
        grid_changed = loaded is None or loaded[:-1] != self._schedule_snapshot()[:-1]
        if self.schedule_type == ScheduleType.ONCE:
            self.anchor_at = None
            self.next_run_at = self.scheduled_at if self.is_active else None
            return
        if self.schedule_type == ScheduleType.CRON:
            # No grid: the next occurrence after now, in the job's zone.
            self.anchor_at = None
            cron = self.cron_schedule()
            self.next_run_at = cron.next_after(now) if cron and self.is_active else None
            return
        step = self.step
        if step is None:
            return  # invalid; the database constraint will refuse it
        if grid_changed or self.anchor_at is None:
            self.anchor_at = schedules.first_interval_anchor(now, step, self.scheduled_at)
        # Resume on the grid at the first point still to come: no burst of stale runs.
        self.next_run_at = (
            schedules.first_occurrence_at_or_after(self.anchor_at, step, now)
            if self.is_active
            else None
        )

    def save(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        adding = self._state.adding
        if adding or self._schedule_changed():
            self.refresh_schedule()
        elif kwargs.get("update_fields") is None:
            # Leave the scheduler's fields alone: this copy may have been loaded before
            # the scheduler last moved them.
            kwargs["update_fields"] = [
                f.name
                for f in self._meta.concrete_fields
                if not f.primary_key and f.name not in SCHEDULER_FIELDS
            ]
        super().save(*args, **kwargs)
        self._loaded_schedule = self._schedule_snapshot()

    # --- validation -----------------------------------------------------------------

    def clean(self) -> None:
        """Field-level messages for every way a schedule can be wrong.

        Forms, the admin and the API all call this (through full_clean), so the rules
        live here once.
        """
        super().clean()
        errors: dict[str, str] = {}
        if self.schedule_type == ScheduleType.ONCE:
            if self.scheduled_at is None:
                errors["scheduled_at"] = _("A one-off job needs a date and time to run at.")
            elif self.is_active and self._schedule_changed() and self.scheduled_at < timezone.now():
                errors["scheduled_at"] = _(
                    "This time has already passed. Choose a time in the future, or use Run now."
                )
        elif self.schedule_type == ScheduleType.INTERVAL:
            if self.interval_unit not in IntervalUnit.values:
                errors["interval_unit"] = _("Choose seconds, minutes, hours or days.")
            if self.interval is None:
                errors["interval"] = _("Say how often the job runs, for example 10.")
            elif self.interval < 1:
                errors["interval"] = _("The interval must be at least 1.")
            elif self.interval_unit in IntervalUnit.values:
                # Whole seconds first: a huge count of days overflows timedelta.
                seconds = self.interval * schedules.UNIT_SECONDS[self.interval_unit]
                if seconds > schedules.MAX_INTERVAL.total_seconds():
                    errors["interval"] = _("The interval can be at most 3650 days (ten years).")
        elif self.schedule_type == ScheduleType.CRON and (message := self._cron_expression_error()):
            errors["cron_expression"] = message
        if self.timezone:
            try:
                schedules.time_zone(self.timezone)
            except schedules.UnknownTimeZone:
                errors["timezone"] = _(
                    "Unknown time zone “%(name)s”. Use an IANA name such as Europe/Berlin."
                ) % {"name": self.timezone}
        if self.timeout_seconds is not None:
            if self.timeout_seconds < 1:
                errors["timeout_seconds"] = _(
                    "The timeout must be at least 1 second; leave it blank for no limit."
                )
            elif self.timeout_seconds > MAX_TIMEOUT_SECONDS:
                errors["timeout_seconds"] = _("The timeout can be at most 7 days (604800 seconds).")
        errors.update(self._simulation_errors())
        errors.update(self._alert_errors())
        if errors:
            raise ValidationError(errors)

    def _alert_errors(self) -> dict[str, str]:
        errors: dict[str, str] = {}
        if self.webhook_url and urlsplit(self.webhook_url).scheme.lower() not in ("http", "https"):
            errors["webhook_url"] = _("The webhook URL must start with http:// or https://.")
        addresses = self.notify_email_list
        if len(addresses) > MAX_NOTIFY_EMAILS:
            errors["notify_emails"] = _("At most %(n)d addresses.") % {"n": MAX_NOTIFY_EMAILS}
        for address in addresses:
            try:
                validate_email(address)
            except ValidationError:
                errors["notify_emails"] = _("%(address)s is not an e-mail address.") % {
                    "address": address[:100]
                }
                break
        wants_alerts = self.notify_on_failure or self.notify_on_recovery
        if wants_alerts and not self.webhook_url and not addresses and "webhook_url" not in errors:
            errors["webhook_url"] = _(
                "Give a webhook URL or e-mail addresses to send the alerts to."
            )
        return errors

    @property
    def notify_email_list(self) -> list[str]:
        """The alert addresses, split on commas, semicolons and white space."""
        return [part for part in re.split(r"[,;\s]+", self.notify_emails or "") if part]

    def _cron_expression_error(self) -> str | None:
        expression = self.cron_expression.strip()
        if not expression:
            return _("Enter a cron expression, for example “30 2 * * *” for 02:30 every day.")
        try:
            schedules.parse_cron(expression)
        except schedules.CronExpressionError as error:
            if error.field is None:
                if len(expression.split()) != 5:
                    return _(
                        "A cron expression has five fields: minute, hour, day of month, "
                        "month and day of week."
                    )
                return _("This is not a valid cron expression.")
            index = schedules.CRON_FIELDS.index(error.field)
            return _("The %(field)s field “%(value)s” is not valid.") % {
                "field": CRON_FIELD_NAMES[index],
                "value": expression.split()[index],
            }
        # Valid; but does it ever match? ("0 0 31 2 *" is refused above; this catches
        # the rarer ones cronsim gives up on after 50 years.)
        zone = self.timezone or settings.TIME_ZONE
        try:
            upcoming = schedules.CronSchedule(expression, zone).next_after(timezone.now())
        except schedules.UnknownTimeZone:
            return None  # reported at the time zone
        if upcoming is None:
            return _("This expression matches no date in the next 50 years.")
        return None

    def _simulation_errors(self) -> dict[str, str]:
        errors: dict[str, str] = {}
        rate = self.sim_failure_rate
        if rate is not None and not 0 <= rate <= 1:
            errors["sim_failure_rate"] = _(
                "The failure rate is a probability from 0 to 1, for example 0.2."
            )
        for name in ("sim_min_seconds", "sim_max_seconds"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= MAX_SIM_SECONDS:
                errors[name] = _("Choose a duration from 0 to 3600 seconds.")
        if not errors.keys() & {"sim_min_seconds", "sim_max_seconds"}:
            # Compare what the run will use: a blank side is the JOBS_SIM_* default.
            defaults = conf.simulation()
            shortest, longest = self.sim_min_seconds, self.sim_max_seconds
            shortest = defaults.min_seconds if shortest is None else shortest
            longest = defaults.max_seconds if longest is None else longest
            if shortest > longest:
                field = "sim_max_seconds" if self.sim_max_seconds is not None else "sim_min_seconds"
                errors[field] = _(
                    "The shortest simulated run (%(shortest)g s) is longer than the longest "
                    "(%(longest)g s)."
                ) % {"shortest": shortest, "longest": longest}
        return errors

    # --- presentation helpers -------------------------------------------------------

    @property
    def is_once(self) -> bool:
        return self.schedule_type == ScheduleType.ONCE

    @property
    def schedule_text(self) -> str:
        """The schedule in words: "every 10 minutes", "once at 1 Dec 2026 09:00"."""
        if self.schedule_type == ScheduleType.ONCE:
            if self.scheduled_at is None:
                return str(_("once (no time set)"))
            local = timezone.localtime(self.scheduled_at)
            # The date format is translatable: Japanese writes dates year first.
            when = date_format(local, pgettext("schedule in words", "j M Y H:i"))
            return str(_("once at %(when)s") % {"when": when})
        if self.schedule_type == ScheduleType.CRON:
            from jobs.cron_text import describe_cron

            return str(
                _("%(schedule)s, %(zone)s")
                % {"schedule": describe_cron(self.cron_expression), "zone": self.cron_zone_name}
            )
        if not self.interval or self.interval_unit not in IntervalUnit.values:
            return str(_("no valid schedule"))
        texts = {
            IntervalUnit.SECOND: ngettext("every second", "every %(n)d seconds", self.interval),
            IntervalUnit.MINUTE: ngettext("every minute", "every %(n)d minutes", self.interval),
            IntervalUnit.HOUR: ngettext("every hour", "every %(n)d hours", self.interval),
            IntervalUnit.DAY: ngettext("every day", "every %(n)d days", self.interval),
        }
        return texts[self.interval_unit] % {"n": self.interval}

    @property
    def state(self) -> str:
        """waiting / running / succeeded / failed / skipped / cancelled, from the latest run.

        Reads `is_running` when the queryset was annotated with with_running().
        """
        running = getattr(self, "is_running", None)
        if running is None:
            running = self.runs.filter(status=RunStatus.RUNNING).exists()
        if running:
            return JobState.RUNNING
        return STATE_BY_LAST_STATUS.get(self.last_run_status, JobState.WAITING)


def one_of(field: str, values: Iterable[str]) -> Q:
    """`field` is one of `values`: Q(field__in=values), written as equality tests.

    For a constraint checked on the hot path. SQLite checks `IN (...)` with more than two
    constants by building a temporary index on every write; on the run table, whose
    status every claim, start and finish writes, that cost about 5 µs a write (a tenth
    of a 10,000-run burst), where the equality tests cost 0.15 µs.
    """
    return reduce(operator.or_, (Q(**{field: value}) for value in values))


def _as_utc_hour(value: datetime | str) -> datetime:
    if isinstance(value, str):  # SQLite: "YYYY-MM-DD HH"
        return datetime.strptime(value, "%Y-%m-%d %H").replace(tzinfo=UTC)
    return value.astimezone(UTC)


class JobHistoryQuerySet(models.QuerySet["JobHistory"]):
    def ready(self, now: datetime) -> JobHistoryQuerySet:
        """Pending runs that may start now (index jobs_run_pending_ready)."""
        return self.filter(status=RunStatus.PENDING, not_before__lte=now)

    def stuck(self, now: datetime, lease: timedelta) -> JobHistoryQuerySet:
        """Running runs whose worker stopped heartbeating (index jobs_run_running_heartbeat)."""
        return self.filter(status=RunStatus.RUNNING, heartbeat_at__lt=now - lease)

    def next_ready_at(self) -> datetime | None:
        """When the earliest pending run may start (index jobs_run_pending_ready)."""
        return (
            self.filter(status=RunStatus.PENDING)
            .order_by("not_before")
            .values_list("not_before", flat=True)
            .first()
        )

    def queue_counts(self) -> tuple[int, int]:
        """(pending, running) runs now.

        Two counts, each reading only its partial index (jobs_run_pending_ready,
        jobs_run_running_heartbeat): one `status IN (...) GROUP BY status` would read the
        whole history instead (300 ms with a million runs on SQLite).
        """
        return (
            self.filter(status=RunStatus.PENDING).count(),
            self.filter(status=RunStatus.RUNNING).count(),
        )

    def in_progress(self) -> JobHistoryQuerySet:
        """Running runs, longest-running first (index jobs_run_running_heartbeat)."""
        return self.filter(status=RunStatus.RUNNING).order_by("started_at")

    def newest_first(self) -> JobHistoryQuerySet:
        """Newest first, with a unique tie-breaker so that keyset pages never skip a run
        (index jobs_run_recent; jobs_run_failed_recent for failed runs)."""
        return self.order_by("-created_at", "-id")

    def hourly_status_counts(
        self, since: datetime, until: datetime | None = None
    ) -> list[tuple[datetime, str, int]]:
        """(hour, status, runs) for the runs created in [since, until), hour in UTC.

        Reads only that slice of the covering index jobs_run_status_recent: the filter
        on every status looks redundant, but without it SQLite reads the table rows
        through jobs_run_recent and takes twice as long.
        """
        connection = connections[self.db]
        if connection.vendor == "sqlite":
            # SQLite stores the time as "YYYY-MM-DD HH:MM:SS.ffffff" UTC text, so the
            # hour is its first 13 characters; TruncHour would call a Python function
            # for every row.
            hour = Substr("created_at", 1, 13)
        else:
            hour = TruncHour("created_at", tzinfo=UTC)
        runs = self.filter(status__in=RunStatus.values, created_at__gte=since)
        if until is not None:
            runs = runs.filter(created_at__lt=until)
        rows = runs.order_by().values_list(hour, "status").annotate(runs=models.Count("*"))
        return [(_as_utc_hour(value), status, count) for value, status, count in rows]


class JobHistory(models.Model):
    """One execution attempt of one occurrence of a job."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: the unique (job, scheduled_for, attempt) constraint starts
    # with job_id and serves every lookup by job.
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="runs", db_index=False)
    scheduled_for = models.DateTimeField(_("scheduled for"))
    attempt = models.PositiveSmallIntegerField(_("attempt"), default=1)
    status = models.CharField(
        _("status"), max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING
    )
    trigger = models.CharField(
        _("trigger"), max_length=16, choices=Trigger.choices, default=Trigger.SCHEDULE
    )
    # The earliest time the run may start: scheduled_for, or later for a retry's backoff.
    not_before = models.DateTimeField(_("not before"))
    # When the run was last handed to Huey; a run still pending long after is handed
    # out again (its message was lost).
    dispatched_at = models.DateTimeField(null=True, blank=True, editable=False)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    heartbeat_at = models.DateTimeField(_("heartbeat"), null=True, blank=True)
    log = models.TextField(_("log"), blank=True)
    worker = models.CharField(_("worker"), max_length=200, blank=True)
    # Who cancelled the run (a user name); blank when the scheduler did (overlap policy
    # replace) or the run was not cancelled. Text, so it outlives the user account.
    cancelled_by = models.CharField(
        _("cancelled by"), max_length=150, blank=True, default="", db_default=""
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    objects = JobHistoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("run")
        verbose_name_plural = _("runs")
        indexes = [
            # engine.ready_tickets / next_ready_at: pending runs by start time. Partial, so
            # it stays as small as the backlog, however long the history grows.
            # engine._active_runs names it (and the next one) in INDEXED BY on SQLite.
            models.Index(
                fields=["not_before"],
                condition=Q(status=RunStatus.PENDING),
                name="jobs_run_pending_ready",
            ),
            # engine.reap: running runs with an old heartbeat.
            models.Index(
                fields=["heartbeat_at"],
                condition=Q(status=RunStatus.RUNNING),
                name="jobs_run_running_heartbeat",
            ),
            # (A job's own runs are found through the unique (job, scheduled_for, attempt)
            # constraint's index, newest occurrence first: no index of their own, which
            # would cost every insert.)
            # The history page: all runs newest first (a status filter walks it too).
            models.Index(fields=["-created_at"], name="jobs_run_recent"),
            # Recent failures (dashboard, history filtered by "failed"), which may be rare
            # among millions of runs. Partial, so runs that succeed never touch it.
            models.Index(
                fields=["-created_at"],
                condition=Q(status=RunStatus.FAILED),
                name="jobs_run_failed_recent",
            ),
            # metrics.DatabaseCollector: runs finished in the last few minutes, at every
            # scrape; without it each scrape would read the whole history. (The one index
            # that finishing a run adds to; see docs/metrics.md.)
            models.Index(fields=["finished_at"], name="jobs_run_finished"),
        ]
        constraints = [
            # Invariant 1: one first attempt (and one of each retry) per occurrence,
            # however many schedulers race.
            models.UniqueConstraint(
                fields=["job", "scheduled_for", "attempt"], name="jobs_run_one_per_attempt"
            ),
            models.CheckConstraint(condition=Q(attempt__gte=1), name="jobs_run_attempt_positive"),
            models.CheckConstraint(
                condition=one_of("status", RunStatus.values), name="jobs_run_known_status"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.job_id} @ {self.scheduled_for:%Y-%m-%d %H:%M:%S} #{self.attempt}"

    @property
    def duration(self) -> timedelta | None:
        if self.started_at is None:
            return None
        end = self.finished_at or timezone.now()
        return end - self.started_at

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def can_be_cancelled(self) -> bool:
        return self.status in ACTIVE_STATUSES


# --- Alerts and scheduler heartbeats (jobs/alerts.py, jobs/metrics.py) -------------------


class NotificationKind(models.TextChoices):
    FAILURE = "failure", _("Failure")
    RECOVERY = "recovery", _("Recovery")


class NotificationChannel(models.TextChoices):
    WEBHOOK = "webhook", _("Webhook")
    EMAIL = "email", _("E-mail")


class NotificationStatus(models.TextChoices):
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")


class NotificationAttempt(models.Model):
    """One try at delivering one alert about one run: every try is kept, so the run
    shows what was sent, where, and why a delivery failed."""

    run = models.ForeignKey(JobHistory, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(_("kind"), max_length=16, choices=NotificationKind.choices)
    channel = models.CharField(_("channel"), max_length=16, choices=NotificationChannel.choices)
    # The URL or the addresses, as they were when the alert was sent.
    target = models.TextField(_("sent to"), blank=True)
    attempt = models.PositiveSmallIntegerField(_("attempt"), default=1)
    status = models.CharField(_("status"), max_length=16, choices=NotificationStatus.choices)
    response_code = models.PositiveSmallIntegerField(_("response code"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    class Meta:
        # A run's attempts in the order they happened (the FK index finds them).
        ordering = ["created_at", "id"]
        verbose_name = _("notification attempt")
        verbose_name_plural = _("notification attempts")
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=NotificationKind.values), name="jobs_notify_known_kind"
            ),
            models.CheckConstraint(
                condition=Q(channel__in=NotificationChannel.values),
                name="jobs_notify_known_channel",
            ),
            models.CheckConstraint(
                condition=Q(status__in=NotificationStatus.values),
                name="jobs_notify_known_status",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} by {self.channel} #{self.attempt}: {self.status}"


class SchedulerHeartbeat(models.Model):
    """A scheduler process saying it is alive: one row per process, upserted by its loop
    every few seconds. /metrics reports the latest one."""

    name = models.CharField(_("name"), max_length=200, unique=True)
    pid = models.PositiveIntegerField(_("process id"))
    host = models.CharField(_("host"), max_length=255)
    started_at = models.DateTimeField(_("started"))
    seen_at = models.DateTimeField(_("last seen"))

    class Meta:
        ordering = ["-seen_at"]
        verbose_name = _("scheduler heartbeat")
        verbose_name_plural = _("scheduler heartbeats")
        indexes = [
            # metrics: the latest heartbeat and the schedulers seen lately; pruning old rows.
            models.Index(fields=["seen_at"], name="jobs_scheduler_seen"),
        ]

    def __str__(self) -> str:
        return self.name
