"""Is the scheduler down? Noticed by any scheduler process and by `manage.py checkhealth`,
told once per incident to JOBS_ADMIN_ALERT_URL and JOBS_ADMIN_ALERT_EMAILS, with a
recovery notice.

The scheduler is *down* when
- no scheduler process has sent a heartbeat for JOBS_MISFIRE_GRACE_SECONDS +
  JOBS_LEASE_SECONDS (at least three heartbeats, jobs.metrics.HEARTBEAT_EVERY_SECONDS,
  so a healthy process is never taken for a dead one; a process beats once per pass, so
  its --tick must stay below that, as the default 1 s does), or
- an active job has been due for that long and nobody has claimed it (the processes
  are there but their claims fail, or they cannot keep up), or
- a queue's runs have been ready for that long and no live scheduler serves that queue
  (every process was started with `--queues` naming others), or
- a queue's oldest ready run has waited longer than JOBS_QUEUE_STALL_SECONDS (too few
  workers for it, or its JOBS_QUEUE_LIMITS slots held by long runs). jobs/queues/status.py reads
  both: the look-up finds nothing in one step of an index while no run waits that long.

A paused scheduler is not down: its work is unclaimed on purpose and its processes may
be stopped for the maintenance. A pause neither opens nor closes an incident, and after
a resume the clocks start again at the resume, so the moments before the first claim
are not taken for an outage.

Once per incident, across any number of processes: the database decides. The one
SchedulerHealth row is marked down by a conditional update (`WHERE down_since IS NULL`)
and marked up again by another (`WHERE down_since = <the incident's>`): only the process
whose update changed the row sends the alert, or the recovery notice. Each is a
SchedulerEvent too, with where its alerts went.

Alerts go through the job alerts' own delivery: post_webhook (the address rules of
jobs/outbound/rules.py, the total deadline, whatever it adds to every webhook) and Django's
mail, each tried JOBS_ALERT_ATTEMPTS times with JOBS_ALERT_BACKOFF_SECONDS doubling. A
scheduler sends them from a background thread, never from its loop; checkhealth sends
them before it exits.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.core.mail import send_mail
from django.db import close_old_connections, connection
from django.db.models import Max
from django.urls import reverse
from django.utils import timezone

from jobs import conf, metrics
from jobs.access.masking import url_origin
from jobs.alerts import events
from jobs.alerts.retries import try_delivery
from jobs.alerts.webhook import new_webhook_id, post_webhook
from jobs.models import (
    Channel,
    Job,
    PauseWindow,
    SchedulerAction,
    SchedulerEvent,
    SchedulerHealth,
    SchedulerHeartbeat,
    SchedulerState,
    acting,
)
from jobs.models.scheduler import EVENT_TEXT_MAX_LENGTH, THE_ROW
from jobs.queues import status as queue_status
from jobs.sql import store
from jobs.text import clean_remote, one_line

logger = logging.getLogger(__name__)

# A scheduler process asks at most this often (a few indexed look-ups each time).
CHECK_EVERY_SECONDS = 5.0

OK = "ok"
DOWN = "down"
PAUSED = "paused"

DOWN_EVENT = events.SCHEDULER_DOWN
RECOVERED_EVENT = events.SCHEDULER_RECOVERED


class Health(NamedTuple):
    status: str  # OK, DOWN or PAUSED
    reason: str  # one line saying why (empty when OK)
    checked_at: datetime


# The Huey periodic pass (JOBS_HUEY_PERIODIC_PASS) claims and beats once a minute.
PERIODIC_PASS_EVERY = timedelta(minutes=1)


def unclaimed_limit() -> timedelta:
    """Due work waiting longer than this is unclaimed: the misfire grace plus a lease
    (plus a minute where the Huey periodic pass is the scheduler)."""
    limit = conf.misfire_grace() + conf.lease()
    if conf.huey_periodic_pass():
        limit += PERIODIC_PASS_EVERY
    return limit


def silence_limit() -> timedelta:
    """No heartbeat for longer than this: no scheduler process is alive."""
    return max(unclaimed_limit(), timedelta(seconds=3 * metrics.HEARTBEAT_EVERY_SECONDS))


def _seconds(delta: timedelta) -> int:
    return int(delta.total_seconds())


def assess(now: datetime | None = None, switch: SchedulerState | None = None) -> Health:
    """How the scheduler looks from the database now (three indexed look-ups; `switch`,
    the pause row, when the caller has read it already)."""
    now = now or timezone.now()
    if switch is None:
        switch = SchedulerState.current()
    window = switch.window
    if window.active(now):
        return Health(PAUSED, _paused_reason(window), now)
    resumed = switch.paused_until if window.expired(now) else switch.resumed_at
    latest = SchedulerHeartbeat.objects.aggregate(latest=Max("seen_at"))["latest"]
    signs = [moment for moment in (latest, resumed) if moment is not None]
    if not signs:
        return Health(DOWN, "no scheduler process has ever sent a heartbeat", now)
    if now - max(signs) > silence_limit():
        if latest is None:
            quiet = f"since the resume at {resumed.isoformat()}"
        else:
            quiet = f"for {_seconds(now - latest)} s (the last at {latest.isoformat()})"
        return Health(DOWN, f"no scheduler heartbeat {quiet}", now)
    limit = unclaimed_limit()
    oldest = (
        Job.objects.due(now - limit)
        .order_by("next_run_at")
        .values_list("next_run_at", "name")
        .first()
    )
    if oldest is not None:
        due_at, name = oldest
        waiting_since = max(due_at, resumed) if resumed is not None else due_at
        if now - waiting_since > limit:
            return Health(
                DOWN,
                one_line(
                    f"job “{name}” has been due for {_seconds(now - due_at)} s and no "
                    f"scheduler has claimed it (more than {_seconds(limit)} s: "
                    f"JOBS_MISFIRE_GRACE_SECONDS + JOBS_LEASE_SECONDS)",
                    EVENT_TEXT_MAX_LENGTH,
                ),
                now,
            )
    stuck = queue_status.stuck_queue(
        now,
        unserved_after=limit,
        within=silence_limit(),
        stalled_after=conf.queue_stall(),
        since=resumed,
    )
    if stuck is not None:
        return Health(DOWN, one_line(_stuck_reason(stuck), EVENT_TEXT_MAX_LENGTH), now)
    return Health(OK, "", now)


def _stuck_reason(stuck: queue_status.StuckQueue) -> str:
    runs = "1 run" if stuck.waiting == 1 else f"{stuck.waiting} runs"
    waiting = f"queue {stuck.name} has {runs} waiting, the oldest for {_age(stuck.oldest_seconds)}"
    if not stuck.served:
        return f"{waiting}, and no running scheduler serves it"
    stall = _seconds(conf.queue_stall() or timedelta())
    return f"{waiting} (longer than JOBS_QUEUE_STALL_SECONDS, {stall} s)"


def _age(seconds: float) -> str:
    """40 s, 7 minutes, 3 hours 5 minutes: whole units, read at a glance in an alert."""
    if seconds < 120:
        return f"{int(seconds)} s"
    minutes = int(seconds // 60)
    if minutes < 120:
        return f"{minutes} minutes"
    return f"{minutes // 60} hours {minutes % 60} minutes"


def _paused_reason(window: PauseWindow) -> str:
    until = window.paused_until.isoformat() if window.paused_until else "a resume"
    return f"paused since {window.paused_at.isoformat()} until {until}"


# --- once per incident -----------------------------------------------------------------


def open_incident() -> datetime | None:
    """Since when the scheduler has been known down (None: no incident)."""
    return SchedulerHealth.objects.filter(pk=THE_ROW).values_list("down_since", flat=True).first()


def watch(
    now: datetime | None = None,
    *,
    deliver_in_background: bool = False,
    alert: bool = True,
) -> Health:
    """Assess the scheduler; open an incident when it is down and none is open, close
    the open one when it is well again; the process that does either sends the alert or
    the recovery notice (unless `alert` is false). Returns the assessment."""
    health = assess(now)
    if health.status == PAUSED:
        return health
    down_since = open_incident()
    announcement = None
    if health.status == DOWN and down_since is None:
        announcement = _mark_down(health)
    elif health.status == OK and down_since is not None:
        announcement = _mark_recovered(health, down_since)
    if announcement is not None and alert:
        if deliver_in_background:
            _send_in_background(*announcement)
        else:
            deliver(*announcement)
    return health


def _mark_down(health: Health) -> tuple[int, dict[str, Any]] | None:
    now = health.checked_at
    with store().writing():
        SchedulerHealth.objects.bulk_create([SchedulerHealth(pk=THE_ROW)], ignore_conflicts=True)
        won = SchedulerHealth.objects.filter(pk=THE_ROW, down_since__isnull=True).update(
            down_since=now, reason=health.reason[:EVENT_TEXT_MAX_LENGTH], recovered_at=None
        )
        if not won:
            return None  # another process noticed it first: theirs to tell
        with acting(None, Channel.SYSTEM):
            event = SchedulerEvent.record(SchedulerAction.DOWN, at=now, note=health.reason)
    logger.error("the scheduler is down: %s", health.reason)
    return event.pk, {
        **events.envelope(DOWN_EVENT, now),
        "reason": health.reason,
        "down_since": now,
        "noticed_by": process_name(),
        "dashboard_url": _dashboard_url(),
    }


def _mark_recovered(health: Health, down_since: datetime) -> tuple[int, dict[str, Any]] | None:
    now = health.checked_at
    with store().writing():
        won = SchedulerHealth.objects.filter(pk=THE_ROW, down_since=down_since).update(
            down_since=None, reason="", recovered_at=now
        )
        if not won:
            return None
        with acting(None, Channel.SYSTEM):
            event = SchedulerEvent.record(
                SchedulerAction.RECOVERED,
                at=now,
                note=f"down for {_seconds(now - down_since)} s since {down_since.isoformat()}",
            )
    logger.warning("the scheduler has recovered (down since %s)", down_since.isoformat())
    return event.pk, {
        **events.envelope(RECOVERED_EVENT, now),
        "down_since": down_since,
        "recovered_at": now,
        "down_seconds": _seconds(now - down_since),
        "noticed_by": process_name(),
        "dashboard_url": _dashboard_url(),
    }


def process_name() -> str:
    """`host:pid` of the process that noticed (as scheduler processes name themselves)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _dashboard_url() -> str:
    return f"{conf.base_url()}{reverse('jobs:scheduler')}"


