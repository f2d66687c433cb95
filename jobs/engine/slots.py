"""Queues with a limit (JOBS_QUEUE_LIMITS): starts that count, across every process.

A queue's limit is the most of its runs running at once anywhere. It is checked by the
database, in the transaction that starts runs: the queue is locked (on PostgreSQL an
advisory lock per queue; on SQLite the write lock every write transaction holds), its
running runs counted, and only as many pending runs moved to running as fit, the best
first (priority, then start time). A run over the limit stays pending in the database,
not in any process's memory, so whichever process has a free worker when a slot frees
takes the best waiting run: `take()`, which the worker pools call (jobs/runtime/pool.py).

Queues without a limit cost nothing here: their runs start by key as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from django.utils import timezone

from jobs.queues import settings as queues
from jobs.runs import RunTicket
from jobs.sql import store
from jobs.sql.base import Operations
from jobs.sql.rows import QueueRoom


def start(
    ops: Operations,
    tickets: Sequence[RunTicket],
    worker: str,
    db_now: object,
    limits: Mapping[str, int],
) -> set[str]:
    """Start these pending runs for `worker`, those of limited queues only while their
    queue has room; the keys won. Queues are locked in name order, so that two starts
    never wait on each other in a circle."""
    free: list[str] = []
    limited: dict[str, list[str]] = {}
    for ticket in tickets:
        if ticket.queue in limits:
            limited.setdefault(ticket.queue, []).append(ticket.run_key)
        else:
            free.append(ticket.run_key)
    # The queues are locked before any run is: on MySQL a queue's lock is a named lock,
    # which InnoDB's deadlock detection does not see, so a start waiting for it while
    # holding run locks that the queue's holder waits for would wait out
    # innodb_lock_wait_timeout (50 s) instead of failing at once.
    for queue in sorted(limited):
        ops.lock_queue(queue)
    won = ops.start_runs(free, worker, db_now) if free else set()
    for queue in sorted(limited):
        won |= ops.start_limited_runs(limited[queue], worker, db_now, queue, limits[queue])
    return won


def take(queue: str, worker: str, *, most: int = 1, now: datetime | None = None) -> list[RunTicket]:
    """Start the best pending runs of limited `queue` that may start now, at most `most`
    and as many as its limit has room for, for `worker`; their tickets (none when the
    queue is full or has nothing ready)."""
    limit = queues.limits().get(queue)
    if limit is None:
        return []
    s = store()
    db_now = s.adapt_datetime(now or timezone.now())
    with s.transaction() as ops:
        ops.lock_queue(queue)
        keys = ops.take_runs(queue, limit, most, worker, db_now)
        return ops.started_tickets(list(keys)) if keys else []


def room(queue: str, cap: int, now: datetime | None = None) -> QueueRoom:
    """A limited queue's running runs, and its ready pending runs up to `cap`: read
    without any lock, to decide whether taking is worth a write transaction."""
    s = store()
    with s.reading() as ops:
        return ops.queue_room(queue, s.adapt_datetime(now or timezone.now()), cap)


def free_slots(queue: str, limit: int, cap: int, now: datetime | None = None) -> int:
    """How many runs of limited `queue` could start now: its room under the limit, and
    no more than it has waiting (at most `cap`)."""
    found = room(queue, cap, now)
    return max(0, min(limit - found.running, found.waiting))
