"""System checks of the queue settings: JOBS_QUEUE_LIMITS, JOBS_HUEY_QUEUES and
JOBS_HUEY_CONSUME_QUEUE. An error stops runscheduler, run_huey and the site at start-up
with a message naming the setting, instead of a process that limits nothing."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register

from jobs import conf
from jobs.queues import settings as queues


@register(conf.SETTINGS_CHECKS)
def queue_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    errors = []
    try:
        queues.parse_limits(conf.queue_limits_setting())
    except queues.QueueError as exc:
        errors.append(
            Error(
                str(exc),
                hint='Write queue=limit pairs, comma-separated: "reports=2,default=20".',
                id="jobs.E012",
            )
        )
    listed = conf.huey_queues()
    try:
        if listed:
            queues.parse_names(listed, "JOBS_HUEY_QUEUES")
    except queues.QueueError as exc:
        errors.append(Error(str(exc), hint="Name job queues, separated by commas.", id="jobs.E013"))
    consumed = conf.huey_consume_queue()
    if consumed and consumed not in listed:
        errors.append(
            Error(
                f"JOBS_HUEY_CONSUME_QUEUE is {consumed!r}, which JOBS_HUEY_QUEUES does not "
                "list: no scheduler sends runs to that Huey queue.",
                hint="List it in JOBS_HUEY_QUEUES, on every process.",
                id="jobs.E014",
            )
        )
    return errors
