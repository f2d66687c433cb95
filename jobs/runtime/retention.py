"""Bounded history: delete the finished runs the retention settings no longer keep, and
the audit trail's old records.

Three rules, each turned off by 0:

- JOBS_HISTORY_KEEP_PER_JOB: a job keeps its newest N runs (latest occurrence first, then
  the highest attempt); its older finished runs are deleted;
- JOBS_HISTORY_MAX_AGE_DAYS: runs created more than D days ago are deleted;
- JOBS_AUDIT_KEEP_DAYS: records of the audit trail (JobChange) created more than D days
  ago are deleted, oldest first through index jobs_change_created.

A pending or running run is never deleted (it still counts among its job's N).

Deleting is a loop of small statements: each DELETE removes at most `batch` runs that an
index finds, in its own short transaction (on SQLite after taking the process's writer
lock, like every engine write), so pruning never holds a lock for long and claims slip in
between two statements.

A job's excess is found with one walk of the unique (job_id, scheduled_for, attempt)
index, which leads with job_id: its (N+1)-th newest entry, read from the index alone. A
round over J jobs therefore costs J short index walks, never a scan or a sort of the
history. After a complete round a process only probes the jobs that ran since that round
began (a job's run count grows only when it runs); every hour it probes them all again.

`prune_history()` runs one whole round (`manage.py prunehistory`). The scheduler calls
`prune_when_due()` once per loop: a slice of a few milliseconds at most, resumed at the
next loop while a round is under way, and a new round every JOBS_PRUNE_INTERVAL_SECONDS.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from jobs import conf
from jobs.models import JobChange
from jobs.sql import store
from jobs.sql.rows import JobPageRow, PruneEdge

logger = logging.getLogger(__name__)

# Runs removed per DELETE statement by prune_history().
DEFAULT_BATCH = 500
# Jobs read per query while going through all of them.
JOB_PAGE = 500
# The scheduler's slices: smaller statements, a few milliseconds of work, a pause between
# slices while a round is under way (so at most a few percent of the loop's time).
SLICE_BATCH = 200
SLICE_BUDGET = 0.004
SLICE_PAUSE = 0.1
# A process that probes only the jobs that ran still probes them all this often.
FULL_ROUND_EVERY = 3600.0
# Clocks of several machines differ: probe jobs that ran a little before the last round.
CLOCK_MARGIN = timedelta(seconds=60)


@dataclass(frozen=True)
class Policy:
    keep_per_job: int = 0  # 0: no per-job limit
    max_age: timedelta | None = None  # None: no age limit
    changes_max_age: timedelta | None = None  # audit records; None: kept forever

    @classmethod
    def from_settings(cls) -> Policy:
        return cls(
            keep_per_job=conf.history_keep_per_job(),
            max_age=conf.history_max_age(),
            changes_max_age=conf.audit_max_age(),
        )

    @property
    def prunes_runs(self) -> bool:
        return self.keep_per_job > 0 or self.max_age is not None

    @property
    def enabled(self) -> bool:
        return self.prunes_runs or self.changes_max_age is not None

    def changes_text(self) -> str:
        if self.changes_max_age is None:
            return "every audit record"
        return f"audit records of the last {self.changes_max_age.total_seconds() / 86400:g} days"

    def __str__(self) -> str:
        """What is kept of the runs."""
        keep = f"the newest {self.keep_per_job} runs per job" if self.keep_per_job else ""
        age = (
            f"runs of the last {self.max_age.total_seconds() / 86400:g} days"
            if self.max_age
            else ""
        )
        return " and ".join(part for part in (keep, age) if part) or "everything"


@dataclass
class PruneStats:
    deleted: int = 0  # runs deleted (counted, in a dry run)
    changes_deleted: int = 0  # audit records deleted (counted, in a dry run)
    statements: int = 0  # DELETE statements
    jobs_probed: int = 0
    rounds: int = 0  # complete rounds
    longest_statement: float = 0.0  # seconds, the longest a DELETE held the writer lock


@dataclass
class _Round:
    began: datetime
    since: datetime | None  # probe only jobs that ran since then; None: every job
    changes_done: bool = False
    age_done: bool = False
    jobs: list[JobPageRow] = field(default_factory=list)  # this page
    position: int = 0  # next job of `jobs` to probe
    after: str | None = None  # the last job key read; None: from the start
    last_page: bool = False


class Pruner:
    """Rounds over the history, done in slices that resume where the previous one stopped."""

    def __init__(
        self, policy: Policy | None = None, *, batch: int = DEFAULT_BATCH, dry_run: bool = False
    ) -> None:
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self.policy = Policy.from_settings() if policy is None else policy
        self.batch = batch
        self.dry_run = dry_run
        self.stats = PruneStats()
        self._round: _Round | None = None
        self._previous_began: datetime | None = None
        self._last_full_round = float("-inf")  # time.monotonic() of the last full round

    def step(self, now: datetime | None = None, *, budget: float | None = None) -> bool:
        """Work on the current round (starting one if none is under way) until it is
        complete (True) or `budget` seconds have gone (False; the next step resumes)."""
        if not self.policy.enabled:
            return True
        began = time.perf_counter()
        now = now or timezone.now()
        if self._round is None:
            self._round = self._new_round(now)
        current = self._round

        def out_of_time() -> bool:
            return budget is not None and time.perf_counter() - began >= budget

        if not current.changes_done:
            current.changes_done = self._prune_changes(now, out_of_time)
            if not current.changes_done:
                return False
        if not current.age_done:
            current.age_done = self._prune_by_age(now, out_of_time)
            if not current.age_done:
                return False
        if self.policy.keep_per_job:
            while True:
                if current.position >= len(current.jobs):
                    if current.last_page:
                        break
                    self._next_page(current)
                    continue
                job_key, last_run_at = current.jobs[current.position]
                if _ran_since(last_run_at, current.since) and not self._prune_job(
                    job_key, now, out_of_time
                ):
                    return False  # this job again, next time
                current.position += 1
                if out_of_time():
                    return False
        if current.since is None:
            self._last_full_round = time.monotonic()
        self._previous_began = current.began
        self._round = None
        self.stats.rounds += 1
        return True

    def _new_round(self, now: datetime) -> _Round:
        full = (
            self._previous_began is None
            or time.monotonic() - self._last_full_round >= FULL_ROUND_EVERY
        )
        since = None if full else self._previous_began - CLOCK_MARGIN
        return _Round(began=now, since=since)

    # --- the age rule ---------------------------------------------------------------

    def _age_cutoff(self, now: datetime) -> object | None:
        if self.policy.max_age is None:
            return None
        return store().adapt_datetime(now - self.policy.max_age)

    def _prune_by_age(self, now: datetime, out_of_time) -> bool:  # type: ignore[no-untyped-def]
        cutoff = self._age_cutoff(now)
        if cutoff is None:
            return True
        if self.dry_run:
            with store().reading() as ops:
                self.stats.deleted += ops.count_finished_before(cutoff)
            return True
        # Oldest first, through index jobs_run_recent.
        while True:
            deleted = self._delete(lambda ops: ops.delete_finished_before(cutoff, self.batch))
            if deleted < self.batch:
                return True
            if out_of_time():
                return False

    # --- the audit trail's rule ----------------------------------------------------

    def _prune_changes(self, now: datetime, out_of_time) -> bool:  # type: ignore[no-untyped-def]
        if self.policy.changes_max_age is None:
            return True
        old = JobChange.objects.filter(created_at__lt=now - self.policy.changes_max_age)
        if self.dry_run:
            self.stats.changes_deleted += old.count()
            return True
        while True:
            with store().writing():
                began = time.perf_counter()
                # Oldest first through index jobs_change_created; one DELETE ... IN (SELECT ...
                # LIMIT batch) (no signal or relation makes Django load the rows).
                oldest = old.order_by("created_at").values("pk")[: self.batch]
                if not connection.features.allow_sliced_subqueries_with_in:
                    oldest = list(oldest.values_list("pk", flat=True))  # MySQL: no LIMIT in IN
                deleted, _ = JobChange.objects.filter(pk__in=oldest).delete()
            self._count_statement(began)
            self.stats.changes_deleted += deleted
            if deleted < self.batch:
                return True
            if out_of_time():
                return False

    # --- the per-job rule -----------------------------------------------------------

    def _next_page(self, current: _Round) -> None:
        with store().reading() as ops:
            rows = ops.job_page(current.after, JOB_PAGE)
        current.jobs = rows
        current.position = 0
        if rows:
            current.after = rows[-1].key
        current.last_page = len(rows) < JOB_PAGE

    def _prune_job(self, job_key: str, now: datetime, out_of_time) -> bool:  # type: ignore[no-untyped-def]
        """Delete the job's finished runs beyond its newest N; False if out of time."""
        self.stats.jobs_probed += 1
        with store().reading() as ops:
            edge: PruneEdge | None = ops.prune_edge(job_key, self.policy.keep_per_job)
            if edge is not None and self.dry_run:
                # Runs the age rule takes are counted there already.
                self.stats.deleted += ops.count_beyond(job_key, edge, self._age_cutoff(now))
        if edge is None or self.dry_run:
            return True
        while True:
            deleted = self._delete(lambda ops: ops.delete_beyond(job_key, edge, self.batch))
            if deleted < self.batch:
                return True
            if out_of_time():
                return False

    # --- statements -----------------------------------------------------------------

    def _delete(self, delete) -> int:  # type: ignore[no-untyped-def]
        """One DELETE of at most `batch` runs, oldest first: its own short transaction,
        like every engine write (on SQLite, BEGIN IMMEDIATE under the writer lock)."""
        with store().transaction() as ops:
            began = time.perf_counter()
            deleted = delete(ops)
        self._count_statement(began)
        self.stats.deleted += deleted
        return deleted

    def _count_statement(self, began: float) -> None:
        held = time.perf_counter() - began
        self.stats.statements += 1
        self.stats.longest_statement = max(self.stats.longest_statement, held)


