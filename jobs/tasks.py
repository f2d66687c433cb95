"""Huey tasks: thin wrappers around the engine (used when REDIS_URL is set).

Start workers with `python manage.py run_huey` on any number of machines.
"""

from __future__ import annotations

import logging

from django.conf import settings
from huey import crontab
from huey.contrib.djhuey import db_periodic_task, db_task, on_shutdown

from jobs import alerts, conf
from jobs.alerts import health
from jobs.runtime import worker
from jobs.runtime.pool import HueyHandoff
from jobs.runtime.scheduler import Scheduler

logger = logging.getLogger(__name__)

# Runs per Huey message: enough to amortise a message, few enough to spread over workers.
RUNS_PER_MESSAGE = 50


@db_task(name="jobs.execute_runs")
def execute_runs(run_keys: list[str]) -> int:
    """Execute handed-out runs (each starts once, however often its message arrives)."""
    return worker.execute_handed_out(run_keys, resend=send_runs)


def send_runs(run_keys: list[str]) -> int:
    """Hand runs to the Huey workers, RUNS_PER_MESSAGE at a time."""
    for start in range(0, len(run_keys), RUNS_PER_MESSAGE):
        execute_runs(run_keys[start : start + RUNS_PER_MESSAGE])
    return len(run_keys)


@on_shutdown()
def deliver_queued_alerts() -> None:
    """A worker stopping flushes the failure alerts it queued (bounded by the grace)."""
    alerts.shutdown(conf.shutdown_grace())


@db_periodic_task(crontab(minute="*"), name="jobs.scheduler_pass")
def scheduler_pass() -> None:
    """A scheduler pass once a minute, for deployments that run only Huey consumers.

    Off unless JOBS_HUEY_PERIODIC_PASS is set: it has minute precision (a job due at
    12:00:30 starts at about 12:01:00), where runscheduler starts it within milliseconds.
    """
    if not settings.JOBS_HUEY_PERIODIC_PASS:
        return
    stats = Scheduler(handoff=HueyHandoff(send_runs)).run_pass()
    # Without runscheduler, this pass is the scheduler that notices it is down.
    health.watch()
    logger.info(
        "periodic pass: claimed %d, handed out %d, reaped %d",
        stats.claimed,
        stats.fed,
        stats.reaped,
    )
