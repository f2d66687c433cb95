"""Business calendars and blackout windows: the rules a job's occurrences obey
(jobs.calendars plans with them), and loading them for a claim, a save or a preview."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, router, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from jobs.calendars import days as calendar_days
from jobs.calendars import planning
from jobs.calendars import windows as blackout_windows
from jobs.models.choices import CRON_EXPRESSION_MAX_LENGTH, NAME_MAX_LENGTH, TIME_ZONE_MAX_LENGTH
from jobs.schedules import arithmetic as schedules

MAX_EXTRA_DATES = 1000
MAX_BLACKOUT_MINUTES = 60 * 24 * 366


class CalendarPolicy(models.TextChoices):
    SKIP = planning.SKIP, _("Skip occurrences on days off")
    NEXT_BUSINESS_DAY = planning.NEXT_BUSINESS_DAY, _("Move to the next business day")
    PREVIOUS_BUSINESS_DAY = planning.PREVIOUS_BUSINESS_DAY, _("Move to the previous business day")


class BlackoutAction(models.TextChoices):
    SKIP = blackout_windows.SKIP, _("Skip occurrences inside")
    DEFER = blackout_windows.DEFER, _("Defer them to the window's end")


class BlackoutScope(models.TextChoices):
    ALL = "all", _("Every job")
    QUEUE = "queue", _("The jobs of a queue")
    JOBS = "jobs", _("Chosen jobs")


def _default_weekdays() -> list[int]:
    return list(calendar_days.MONDAY_TO_FRIDAY)


def _zone_errors(name: str) -> dict[str, Any]:
    try:
        if name:
            schedules.time_zone(name)
    except schedules.UnknownTimeZone:
        return {"timezone": _("Unknown time zone “%(name)s”.") % {"name": name}}
    return {}


def _weekday(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 6


def _dates(values: Any, field: str) -> list[dt.date]:
    if not isinstance(values, list) or len(values) > MAX_EXTRA_DATES:
        raise ValidationError(
            {field: _("A list of at most %(most)d dates.") % {"most": MAX_EXTRA_DATES}}
        )
    found = []
    for value in values:
        try:
            found.append(value if isinstance(value, dt.date) else dt.date.fromisoformat(value))
        except (TypeError, ValueError):
            raise ValidationError(
                {field: _("“%(value)s” is not a date (YYYY-MM-DD).") % {"value": value}}
            ) from None
    return found


# What the dashboard's forms and the API edit of each.
CALENDAR_FIELDS = (
    "name",
    "timezone",
    "weekdays",
    "country",
    "subdivision",
    "extra_days_off",
    "extra_working_days",
)
BLACKOUT_FIELDS = (
    "name",
    "action",
    "cron_expression",
    "duration_minutes",
    "timezone",
    "starts_at",
    "ends_at",
    "scope",
    "queue",
    "jobs",
    "is_active",
)


class Calendar(models.Model):
    """Which days count for the jobs on it (Job.calendar)."""

    name = models.CharField(_("name"), max_length=NAME_MAX_LENGTH, unique=True)
    timezone = models.CharField(
        _("time zone"),
        max_length=TIME_ZONE_MAX_LENGTH,
        blank=True,
        default="",
        help_text=_("The zone whose dates count. Blank: the site's time zone."),
    )
    weekdays = models.JSONField(
        _("working weekdays"),
        default=_default_weekdays,
        help_text=_("The weekdays that count, 0 (Monday) to 6 (Sunday)."),
    )
    country = models.CharField(
        _("country"),
        max_length=8,
        blank=True,
        default="",
        help_text=_("Its public holidays are days off: a code such as JP, US or DE."),
    )
    subdivision = models.CharField(
        _("subdivision"),
        max_length=16,
        blank=True,
        default="",
        help_text=_("A state or region of the country, such as CA or BY."),
    )
    extra_days_off = models.JSONField(_("extra days off"), default=list, blank=True)
    extra_working_days = models.JSONField(_("extra working days"), default=list, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("calendar")
        verbose_name_plural = _("calendars")

    def __str__(self) -> str:
        return self.name

    @property
    def zone_name(self) -> str:
        return self.timezone or settings.TIME_ZONE

    def clean(self) -> None:
        super().clean()
        self.country = (self.country or "").strip().upper()
        self.subdivision = (self.subdivision or "").strip().upper()
        errors: dict[str, Any] = {}
        weekdays = self.weekdays
        if not isinstance(weekdays, list) or not weekdays or not all(map(_weekday, weekdays)):
            errors["weekdays"] = _("Choose at least one weekday (0 Monday to 6 Sunday).")
        else:
            self.weekdays = sorted(set(weekdays))
        for field in ("extra_days_off", "extra_working_days"):
            try:
                setattr(
                    self,
                    field,
                    sorted({d.isoformat() for d in _dates(getattr(self, field), field)}),
                )
            except ValidationError as error:
                errors.update(error.message_dict)
        try:
            calendar_days.check_region(self.country, self.subdivision)
        except calendar_days.CalendarError as error:
            errors[error.field] = (
                _("The holidays library knows no country “%(code)s”.") % {"code": self.country}
                if error.field == "country"
                else _("The holidays library knows no subdivision “%(code)s” of this country.")
                % {"code": self.subdivision}
            )
        errors.update(_zone_errors(self.timezone))
        if errors:
            raise ValidationError(errors)

    def business_days(self) -> calendar_days.BusinessDays:
        """The calendar's rules, kept per calendar and version: each date is worked out
        once per process, whatever the number of jobs on the calendar."""
        # The rules themselves too: two edits within one clock tick share updated_at.
        version = (
            self.pk,
            self.updated_at,
            self.country,
            self.subdivision,
            str(self.weekdays),
            str(self.extra_days_off),
            str(self.extra_working_days),
        )
        kept = _BUSINESS_DAYS.get(self.pk)
        if kept is not None and kept[0] == version:
            return kept[1]
        made = calendar_days.BusinessDays(
            self.weekdays,
            self.country,
            self.subdivision,
            _dates(self.extra_days_off, "extra_days_off"),
            _dates(self.extra_working_days, "extra_working_days"),
        )
        _BUSINESS_DAYS[self.pk] = (version, made)
        return made

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save, and plan the next run of its jobs again: a day that now counts (or no
        longer does) moves the next run at once, not after the one planned before."""
        adding = self._state.adding
        with transaction.atomic(using=kwargs.get("using") or router.db_for_write(Calendar)):
            super().save(*args, **kwargs)
            if adding:
                return
            # Loaded once for all its jobs (two queries), not once per job.
            rules = PlanningRules.load([self.pk])
            for job in self.jobs.filter(is_active=True).iterator():
                job.replan(rules=rules)

    def jobs_in_use(self) -> list[str]:
        return list(self.jobs.order_by("name").values_list("name", flat=True)[:20])


