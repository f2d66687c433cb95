"""Every scheduled job a Sentry Crons monitor: in-progress, ok and error check-ins.

Imported only when JOBS_SENTRY_CRONS is on and sentry-sdk is installed (extra
[sentry]); the host initialises sentry-sdk (the standalone site does with SENTRY_DSN).
Check-ins and events travel through sentry-sdk's own transport, a background thread
with a bounded queue: a Sentry that is down never slows a run.

The monitor is upserted with each in-progress check-in (`monitor_config`): its schedule
(the job's crontab, or its interval), zone, `checkin_margin` (the misfire grace, in
whole minutes, at least one) and `max_runtime` (the job's timeout, in minutes).
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

import sentry_sdk
from sentry_sdk.crons import MonitorStatus, capture_checkin

from jobs.runs import RunResult, RunTicket

# Sentry's interval units (the job's own, by name); a second is not one of them.
_UNITS = {"minute": "minute", "hour": "hour", "day": "day"}
SLUG_MAX = 50
# How much of a failed run's log an error event carries (its end: where it failed).
LOG_TAIL_CHARS = 4000


class MonitorSchedule(NamedTuple):
    """What a job's monitor is made of, from the job's row."""

    name: str
    schedule_type: str  # cron | interval | once
    cron_expression: str
    interval: int | None
    interval_unit: str
    timezone: str
    timeout_seconds: int | None


def slug(job_name: str, job_key: str) -> str:
    """The monitor's slug: the job's name in lower-case words, and the first digits of
    its id so that two jobs whose names read alike have two monitors."""
    words = re.sub(r"[^a-z0-9]+", "-", job_name.lower()).strip("-")
    return f"{words[: SLUG_MAX - 9]}-{job_key[:8]}".lstrip("-")


def monitor_config(
    schedule: MonitorSchedule, misfire_grace_seconds: float
) -> dict[str, Any] | None:
    """The monitor_config of a job, or None for one Sentry cannot watch (a job run once,
    an interval in seconds)."""
    config: dict[str, Any]
    if schedule.schedule_type == "cron" and schedule.cron_expression:
        config = {"schedule": {"type": "crontab", "value": schedule.cron_expression}}
    elif schedule.schedule_type == "interval" and schedule.interval:
        interval, unit = schedule.interval, schedule.interval_unit
        if unit == "second":
            if interval % 60:
                return None
            interval, unit = interval // 60, "minute"
        config = {"schedule": {"type": "interval", "value": interval, "unit": _UNITS[unit]}}
    else:
        return None
    config["timezone"] = schedule.timezone or "UTC"
    config["checkin_margin"] = max(1, math.ceil(misfire_grace_seconds / 60))
    if schedule.timeout_seconds:
        config["max_runtime"] = max(1, math.ceil(schedule.timeout_seconds / 60))
    return config


def started(ticket: RunTicket, config: dict[str, Any]) -> str | None:
    """The in-progress check-in (upserting the monitor); its id, for the end."""
    return capture_checkin(
        monitor_slug=slug(ticket.job_name, ticket.job_key),
        status=MonitorStatus.IN_PROGRESS,
        monitor_config=config,
    )


def finished(result: RunResult, check_in_id: str | None) -> None:
    """The ok or error check-in; a failure also goes to Sentry as an event with the
    run's context."""
    ticket = result.ticket
    capture_checkin(
        monitor_slug=slug(ticket.job_name, ticket.job_key),
        check_in_id=check_in_id,
        status=MonitorStatus.OK if result.succeeded else MonitorStatus.ERROR,
        duration=(result.finished_at - result.started_at).total_seconds(),
    )
    if not result.succeeded:
        report_failure(result)


def report_failure(result: RunResult) -> None:
    ticket = result.ticket
    with sentry_sdk.new_scope() as scope:
        scope.set_tag("job", ticket.job_name[:200])
        scope.set_tag("queue", ticket.queue)
        scope.set_tag("executor", ticket.executor)
        scope.set_context(
            "run",
            {
                "job_id": ticket.job_key,
                "job_name": ticket.job_name,
                "run_id": ticket.run_key,
                "attempt": ticket.attempt,
                "final_attempt": ticket.final_attempt,
                "scheduled_for": ticket.scheduled_for.isoformat(),
                "started_at": result.started_at.isoformat(),
                "finished_at": result.finished_at.isoformat(),
                "log_tail": result.log[-LOG_TAIL_CHARS:],
            },
        )
        scope.fingerprint = ["jobs-run-failed", ticket.job_key]
        sentry_sdk.capture_message(f"run of {ticket.job_name!r} failed", level="error")
