"""Huey tasks: thin wrappers around the engine (used when REDIS_URL is set).

Start workers with `python manage.py run_huey` on any number of machines.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection
from typing import Any

from huey import RedisHuey, crontab
from huey.contrib.djhuey import HUEY, db_periodic_task, db_task, on_shutdown

from jobs import alerts, conf
from jobs.alerts import health
from jobs.huey.serializer import JSONSerializer
from jobs.queues import settings as queues
from jobs.runs import RunTicket
from jobs.runtime import worker
from jobs.runtime.pool import HueyHandoff
from jobs.runtime.scheduler import Scheduler

logger = logging.getLogger(__name__)

# Runs per Huey message: enough to amortise a message, few enough to spread over workers.
RUNS_PER_MESSAGE = 50


@db_task(name="jobs.execute_runs")
def execute_runs(run_keys: list[str]) -> int:
    """Execute handed-out runs (each starts once, however often its message arrives)."""
    return worker.execute_handed_out(run_keys, resend=_resend)


def _resend(tickets: list[RunTicket]) -> None:
    """Runs a worker handed back: out again, each to the Huey queue of its queue."""
    handoff().send_tickets(tickets)


def _chunked(task: Any) -> Callable[[list[str]], int]:
    """A sender of runs through `task`, RUNS_PER_MESSAGE per message."""

    def send(run_keys: list[str]) -> int:
        for start in range(0, len(run_keys), RUNS_PER_MESSAGE):
            task(run_keys[start : start + RUNS_PER_MESSAGE])
        return len(run_keys)

    return send


@functools.cache
def _task_on(huey_queue: str) -> Any:
    """`execute_runs` on the Huey queue `huey_queue`: the same task name, so that a
    `run_huey` consuming that queue (HUEY_QUEUE, JOBS_HUEY_CONSUME_QUEUE) runs it."""
    if huey_queue == HUEY.name:
        return execute_runs
    other = RedisHuey(
        name=huey_queue,
        url=conf.redis_url(),
        results=False,
        utc=True,
        serializer=JSONSerializer(),
    )
    return other.task(name="jobs.execute_runs")(execute_runs.func)


def send_runs(run_keys: list[str]) -> int:
    """Hand runs to the Huey workers of HUEY_QUEUE, RUNS_PER_MESSAGE at a time."""
    return _sender_to(queues.huey_prefix())(run_keys)


@functools.cache
def _sender_to(huey_queue: str) -> Callable[[list[str]], int]:
    if huey_queue == HUEY.name:
        return _chunked(execute_runs)
    return _chunked(_task_on(huey_queue))


def queue_sender(queue: str) -> Callable[[list[str]], int] | None:
    """Where runs of job queue `queue` go when JOBS_HUEY_QUEUES lists it (the Huey queue
    HUEY_QUEUE-<queue>); None: to HUEY_QUEUE, with every queue not listed."""
    target = queues.huey_target(queue)
    if target == queues.huey_prefix() or not conf.uses_huey():
        return None
    return _sender_to(target)


def shell_sender() -> Callable[[list[str]], int] | None:
    """Where shell runs go when JOBS_SHELL_HUEY_QUEUE names a queue of their own (the
    workers of another OS user, docs/deployment.md), whatever their job's queue; None:
    with the others."""
    queue = conf.shell_huey_queue()
    if not queue or not conf.uses_huey():
        return None
    return _sender_to(queue)


def handoff(served: Collection[str] | None = None) -> HueyHandoff:
    """The hand-off of a scheduler (or a worker handing runs back) to the Huey queues:
    shell runs to JOBS_SHELL_HUEY_QUEUE, the others by their queue (JOBS_HUEY_QUEUES).
    `served`: the queues this process hands out (None: all)."""
    route = queue_sender if queues.huey_queues() else None
    return HueyHandoff(send_runs, send_shell=shell_sender(), route=route, queues=served)


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
    if not conf.huey_periodic_pass():
        return
    stats = Scheduler(handoff=handoff()).run_pass()
    # Without runscheduler, this pass is the scheduler that notices it is down.
    health.watch()
    logger.info(
        "periodic pass: claimed %d, handed out %d, reaped %d",
        stats.claimed,
        stats.fed,
        stats.reaped,
    )