# --- sending ---------------------------------------------------------------------------


def deliver(
    event_id: int, payload: dict[str, Any], *, wait: Callable[[float], Any] | None = None
) -> list[str]:
    """Send `payload` to the admin alert URL and addresses (those set), each tried
    JOBS_ALERT_ATTEMPTS times; record how it went on the event. Returns the outcome per
    channel ("webhook ...: sent", ...)."""
    outcomes: list[str] = []
    url = conf.admin_alert_url()
    if url:
        delivery = new_webhook_id()  # the same webhook-id on every try of it
        ok, error = try_delivery(
            "webhook",
            lambda: post_webhook(url, payload, webhook_id=delivery),
            what="scheduler alert",
            wait=wait,
        )
        outcomes.append(f"webhook {url_origin(url)}: " + ("sent" if ok else f"failed: {error}"))
    recipients = conf.admin_alert_emails()
    if recipients:
        ok, error = try_delivery(
            "email", lambda: _send_email(recipients, payload), what="scheduler alert", wait=wait
        )
        outcomes.append(f"e-mail to {len(recipients)}: " + ("sent" if ok else f"failed: {error}"))
    if not outcomes:
        outcomes.append("no JOBS_ADMIN_ALERT_URL or JOBS_ADMIN_ALERT_EMAILS set")
    summary = clean_remote("; ".join(outcomes), EVENT_TEXT_MAX_LENGTH)
    SchedulerEvent.objects.filter(pk=event_id).update(delivery=summary)
    return outcomes