_BUSINESS_DAYS: dict[Any, tuple[tuple, calendar_days.BusinessDays]] = {}


class Blackout(models.Model):
    """A planned window in which occurrences do not run: skipped or deferred to its end.
    Recurring (a cron expression for its start, a duration, a zone) or fixed (start, end)."""

    name = models.CharField(_("name"), max_length=NAME_MAX_LENGTH, unique=True)
    action = models.CharField(
        _("occurrences inside"),
        max_length=8,
        choices=BlackoutAction.choices,
        default=BlackoutAction.SKIP,
    )
    cron_expression = models.CharField(
        _("starts (cron)"),
        max_length=CRON_EXPRESSION_MAX_LENGTH,
        blank=True,
        default="",
        help_text=_("A recurring window: when it starts. Blank: a fixed range."),
    )
    duration_minutes = models.PositiveIntegerField(_("lasts (minutes)"), null=True, blank=True)
    timezone = models.CharField(
        _("time zone"), max_length=TIME_ZONE_MAX_LENGTH, blank=True, default=""
    )
    starts_at = models.DateTimeField(_("starts at"), null=True, blank=True)
    ends_at = models.DateTimeField(_("ends at"), null=True, blank=True)
    scope = models.CharField(
        _("applies to"), max_length=8, choices=BlackoutScope.choices, default=BlackoutScope.ALL
    )
    queue = models.CharField(_("queue"), max_length=64, blank=True, default="")
    jobs = models.ManyToManyField("jobs.Job", blank=True, related_name="blackouts")
    is_active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("blackout window")
        verbose_name_plural = _("blackout windows")

    def __str__(self) -> str:
        return self.name

    def window(self) -> blackout_windows.Window:
        duration = dt.timedelta(minutes=self.duration_minutes) if self.duration_minutes else None
        return blackout_windows.Window(
            self.name,
            self.action,
            cron_expression=self.cron_expression.strip() if self.cron_expression else "",
            zone_name=self.timezone or settings.TIME_ZONE,
            duration=duration,
            start=None if self.cron_expression else self.starts_at,
            end=None if self.cron_expression else self.ends_at,
        )

    def clean(self) -> None:
        super().clean()
        errors: dict[str, Any] = {}
        if (
            self.duration_minutes is not None
            and not 1 <= self.duration_minutes <= MAX_BLACKOUT_MINUTES
        ):
            errors["duration_minutes"] = _("From 1 minute to 366 days.")
        if self.scope == BlackoutScope.QUEUE and not self.queue:
            errors["queue"] = _("Name the queue whose jobs the window covers.")
        errors.update(_zone_errors(self.timezone))
        if errors:
            raise ValidationError(errors)
        now = timezone.now()
        try:
            window = self.window()
            window.check_recurrence(now)
        except blackout_windows.WindowError as error:
            raise ValidationError({error.field: _window_message(error)}) from None
        others = [
            (other, other.window())
            for other in Blackout.objects.filter(is_active=True).exclude(pk=self.pk)
        ]
        if self.is_active:
            clash = blackout_windows.first_overlap(window, [w for _, w in others], now)
            if clash is not None:
                field = "cron_expression" if self.cron_expression else "starts_at"
                raise ValidationError(
                    {field: _("This window overlaps the window “%(name)s”.") % {"name": clash.name}}
                )

    def covers(self, queue: str, job_key: str, job_keys: frozenset[str]) -> bool:
        if self.scope == BlackoutScope.ALL:
            return True
        if self.scope == BlackoutScope.QUEUE:
            return self.queue == queue
        return job_key in job_keys


