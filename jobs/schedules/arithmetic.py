"""Pure time arithmetic for schedules: no ORM, no clock, no settings.

Every function takes the current time as an argument so tests can drive it, and works
on aware UTC datetimes. Interval schedules are a fixed grid ``anchor + k * step``:
occurrences are computed from the grid, never from "when the last run happened", which
is what keeps them from drifting however long runs or ticks take.

Intervals are exact durations in UTC. "Every 1 day" is 24 hours, so across a daylight
saving change its local wall-clock time moves by an hour; a job that must run at the
same local time every day is a cron job.

Cron expressions are read by cronsim and matched here against the job's wall clock,
walked in local time; occurrences are returned as aware UTC. What a clock change does
to them (Debian cron's rules, for changes of any size) is CronSchedule's docstring and
docs/scheduling.md ("Cron schedules and time zones").
"""

from __future__ import annotations

import random
import zoneinfo
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from cronsim import CronSim, CronSimError

from jobs.schedules.cron_match import CronMatcher

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


class CronExpressionError(ScheduleError):
    """A cron expression cronsim refuses. `field` names the faulty field (one of
    CRON_FIELDS), or is None when the expression does not have five fields."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class UnknownTimeZone(ScheduleError):
    """Not an IANA time zone name this system knows."""


def interval_step(interval: int, unit: str) -> timedelta:
    """The duration of "every `interval` `unit`s"."""
    if unit not in UNIT_SECONDS:
        raise ScheduleError(f"unknown interval unit {unit!r}")
    if interval is None or interval < 1:
        raise ScheduleError("the interval must be a positive whole number")
    return timedelta(seconds=interval * UNIT_SECONDS[unit])


def largest_unit(seconds: int) -> tuple[int, str]:
    """A whole number of seconds as "every N units" in the largest unit it is a whole
    number of (7200: 2 hours)."""
    for unit in (DAY, HOUR, MINUTE, SECOND):
        if seconds % UNIT_SECONDS[unit] == 0:
            return seconds // UNIT_SECONDS[unit], unit
    return seconds, SECOND  # unreachable: every unit divides by a second


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


_NO_TIME = timedelta(0)


class ClaimPlan(NamedTuple):
    """What one claim of a job does: the occurrences to run and where the job goes next.
    A NamedTuple: one is made per due job on the claim's critical path (a frozen
    dataclass took twice as long to make)."""

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
    if step <= _NO_TIME:
        raise ScheduleError("the interval must be positive")
    lag = now - next_run_at
    if lag < _NO_TIME:
        return ClaimPlan((), next_run_at, 0)
    if lag < step and lag <= grace:
        # The usual case, one occurrence due and on time: the general arithmetic below
        # gives the same, at twice the cost, once per due job of a claim.
        return ClaimPlan((next_run_at,), next_run_at + step, 0)
    due_count = lag // step + 1
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


# --- cron ------------------------------------------------------------------------------

# The five fields, in order, as cronsim names them in its errors ("Bad day-of-month").
CRON_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
# A claim walks at most this many due occurrences of a cron job (each step costs tens of
# microseconds). Past it, a job that misfired finds its latest due occurrence by looking
# back from `now`, and one within the grace leaves the rest to the next claim.
MAX_CRON_STEPS = 10
# Names in the zoneinfo database that are not places.
_NOT_ZONES = frozenset({"localtime", "Factory", "posixrules"})


@lru_cache(maxsize=1)
def time_zone_names() -> tuple[str, ...]:
    """Every IANA time zone name the system knows, sorted."""
    return tuple(sorted(zoneinfo.available_timezones() - _NOT_ZONES))


@lru_cache(maxsize=256)
def time_zone(name: str) -> zoneinfo.ZoneInfo:
    """The zone called `name`; UnknownTimeZone when it is not an IANA name we know."""
    if name not in time_zone_names():
        raise UnknownTimeZone(f"unknown time zone {name!r}")
    return zoneinfo.ZoneInfo(name)


def parse_cron(expression: str) -> None:
    """Check a five-field cron expression; raises CronExpressionError if it is not one.

    cronsim also reads six fields (seconds first); a job's schedule has the five every
    cron user knows, so that is all this accepts.
    """
    if len(expression.split()) != 5:
        raise CronExpressionError("a cron expression has five fields")
    try:
        CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as error:
        text = str(error)
        field = text.removeprefix("Bad ") if text.startswith("Bad ") else None
        raise CronExpressionError(text, field if field in CRON_FIELDS else None) from None
    except Exception as error:  # cronsim is a parser of user input: no surprise may leak
        raise CronExpressionError(str(error)) from None


def follows_wall_clock(expression: str) -> bool:
    """Whether a cron expression keeps to the wall clock across a clock change (True) or
    to elapsed time (False). Elapsed time when its minute or its hour field starts with
    "*" ("*", "*/15", "*/45"); the wall clock otherwise ("30 2", "0-59/5 2", "0,*/20 2").

    The test is on the field's first character because that is the test of Vixie and
    Debian cron (and of cronsim), and the same test decides how the two day fields
    combine: a crontab moved here keeps doing what it did.
    """
    minute, hour = expression.split()[:2]
    return not (minute.startswith("*") or hour.startswith("*"))


# Two changes of a zone's UTC offset are never this close: in the tz database the
# closest are four days apart (Africa/Freetown, 1939), all others a week or more (a test
# checks every zone). So offsets compared this far apart see every change between them.
CHANGE_SPACING = timedelta(days=3)
_SECOND = timedelta(seconds=1)
_LAST_INSTANT = datetime.max.replace(tzinfo=UTC)


def _offset(zone: zoneinfo.ZoneInfo, moment: datetime) -> timedelta:
    return moment.astimezone(zone).utcoffset()  # type: ignore[return-value]


def _wall(moment: datetime, offset: timedelta) -> datetime:
    """The naive wall time of `moment` (aware UTC) at `offset`."""
    return (moment + offset).replace(tzinfo=None)


def _instant(wall: datetime, offset: timedelta) -> datetime:
    """The aware UTC instant of the naive wall time `wall` at `offset`."""
    return (wall - offset).replace(tzinfo=UTC)


@lru_cache(maxsize=4096)
def offset_changes(zone: zoneinfo.ZoneInfo, year: int) -> tuple[datetime, ...]:
    """The instants (aware UTC, to the second) at which `zone`'s UTC offset changes, in
    (1 January `year`, 1 January `year + 1`] UTC, oldest first.

    Found by comparing offsets every CHANGE_SPACING and bisecting where they differ
    (zoneinfo does not list its transitions), once per zone and year: a claim asks the
    same few zones about the same year again and again.
    """
    low = datetime(year, 1, 1, tzinfo=UTC)
    end = datetime(year + 1, 1, 1, tzinfo=UTC) if year < datetime.max.year else _LAST_INSTANT
    changes: list[datetime] = []
    low_offset = _offset(zone, low)
    while low < end:
        high = min(low + CHANGE_SPACING, end)
        high_offset = _offset(zone, high)
        if high_offset != low_offset:
            changes.append(_bisect(zone, low, high, low_offset))
        low, low_offset = high, high_offset
    return tuple(changes)


def _bisect(zone: zoneinfo.ZoneInfo, low: datetime, high: datetime, offset: timedelta) -> datetime:
    """The one change in (low, high], where the offset at `low` is `offset`."""
    while high - low > _SECOND:
        middle = low + (high - low) / 2
        if _offset(zone, middle) == offset:
            low = middle
        else:
            high = middle
    # Zones change on whole seconds, and (low, high] holds one whole second at most.
    at = high.replace(microsecond=0)
    return at if at > low else at + _SECOND


def first_change(zone: zoneinfo.ZoneInfo, start: datetime, end: datetime) -> datetime | None:
    """The first instant in (start, end] at which `zone`'s UTC offset changes; None if
    it does not change then."""
    # offset_changes(year) ends at 1 January of the next year, included.
    first_year = start.year if (start.month, start.day) != (1, 1) else max(start.year - 1, 1)
    for year in range(first_year, end.year + 1):
        for change in offset_changes(zone, year):
            if change > end:
                return None
            if change > start:
                return change
    return None


class CronSchedule:
    """A cron expression in a time zone: its occurrences as aware UTC datetimes.

    The expression is matched against the zone's wall clock (cronsim reads the fields;
    the walk here is on naive local times, so the size of a clock change does not
    matter: 30 minutes in Australia/Lord_Howe, :45 in Pacific/Chatham, a whole day in
    Pacific/Apia). What a clock change does depends on follows_wall_clock():

    - wall clock (minute and hour fields that do not start with "*", e.g. "30 2 * * *"):
      a time that does not exist (clocks forward) runs at the first instant after the
      gap, once for all the gap's times; a time that happens twice (clocks back) runs
      at its first pass only;
    - elapsed time (the minute or the hour field starts with "*", e.g. "*/15 * * * *",
      "0 * * * *"): every instant whose wall time matches runs, so the times in a gap do
      not run and a repeated time runs at both passes.

    These are Debian cron's rules, for every size of change.
    """

    __slots__ = ("_matcher", "expression", "wall_clock", "zone")

    def __init__(self, expression: str, zone_name: str) -> None:
        parse_cron(expression)
        self.expression = expression
        self.zone = time_zone(zone_name)
        self.wall_clock = follows_wall_clock(expression)
        self._matcher = CronMatcher(expression)

    def next_after(self, moment: datetime) -> datetime | None:
        """The first occurrence strictly after `moment`, in UTC; None only when the
        expression names no time within 50 years (validation refuses such expressions).

        Walks the wall clock one stretch of constant UTC offset at a time: in the usual
        case (no clock change before the answer) that is one CronMatcher step, two offset
        look-ups and a look-up of the year's changes (kept); each clock change on the
        way costs one more step.
        """
        zone = self.zone
        start = moment
        offset = _offset(zone, start)
        wall = _wall(start, offset)
        while True:
            found = self._matcher.next_after(wall)
            if found is None:
                return None
            at = _instant(found, offset)
            change = first_change(zone, start, at)
            if change is None:
                if not self.wall_clock:
                    return at
                first_pass = found.replace(tzinfo=zone).utcoffset()
                if first_pass == offset:
                    return at
                # `found` is in the second pass of a repeated time, which the wall clock
                # does not run: go on from the end of the repeated times.
                began = first_change(zone, _instant(found, first_pass), at)  # type: ignore[arg-type]
                if first_pass is None or began is None:  # zoneinfo contradicting itself
                    raise ScheduleError(f"no clock change found before {at.isoformat()}")
                start = began + (first_pass - offset)
                wall = _wall(start, offset) - _SECOND
                continue
            after = _offset(zone, change)
            if self.wall_clock and after > offset and found < _wall(change, after):
                return change  # a time in the gap: at the first instant after it
            start, offset = change, after
            wall = _wall(change, after) - _SECOND

    def latest_at_or_before(self, moment: datetime, since: datetime) -> datetime:
        """The latest occurrence in [since, moment]; `since` must be an occurrence.

        Looks back from `moment` over a window that grows fourfold until it holds an
        occurrence, then walks forward within it: a few steps, however long ago `since`.
        """
        lookback = timedelta(minutes=1)
        while True:
            start = moment - lookback
            if start < since:
                found = since
            else:
                found = self.next_after(start)
                if found is None or found > moment:
                    lookback *= 4
                    continue
            while (following := self.next_after(found)) is not None and following <= moment:
                found = following
            return found


def plan_cron_claim(
    next_run_at: datetime,
    schedule: CronSchedule,
    now: datetime,
    *,
    policy: str,
    grace: timedelta,
) -> ClaimPlan:
    """Plan the claim of a cron job whose `next_run_at` (an occurrence) has come.

    The same rules as plan_interval_claim: occurrences due up to `now` each run while
    the oldest is within `grace`; otherwise `coalesce` runs the latest due one for all,
    `skip` runs it only if it is itself within the grace. The job moves to the first
    occurrence after `now` (None if the expression has no further one).

    `missed` is exact up to MAX_CRON_STEPS missed occurrences and a lower bound beyond
    (it only feeds a log line).
    """
    if next_run_at > now:
        return ClaimPlan(run_at=(), next_run_at=next_run_at, missed=0)
    if policy not in (COALESCE, SKIP):
        raise ScheduleError(f"unknown misfire policy {policy!r}")
    due = [next_run_at]
    following = schedule.next_after(next_run_at)
    while following is not None and following <= now and len(due) < MAX_CRON_STEPS:
        due.append(following)
        following = schedule.next_after(following)
    if now - next_run_at <= grace:
        # Cron has minute precision: one occurrence with the default grace. If more than
        # MAX_CRON_STEPS are due, `following` is still due and the next claim takes it.
        return ClaimPlan(run_at=tuple(due), next_run_at=following, missed=0)
    latest, count = due[-1], len(due)
    if following is not None and following <= now:
        # More than MAX_CRON_STEPS due: find the latest without walking to it.
        latest = schedule.latest_at_or_before(now, since=following)
        following = schedule.next_after(latest)
        count += 1
    runs = (latest,) if policy == COALESCE or now - latest <= grace else ()
    return ClaimPlan(run_at=runs, next_run_at=following, missed=count - len(runs))


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