def _send_email(recipients: list[str], payload: dict[str, Any]) -> tuple[bool, int | None, str]:
    if payload["event"] == DOWN_EVENT:
        subject = "[scheduler] the scheduler is down"
        lines = [
            f"The scheduler is down: {payload['reason']}.",
            f"Noticed at {payload['down_since'].isoformat()} by {payload['noticed_by']}.",
        ]
    else:
        subject = "[scheduler] the scheduler has recovered"
        lines = [
            f"The scheduler has recovered at {payload['recovered_at'].isoformat()}, after "
            f"{payload['down_seconds']} s down (since {payload['down_since'].isoformat()}).",
        ]
    lines += ["", f"Details: {payload['dashboard_url']}"]
    try:
        send_mail(one_line(subject), "\n".join(lines), None, recipients)
    except Exception as exc:
        # smtplib's errors, socket errors, a backend's own: all are a failed attempt.
        return False, None, f"{type(exc).__name__}: {exc}"
    return True, None, ""


_senders: list[threading.Thread] = []
_senders_lock = threading.Lock()


def _send_in_background(event_id: int, payload: dict[str, Any]) -> None:
    def send() -> None:
        try:
            close_old_connections()
            deliver(event_id, payload)
        except Exception:
            logger.exception("sending the scheduler alert failed")
        finally:
            connection.close()

    thread = threading.Thread(target=send, name="scheduler-alert", daemon=True)
    with _senders_lock:
        _senders[:] = [t for t in _senders if t.is_alive()]
        _senders.append(thread)
    thread.start()


