"""Trying one alert delivery on one channel: up to JOBS_ALERT_ATTEMPTS times with
exponential backoff (JOBS_ALERT_BACKOFF_SECONDS, then double, ...). Shared by the job
alerts (jobs/alerts/__init__.py) and the scheduler-down notices (jobs/alerts/health.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from jobs import conf, metrics
from jobs.alerts.webhook import REFUSED
from jobs.text import REMOTE_TEXT_MAX_CHARS, clean_remote

logger = logging.getLogger("jobs.alerts")

# What one try at sending returned: delivered?, the HTTP status (webhooks), the error.
Send = Callable[[], tuple[bool, int | None, str]]


class Delivery(NamedTuple):
    sent: bool
    error: str  # the last try's, cleaned; "" when sent


def try_delivery(
    channel: str,
    send: Send,
    *,
    what: str,
    wait: Callable[[float], Any] | None = None,
    record: Callable[[int, bool, int | None, str], None] | None = None,
    error_max_chars: int = REMOTE_TEXT_MAX_CHARS,
) -> Delivery:
    """Call `send` until it delivers, JOBS_ALERT_ATTEMPTS times at most.

    `record(attempt, ok, code, error)` is told of every try (the job alerts keep each as
    a NotificationAttempt). `wait(seconds)` sleeps between tries and returns true to give
    up (a dispatcher shutting down). A delivery the address rules refused is not tried
    again. `what` names the alert in the log. Counted in the metrics by outcome.
    """
    attempts = conf.alert_attempts()
    backoff = conf.alert_backoff()
    wait = wait or threading.Event().wait
    error = ""
    for attempt in range(1, attempts + 1):
        ok, code, error = send()
        # A remote server's words: one printable line, bounded (jobs/text.py).
        error = clean_remote(error, error_max_chars)
        if record is not None:
            record(attempt, ok, code, error)
        if ok:
            metrics.count_alert(channel, "sent")
            return Delivery(True, "")
        logger.warning(
            "%s by %s, attempt %d/%d failed: %r", what, channel, attempt, attempts, error
        )
        if error.startswith(REFUSED):
            break  # the address rules (jobs/outbound/rules.py) will not change their mind
        if attempt < attempts and wait(backoff * 2 ** (attempt - 1)):
            break  # shutting down
    metrics.count_alert(channel, "failed")
    return Delivery(False, error)
