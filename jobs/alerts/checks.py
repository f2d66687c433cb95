"""System checks of the alert settings: where "the scheduler is down" may be sent, and
Apprise installed when alert channels exist."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.core.checks import Error, register
from django.db import DatabaseError

from jobs import conf
from jobs.outbound import apprise_urls
from jobs.outbound import rules as outbound


@register(conf.SETTINGS_CHECKS)
def admin_alert_url_allowed(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """JOBS_ADMIN_ALERT_URL under the address rules of job webhooks (jobs/outbound/rules.py),
    as a job's webhook URL is when it is saved; sending checks it again."""
    url = conf.admin_alert_url()
    if not url:
        return []
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        reason = "its port is not a number"
    else:
        reason = outbound.check_for_validation(parts.hostname or "", port)
    if reason is None:
        return []
    return [
        Error(
            f"JOBS_ADMIN_ALERT_URL may not be sent to: {reason}.",
            hint=(
                "Alerts may only go to public addresses; list an internal receiver in "
                "JOBS_WEBHOOK_ALLOWED_HOSTS (docs/alerts.md)."
            ),
            id="jobs.E011",
        )
    ]


@register(conf.SETTINGS_CHECKS)
def apprise_installed(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Alert channels (jobs.models.NotificationChannel) are sent through Apprise, an optional
    extra: with channels saved and no apprise, every alert to them would fail."""
    if apprise_urls.installed():
        return []
    from jobs.models import NotificationChannel

    try:
        exists = NotificationChannel.objects.filter(is_active=True).exists()
    except DatabaseError:  # not migrated yet
        return []
    if not exists:
        return []
    return [
        Error(
            "Alert channels are set up but Apprise is not installed.",
            hint='Install the extra: pip install "django-jobs-scheduler[apprise]".',
            id="jobs.E015",
        )
    ]