def watch_in_background() -> bool:
    """watch() in a thread of its own, delivering from there (flush() waits for it too),
    so that a scheduler's loop goes on claiming meanwhile: its queue look-up reads the
    runs of every queue, tens of ms with a big history, and a job due meanwhile waited.
    False (nothing started) while the previous one is still at it."""
    with _senders_lock:
        if any(t.is_alive() and t.name == _WATCHER for t in _senders):
            return False

    def check() -> None:
        try:
            close_old_connections()
            watch()
        except Exception:
            # As a failed pass would: logged, and the next check tries again.
            logger.exception("checking the scheduler's health failed")
        finally:
            connection.close()  # this thread's own

    thread = threading.Thread(target=check, name=_WATCHER, daemon=True)
    with _senders_lock:
        _senders[:] = [t for t in _senders if t.is_alive()]
        _senders.append(thread)
    thread.start()
    return True


_WATCHER = "scheduler-health"


def flush(timeout: float) -> bool:
    """Wait up to `timeout` for the alerts being sent in the background, and a check
    under way (at exit)."""
    with _senders_lock:
        pending = list(_senders)
    deadline = time.monotonic() + timeout
    for thread in pending:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in pending)


# --- what the screens and the API show ----------------------------------------------------


class Overview(NamedTuple):
    state: str  # "running", "paused" or "down"
    switch: SchedulerState
    health: Health
    down_since: datetime | None  # the open incident, if any
    schedulers: list[SchedulerHeartbeat]  # processes seen lately, latest first


RUNNING = "running"


def overview(now: datetime | None = None) -> Overview:
    """The scheduler at a glance: the switch, the health, the live processes."""
    now = now or timezone.now()
    switch = SchedulerState.current()
    health = assess(now, switch)
    if health.status == PAUSED:
        state = PAUSED
    elif health.status == DOWN:
        state = DOWN
    else:
        state = RUNNING
    schedulers = list(
        SchedulerHeartbeat.objects.filter(seen_at__gte=now - metrics.alive_within()).order_by(
            "-seen_at", "name"
        )
    )
    return Overview(state, switch, health, open_incident(), schedulers)
