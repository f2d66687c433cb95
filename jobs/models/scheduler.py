"""The scheduler's own state, site-wide: the pause switch, its record, and the health row.

- SchedulerState: one row (pk 1) saying whether the whole scheduler is paused, since
  when, until when, why and by whom. The claim reads it (jobs/sql, statement
  `claims_paused`) inside the claim's own transaction, and every scheduler loop reads it
  with the look-up it already makes before sleeping (statement `next_wake_at`), so a
  pause costs the idle loop no statement of its own.
- SchedulerEvent: the site-wide entries beside the jobs' audit trail (changes.py): who
  paused or resumed, when, through which channel; and when the scheduler was noticed
  down and recovered (jobs/alerts/health.py).
- SchedulerHealth: one row (pk 1) whose conditional update decides which process
  announces a scheduler-down incident, and its recovery: once per incident, whatever the
  number of processes that notice it.

Rows are created on first use (a transactional test's flush, or a new database, has
none): a missing state row means "not paused", a missing health row "no incident".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from jobs import text
from jobs.models.changes import Channel, current_actor
from jobs.models.choices import LATEST_SCHEDULE_TIME

PAUSE_NOTE_MAX_LENGTH = 500
# What an event keeps of a reason or of the outcome of its alerts.
EVENT_TEXT_MAX_LENGTH = 500
THE_ROW = 1


class PauseWindow(NamedTuple):
    """When the scheduler is paused: from `paused_at` (None: not paused), until
    `paused_until` (None: until someone resumes it).

    The one rule of "paused at a moment", used by the scheduler, the screens, the API and
    /metrics; the statement claims_paused (jobs/sql/*/queries.sql) says it again in SQL.
    """

    paused_at: datetime | None
    paused_until: datetime | None

    def active(self, now: datetime) -> bool:
        return self.paused_at is not None and (self.paused_until is None or self.paused_until > now)

    def expired(self, now: datetime) -> bool:
        """Paused until a time that has come: resumed, but not yet recorded as such."""
        return (
            self.paused_at is not None
            and self.paused_until is not None
            and self.paused_until <= now
        )


NOT_PAUSED = PauseWindow(None, None)


class SchedulerState(models.Model):
    id = models.PositiveSmallIntegerField(primary_key=True, default=THE_ROW)
    paused_at = models.DateTimeField(_("paused since"), null=True, blank=True)
    paused_until = models.DateTimeField(_("paused until"), null=True, blank=True)
    note = models.CharField(_("note"), max_length=PAUSE_NOTE_MAX_LENGTH, blank=True)
    paused_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("paused by"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The name as it was: stays when the user is deleted or renamed.
    paused_by_name = models.CharField(_("paused by"), max_length=150, blank=True)
    channel = models.CharField(_("channel"), max_length=16, choices=Channel.choices, blank=True)
    # When the last pause ended: the health check counts due work and heartbeats from
    # then on, so the moments after a resume are not taken for an outage.
    resumed_at = models.DateTimeField(_("resumed at"), null=True, blank=True)

    class Meta:
        verbose_name = _("scheduler switch")
        verbose_name_plural = _("scheduler switch")
        # Only this one (docs/permissions.md "Who can do what"); seeing it needs jobs.view_job.
        default_permissions = ()
        permissions = [("pause_scheduler", _("Can pause and resume the whole scheduler"))]
        constraints = [
            models.CheckConstraint(condition=Q(id=THE_ROW), name="jobs_scheduler_state_one_row"),
            models.CheckConstraint(
                condition=Q(paused_until__isnull=True) | Q(paused_at__isnull=False),
                name="jobs_scheduler_until_needs_pause",
            ),
        ]

    def __str__(self) -> str:
        return str(_("paused") if self.paused_at else _("running"))

    @property
    def window(self) -> PauseWindow:
        return PauseWindow(self.paused_at, self.paused_until)

    def is_paused(self, now: datetime | None = None) -> bool:
        return self.window.active(now or timezone.now())

    @classmethod
    def current_window(cls) -> PauseWindow:
        """The pause as the row says (one look-up by primary key, two columns)."""
        found = cls.objects.filter(pk=THE_ROW).values_list("paused_at", "paused_until").first()
        return PauseWindow(*found) if found else NOT_PAUSED

    @classmethod
    def current(cls) -> SchedulerState:
        """The row as it is (not saved when there is none yet: nothing was ever paused)."""
        return cls.objects.filter(pk=THE_ROW).first() or cls()


def pause_errors(until: datetime | None, note: str, now: datetime) -> dict[str, str]:
    """{field: message} for a pause request; empty when it may be done. The one set of
    rules behind the dashboard's form, the admin's and the API."""
    errors: dict[str, str] = {}
    if until is not None:
        if until <= now:
            errors["until"] = _("Choose a time in the future, or leave it empty.")
        elif until >= LATEST_SCHEDULE_TIME:
            errors["until"] = _("Choose a time before the year 9000.")
    if len(note) > PAUSE_NOTE_MAX_LENGTH:
        errors["note"] = _("Keep the note to %(max)d characters (it has %(count)d).") % {
            "max": PAUSE_NOTE_MAX_LENGTH,
            "count": len(note),
        }
    elif (char := text.forbidden_character(note)) is not None:
        errors["note"] = _(
            "Remove the invisible character %(char)s: the note is one line, without "
            "control characters or text-direction overrides."
        ) % {"char": text.code_point(char)}
    return errors


def clean_pause(
    until: datetime | None, note: str | None, now: datetime
) -> tuple[datetime | None, str]:
    """The pause request as it is stored (the note without surrounding white space);
    raises ValidationError with the field messages of pause_errors()."""
    note = (note or "").strip()
    errors = pause_errors(until, note, now)
    if errors:
        raise ValidationError(errors)
    return until, note


# --- the record -------------------------------------------------------------------------


class SchedulerAction(models.TextChoices):
    PAUSE = "pause", pgettext_lazy("scheduler event", "paused")
    RESUME = "resume", pgettext_lazy("scheduler event", "resumed")
    DOWN = "down", pgettext_lazy("scheduler event", "noticed down")
    RECOVERED = "recovered", pgettext_lazy("scheduler event", "recovered")
    # An API token made or revoked (jobs.models.tokens): the note names it, never its secret.
    TOKEN_CREATE = "token_create", pgettext_lazy("scheduler event", "API token created")
    TOKEN_REVOKE = "token_revoke", pgettext_lazy("scheduler event", "API token revoked")


class SchedulerEvent(models.Model):
    action = models.CharField(_("action"), max_length=16, choices=SchedulerAction.choices)
    created_at = models.DateTimeField(_("when"), default=timezone.now)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    username = models.CharField(_("username"), max_length=150, blank=True)
    channel = models.CharField(_("channel"), max_length=16, choices=Channel.choices)
    # A pause's note, or why the scheduler was noticed down.
    note = models.CharField(_("note"), max_length=EVENT_TEXT_MAX_LENGTH, blank=True)
    paused_until = models.DateTimeField(_("paused until"), null=True, blank=True)
    # Where the alert of a down or recovered event went and how that went.
    delivery = models.CharField(_("alerts"), max_length=EVENT_TEXT_MAX_LENGTH, blank=True)

    class Meta:
        verbose_name = _("scheduler event")
        verbose_name_plural = _("scheduler events")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["created_at"], name="jobs_scheduler_event_recent")]
        constraints = [
            models.CheckConstraint(
                condition=Q(action__in=SchedulerAction.values), name="jobs_scheduler_event_action"
            ),
        ]

    def __str__(self) -> str:
        return str(self.get_action_display())

    @classmethod
    def record(cls, action: str, *, at: datetime | None = None, **fields: Any) -> SchedulerEvent:
        """An event by whoever is acting now (jobs.models.changes.current_actor)."""
        actor = current_actor()
        user = actor.user if actor.username else None
        return cls.objects.create(
            action=action,
            created_at=at or timezone.now(),
            user=user if user is not None and user.pk is not None else None,
            username=actor.username,
            channel=actor.channel,
            **fields,
        )


class SchedulerHealth(models.Model):
    """The incident row: `down_since` is set by the one process whose conditional update
    finds it empty (it sends the alert) and emptied by the one that finds it set (it sends
    the recovery notice)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=THE_ROW)
    down_since = models.DateTimeField(_("down since"), null=True, blank=True)
    reason = models.CharField(_("reason"), max_length=EVENT_TEXT_MAX_LENGTH, blank=True)
    recovered_at = models.DateTimeField(_("recovered at"), null=True, blank=True)

    class Meta:
        verbose_name = _("scheduler health")
        verbose_name_plural = _("scheduler health")
        default_permissions = ()
        constraints = [
            models.CheckConstraint(condition=Q(id=THE_ROW), name="jobs_scheduler_health_one_row"),
        ]

    def __str__(self) -> str:
        return str(_("down") if self.down_since else _("healthy"))
