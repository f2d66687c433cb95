"""Claiming: due jobs become pending runs, and move on to their next occurrence.

Select up to `limit` due jobs (oldest first), insert one pending run per occurrence to
run, move each job's next_run_at (a once job is deactivated: the only job a claim ever
switches off), in one short transaction.
Whatever the vendor's way of taking the batch (jobs/sql: row locks that skip what
another scheduler holds, or an optimistic read with a retry under the lock), the unique
(job, scheduled_for, attempt) constraint makes a second claim of an occurrence insert
nothing.

The hot loop is plain Python over named rows; a batch whose jobs all allow overlap (the
default) pays for the overlap policies with one comparison per job (see overlap.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from django.utils import timezone

from jobs import conf
from jobs.engine import overlap, planned
from jobs.engine.rows import pending_run
from jobs.models import ExecutorKind, OverlapPolicy, ScheduleType, Trigger
from jobs.runs import RunTicket, new_key
from jobs.schedules import arithmetic as schedules
from jobs.sql import store
from jobs.sql.base import JobsMoved, Operations, Store, read_json
from jobs.sql.rows import DueJob, JobMove, NewRun, SkippedRun

logger = logging.getLogger("jobs.engine")

_ONCE = ScheduleType.ONCE.value
_CRON = ScheduleType.CRON.value
_ALLOW = OverlapPolicy.ALLOW.value
_SCHEDULE = Trigger.SCHEDULE.value
_SIMULATED = ExecutorKind.SIMULATED.value


class StartNow(NamedTuple):
    """Runs the claiming process executes at once (its worker pool has room for them):
    inserted running for `worker`, so that no start UPDATE follows (one write instead of
    two). At most `most` of them, of `queues` (None: any queue) but not of `skip` (the
    queues with a limit, whose starts count under a lock: jobs/engine/slots.py)."""

    worker: str
    most: int
    queues: frozenset[str] | None = None
    skip: frozenset[str] = frozenset()

    def takes(self, queue: str) -> bool:
        return (self.queues is None or queue in self.queues) and queue not in self.skip


class ClaimedRuns(NamedTuple):
    """What a claim inserted: runs left pending, and runs inserted running (StartNow)."""

    pending: list[RunTicket]
    started: list[RunTicket]


@dataclass(slots=True)
class ClaimPlan:
    tickets: list[RunTicket] = field(default_factory=list)
    # Keys of the runs inserted running (StartNow).
    started: set[str] = field(default_factory=set)
    runs: list[NewRun] = field(default_factory=list)
    moves: list[JobMove] = field(default_factory=list)
    # What the overlap policies decided (None when every job in the batch allows overlap).
    overlaps: overlap.OverlapPlan | None = None
    # The claim's `now` as the store takes it (for the pause check in _apply).
    db_now: object = None
    # Occurrences a calendar or a blackout window skips (jobs/engine/planned.py).
    skipped: list[SkippedRun] = field(default_factory=list)
    # Keys of runs whose start a jitter or a deferral puts after now: left pending, not
    # handed out (engine.ready_tickets hands them out when their not_before comes).
    later: set[str] = field(default_factory=set)


class ScheduledRun:
    """Adds a job's scheduled occurrence to a plan: its pending run and its ticket."""

    __slots__ = ("db_dispatched_at", "db_now", "now", "plan", "start", "store")

    def __init__(
        self,
        s: Store,
        plan: ClaimPlan,
        db_now: object,
        db_dispatched_at: object,
        start: StartNow | None = None,
        now: datetime | None = None,
    ):
        self.store = s
        self.now = now or timezone.now()
        self.plan = plan
        self.db_now = db_now
        self.db_dispatched_at = db_dispatched_at
        self.start = start

    def add(
        self,
        job: DueJob,
        scheduled_for: datetime,
        not_before: datetime | None = None,
        log: str = "",
    ) -> str:
        key = new_key()
        started_by = ""
        start = self.start
        at = self.store.adapt_datetime(scheduled_for)
        db_not_before = at
        if not_before is not None and not_before != scheduled_for:
            db_not_before = self.store.adapt_datetime(not_before)
            if not_before > self.now:
                self.plan.later.add(key)
                start = None
        if start is not None and len(self.plan.started) < start.most and start.takes(job.queue):
            # Due, so it may start now (its not_before is its occurrence).
            started_by = start.worker
            self.plan.started.add(key)
        if job.executor == _SIMULATED:
            # The hot path: a simulated run stores and carries no arguments.
            db_arguments = arguments = None
        else:
            # The run keeps the arguments it runs with: the job's, as they are now.
            arguments = read_json(job.arguments)
            db_arguments = (
                job.arguments
                if isinstance(job.arguments, str)
                else self.store.adapt_json(arguments)
            )
        self.plan.runs.append(
            pending_run(
                key,
                job.key,
                at,
                1,
                _SCHEDULE,
                db_not_before,
                self.db_now,
                self.db_dispatched_at,
                db_arguments,
                job.queue,
                job.priority,
                started_by,
                log,
            )
        )
        self.plan.tickets.append(
            RunTicket(
                run_key=key,
                job_key=job.key,
                job_name=job.name,
                command=job.command,
                scheduled_for=scheduled_for,
                attempt=1,
                max_retries=job.max_retries,
                retry_backoff_seconds=job.retry_backoff_seconds,
                timeout_seconds=job.timeout_seconds,
                sim_failure_rate=job.sim_failure_rate,
                sim_min_seconds=job.sim_min_seconds,
                sim_max_seconds=job.sim_max_seconds,
                executor=job.executor,
                arguments=arguments,
                queue=job.queue,
                priority=job.priority,
            )
        )
        return key


