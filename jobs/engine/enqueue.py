"""Enqueued Django tasks as runs (jobs.tasks_backend): each task's implicit job, a run
per enqueue(), and what a result reads back.

An enqueue is one pending run of the task's job, inserted in the caller's transaction:
it exists, and a scheduler can start it, only once that transaction commits (as Django
documents for database backends), and a rollback leaves nothing. Its occurrence
(scheduled_for) is the moment of the enqueue, unique per job by the constraint
jobs_run_one_per_attempt; `not_before` is the task's run_after.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from jobs.executors.enqueued import KIND
from jobs.models import Job, JobHistory, ScheduleType, Trigger
from jobs.models.changes import Channel, acting
from jobs.models.choices import DESCRIPTION_MAX_LENGTH, NAME_MAX_LENGTH
from jobs.pytasks.framework import TaskCall, call_of
from jobs.sql import store

# The code key of a task's implicit job: "task:" and the task's dotted path.
KEY_PREFIX = "task:"
# The fields of an implicit job the code owns (read-only on every screen, as for a job
# declared in code: jobs/models/code.py).
OWNED_FIELDS = ("name", "description", "executor", "command", "arguments", "schedule_type")
# Two enqueues of one task in the same microsecond: the second takes the next one.
_OCCURRENCE_TRIES = 50
# How long a process reuses a task's job id without asking the database. The look-up
# is a third of an enqueue's cost (profiled: 10,000 enqueues on SQLite); the limit
# bounds how long a process may still name a job an operator deleted, which fails its
# enqueues (outside a transaction it looks again at once).
JOB_ID_CACHE_SECONDS = 30.0
_job_ids: dict[str, tuple[uuid.UUID, float]] = {}


class TaskInfo(NamedTuple):
    """What the implicit job of a task is made from."""

    path: str  # Task.module_path
    description: str
    source: str  # the file the task is defined in, for the job's page


def key_of(path: str) -> str:
    return f"{KEY_PREFIX}{path}"[:NAME_MAX_LENGTH]


def task_job_id(task: TaskInfo, now: datetime | None = None) -> uuid.UUID:
    """The id of the task's implicit job, made on first use (kept for
    JOB_ID_CACHE_SECONDS). Race-safe: the unique code key lets one of several processes
    making it at once insert it; the others read it."""
    key = key_of(task.path)
    cached = _job_ids.get(key)
    if cached is not None and time.monotonic() - cached[1] < JOB_ID_CACHE_SECONDS:
        return cached[0]
    job_id = _find_or_make(task, key, now)
    _job_ids[key] = (job_id, time.monotonic())
    return job_id


def forget_job_ids() -> None:
    """Ask the database again on the next enqueue of each task."""
    _job_ids.clear()


def _find_or_make(task: TaskInfo, key: str, now: datetime | None) -> uuid.UUID:
    found = Job.objects.filter(code_key=key).values_list("pk", flat=True).first()
    if found is not None:
        return found
    now = now or timezone.now()
    job = Job(
        name=task.path[:NAME_MAX_LENGTH],
        description=task.description[:DESCRIPTION_MAX_LENGTH],
        executor=KIND,
        command=task.path,
        arguments={},
        # Never due by itself: its runs are the enqueues (pending runs start whatever
        # the job's active flag says).
        schedule_type=ScheduleType.ONCE,
        scheduled_at=now,
        is_active=False,
        enqueued_task=True,
        code_key=key,
        code_source=task.source,
    )
    job.code_declaration = {name: _json(getattr(job, name)) for name in OWNED_FIELDS}
    try:
        # A savepoint in the caller's transaction, or a write transaction of its own
        # (SQLite's writer lock first): a lost race then leaves either usable.
        writing = transaction.atomic() if connection.in_atomic_block else store().writing()
        with acting(None, Channel.CODE, "task backend"), writing:
            job.save()
    except IntegrityError:
        # Another process made it first.
        return Job.objects.filter(code_key=key).values_list("pk", flat=True).get()
    return job.pk


def _json(value: Any) -> Any:
    return value if isinstance(value, str | dict | list | int | type(None)) else str(value)


def enqueue_run(
    job_id: uuid.UUID,
    call: TaskCall,
    *,
    queue: str,
    priority: int,
    run_after: datetime | None = None,
    now: datetime | None = None,
    trigger: str = Trigger.ENQUEUE,
) -> JobHistory:
    """Insert the pending run of one enqueue, in the caller's transaction (a savepoint
    of it: a taken occurrence leaves that transaction usable)."""
    now = now or timezone.now()
    arguments = call.stored()
    for _ in range(_OCCURRENCE_TRIES):
        run = JobHistory(
            job_id=job_id,
            scheduled_for=now,
            not_before=max(run_after, now) if run_after is not None else now,
            attempt=1,
            trigger=trigger,
            created_at=now,
            arguments=arguments,
            queue=queue,
            priority=priority,
        )
        try:
            with _writing():
                run.save(force_insert=True)
            return run
        except IntegrityError:
            if not Job.objects.filter(pk=job_id).exists():
                raise JobGone(job_id) from None
            now += timedelta(microseconds=1)
    raise RuntimeError("could not find a free occurrence for an enqueued run")


class JobGone(Exception):
    """The task's job was deleted since this process looked its id up."""


def _writing() -> Any:
    """Inside the caller's transaction a savepoint (a taken occurrence then leaves that
    transaction usable); outside one, the single INSERT commits by itself, under the
    store's writer lock (SQLite's, which every writer of this process takes first).
    Not a transaction of its own: BEGIN and COMMIT around one INSERT cost PostgreSQL
    two more round trips (119 enqueues/s with them, see docs/benchmarks.md)."""
    if connection.in_atomic_block:
        return transaction.atomic()
    return store().writer_lock()


def enqueue_again(run: JobHistory) -> JobHistory:
    """A new enqueue with the call, queue and priority of `run` ("Run again")."""
    return enqueue_run(run.job_id, call_of(run.arguments), queue=run.queue, priority=run.priority)


class Attempt(NamedTuple):
    """One attempt of an enqueued run's occurrence, as a result reads it."""

    key: uuid.UUID
    status: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    worker: str
    result: Any
    log: str


class Enqueued(NamedTuple):
    """An enqueued run and every attempt of its occurrence, first to last."""

    run_id: uuid.UUID
    task_path: str
    queue: str
    priority: int
    not_before: datetime
    scheduled_for: datetime
    arguments: Any
    attempts: Sequence[Attempt]


def enqueued(run_id: uuid.UUID) -> Enqueued | None:
    """The run `run_id` of an implicit task job with its occurrence's attempts, or None
    (no such run, or a run of another job). Two queries, through the primary key and
    the unique (job, scheduled_for, attempt) index."""
    first = (
        JobHistory.objects.filter(pk=run_id, job__enqueued_task=True)
        .values_list(
            "job_id",
            "job__command",
            "queue",
            "priority",
            "not_before",
            "scheduled_for",
            "arguments",
        )
        .first()
    )
    if first is None:
        return None
    job_id, path, queue, priority, not_before, scheduled_for, arguments = first
    rows = (
        JobHistory.objects.filter(job_id=job_id, scheduled_for=scheduled_for)
        .order_by("attempt")
        .values_list(
            "pk", "status", "created_at", "started_at", "finished_at", "worker", "result", "log"
        )
    )
    return Enqueued(
        run_id,
        path,
        queue,
        priority,
        not_before,
        scheduled_for,
        arguments,
        [Attempt(*row) for row in rows],
    )