def _window_message(error: blackout_windows.WindowError) -> str:
    messages = {
        "duration_minutes": _(
            "A recurring window needs a duration shorter than the time between its starts."
        ),
        "starts_at": _("Give a cron expression for a recurring window, or a start and an end."),
        "ends_at": _("The end must be after the start."),
    }
    return str(messages.get(error.field, str(error)))


class PlanningRules:
    """The calendars and active blackout windows, loaded once (two small queries) for a
    claim's batch, a save or a preview: the Rules of each job."""

    __slots__ = ("_calendars", "_windows")

    def __init__(
        self,
        calendars: dict[Any, Calendar],
        windows: list[tuple[Blackout, blackout_windows.Window, frozenset[str]]],
    ) -> None:
        self._calendars = calendars
        self._windows = windows

    @classmethod
    def load(cls, calendar_ids: Iterable[Any] | None = None) -> PlanningRules:
        """The active windows and the calendars `calendar_ids` names (all when None)."""
        calendars = Calendar.objects.all()
        if calendar_ids is not None:
            ids = {key for key in calendar_ids if key is not None}
            calendars = calendars.filter(pk__in=ids) if ids else calendars.none()
        windows = []
        for blackout in Blackout.objects.filter(is_active=True).prefetch_related("jobs"):
            try:
                window = blackout.window()
            except blackout_windows.WindowError:
                continue  # validation refuses these; a row written around it is ignored
            keys = (
                frozenset(job.pk.hex for job in blackout.jobs.all())
                if blackout.scope == BlackoutScope.JOBS
                else frozenset()
            )
            windows.append((blackout, window, keys))
        return cls({c.pk: c for c in calendars}, windows)

    @property
    def has_windows(self) -> bool:
        return bool(self._windows)

    def window_open_at(self, moment: dt.datetime) -> bool:
        """Whether any active window, whatever it covers, is open at `moment`."""
        return any(window.end_of_window_at(moment) is not None for _, window, _ in self._windows)

    def for_job(
        self, calendar_id: Any, policy: str, queue: str, job_key: str
    ) -> planning.Rules | None:
        """The Rules of a job; None when neither a calendar nor a window applies."""
        windows = tuple(
            window
            for blackout, window, keys in self._windows
            if blackout.covers(queue, job_key, keys)
        )
        calendar = self._calendars.get(calendar_id) if calendar_id is not None else None
        if calendar is None and not windows:
            return None
        if calendar is None:
            return planning.Rules(None, schedules.time_zone(settings.TIME_ZONE), policy, windows)
        return planning.Rules(
            calendar.business_days(), schedules.time_zone(calendar.zone_name), policy, windows
        )
