"""The life of a run after its claim: start, heartbeat, release, finish (and retry).

Every state change is a conditional update whose row count (or RETURNING list) says
whether this process won: losing a race is normal and silently skipped. The work is done
in batches, one transaction and a handful of statements per batch of runs: per-row ORM
saves (and even bulk_update's CASE expressions) cost several times more than the work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from django.utils import timezone

from jobs.engine import chains, slots
from jobs.engine.ended import runs_ended
from jobs.engine.logs import safe_log
from jobs.engine.rows import latest_per_job
from jobs.models import RunStatus
from jobs.queues import settings as queues
from jobs.runs import RunResult, RunTicket
from jobs.sql import store
from jobs.sql.rows import FinishedRun, JobOutcome

# JobHistory.worker's length.
WORKER_MAX_LENGTH = 200

_SUCCESS = RunStatus.SUCCESS.value
_FAILED = RunStatus.FAILED.value


def start(
    tickets: Sequence[RunTicket], worker: str, now: datetime | None = None
) -> list[RunTicket]:
    """Move pending runs to running, for `worker`. Returns the ones this worker won.

    A run that is no longer pending (another worker started it, it was cancelled or
    deleted), or whose queue is at its limit (JOBS_QUEUE_LIMITS: it stays pending), is
    simply not returned.
    """
    if not tickets:
        return []
    s = store()
    db_now = s.adapt_datetime(now or timezone.now())
    limits = queues.limits()
    with s.transaction() as ops:
        if limits:
            # Runs of queues with a limit start only while their queue has room.
            won = slots.start(ops, tickets, worker, db_now, limits)
        else:
            won = ops.start_runs([t.run_key for t in tickets], worker, db_now)
    return [t for t in tickets if t.run_key in won]


def release(tickets: Sequence[RunTicket], worker: str) -> int:
    """Hand runs that `worker` started but did not begin executing back to pending."""
    if not tickets:
        return 0
    with store().transaction() as ops:
        return ops.release_runs([t.run_key for t in tickets], worker)


def heartbeat(run_keys: Iterable[str], now: datetime | None = None) -> int:
    """Stamp running runs as alive. Returns how many are still running."""
    keys = list(run_keys)
    if not keys:
        return 0
    s = store()
    with s.transaction() as ops:
        return ops.heartbeat_runs(keys, s.adapt_datetime(now or timezone.now()))


def finish(results: Sequence[RunResult], worker: str) -> int:
    """Record the outcome of runs `worker` executed; schedule retries for failures and
    the runs their chains start (jobs/engine/chains.py).

    Only runs still owned by `worker` (running, stamped with its name) are written: a
    run the reaper already declared lost keeps that verdict, and its retry is not made
    twice. Returns how many results were recorded.
    """
    if not results:
        return 0
    s = store()
    # Each start and finish is a moment of its own: not worth the datetime cache.
    dt = s.adapt_moment
    # Build the rows before taking the writer lock: this Python work then overlaps
    # another thread's SQL (SQLite releases the GIL while it works).
    run_rows = []
    job_rows = []
    for r in results:
        status = _SUCCESS if r.succeeded else _FAILED
        started_at = dt(r.started_at)
        ticket = r.ticket
        log = r.log
        if type(log) is not str or "\x00" in log or not log.isascii():
            log = safe_log(log)
        result = None if r.result is None else s.adapt_json(r.result)
        # A run done elsewhere (a Celery worker) names where, and who sent it.
        ran_on = f"{r.ran_on} via {worker}"[:WORKER_MAX_LENGTH] if r.ran_on else None
        run_rows.append(
            FinishedRun(status, started_at, dt(r.finished_at), log, result, ran_on, ticket.run_key)
        )
        job_rows.append(JobOutcome(started_at, status, ticket.job_key, started_at))
    outcomes = latest_per_job(job_rows)
    # The jobs these runs start (jobs/engine/chains.py): read before the write lock; none
    # for jobs without chains, which then cost nothing more.
    chaining = chains.lookup(s, results)
    with s.transaction() as ops:
        # Which of these runs does `worker` still own? Locked (a row lock or the write
        # lock, by vendor) so the reaper cannot take one between check and write.
        mine = ops.owned_runs([r.ticket.run_key for r in results], worker)
        owned = results
        if len(mine) != len(results):
            keep = [r.ticket.run_key in mine for r in results]
            owned = [r for r, k in zip(results, keep, strict=True) if k]
            run_rows = [row for row, k in zip(run_rows, keep, strict=True) if k]
            outcomes = latest_per_job(row for row, k in zip(job_rows, keep, strict=True) if k)
        if not owned:
            return 0
        ops.finish_runs(run_rows)
        runs_ended(s, ops, owned, outcomes, timezone.now(), chaining)
    return len(owned)
