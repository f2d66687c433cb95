"""Finding work: ready pending runs for a worker pool, hand-outs to Huey, wake-up times
(with the pause the scheduler loop learns on the way)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from itertools import zip_longest
from typing import NamedTuple

from django.utils import timezone

from jobs import conf
from jobs.models import PauseWindow
from jobs.queues import settings as queue_settings
from jobs.runs import RunTicket
from jobs.sql import store


def ready_tickets(
    now: datetime | None = None,
    *,
    limit: int = 500,
    queues: Collection[str] | None = None,
    skip: Collection[str] = (),
) -> list[RunTicket]:
    """Pending runs that may start now: retries whose backoff is over, runs someone
    pressed "run now" for, and runs a dead scheduler claimed but never started.

    Of `queues` (None: every queue that has pending runs) but those in `skip`; each
    queue's best first (priority, then the earliest start), the queues taken in turn, at
    most `limit` in all."""
    s = store()
    db_now = s.adapt_datetime(now or timezone.now())
    with s.reading() as ops:
        names = sorted(queues) if queues is not None else ops.pending_queues()
        found = [ops.ready_runs(name, db_now, limit) for name in names if name not in skip]
    return _in_turn(found, limit)


def _in_turn(per_queue: list[list[RunTicket]], limit: int) -> list[RunTicket]:
    """One list from each queue's best-first list: the first of each, then the second
    of each..., so that no queue waits behind another's backlog."""
    if len(per_queue) == 1:
        return per_queue[0][:limit]
    merged = [t for row in zip_longest(*per_queue) for t in row if t is not None]
    return merged[:limit]


def dispatch_ready(
    now: datetime | None = None,
    *,
    limit: int = 500,
    queues: Collection[str] | None = None,
) -> list[RunTicket]:
    """Pending runs to hand to Huey now: ready ones never handed out, and ones handed out
    more than JOBS_REDISPATCH_SECONDS ago that nobody started (the message was lost).

    Of `queues` (None: every queue that has pending runs); a queue with a limit hands out
    no more than it has room for now (a worker's start checks the limit again).

    Each is stamped as handed out by a conditional update, so of several schedulers
    looking at once only one sends it (and a duplicate would still start it only once).
    """
    now = now or timezone.now()
    s = store()
    db_now = s.adapt_datetime(now)
    db_cutoff = s.adapt_datetime(now - conf.redispatch_after())
    limits = queue_settings.limits()
    with s.transaction() as ops:
        names = sorted(queues) if queues is not None else ops.pending_queues()
        found = []
        for name in names:
            most = limit
            if name in limits:
                room = ops.queue_room(name, db_now, limits[name])
                most = min(limit, max(0, limits[name] - room.running))
            if most:
                found.append(ops.undispatched_runs(name, db_now, db_cutoff, most))
        candidates = _in_turn(found, limit) if found else []
        if not candidates:
            return []
        won = ops.stamp_dispatched([t.run_key for t in candidates], db_now, db_cutoff)
    return [t for t in candidates if t.run_key in won]


def undispatch(run_keys: Sequence[str]) -> None:
    """Handed-out runs a Huey worker could not start because their queue was at its
    limit: the next pass hands them out again (not JOBS_REDISPATCH_SECONDS later)."""
    if not run_keys:
        return
    with store().transaction() as ops:
        ops.undispatch_runs(list(run_keys))


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
