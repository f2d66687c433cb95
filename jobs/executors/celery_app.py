"""The host's Celery app as the celery executor uses it: loading it, sending a run's
task, reading its state from the result backend, revoking it.

Imported only by the celery executor and, where Celery is installed, by the screens
that describe a task's signature (jobs.executors.celery_names says whether it is):
this module imports Celery itself.

A run's task id is the run's id. Before a followed task is published, its state in the
result backend is set to SENT: a run handed back (its scheduler stopped) or lost (its
scheduler killed) finds that mark when it runs again, and follows the task it sent
rather than sending a second one. A run that finds no mark was never published.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any, NamedTuple

from celery import Celery, states
from celery.backends.base import DisabledBackend
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from jobs import conf
from jobs.executors.celery_names import CallArguments
from jobs.pytasks import signature
from jobs.runs import scheduled_for_text

# The state a followed task has in the result backend between our send and a worker's
# first word about it (Celery's own PENDING means "nothing known": never sent).
SENT = "SENT"
RESULT = "result"
WAIT_SENT = "sent"
WAITS = (RESULT, WAIT_SENT)
# Sending gives up after these retries (about 1.5 s with a broker that refuses): a broker
# that is down fails the run, which our own retries then repeat, instead of hanging it.
SEND_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0.0,
    "interval_step": 0.5,
    "interval_max": 1.0,
}
DEFAULT_QUEUE = "default"


class TaskState(NamedTuple):
    """What the result backend says of a task: Celery's state name, its result (the
    return value, or the exception of a failure, retry or revoke), the worker's
    traceback, and the worker's name when the backend was told it."""

    state: str
    result: Any
    traceback: str
    worker: str

    @property
    def done(self) -> bool:
        return self.state in states.READY_STATES


def app() -> Celery:
    """The app JOBS_CELERY_APP names (``proj.celery.app`` or ``proj.celery:app``), or
    Celery's current app; ImproperlyConfigured when the path names no Celery app."""
    return _app_at(conf.celery_app_path())


@functools.cache
def _app_at(path: str) -> Celery:
    if not path:
        from celery import current_app

        return current_app._get_current_object()
    try:
        value = import_string(path.replace(":", "."))
    except ImportError as error:
        raise ImproperlyConfigured(
            f"JOBS_CELERY_APP {path!r} cannot be imported: {error}"
        ) from None
    if not isinstance(value, Celery):
        raise ImproperlyConfigured(f"JOBS_CELERY_APP {path!r} is not a Celery app")
    return value


def described_task(name: str) -> signature.RegisteredTask | None:
    """The task registered as `name` in this process's Celery app, its parameters read
    from its signature as a python task's are; None when this process does not have it
    (the task lives only in the workers' code) or has no app to ask."""
    try:
        task = app().tasks.get(name)
    except Exception:  # an app that cannot load: the JSON editor it is, not a 500
        return None
    if task is None:
        return None
    return signature.describe(task.run, name)


def scheduled_for_kwargs(celery: Celery, name: str, scheduled_for: datetime) -> dict[str, str]:
    """{"scheduled_for": the ISO 8601 UTC text} when the task `name` is registered in
    this process's app and its signature declares the parameter, else nothing: a task
    only the workers know is sent its arguments as they are (an unexpected keyword would
    fail it). Text, not a datetime: Celery's JSON serializer carries strings."""
    try:
        task = celery.tasks.get(name)
    except Exception:  # an app whose tasks cannot load: send the arguments as they are
        return {}
    if task is None:
        return {}
    keywords = signature.scheduled_for_keywords(task.run, scheduled_for)
    return {key: scheduled_for_text(value) for key, value in keywords.items()}


def has_result_backend(celery: Celery) -> bool:
    return not isinstance(celery.backend, DisabledBackend)


def follows_results(celery: Celery) -> bool:
    """Whether runs follow their task to its end (JOBS_CELERY_WAIT, by default whether
    the app has a result backend); ImproperlyConfigured for a value it cannot honour."""
    wait = conf.celery_wait() or (RESULT if has_result_backend(celery) else WAIT_SENT)
    if wait not in WAITS:
        raise ImproperlyConfigured(f"JOBS_CELERY_WAIT must be result or sent, got {wait!r}")
    if wait == RESULT and not has_result_backend(celery):
        raise ImproperlyConfigured(
            "JOBS_CELERY_WAIT is result but the Celery app has no result backend "
            "(set its result_backend, or JOBS_CELERY_WAIT=sent)"
        )
    return wait == RESULT


def celery_queue(celery: Celery, queue: str) -> str:
    """The Celery queue of one of our queues: JOBS_CELERY_QUEUES's name for it, else its
    own, and Celery's default queue for our default one."""
    mapped = conf.celery_queues().get(queue)
    if mapped:
        return mapped
    if queue == DEFAULT_QUEUE:
        return str(celery.conf.task_default_queue)
    return queue


class Sending(NamedTuple):
    """One task to send: its name, id, arguments, Celery queue and time limit (None:
    none)."""

    name: str
    task_id: str
    call: CallArguments
    queue: str
    time_limit: int | None


def send(celery: Celery, sending: Sending, *, mark: bool) -> None:
    """Publish the task (after marking it SENT in the result backend when `mark`); the
    broker's or the backend's error when either cannot be reached, after the few
    retries of SEND_RETRY_POLICY."""
    if mark:
        celery.backend.store_result(sending.task_id, {"sent_at": _now()}, SENT)
    options: dict[str, Any] = {}
    if sending.time_limit:
        # Celery's worker kills the task past it, and drops it unstarted once expired.
        options["time_limit"] = sending.time_limit
        options["expires"] = sending.time_limit
    celery.send_task(
        sending.name,
        args=sending.call.args,
        kwargs=sending.call.kwargs,
        task_id=sending.task_id,
        queue=sending.queue,
        retry=True,
        retry_policy=SEND_RETRY_POLICY,
        **options,
    )


def task_state(celery: Celery, task_id: str) -> TaskState:
    """The task's state as the result backend has it now."""
    meta = celery.backend.get_task_meta(task_id, cache=False)
    state = str(meta.get("status") or states.PENDING)
    result = meta.get("result")
    worker = str(meta.get("worker") or "")
    if not worker and state == states.STARTED and isinstance(result, dict):
        worker = str(result.get("hostname") or "")
    return TaskState(state, result, str(meta.get("traceback") or ""), worker)


def revoke(celery: Celery, task_id: str) -> None:
    """Revoke the task: a worker drops it unstarted, or ends the process running it."""
    celery.control.revoke(task_id, terminate=True, signal="SIGTERM")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
