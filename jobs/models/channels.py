"""Notification channels: Apprise URLs (Slack, Teams, PagerDuty, Telegram, Discord, a JSON
receiver, e-mail...) that a job's failure, recovery and running-long alerts go to, beside
its own webhook and e-mail addresses (jobs/alerts/channels.py sends).

The URL carries the service's credential: it is write-only (stored, never shown back:
the forms leave it blank, the API never returns it, everyone is shown `slack://…`) and
checked at save and again before each send (jobs/outbound/apprise_urls.py).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from jobs.models.choices import NAME_MAX_LENGTH, NotificationKind
from jobs.outbound import apprise_urls

CHANNEL_URL_MAX_LENGTH = 2000
# The events a channel may be sent: what the job alerts send (not "did not stop").
CHANNEL_EVENTS = (
    NotificationKind.FAILURE.value,
    NotificationKind.RECOVERY.value,
    NotificationKind.RUNNING_LONG.value,
)


def all_events() -> list[str]:
    return list(CHANNEL_EVENTS)


class NotificationChannel(models.Model):
    name = models.CharField(_("name"), max_length=NAME_MAX_LENGTH, unique=True)
    # Null: the site's own channel, for any team's jobs that name it.
    team = models.ForeignKey(
        "auth.Group",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notification_channels",
        verbose_name=_("team"),
    )
    url = models.CharField(
        _("Apprise URL"),
        max_length=CHANNEL_URL_MAX_LENGTH,
        help_text=_(
            "Where to send, as Apprise reads it: slack://…, msteams://…, pagerduty://…, "
            "tgram://…, discord://…, json://host/path, mailto://… Holds the service's "
            "credential: never shown again; leave blank to keep it."
        ),
    )
    is_team_default = models.BooleanField(
        _("team default"),
        default=False,
        db_default=False,
        help_text=_("Used for every job of its team that names no channel of its own."),
    )
    is_active = models.BooleanField(_("active"), default=True, db_default=True)
    events = models.JSONField(
        _("events"),
        default=all_events,
        blank=True,
        help_text=_("Which alerts to send: failure, recovery, running_long."),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("alert channel")
        verbose_name_plural = _("alert channels")

    def __str__(self) -> str:
        return self.name

    @property
    def shown_url(self) -> str:
        return apprise_urls.shown(self.url)

    def clean(self) -> None:
        errors: dict[str, Any] = {}
        events = self.events
        if not isinstance(events, list) or not all(e in CHANNEL_EVENTS for e in events):
            errors["events"] = _("A list of: %(events)s.") % {"events": ", ".join(CHANNEL_EVENTS)}
        if self.url:
            reason = apprise_urls.refusal_at_save(self.url)
            if reason is not None:
                errors["url"] = _("This URL cannot be used: %(reason)s.") % {"reason": reason}
        if errors:
            raise ValidationError(errors)

    def sends(self, event: str) -> bool:
        return self.is_active and event in (self.events or ())


def channels_for(job: Any) -> list[NotificationChannel]:
    """The active channels a job's alerts go to: its own, else its team's defaults."""
    named = list(job.channels.all())
    if named:
        return [channel for channel in named if channel.is_active]
    if job.team_id is None:
        return []
    return list(
        NotificationChannel.objects.filter(
            team_id=job.team_id, is_team_default=True, is_active=True
        )
    )
