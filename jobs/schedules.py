"""Pure time arithmetic for schedules: no ORM, no clock, no settings.

Every function takes the current time as an argument so tests can drive it, and works
on aware UTC datetimes. Interval schedules are a fixed grid ``anchor + k * step``:
occurrences are computed from the grid, never from "when the last run happened", which
is what keeps them from drifting however long runs or ticks take.

Intervals are exact durations in UTC. "Every 1 day" is 24 hours, so across a daylight
saving change its local wall-clock time moves by an hour; a job that must run at the
same local time every day is a cron job.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

SECOND = "second"
MINUTE = "minute"
HOUR = "hour"
DAY = "day"

UNIT_SECONDS: dict[str, int] = {SECOND: 1, MINUTE: 60, HOUR: 3600, DAY: 86400}

# Anything longer is a typo, not a schedule.
MAX_INTERVAL = timedelta(days=3650)
MIN_INTERVAL = timedelta(seconds=1)

COALESCE = "coalesce"
SKIP = "skip"

# Retries wait base * 2**(attempt - 1), never longer than this.
MAX_RETRY_DELAY = timedelta(days=1)


class ScheduleError(ValueError):
    """A schedule that cannot be computed (unknown unit, non-positive interval...)."""


def interval_step(interval: int, unit: str) -> timedelta:
    """The duration of "every `interval` `unit`s"."""
    if unit not in UNIT_SECONDS:
        raise ScheduleError(f"unknown interval unit {unit!r}")
    if interval is None or interval < 1:
        raise ScheduleError("the interval must be a positive whole number")
    return timedelta(seconds=interval * UNIT_SECONDS[unit])


def first_interval_anchor(now: datetime, step: timedelta, start_at: datetime | None) -> datetime:
    """The grid origin of a new or edited interval schedule.

    With a start time the grid starts there; without one the first run comes one step
    after the schedule was saved.
    """
    return start_at if start_at is not None else now + step


def first_occurrence_at_or_after(anchor: datetime, step: timedelta, moment: datetime) -> datetime:
    """The earliest grid point ``anchor + k * step`` (k >= 0) that is not before `moment`.

    Used when a job is created, edited or re-enabled: the job resumes on its grid at
    the next point to come, so a job that was off for a week does not fire a burst of
    stale runs.
    """
    if step <= timedelta(0):
        raise ScheduleError("the interval must be positive")
    if moment <= anchor:
        return anchor
    # timedelta // timedelta is exact integer arithmetic in microseconds: no float drift.
    steps = -((anchor - moment) // step)  # ceiling division
    return anchor + steps * step


@dataclass(frozen=True)
class ClaimPlan:
    """What one claim of a job does: the occurrences to run and where the job goes next."""

    run_at: tuple[datetime, ...]
    next_run_at: datetime | None
    # Due occurrences that get no run of their own (coalesced into another, or skipped).
    missed: int


def plan_interval_claim(
    next_run_at: datetime,
    step: timedelta,
    now: datetime,
    *,
    policy: str,
    grace: timedelta,
) -> ClaimPlan:
    """Plan the claim of an interval job whose `next_run_at` (a grid point) has come.

    Occurrences due up to `now` are each run while the oldest of them is no later than
    `grace`: a scheduler that is briefly behind catches up without losing any. When the
    oldest is later than that, the job misfired (the scheduler was down): `coalesce` runs
    one run, for the latest due occurrence, standing for all of them; `skip` runs only
    the latest due occurrence and only if it is itself within the grace. Either way the
    job then moves to the first grid point after `now`.
    """
    if step <= timedelta(0):
        raise ScheduleError("the interval must be positive")
    if next_run_at > now:
        return ClaimPlan(run_at=(), next_run_at=next_run_at, missed=0)
    due_count = (now - next_run_at) // step + 1
    latest = next_run_at + (due_count - 1) * step
    following = latest + step
    if now - next_run_at <= grace:
        runs = tuple(next_run_at + i * step for i in range(due_count))
        return ClaimPlan(run_at=runs, next_run_at=following, missed=0)
    if policy == SKIP:
        runs = (latest,) if now - latest <= grace else ()
    elif policy == COALESCE:
        runs = (latest,)
    else:
        raise ScheduleError(f"unknown misfire policy {policy!r}")
    return ClaimPlan(run_at=runs, next_run_at=following, missed=due_count - len(runs))


def plan_once_claim(
    scheduled_at: datetime, now: datetime, *, policy: str, grace: timedelta
) -> ClaimPlan:
    """Plan the claim of a one-off job; it never has a next occurrence."""
    if scheduled_at > now:
        return ClaimPlan(run_at=(), next_run_at=scheduled_at, missed=0)
    if policy not in (COALESCE, SKIP):
        raise ScheduleError(f"unknown misfire policy {policy!r}")
    if policy == SKIP and now - scheduled_at > grace:
        return ClaimPlan(run_at=(), next_run_at=None, missed=1)
    return ClaimPlan(run_at=(scheduled_at,), next_run_at=None, missed=0)


def retry_delay(attempt: int, base_seconds: float, rng: random.Random | None = None) -> timedelta:
    """How long to wait before attempt ``attempt + 1`` after attempt `attempt` failed.

    Exponential backoff (base, 2 x base, 4 x base, ...) capped at a day, with "equal
    jitter": a random half of the delay, so that many runs failing together (a database
    outage, say) do not all retry in the same instant.
    """
    if attempt < 1:
        raise ScheduleError("attempts are numbered from 1")
    if base_seconds <= 0:
        return timedelta(0)
    exponent = min(attempt - 1, 32)  # beyond this the cap applies anyway
    delay = min(base_seconds * (2**exponent), MAX_RETRY_DELAY.total_seconds())
    draw = (rng or random).random()
    return timedelta(seconds=delay / 2 + draw * delay / 2)
