"""The schedule preview: the next occurrences of a schedule, saved or not, in its zone,
with what daylight saving does to them (the job form, GET /api/v1/schedule-preview/).

The occurrences are the scheduler's own. The job's anchor comes from
Job.refresh_schedule (what saving the job would compute), the first occurrence from the
jobs.schedules.arithmetic function refresh_schedule calls, and each following one the way a claim
moves a job on (plan_interval_claim: one step; plan_cron_claim: CronSchedule.next_after).
So for the same anchor the preview and the scheduler cannot disagree. An interval job
without a start time is previewed as if saved now (its first run one step from now); a
one-off job shows its one time. An invalid schedule has no occurrences: the preview
gives the messages Job.clean() gives instead, field by field.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError
from django.utils import timezone

from jobs.calendars import planning, words
from jobs.models import LATEST_SCHEDULE_TIME, Job, ScheduleType
from jobs.models.choices import SCHEDULE_FIELDS
from jobs.schedules import arithmetic as schedules
from jobs.schedules import daylight

DEFAULT_COUNT = 10
MAX_COUNT = 100
# The fields a preview reads: those that define the schedule (all of SCHEDULE_FIELDS but
# is_active); the others are the job's own (or a new job's defaults).
PREVIEW_FIELDS = tuple(name for name in SCHEDULE_FIELDS if name != "is_active")


class Occurrence(NamedTuple):
    at: datetime  # aware UTC
    local: datetime  # the same moment in the schedule's zone
    note: str | None  # what daylight saving, the calendar or a blackout does to it, in words
    skipped: bool = False  # recorded as skipped (a day off, a blackout window), not run
    starts: datetime | None = None  # when its run may start: `at` plus the job's jitter


class Preview(NamedTuple):
    occurrences: list[Occurrence]
    zone_name: str  # the zone of `local`: the job's time zone, or the site's
    errors: dict[str, list[str]]  # by field; when not empty there are no occurrences


def schedule_job(values: Mapping[str, Any], base: Job | None = None) -> Job:
    """An unsaved copy of `base` (a new job when None) with the schedule fields that
    `values` holds: what saving a form or an API request with them would store."""
    job = copy.copy(base) if base is not None else Job()
    for name in (*PREVIEW_FIELDS, "is_active"):
        if name in values:
            setattr(job, name, values[name])
    return job


def schedule_errors(job: Job) -> dict[str, list[str]]:
    """Job.full_clean()'s messages about the schedule fields: the fields' own checks
    (a time between 2000 and 9000, a known schedule type...) and Job.clean()'s rules."""
    errors: dict[str, list[str]] = {}
    others = [f.name for f in Job._meta.concrete_fields if f.name not in PREVIEW_FIELDS]
    try:
        job.clean_fields(exclude=others)
    except ValidationError as error:
        errors = {field: list(messages) for field, messages in error.message_dict.items()}
    for field, message in job.schedule_errors().items():
        errors.setdefault(field, []).append(str(message))
    return errors


def preview(
    job: Job,
    *,
    count: int = DEFAULT_COUNT,
    start: datetime | None = None,
    now: datetime | None = None,
) -> Preview:
    """The first `count` occurrences of `job`'s schedule from `start` (default: now), the
    job taken as saved active at `now`; or, for an invalid schedule, the messages."""
    if not 1 <= count <= MAX_COUNT:
        raise ValueError(f"count must be from 1 to {MAX_COUNT}")
    errors = schedule_errors(job)
    zone_name = job.cron_zone_name
    if errors:
        return Preview([], zone_name, errors)
    now = now or timezone.now()
    planned = copy.copy(job)
    planned.is_active = True  # what it does when it runs; a disabled job's times once enabled
    planned.refresh_schedule(now)
    since = start or now
    zone = schedules.time_zone(zone_name)
    if planned.schedule_type == ScheduleType.ONCE:
        times = [planned.scheduled_at] if planned.scheduled_at >= since else []
        notes: list = [None] * len(times)
    elif planned.schedule_type == ScheduleType.CRON:
        cron = planned.cron_schedule()
        first = planned.next_run_at if start is None else cron.next_after(start)
        times = _cron_times(cron, first, count)
        notes = daylight.cron_notes(cron, since, times)
    else:
        step = planned.step
        first = (
            planned.next_run_at
            if start is None
            else schedules.first_occurrence_at_or_after(planned.anchor_at, step, start)
        )
        times = _interval_times(first, step, count)
        # From the anchor when it is earlier: a start time typed before a clock change
        # shows at another local time after it.
        notes = daylight.interval_notes(zone, min(planned.anchor_at, since), times)
    occurrences = [
        Occurrence(at=at, local=at.astimezone(zone), note=note, starts=_starts(planned, at))
        for at, note in zip(times, notes, strict=True)
    ]
    schedule = planned.planned_schedule()
    if schedule is not None:
        occurrences = _planned_occurrences(planned, schedule, since, count, zone)
    return Preview(occurrences, zone_name, {})


def _starts(job: Job, at: datetime) -> datetime:
    return at + planning.jitter_delay(job.pk.hex, at, job.jitter_seconds or 0)


def _planned_occurrences(
    job: Job, schedule: planning.PlannedSchedule, since: datetime, count: int, zone: Any
) -> list[Occurrence]:
    """The slots the claim will take, from `since`, each with what happened to it."""
    slots = schedule.slots(since, LATEST_SCHEDULE_TIME, count)
    times = [slot.at for slot in slots]
    if job.schedule_type == ScheduleType.CRON:
        daylight_notes = daylight.cron_notes(job.cron_schedule(), since, times)
    elif job.schedule_type == ScheduleType.ONCE:
        daylight_notes = [None] * len(times)  # a time typed in, not a step across a change
    else:
        daylight_notes = daylight.interval_notes(zone, min(job.anchor_at, since), times)
    rules = schedule.rules
    occurrences = []
    for slot, daylight_note in zip(slots, daylight_notes, strict=True):
        said = [
            n for n in (words.slot_note(slot, rules.days, rules.zone, zone), daylight_note) if n
        ]
        occurrences.append(
            Occurrence(
                at=slot.at,
                local=slot.at.astimezone(zone),
                note="; ".join(said) or None,
                skipped=slot.skipped,
                starts=None if slot.skipped else _starts(job, slot.at),
            )
        )
    return occurrences


def _cron_times(cron: schedules.CronSchedule, first: datetime | None, count: int) -> list[datetime]:
    times: list[datetime] = []
    at = first
    while at is not None and len(times) < count:
        times.append(at)
        at = cron.next_after(at)
    return times


def _interval_times(first: datetime, step: Any, count: int) -> list[datetime]:
    times = [first]
    while len(times) < count:
        try:
            times.append(times[-1] + step)
        except OverflowError:  # past the year 9999: no schedule goes there
            break
    return times
