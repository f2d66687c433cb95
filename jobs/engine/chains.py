"""Chains: the runs that finished runs start, in the transaction that records the outcome.

A run that succeeds starts its job's on_success jobs; a run that fails for good (its
last attempt failed and no retry is left, including a run the reaper fails as lost or
as past its timeout) starts its job's on_failure jobs. A cancelled or skipped run starts
nothing: it has no outcome of its own. Each run started has trigger "chain", is
scheduled for the moment its cause finished, and links to it (caused_by). The started
job's overlap policy applies as to a scheduled occurrence (overlap.plan: forbid records
it as skipped while the job has a run in flight, replace cancels that run). An inactive
job is not started; a log line says so.

No run lost, none doubled: lifecycle.finish() and reap() call start() inside the
transaction that writes the outcome, and an outcome is written once (by the worker that
still owns the run, or by the reaper).

What jobs without chains pay: lookup() asks, before the batch's write transaction (on
SQLite, outside the writer lock), whether any job has a chain, and only then which of
the batch's jobs have; when none has, nothing more happens. The links of those that
have are read again inside the transaction (on PostgreSQL locking the jobs to start
against deletion), so a job deleted meanwhile is not started.

Two causes finishing in the same microsecond, or a chained run landing on the
occurrence of another run of its job (the unique (job, scheduled_for, attempt)
constraint): the later one moves on by a microsecond, as run now does, until it is
free. Within a batch that is decided beforehand; against other transactions, the
insert skips a taken occurrence (ON CONFLICT DO NOTHING, which on PostgreSQL waits for
the other transaction to end) and the run is inserted again a microsecond later.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from jobs.engine import overlap
from jobs.models import ExecutorKind, JobHistory, OverlapPolicy, RunStatus
from jobs.runs import RunResult, RunTicket, new_key
from jobs.sql.base import Operations, Store
from jobs.sql.rows import ChainedRun, ChainLink, JobStatus

logger = logging.getLogger("jobs.engine")

_SUCCESS = RunStatus.SUCCESS.value
_FAILED = RunStatus.FAILED.value
_PENDING = RunStatus.PENDING.value
_SKIPPED = RunStatus.SKIPPED.value
_ALLOW = OverlapPolicy.ALLOW.value
_MICROSECOND = timedelta(microseconds=1)
# Tries to insert a chained run at the next free microsecond; each try is one statement
# for all the runs still looking for a place, so one or two in practice.
MAX_MOVES = 100


class Cause(NamedTuple):
    """A run whose outcome starts chains."""

    run_key: str
    job_key: str
    job_name: str
    status: str  # success, or failed (for good): the links it follows
    finished_at: datetime
    traceparent: str = ""  # the cause's span, when tracing is on: the runs' parent


class _Start(NamedTuple):
    """A run to start, in Python values (its time may still move)."""

    key: str
    job_key: str
    at: datetime
    status: str
    log: str
    cause: Cause
    target: ChainLink  # the job it starts: its queue and priority are the run's


def final(ticket: RunTicket, succeeded: bool) -> bool:
    """Whether this outcome starts chains: a success, or a failure with no retry left
    (the rule of engine.rows.retry_runs)."""
    return succeeded or ticket.attempt > ticket.max_retries


def causes(results: Iterable[RunResult]) -> list[Cause]:
    return [
        Cause(
            r.ticket.run_key,
            r.ticket.job_key,
            r.ticket.job_name,
            _SUCCESS if r.succeeded else _FAILED,
            r.finished_at,
            r.traceparent,
        )
        for r in results
        if final(r.ticket, r.succeeded)
    ]


def lookup(s: Store, results: Sequence[RunResult]) -> list[str]:
    """The jobs of `results` that have chains (their runs there would start some), read
    outside any write transaction: one query when no job has chains at all, a second
    one otherwise."""
    keys = list({r.ticket.job_key for r in results if final(r.ticket, r.succeeded)})
    if not keys:
        return []
    with s.reading() as ops:
        return list(ops.chaining_jobs(keys)) if ops.any_chains() else []


def start(ops: Operations, found: Sequence[Cause], job_keys: Sequence[str], now: datetime) -> int:
    """Insert the runs that the causes' outcomes start (inside their transaction), for
    the chains of `job_keys` (read again here: the ones as of this transaction);
    returns how many were inserted, skipped ones included."""
    if not found or not job_keys:
        return 0
    planned = _plan(found, ops.chained_jobs(job_keys))
    if not planned.causes:
        return 0
    starts, decided = _decide(ops, planned, now)
    inserted = _insert(ops, starts, now)
    _keep_parents(inserted)
    if decided is not None:
        dt = ops.store.adapt_datetime
        statuses = [
            JobStatus(_SKIPPED, start.job_key, dt(start.at))
            for start in inserted
            if start.status == _SKIPPED
        ]
        statuses += overlap.cancel_replaced(ops, decided, {start.key for start in inserted})
        ops.record_status_on_jobs(statuses)
    for begun in inserted:
        logger.info(
            "run %s of job %r %s: chained %s run %s of job %r",
            begun.cause.run_key,
            begun.cause.job_name,
            "succeeded" if begun.cause.status == _SUCCESS else "failed for good",
            begun.status,
            begun.key,
            planned.targets[begun.job_key].name,
        )
    return len(inserted)


class _Planned(NamedTuple):
    causes: dict[tuple[str, datetime], Cause]  # (job to start, its time) -> the cause
    targets: dict[str, ChainLink]  # the jobs to start, by key


def _plan(found: Sequence[Cause], links: Sequence[ChainLink]) -> _Planned:
    """Which job each cause starts, and when: at the moment the cause finished, a
    microsecond later for each earlier run of the same job here. Inactive jobs are left
    out, with a log line."""
    following: dict[tuple[str, str], list[ChainLink]] = {}
    for link in links:
        following.setdefault((link.on_status, link.from_key), []).append(link)
    planned = _Planned({}, {})
    for cause in sorted(found, key=lambda c: c.finished_at):
        for link in following.get((cause.status, cause.job_key), ()):
            if not link.is_active:
                logger.info(
                    "job %r is disabled: run %s of job %r does not start it",
                    link.name,
                    cause.run_key,
                    cause.job_name,
                )
                continue
            at = cause.finished_at
            while (link.key, at) in planned.causes:
                at += _MICROSECOND
            planned.causes[(link.key, at)] = cause
            planned.targets.setdefault(link.key, link)
    return planned


def _decide(
    ops: Operations, planned: _Planned, now: datetime
) -> tuple[list[_Start], overlap.OverlapPlan | None]:
    """The runs to insert: pending, or skipped by the started job's overlap policy
    (overlap.plan, as for scheduled occurrences), and what that policy cancels."""
    starts: list[_Start] = []

    def add(target: ChainLink, at: datetime) -> str:
        key = new_key()
        starts.append(
            _Start(key, target.key, at, _PENDING, "", planned.causes[(target.key, at)], target)
        )
        return key

    guarded: dict[str, list[datetime]] = {}
    for job_key, at in planned.causes:
        target = planned.targets[job_key]
        if target.overlap_policy == _ALLOW:
            add(target, at)
        else:
            guarded.setdefault(job_key, []).append(at)
    if not guarded:
        return starts, None
    decided = overlap.plan(
        ops,
        [overlap.Guarded(planned.targets[key], tuple(sorted(ats))) for key, ats in guarded.items()],
        add,
        now,
    )
    starts += [
        _Start(
            row.key,
            row.job_key,
            row.scheduled_for,
            _SKIPPED,
            row.log,
            planned.causes[(row.job_key, row.scheduled_for)],
            planned.targets[row.job_key],
        )
        for row in decided.skipped
    ]
    return starts, decided


def _arguments(ops: Operations, start: _Start) -> object:
    """The arguments a chained run keeps, as the scheduler's runs do: its job's as they
    are now, for a run that will run (none for a simulated job, nor for a skipped run)."""
    target = start.target
    if start.status != _PENDING or target.executor == ExecutorKind.SIMULATED:
        return None
    if isinstance(target.arguments, str):  # JSON text as SQLite gave it
        return target.arguments
    return ops.store.adapt_json(target.arguments)


def _keep_parents(inserted: Sequence[_Start]) -> None:
    """Write the cause's traceparent on the runs it started (tracing on: one UPDATE per
    traced cause, in the cause's transaction; nothing when tracing is off)."""
    by_parent: dict[str, list[str]] = {}
    for start in inserted:
        if start.cause.traceparent:
            by_parent.setdefault(start.cause.traceparent, []).append(start.key)
    for parent, keys in by_parent.items():
        JobHistory.objects.filter(pk__in=keys).update(traceparent=parent)


def _insert(ops: Operations, starts: list[_Start], now: datetime) -> list[_Start]:
    """Insert the runs, each at the first free microsecond from its time; the ones
    inserted (with the time each got)."""
    dt = ops.store.adapt_datetime
    db_now = dt(now)
    inserted: list[_Start] = []
    waiting = starts
    for _ in range(MAX_MOVES):
        rows = [
            ChainedRun(
                start.key,
                start.job_key,
                dt(start.at),
                start.status,
                dt(start.at),
                start.log,
                db_now,
                None if start.status == _PENDING else db_now,
                start.cause.run_key,
                start.target.queue,
                start.target.priority,
                _arguments(ops, start),
            )
            for start in waiting
        ]
        got = ops.insert_chained_runs(rows)
        inserted += [start for start in waiting if start.key in got]
        waiting = [
            start._replace(at=start.at + _MICROSECOND) for start in waiting if start.key not in got
        ]
        if not waiting:
            return inserted
    for start in waiting:
        logger.error(
            "no free occurrence for the run of job %s started by run %s; not started",
            start.job_key,
            start.cause.run_key,
        )
    return inserted
