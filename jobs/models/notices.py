"""What the scheduler records beside the runs: every try at sending an alert
(jobs/alerts), and each scheduler process's heartbeat (jobs/metrics)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from jobs.models.choices import DeliveryChannel, NotificationKind, NotificationStatus
from jobs.models.run import JobHistory


class NotificationAttempt(models.Model):
    """One try at delivering one alert about one run: every try is kept, so the run
    shows what was sent, where, and why a delivery failed."""

    run = models.ForeignKey(JobHistory, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(_("kind"), max_length=16, choices=NotificationKind.choices)
    channel = models.CharField(_("channel"), max_length=16, choices=DeliveryChannel.choices)
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
                condition=Q(channel__in=DeliveryChannel.values),
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
    # The queues whose runs this process executes (`runscheduler --queues`), by name,
    # comma-separated; empty: every queue (jobs/queues/status.py reads it).
    queues = models.CharField(_("queues"), max_length=500, blank=True, default="", db_default="")

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
