"""Backfill: one run per past occurrence of a range that has none yet, in order, through
the job's queue and its limits (trigger "backfill").

The occurrences are the job's slots (jobs.calendars.planning: its calendar and the
blackout windows applied; a slot they skip gets no run). The unique (job,
scheduled_for, attempt) constraint makes a second backfill of the same range, or one
racing a claim, insert nothing for an occurrence that has a run.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from django.utils import timezone
from django.utils.translation import gettext as _

from jobs import conf
from jobs.calendars import planning
from jobs.models import (
    ChangeAction,
    ExecutorKind,
    Job,
    JobChange,
    JobHistory,
    ScheduleType,
    Trigger,
)
from jobs.models.calendars import PlanningRules
from jobs.sql import store


class BackfillRefused(ValueError):
    """A range a backfill refuses: `field` names the input, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Backfill(NamedTuple):
    occurrences: list[datetime]  # every occurrence of the range, in order
    created: list[datetime]  # those that had no run and got one


def occurrences(
    job: Job, start: datetime, end: datetime, now: datetime | None = None
) -> list[datetime]:
    """The occurrences of `job` in [start, end) that a backfill runs; raises
    BackfillRefused for a range in the future, backwards or over JOBS_BACKFILL_MAX_RUNS."""
    now = now or timezone.now()
    most = conf.backfill_max_runs()
    if end <= start:
        raise BackfillRefused("end", _("The end must be after the start."))
    if end > now:
        raise BackfillRefused(
            "end", _("A backfill covers the past only: the end is in the future.")
        )
    schedule = _schedule(job)
    if schedule is None:
        raise BackfillRefused("start", _("Only a recurring job can be backfilled."))
    found = [slot.at for slot in schedule.slots(start, end, most + 1) if not slot.skipped]
    if len(found) > most:
        raise BackfillRefused(
            "end",
            _("The range holds more than %(most)d occurrences (JOBS_BACKFILL_MAX_RUNS).")
            % {"most": most},
        )
    return found


def already_run(job: Job, wanted: list[datetime]) -> set[datetime]:
    """Those of the occurrences `wanted` that have a run (a backfill creates none for
    them)."""
    return set(
        JobHistory.objects.filter(job=job, attempt=1, scheduled_for__in=wanted).values_list(
            "scheduled_for", flat=True
        )
    )


def backfill(job: Job, start: datetime, end: datetime, now: datetime | None = None) -> Backfill:
    """Create the runs of the range's occurrences that have none (see the module)."""
    now = now or timezone.now()
    wanted = occurrences(job, start, end, now)
    arguments = job.arguments if job.executor != ExecutorKind.SIMULATED else None
    with store().writing():
        taken = already_run(job, wanted)
        missing = [at for at in wanted if at not in taken]
        JobHistory.objects.bulk_create(
            [
                JobHistory(
                    job=job,
                    scheduled_for=at,
                    # In the order of the occurrences: a queue starts the waiting runs
                    # of one priority by not_before.
                    not_before=now + timedelta(microseconds=index),
                    attempt=1,
                    trigger=Trigger.BACKFILL,
                    created_at=now,
                    arguments=arguments,
                    queue=job.queue,
                    priority=job.priority,
                )
                for index, at in enumerate(missing)
            ],
            ignore_conflicts=True,
        )
        if missing:
            JobChange.record(job_id=job.pk, job_name=job.name, action=ChangeAction.BACKFILL)
    return Backfill(wanted, missing)


def _schedule(job: Job) -> planning.PlannedSchedule | None:
    """The job's slots: its schedule with its rules (none: its own occurrences)."""
    if job.schedule_type == ScheduleType.ONCE:
        return None
    rules = PlanningRules.load([job.calendar_id])
    planned = job.planned_schedule(rules)
    if planned is not None:
        return planned
    base: planning.Base | None
    if job.schedule_type == ScheduleType.CRON:
        base = job.cron_schedule()
    else:
        base = (
            planning.IntervalGrid(job.anchor_at, job.step) if job.anchor_at and job.step else None
        )
    if base is None:
        return None
    return planning.PlannedSchedule(
        base, planning.Rules(None, planning.UTC_ZONE, planning.SKIP, ())
    )
