"""Rows the lifecycle builds for the store: new runs, retries, outcomes on jobs."""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import datetime

from jobs import schedules
from jobs.models import RunStatus, Trigger
from jobs.runs import RunTicket, new_key
from jobs.sql.base import Store
from jobs.sql.rows import JobOutcome, NewRun

_PENDING = RunStatus.PENDING.value
_RETRY = Trigger.RETRY.value


def pending_run(
    store: Store,
    *,
    key: str,
    job_key: str,
    scheduled_for: datetime,
    attempt: int,
    trigger: str,
    not_before: datetime,
    db_now: object,
    db_dispatched_at: object = None,
) -> NewRun:
    """A pending run to insert; `db_now` is already adapted (one value for a batch)."""
    db_scheduled_for = store.adapt_datetime(scheduled_for)
    return NewRun(
        key,
        job_key,
        db_scheduled_for,
        attempt,
        _PENDING,
        trigger,
        db_scheduled_for if not_before is scheduled_for else store.adapt_datetime(not_before),
        "",
        "",
        db_now,
        db_dispatched_at,
    )


def retry_runs(
    store: Store,
    failed: Iterable[tuple[RunTicket, datetime]],
    rng: random.Random | None = None,
) -> list[NewRun]:
    """Pending next attempts for failed attempts that have retries left."""
    rows = []
    for ticket, failed_at in failed:
        if ticket.attempt > ticket.max_retries:
            continue
        delay = schedules.retry_delay(ticket.attempt, ticket.retry_backoff_seconds, rng)
        rows.append(
            pending_run(
                store,
                key=new_key(),
                job_key=ticket.job_key,
                scheduled_for=ticket.scheduled_for,
                attempt=ticket.attempt + 1,
                trigger=_RETRY,
                not_before=failed_at + delay,
                db_now=store.adapt_datetime(failed_at),
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
