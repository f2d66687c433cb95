"""Rows the lifecycle builds for the store: new runs, retries, outcomes on jobs."""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import datetime

from jobs.models import RunStatus
from jobs.runs import RunTicket, new_key
from jobs.schedules import arithmetic as schedules
from jobs.sql.base import Store
from jobs.sql.rows import JobOutcome, NewRun, RetryRun

_PENDING = RunStatus.PENDING.value
_RUNNING = RunStatus.RUNNING.value


# A NamedTuple's own __new__ is a Python function; tuple.__new__ makes the same row with
# one call fewer. The claim makes one per run, on a burst's critical path (the workers
# wait for what it hands out).
_make_row = tuple.__new__


def pending_run(
    key: str,
    job_key: str,
    db_scheduled_for: object,
    attempt: int,
    trigger: str,
    db_not_before: object,
    db_now: object,
    db_dispatched_at: object,
    db_arguments: object,
    queue: str,
    priority: int,
    started_by: str = "",
    log: str = "",
) -> NewRun:
    """A run to insert, from values already adapted by the store (`db_now`: one value
    for a whole batch; `db_arguments`: JSON text, None for a simulated run), in its job's
    queue with its priority: pending, or, with `started_by`, running for that worker
    since `db_now` (the claiming process's pool executes it at once)."""
    started_at = db_now if started_by else None
    return _make_row(
        NewRun,
        (
            key,
            job_key,
            db_scheduled_for,
            attempt,
            _RUNNING if started_by else _PENDING,
            trigger,
            db_not_before,
            log,
            started_by,
            db_now,
            db_dispatched_at,
            db_arguments,
            queue,
            priority,
            started_at,
            started_at,
        ),
    )


def retry_runs(
    store: Store,
    failed: Iterable[tuple[RunTicket, datetime]],
    rng: random.Random | None = None,
) -> list[RetryRun]:
    """Pending next attempts for failed attempts that have retries left, with the
    arguments the failed attempt ran with (the statement gives each its job's queue and
    priority)."""
    rows = []
    dt = store.adapt_datetime
    for ticket, failed_at in failed:
        if ticket.final_attempt:
            continue
        delay = schedules.retry_delay(ticket.attempt, ticket.retry_backoff_seconds, rng)
        rows.append(
            RetryRun(
                new_key(),
                ticket.job_key,
                dt(ticket.scheduled_for),
                ticket.attempt + 1,
                dt(failed_at + delay),
                dt(failed_at),
                store.adapt_json(ticket.arguments),
            )
        )
    return rows


def latest_per_job(outcomes: Iterable[JobOutcome]) -> list[JobOutcome]:
    """Of several outcomes for one job, the one with the latest start."""
    latest: dict[str, JobOutcome] = {}
    for outcome in outcomes:
        kept = latest.get(outcome.job_key)
        if kept is None or kept.started_at <= outcome.started_at:
            latest[outcome.job_key] = outcome
    return list(latest.values())
