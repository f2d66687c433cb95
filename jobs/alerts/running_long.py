"""Running long: a run still going past its job's expected duration alerts, once.

The scheduler checks beside its reaper, every JOBS_LEASE_SECONDS / 3 (Scheduler.run_pass):

1. One read: the running runs of jobs that alert on failure and that nobody found
   running long yet (through the partial index of running runs: as many rows as are
   running, whatever the history). Jobs without alerts are filtered out there and cost
   nothing more.
2. Each run's limit: its job's expected_seconds, or, blank, three times the 95th
   percentile of the job's last LEARN_FROM_RUNS runs that ran to an outcome, once there
   are LEARN_MIN_RUNS of them (no limit before). That percentile is kept per job in this
   process for LEARNED_TTL_SECONDS: one read of at most 1,000 entries of the job's
   unique (job, scheduled_for, attempt) index an hour, not one a check.
3. Each run past its limit is marked by a conditional update (`running_long_at` still
   empty and the run still running): of several schedulers checking at once, the one
   whose update changed the row queues the alert, when its transaction commits. So a
   run alerts once, however many passes and processes see it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from jobs.alerts import Notice, dispatch
from jobs.models import NotificationKind
from jobs.sql import store
from jobs.sql.base import Operations
from jobs.sql.rows import RunningLong

logger = logging.getLogger("jobs.alerts")

LEARN_FROM_RUNS = 1000
LEARN_MIN_RUNS = 20
LEARN_FACTOR = 3.0
# A learned limit is never shorter than this: a job whose runs take milliseconds is not
# "running long" because one took a second under load.
LEARNED_FLOOR_SECONDS = 1.0
LEARNED_TTL_SECONDS = 3600.0
# Jobs whose learned limit a process keeps at most (then it starts afresh).
LEARNED_MAX_JOBS = 10_000
# Running runs looked at per check, oldest first.
CANDIDATES_PER_CHECK = 500

EXPECTED = "expected_seconds"
LEARNED = "p95"


def p95(values: Sequence[float]) -> float:
    """The 95th percentile by nearest rank: the smallest value that at least 95 % of
    the values do not exceed."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def learned_limit(durations: Sequence[float]) -> float | None:
    """Three times the 95th percentile of these durations (at least a second); None
    with fewer than LEARN_MIN_RUNS of them."""
    if len(durations) < LEARN_MIN_RUNS:
        return None
    # To the millisecond: SQLite's durations (julianday differences) are exact only to
    # some tens of microseconds.
    return round(max(LEARN_FACTOR * p95(durations), LEARNED_FLOOR_SECONDS), 3)


class Limit(NamedTuple):
    seconds: float
    source: str  # EXPECTED or LEARNED


class LearnedLimits:
    """Each job's learned limit, read from its recent runs at most once per `ttl`."""

    def __init__(
        self, ttl: float = LEARNED_TTL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self._limits: dict[str, tuple[float | None, float]] = {}
        self._lock = threading.Lock()

    def get(self, ops: Operations, job_key: str) -> float | None:
        now = self.clock()
        with self._lock:
            kept = self._limits.get(job_key)
        if kept is not None and now - kept[1] < self.ttl:
            return kept[0]
        limit = learned_limit(ops.recent_durations(job_key, LEARN_FROM_RUNS))
        with self._lock:
            if len(self._limits) >= LEARNED_MAX_JOBS:
                self._limits.clear()
            self._limits[job_key] = (limit, now)
        return limit

    def clear(self) -> None:
        with self._lock:
            self._limits.clear()


learned_limits = LearnedLimits()


def limit_of(ops: Operations, run: RunningLong, limits: LearnedLimits) -> Limit | None:
    if run.expected_seconds is not None:
        return Limit(float(run.expected_seconds), EXPECTED)
    learned = limits.get(ops, run.job_key)
    return None if learned is None else Limit(learned, LEARNED)


def check_running_long(
    now: datetime | None = None,
    *,
    limit: int = CANDIDATES_PER_CHECK,
    limits: LearnedLimits | None = None,
) -> int:
    """Alert the runs that are running long and were not alerted yet. Returns how many
    this call marked (each alerts when the marking transaction commits)."""
    now = now or timezone.now()
    limits = limits or learned_limits
    s = store()
    overdue: list[tuple[RunningLong, Limit]] = []
    with s.reading() as ops:
        for run in ops.running_long_candidates(limit):
            run_limit = limit_of(ops, run, limits)
            if run_limit is not None and (now - run.started_at).total_seconds() > run_limit.seconds:
                overdue.append((run, run_limit))
    if not overdue:
        return 0
    db_now = s.adapt_datetime(now)
    notices = []
    with s.transaction() as ops:
        for run, run_limit in overdue:
            if ops.mark_running_long(run.run_key, db_now):
                notices.append(
                    Notice(
                        run.run_key,
                        run.job_key,
                        NotificationKind.RUNNING_LONG,
                        expected_seconds=run_limit.seconds,
                        expected_from=run_limit.source,
                    )
                )
        if notices:
            transaction.on_commit(partial(dispatch, notices))
    for notice in notices:
        logger.warning(
            "run %s is running long: past %.0f s (%s)",
            notice.run_key,
            notice.expected_seconds,
            notice.expected_from,
        )
    return len(notices)
