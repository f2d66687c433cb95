"""The claim of a job that a calendar, a blackout window or a jitter concerns: its slots
(jobs.calendars.planning) instead of its schedule's own occurrences, the skipped ones
recorded as skipped runs with their reason, and each run's start delayed by its jitter.

Jobs that none of these concern never come here: their claim is the plain one
(jobs/engine/claim.py), at the cost of one comparison each.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from jobs import conf
from jobs.calendars import planning
from jobs.calendars.words import log_note
from jobs.models import PlanningRules, RunStatus
from jobs.runs import new_key
from jobs.schedules import arithmetic as schedules
from jobs.sql.base import Operations
from jobs.sql.rows import DueJob, JobStatus, SkippedRun

_SKIPPED = RunStatus.SKIPPED.value

logger = logging.getLogger("jobs.engine")


class PlannedRun(NamedTuple):
    scheduled_for: datetime
    not_before: datetime
    note: str  # the first line of its log ("" for none)


class PlannedClaim(NamedTuple):
    occurrences: schedules.ClaimPlan  # run_at: every slot due, next_run_at: the next
    runs: list[PlannedRun]
    skipped: list[SkippedRun]


def base_schedule(job: DueJob, cron: schedules.CronSchedule | None) -> planning.Base | None:
    """The job's own occurrences, for a recurring job (`cron`: its parsed cron schedule)."""
    if job.schedule_type == "cron":
        return cron
    if job.schedule_type == "interval":
        step = schedules.interval_step(job.interval, job.interval_unit)  # type: ignore[arg-type]
        return planning.IntervalGrid(job.anchor_at or job.next_run_at, step)
    if job.schedule_type == "once":
        return planning.OneTime(job.next_run_at)
    return None


def plan(
    job: DueJob,
    rules: planning.Rules | None,
    plain: schedules.ClaimPlan,
    now: datetime,
    grace: timedelta,
    cron: schedules.CronSchedule | None = None,
) -> PlannedClaim:
    """The claim of `job` with its rules (None: only its jitter), given its `plain`
    claim (what its schedule alone would do)."""
    base = base_schedule(job, cron) if rules is not None else None
    if base is None:
        runs = [_run(job, at, "") for at in plain.run_at]
        return PlannedClaim(plain, runs, [])
    assert rules is not None
    planned = planning.PlannedSchedule(base, rules)
    once = isinstance(base, planning.OneTime)
    # A one-off job's next_run_at is already its slot (Job.refresh_schedule): its plain
    # claim holds, and the slot only says whether it is skipped.
    occurrences = (
        plain
        if once
        else schedules.plan_cron_claim(
            job.next_run_at, planned, now, policy=job.misfire_policy, grace=grace
        )  # type: ignore[arg-type]
    )
    runs: list[PlannedRun] = []
    skipped: list[SkippedRun] = []
    for at in occurrences.run_at:
        slot = planned.slot(at)
        if once and slot is not None and not slot.skipped and slot.at != at:
            # Its calendar or a window changed since it was saved: it is not lost (it has
            # no other time), it starts when the slot comes.
            note = log_note(slot, rules.days, rules.zone, now)
            runs.append(PlannedRun(at, _run(job, slot.at, note).not_before, note))
            continue
        if slot is None or slot.at != at:
            # next_run_at was planned under rules that changed since (a calendar edited):
            # this time is no slot any more, and the job moves on to its next one.
            logger.info("job %r: %s is no longer a slot of its calendar", job.name, at)
            continue
        moved = slot.day_off is not None or slot.window is not None
        note = log_note(slot, rules.days, rules.zone, now) if moved else ""
        if slot.skipped:
            skipped.append(SkippedRun(new_key(), job.key, at, note, job.queue, job.priority))
        else:
            runs.append(_run(job, at, note))
    return PlannedClaim(occurrences, runs, skipped)


def _run(job: DueJob, at: datetime, note: str) -> PlannedRun:
    return PlannedRun(at, at + planning.jitter_delay(job.key, at, job.jitter_seconds), note)


@lru_cache(maxsize=1024)
def cron_schedule(expression: str, zone_name: str) -> schedules.CronSchedule:
    """A parsed cron schedule, kept: the same jobs are claimed again and again."""
    return schedules.CronSchedule(expression, zone_name)


def batch_rules(jobs: list[DueJob]) -> PlanningRules | None:
    """The calendars of a batch and the active windows (two small queries), or None
    when no job of the batch has a calendar or a jitter and there is no window: then
    the plain claim holds for every job, and asking cost one query."""
    calendars = {job.calendar_id for job in jobs if job.calendar_id is not None}
    rules = PlanningRules.load(calendars)
    if not calendars and not rules.has_windows and not any(job.jitter_seconds for job in jobs):
        return None
    return rules


def concerns(job: DueJob, rules: PlanningRules, plain: schedules.ClaimPlan) -> bool:
    """Whether a calendar, a window or a jitter may change the job's claim: a window
    only when one of the times its plain claim runs or moves to is inside it (one
    comparison per window, the windows keep their last answer), so a window that is
    not open costs the jobs it covers next to nothing."""
    if job.calendar_id is not None or job.jitter_seconds:
        return True
    if not rules.has_windows:
        return False
    times = (*plain.run_at, plain.next_run_at) if plain.next_run_at else plain.run_at
    return any(rules.window_open_at(at) for at in times)


def plan_job(
    job: DueJob,
    rules: PlanningRules,
    plain: schedules.ClaimPlan,
    now: datetime,
    grace: timedelta,
) -> PlannedClaim:
    """plan() for a job of a batch whose rules `batch_rules` read."""
    job_rules = rules.for_job(job.calendar_id, job.calendar_policy, job.queue, job.key)
    cron = None
    if job.schedule_type == "cron" and job_rules is not None:
        cron = cron_schedule(job.cron_expression, job.timezone or conf.time_zone())
    return plan(job, job_rules, plain, now, grace, cron)


def record_skipped(ops: Operations, skipped: list[SkippedRun], db_now: object) -> None:
    """Write the occurrences a calendar or a window skipped, in the claim's transaction,
    and each as its job's latest outcome (as an overlap policy's skips are)."""
    ops.insert_skipped_runs(skipped, db_now)
    adapt = ops.store.adapt_datetime
    ops.record_status_on_jobs(
        [JobStatus(_SKIPPED, run.job_key, adapt(run.scheduled_for)) for run in skipped]
    )