def _ran_since(last_run_at: datetime | None, since: datetime | None) -> bool:
    return since is None or (last_run_at is not None and last_run_at >= since)


def prune(
    now: datetime | None = None,
    *,
    batch: int = DEFAULT_BATCH,
    dry_run: bool = False,
    policy: Policy | None = None,
) -> PruneStats:
    """Delete every finished run and audit record the retention policy no longer keeps
    (one whole round, `batch` rows per DELETE). Returns what was deleted (would be, with
    dry_run)."""
    pruner = Pruner(policy, batch=batch, dry_run=dry_run)
    # On SQLite the log is checkpointed beside the deletes, not inside one of them while
    # it holds the write lock (jobs/sql/sqlite/wal.py): a long catch-up must not stall
    # schedulers.
    with contextlib.nullcontext() if dry_run else store().checkpointer():
        pruner.step(now)
    return pruner.stats


def prune_history(
    now: datetime | None = None,
    *,
    batch: int = DEFAULT_BATCH,
    dry_run: bool = False,
    policy: Policy | None = None,
) -> int:
    """prune(), returning how many runs were deleted (would be, with dry_run)."""
    return prune(now, batch=batch, dry_run=dry_run, policy=policy).deleted


class BackgroundPruning:
    """The scheduler's pruning: a bounded slice when one is due, nothing otherwise."""

    def __init__(self) -> None:
        self.pruner: Pruner | None = None
        self._next_at = 0.0  # time.monotonic()

    def __call__(self) -> int:
        interval = conf.prune_interval()
        if interval <= 0 or time.monotonic() < self._next_at:
            return 0
        policy = Policy.from_settings()
        if self.pruner is None or self.pruner.policy != policy:
            self.pruner = Pruner(policy, batch=SLICE_BATCH)
        stats = self.pruner.stats
        before = stats.deleted + stats.changes_deleted
        try:
            done = self.pruner.step(budget=SLICE_BUDGET)
        except Exception:
            # Pruning is housekeeping: a failure must never stop the scheduler's loop.
            logger.exception("pruning the history failed; trying again in %.0f s", interval)
            done = True
        self._next_at = time.monotonic() + (interval if done else SLICE_PAUSE)
        return stats.deleted + stats.changes_deleted - before


# One per process: every scheduler loop of the process shares it.
prune_when_due = BackgroundPruning()
