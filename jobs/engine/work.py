"""Finding work: ready pending runs for a worker pool, hand-outs to Huey, wake-up times
(with the pause the scheduler loop learns on the way)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from django.utils import timezone

from jobs import conf
from jobs.models import PauseWindow
from jobs.runs import RunTicket
from jobs.sql import store


def ready_tickets(now: datetime | None = None, *, limit: int = 500) -> list[RunTicket]:
    """Pending runs that may start now, oldest first: retries whose backoff is over, runs
    someone pressed "run now" for, and runs a dead scheduler claimed but never started."""
    s = store()
    with s.reading() as ops:
        return ops.ready_runs(s.adapt_datetime(now or timezone.now()), limit)


def dispatch_ready(now: datetime | None = None, *, limit: int = 500) -> list[RunTicket]:
    """Pending runs to hand to Huey now: ready ones never handed out, and ones handed out
    more than JOBS_REDISPATCH_SECONDS ago that nobody started (the message was lost).

    Each is stamped as handed out by a conditional update, so of several schedulers
    looking at once only one sends it (and a duplicate would still start it only once).
    """
    now = now or timezone.now()
    s = store()
    db_now = s.adapt_datetime(now)
    db_cutoff = s.adapt_datetime(now - conf.redispatch_after())
    with s.transaction() as ops:
        candidates = ops.undispatched_runs(db_now, db_cutoff, limit)
        if not candidates:
            return []
        won = ops.stamp_dispatched([t.run_key for t in candidates], db_now, db_cutoff)
    return [t for t in candidates if t.run_key in won]


def mark_dispatched(run_keys: Sequence[str], now: datetime | None = None) -> None:
    """Stamp pending runs as handed to Huey now (used when a worker hands runs back)."""
    if not run_keys:
        return
    s = store()
    with s.transaction() as ops:
        ops.mark_dispatched(run_keys, s.adapt_datetime(now or timezone.now()))


def tickets_for(run_keys: Sequence[str], now: datetime | None = None) -> list[RunTicket]:
    """Tickets for the runs among `run_keys` that are pending and may start now."""
    if not run_keys:
        return []
    s = store()
    with s.reading() as ops:
        return ops.tickets_for(list(run_keys), s.adapt_datetime(now or timezone.now()))


def running_among(run_keys: Iterable[str]) -> set[str]:
    """Which of these runs are still running (the others were cancelled, reaped or
    deleted). The worker's watch asks this about the runs it holds, once a second."""
    keys = list(run_keys)
    if not keys:
        return set()
    with store().reading() as ops:
        return ops.running_among(keys)


class Wake(NamedTuple):
    """When an idle scheduler should look again, and the pause it saw on the way."""

    at: datetime | None
    pause: PauseWindow


def wake_up(now: datetime) -> Wake:
    """The earliest moment new work appears: a job comes due (not while paused: the
    jobs that come due then wait for the resume), a pause ends, or a retry's backoff
    ends (pending runs start while paused). One statement, which also reads the pause."""
    s = store()
    with s.reading() as ops:
        row = ops.wake_up(s.adapt_datetime(now))
    pause = PauseWindow(row.paused_at, row.paused_until)
    if pause.active(now):
        candidates = [row.paused_until, row.next_retry_at]
    else:
        candidates = [row.next_due_at, row.next_retry_at]
    present = [moment for moment in candidates if moment is not None]
    return Wake(min(present) if present else None, pause)


def next_wake_at(now: datetime) -> datetime | None:
    """The earliest moment new work appears (see wake_up)."""
    return wake_up(now).at