def claim_due(
    now: datetime | None = None, *, limit: int | None = None, dispatched: bool = False
) -> list[RunTicket]:
    """Claim one batch of due jobs: create their pending runs and advance them.

    `dispatched`: the caller hands the runs to Huey right after this returns, so they are
    stamped as handed out now (if the hand-over never happens, they are handed out again
    after JOBS_REDISPATCH_SECONDS). Jobs whose overlap policy forbids or replaces
    overlapping runs cost one more SELECT for the batch (see overlap.py).
    """
    claimed = claim_due_starting(now, limit=limit, dispatched=dispatched)
    return claimed.pending


def claim_due_starting(
    now: datetime | None = None,
    *,
    limit: int | None = None,
    dispatched: bool = False,
    start: StartNow | None = None,
) -> ClaimedRuns:
    """claim_due, with up to `start.most` of the new runs inserted running for
    `start.worker` (the caller executes them at once and finishes them as that worker;
    if it dies first, the reaper fails and retries them after the lease, as any run
    whose worker died). The runs are inserted running only in the claim's transaction,
    so a pause, a second claim or an overlap policy decides about them as about any."""
    now = now or timezone.now()
    limit = limit or conf.claim_batch()
    s = store()
    db_now = s.adapt_datetime(now)
    if start is not None and start.most <= 0:
        start = None

    def plan(ops: Operations) -> ClaimPlan | None:
        jobs = ops.due_jobs(db_now, limit)
        return _plan(ops, jobs, now, db_now, dispatched, start) if jobs else None

    claimed = s.claim(plan, _apply)
    if claimed is None:
        return ClaimedRuns([], [])
    tickets = claimed.plan.tickets
    if len(claimed.inserted) != len(tickets):
        # Someone else had already created these occurrences: theirs to run.
        tickets = [t for t in tickets if t.run_key in claimed.inserted]
    later = claimed.plan.later
    if later:
        # Pending until their jitter or deferral ends: handed out then, as retries are.
        tickets = [t for t in tickets if t.run_key not in later]
    started = claimed.plan.started
    if not started:
        return ClaimedRuns(tickets, [])
    return ClaimedRuns(
        [t for t in tickets if t.run_key not in started],
        [t for t in tickets if t.run_key in started],
    )


def _apply(ops: Operations, plan: ClaimPlan, all_or_nothing: bool) -> set[str]:
    """Write a plan; with all_or_nothing, give up (JobsMoved) if a job moved since it
    was read, so that the caller claims again.

    Nothing is written while the scheduler is paused: asked here, in the write
    transaction, so that a pause committed while the plan was made is seen (the jobs stay
    due, and their misfire policy decides at the resume). One statement per claim that
    found due jobs; an idle pass never gets here, and a scheduler that knows it is paused
    does not claim at all (jobs.runtime.scheduler)."""
    if ops.claims_paused(plan.db_now):
        return set()
    moved = ops.move_jobs(plan.moves)
    if all_or_nothing and moved != len(plan.moves):
        raise JobsMoved
    inserted = ops.insert_runs(plan.runs) if plan.runs else set()
    if plan.skipped:
        planned.record_skipped(ops, plan.skipped, plan.db_now)
    if plan.overlaps:  # only when a job in the batch forbids or replaces
        overlap.apply(ops, plan.overlaps, inserted)
    return inserted


