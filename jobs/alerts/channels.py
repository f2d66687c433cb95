"""Sending alerts to notification channels (jobs.models.NotificationChannel) through Apprise.

Called by the dispatcher's threads (jobs.alerts.deliver), never on the run path, for
the same notices as the job's webhook and e-mail: a failure, a recovery, a run running
long. Each channel is tried like a webhook (jobs/alerts/retries.py): up to
JOBS_ALERT_ATTEMPTS times, JOBS_ALERT_TIMEOUT_SECONDS each (Apprise's connect and read
timeouts, and a bound on the whole try), the URL checked again right before each try
(jobs/outbound/apprise_urls.py). A failed delivery is logged and counted, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from jobs import conf
from jobs.alerts.retries import try_delivery
from jobs.alerts.webhook import REFUSED
from jobs.models import NotificationChannel, channels_for
from jobs.outbound import apprise_urls
from jobs.outbound import rules as outbound
from jobs.outbound.http import Deadline, within
from jobs.text import clean_remote

logger = logging.getLogger("jobs.alerts")

# Chat services cut long messages anyway; the log tail is the long part.
TITLE_MAX_CHARS = 250
BODY_MAX_CHARS = 4000
METRIC_CHANNEL = "apprise"

# What the title says happened, by event.
VERBS = {
    "failure": "failed",
    "recovery": "recovered",
    "running_long": "is running long",
    "test": "test message",
}


def message(payload: dict[str, Any]) -> tuple[str, str]:
    """The title and body of an alert, each bounded."""
    job, event = payload["job"], payload["event"]
    verb = VERBS.get(event, event)
    in_a_row = payload.get("failures_in_a_row") or 0
    if event == "failure" and in_a_row > 1:
        verb = f"failed {in_a_row} times in a row"
    title = f"[scheduler] {job['name']} {verb}"
    lines = [f"Status: {payload.get('status', '')}"]
    if payload.get("expected_seconds"):
        lines.append(f"Expected to take at most: {payload['expected_seconds']:.0f} s")
    lines += [
        f"Started: {payload.get('started_at') or ''}",
        f"Finished: {payload.get('finished_at') or ''}",
        f"Details: {payload.get('dashboard_url', '')}",
    ]
    tail = payload.get("log_tail") or ""
    if tail:
        lines += ["", tail]
    body = "\n".join(lines)
    if len(body) > BODY_MAX_CHARS:
        body = body[: BODY_MAX_CHARS - 1] + "…"
    return title[:TITLE_MAX_CHARS], body


def send_once(url: str, title: str, body: str) -> tuple[bool, int | None, str]:
    """One try: the URL checked again (DNS may have changed), then sent within the
    alert timeout. The error never quotes the URL."""
    timeout = conf.alert_timeout()
    try:
        with Deadline(timeout) as deadline:
            target = within(deadline, apprise_urls.vetted, url)
    except (apprise_urls.BadChannelUrl, outbound.Refused) as exc:
        return False, None, REFUSED + clean_remote(str(exc))
    except (OSError, TimeoutError) as exc:
        return False, None, clean_remote(f"{type(exc).__name__}: {exc}")
    plugin = target.plugin
    # Apprise's own per-socket timeouts; the Deadline below bounds the whole try.
    plugin.socket_connect_timeout = timeout
    plugin.socket_read_timeout = timeout
    try:
        with Deadline(timeout * 2) as deadline:
            sent = within(deadline, plugin.notify, body, title)
    except TimeoutError:
        return False, None, f"timed out: no answer within {timeout:g} s"
    except Exception as exc:  # a plugin's own error: a failed try, never the run's
        return False, None, clean_remote(f"{type(exc).__name__}")
    return (True, None, "") if sent else (False, None, "the service did not accept it")


def send_to_channel(
    channel: NotificationChannel,
    payload: dict[str, Any],
    *,
    wait: Callable[[float], Any] | None = None,
    attempts: bool = True,
) -> bool:
    """Deliver one alert to one channel (retried unless attempts=False); whether sent."""
    title, body = message(payload)
    send = partial(send_once, channel.url, title, body)
    if not attempts:
        ok, _code, error = send()
        if not ok:
            logger.warning("test message to channel %r failed: %s", channel.name, error)
        return ok
    delivery = try_delivery(
        METRIC_CHANNEL,
        send,
        what=f"alert {payload['event']} for run {payload['run']['id']} to {channel.name!r}",
        wait=wait,
    )
    return delivery.sent


def deliver_to_channels(
    job: Any, payload: dict[str, Any], *, wait: Callable[[float], Any] | None = None
) -> list[bool]:
    """Send the alert to each of the job's channels that takes its event."""
    outcomes = []
    for channel in channels_for(job):
        if channel.sends(payload["event"]):
            try:
                outcomes.append(send_to_channel(channel, payload, wait=wait))
            except Exception:
                logger.exception("alert to channel %r failed", channel.name)
                outcomes.append(False)
    return outcomes


def send_test(channel: NotificationChannel, who: str = "") -> tuple[bool, str]:
    """A test message, tried once (the "Send a test" buttons); whether sent and why not."""
    payload = {
        "event": "test",
        "job": {"name": channel.name},
        "status": f"test by {who}" if who else "test",
        "run": {"id": ""},
    }
    title, body = message(payload)
    ok, _code, error = send_once(channel.url, title, body)
    return ok, error
