"""Huey tasks: thin wrappers around the engine (used when REDIS_URL is set).

Start workers with `python manage.py run_huey` on any number of machines.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from huey import RedisHuey, crontab
from huey.contrib.djhuey import db_periodic_task, db_task, on_shutdown

from jobs import alerts, conf
from jobs.alerts import health
from jobs.huey_serializer import JSONSerializer
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


@functools.cache
def _shell_queue_task(queue: str) -> Any:
    """`execute_runs` on the Huey queue of the shell workers (JOBS_SHELL_HUEY_QUEUE):
    the same task name, so that a `run_huey` started with HUEY_QUEUE=<queue> runs it."""
    shell_huey = RedisHuey(
        name=queue,
        url=conf.setting("REDIS_URL"),
        results=False,
        utc=True,
        serializer=JSONSerializer(),
    )
    return shell_huey.task(name="jobs.execute_runs")(execute_runs.func)


def shell_sender() -> Callable[[list[str]], int] | None:
    """Where shell runs go when JOBS_SHELL_HUEY_QUEUE names a queue of their own (the
    workers of another OS user, docs/deployment.md); None: with the others."""
    queue = conf.setting("JOBS_SHELL_HUEY_QUEUE")
    if not queue or not conf.uses_huey():
        return None
    task = _shell_queue_task(queue)

    def send(run_keys: list[str]) -> int:
        for start in range(0, len(run_keys), RUNS_PER_MESSAGE):
            task(run_keys[start : start + RUNS_PER_MESSAGE])
        return len(run_keys)

    return send


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
    if not conf.setting("JOBS_HUEY_PERIODIC_PASS"):
        return
    stats = Scheduler(handoff=HueyHandoff(send_runs, send_shell=shell_sender())).run_pass()
    # Without runscheduler, this pass is the scheduler that notices it is down.
    health.watch()
    logger.info(
        "periodic pass: claimed %d, handed out %d, reaped %d",
        stats.claimed,
        stats.fed,
        stats.reaped,
    )