def _occurrences(job: DueJob, now: datetime, grace: timedelta) -> schedules.ClaimPlan:
    if job.schedule_type == _ONCE:
        return schedules.plan_once_claim(
            job.next_run_at, now, policy=job.misfire_policy, grace=grace
        )
    if job.schedule_type == _CRON:
        cron = cron_schedule(job.cron_expression, job.timezone or conf.time_zone())
        return schedules.plan_cron_claim(
            job.next_run_at, cron, now, policy=job.misfire_policy, grace=grace
        )
    step = schedules.interval_step(job.interval, job.interval_unit)
    return schedules.plan_interval_claim(
        job.next_run_at, step, now, policy=job.misfire_policy, grace=grace
    )


def _plan(
    ops: Operations,
    jobs: list[DueJob],
    now: datetime,
    db_now: object,
    dispatched: bool,
    start: StartNow | None = None,
) -> ClaimPlan:
    s = ops.store
    grace = conf.misfire_grace()
    plan = ClaimPlan(db_now=db_now)
    scheduled = ScheduledRun(s, plan, db_now, db_now if dispatched else None, start, now)
    # The calendars and blackout windows, read once for the batch when a job of it has a
    # calendar or a jitter, or any window exists (jobs/engine/planned.py).
    rules = planned.batch_rules(jobs)
    # Jobs whose overlap policy is not "allow": their occurrences are decided after the
    # loop, with one query for the whole batch.
    guarded: list[overlap.Guarded] = []
    for job in jobs:
        try:
            occurrences = _occurrences(job, now, grace)
        except Exception:
            # The constraints and validation make this unreachable. If it happens anyway,
            # one bad row must not stop every claim, and the job must not be switched off
            # for an arithmetic reason: it is left as it is (see _leave_due).
            _leave_due(job, "its occurrences could not be computed", failed=True)
            continue
        planned_claim = None
        if rules is not None and planned.concerns(job, rules, occurrences):
            try:
                planned_claim = planned.plan_job(job, rules, occurrences, now, grace)
            except Exception:
                _leave_due(job, "its calendar's slots could not be computed", failed=True)
                continue
            occurrences = planned_claim.occurrences
            plan.skipped += planned_claim.skipped
        following = occurrences.next_run_at
        if following is None and job.schedule_type != _ONCE:
            # A recurring schedule always has a next occurrence (validation refuses an
            # expression that never matches): "none" here is a failure, not an end.
            _leave_due(job, "no next occurrence was found", failed=False)
            continue
        if occurrences.missed:
            logger.info(
                "job %r missed %d occurrence(s); misfire policy %s",
                job.name,
                occurrences.missed,
                job.misfire_policy,
            )
        if planned_claim is not None:
            if job.overlap_policy != _ALLOW and planned_claim.runs:
                guarded.append(
                    overlap.Guarded(job, tuple(run.scheduled_for for run in planned_claim.runs))
                )
            else:
                for run in planned_claim.runs:
                    scheduled.add(job, run.scheduled_for, run.not_before, run.note)
        elif job.overlap_policy != _ALLOW and occurrences.run_at:
            guarded.append(overlap.Guarded(job, occurrences.run_at))
        else:
            for scheduled_for in occurrences.run_at:
                scheduled.add(job, scheduled_for)
        # Only a once job, claimed, has no next occurrence: it is done, and deactivated.
        plan.moves.append(
            JobMove(
                s.adapt_datetime(following), following is not None, job.key, job.read_next_run_at
            )
        )
    if guarded:
        plan.overlaps = overlap.plan(ops, guarded, scheduled.add, now)
    return plan


# Jobs left due by _leave_due, by key, with the next_run_at they were left at: each is
# logged as an error once per process and occurrence, not on every pass.
_LEFT_DUE: dict[str, object] = {}
_LEFT_DUE_KEPT = 1024


def _leave_due(job: DueJob, why: str, *, failed: bool) -> None:
    """Leave a job whose claim cannot be planned as it is: active, its next_run_at
    unchanged, no run. It stays due, so the scheduler's health check (jobs.alerts.health)
    finds it unclaimed after JOBS_MISFIRE_GRACE_SECONDS + JOBS_LEASE_SECONDS and raises
    the "scheduler down" alert naming it; and each pass tries it again, so it runs again
    by itself once whatever failed is fixed."""
    if _LEFT_DUE.get(job.key) == job.read_next_run_at:
        logger.debug("job %r still cannot be claimed: %s", job.name, why)
        return
    if len(_LEFT_DUE) >= _LEFT_DUE_KEPT:
        _LEFT_DUE.clear()
    _LEFT_DUE[job.key] = job.read_next_run_at
    logger.error(
        "job %r (%s): %s; it stays active and due, and is tried again at every pass",
        job.name,
        job.key,
        why,
        exc_info=failed,
    )


# A parsed cron schedule, kept: the same jobs are claimed again and again.
cron_schedule = planned.cron_schedule
