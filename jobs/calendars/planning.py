"""When a job's occurrences run once its calendar and the blackout windows have their
say, and the jitter of each run. Pure: the claim, Job.refresh_schedule, the preview and
the backfill all plan through PlannedSchedule, so they cannot disagree.

A schedule's own occurrences ("raw": cron or an interval grid) become *slots*: the time a
run is scheduled for (Job.next_run_at, JobHistory.scheduled_for), run or recorded as
skipped. An occurrence on a day off is skipped (policy ``skip``: a skipped slot at the
occurrence) or moved to the same local time on the next or previous business day; one
inside a blackout window is skipped or deferred to the window's end. An occurrence that
would move to or past its next occurrence (before or to its previous one, for
``previous_business_day``) has no slot of its own: it is coalesced into that one. So the
slots are in the order of the occurrences, and a second claim of the same slot inserts
nothing (the unique occurrence key).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, time, timedelta
from typing import NamedTuple, Protocol
from zoneinfo import ZoneInfo

from jobs.calendars.days import BusinessDays, DayOff
from jobs.calendars.windows import SKIP as WINDOW_SKIP
from jobs.calendars.windows import Window, window_at

SKIP = "skip"
NEXT_BUSINESS_DAY = "next_business_day"
PREVIOUS_BUSINESS_DAY = "previous_business_day"
MAX_JITTER_SECONDS = 3600
# Occurrences looked at for one next slot (a minutely job over a long holiday is jumped
# over, not walked): past this the schedule has no next slot, and the claim says so.
MAX_STEPS = 5000
# Windows a deferred occurrence may be deferred through (windows that touch).
MAX_DEFERRALS = 4
_INSTANT = timedelta(microseconds=1)
UTC_ZONE = ZoneInfo("UTC")


class Base(Protocol):
    """A schedule's own occurrences (CronSchedule, IntervalGrid)."""

    def next_after(self, moment: datetime) -> datetime | None: ...


class IntervalGrid:
    """An interval job's occurrences: anchor + k * step."""

    __slots__ = ("anchor", "step")

    def __init__(self, anchor: datetime, step: timedelta) -> None:
        self.anchor = anchor
        self.step = step

    def next_after(self, moment: datetime) -> datetime | None:
        return self.anchor + ((moment - self.anchor) // self.step + 1) * self.step

    def latest_at_or_before(self, moment: datetime) -> datetime | None:
        return self.anchor + ((moment - self.anchor) // self.step) * self.step


class OneTime:
    """A one-off job's one occurrence: a calendar and the windows move or skip it as
    they would a recurring job's (nothing to coalesce into)."""

    __slots__ = ("at",)

    def __init__(self, at: datetime) -> None:
        self.at = at

    def next_after(self, moment: datetime) -> datetime | None:
        return self.at if self.at > moment else None

    def latest_at_or_before(self, moment: datetime) -> datetime | None:
        return self.at if self.at <= moment else None


class Rules(NamedTuple):
    """What applies to one job: its calendar (None: every day counts) read in `zone`,
    the calendar policy, and the blackout windows that cover it."""

    days: BusinessDays | None
    zone: ZoneInfo
    policy: str
    windows: tuple[Window, ...]

    @property
    def moves(self) -> bool:
        return self.days is not None and self.policy != SKIP


class Slot(NamedTuple):
    """A time a run is scheduled for, from the occurrence `origin`: run, or recorded as
    skipped (`skipped`); `day_off` and `window` say why it is not at its origin, or why
    it is skipped."""

    at: datetime
    skipped: bool
    origin: datetime
    day_off: DayOff | None = None
    window: Window | None = None


def _latest_at_or_before(base: Base, moment: datetime) -> datetime | None:
    latest = getattr(base, "latest_at_or_before", None)
    if isinstance(base, IntervalGrid | OneTime):
        return base.latest_at_or_before(moment)
    if latest is None:
        return None
    # A cron schedule: its occurrences within the last MAX_DAYS look-back.
    since = base.next_after(moment - timedelta(days=8))
    if since is None or since > moment:
        return None
    return latest(moment, since)


class PlannedSchedule:
    """A base schedule with Rules applied: its slots, with the interface the claim's
    arithmetic walks (next_after, latest_at_or_before)."""

    __slots__ = ("base", "rules")

    def __init__(self, base: Base, rules: Rules) -> None:
        self.base = base
        self.rules = rules

    def slot(self, origin: datetime) -> Slot | None:
        """The slot of the occurrence `origin`; None when it is coalesced into the
        occurrence before or after it."""
        rules = self.rules
        at = origin
        day_off = None
        if rules.days is not None:
            local = origin.astimezone(rules.zone)
            day_off = rules.days.day_off(local.date())
            if day_off is not None:
                if rules.policy == SKIP:
                    return Slot(origin, True, origin, day_off)
                step = 1 if rules.policy == NEXT_BUSINESS_DAY else -1
                target = rules.days.business_day(local.date(), step)
                if target is None:
                    return Slot(origin, True, origin, day_off)
                at = _same_local_time(target, local.time(), rules.zone)
                if step > 0:
                    following = self.base.next_after(origin)
                    if following is not None and at >= following:
                        return None
                else:
                    before = _latest_at_or_before(self.base, origin - _INSTANT)
                    if before is not None and at <= before:
                        return None
        window = None
        for _ in range(MAX_DEFERRALS):
            found = window_at(rules.windows, at)
            if found.window is None:
                break
            window = found.window
            if window.action == WINDOW_SKIP:
                return Slot(at, True, origin, day_off, window)
            following = self.base.next_after(origin)
            if following is not None and found.until >= following:  # type: ignore[operator]
                return None
            at = found.until  # type: ignore[assignment]
        return Slot(at, False, origin, day_off, window)

    def next_slot(self, moment: datetime) -> Slot | None:
        """The first slot strictly after `moment`."""
        base = self.base
        origin = _latest_at_or_before(base, moment) if self._moves_later() else None
        if origin is None:
            origin = base.next_after(moment)
        for _ in range(MAX_STEPS):
            if origin is None:
                return None
            found = self.slot(origin)
            if found is not None and found.at > moment:
                return found
            origin = self._following(origin, found)
        return None

    def next_after(self, moment: datetime) -> datetime | None:
        found = self.next_slot(moment)
        return found.at if found is not None else None

    def latest_at_or_before(self, moment: datetime, since: datetime) -> datetime:
        """The latest slot in [since, moment] (`since` a slot), walked forward."""
        found = since
        for _ in range(MAX_STEPS):
            following = self.next_after(found)
            if following is None or following > moment:
                break
            found = following
        return found

    def slots(self, since: datetime, until: datetime, most: int) -> list[Slot]:
        """The slots in [since, until), at most `most`."""
        found: list[Slot] = []
        moment = since - _INSTANT
        while len(found) < most:
            following = self.next_slot(moment)
            if following is None or following.at >= until:
                break
            found.append(following)
            moment = following.at
        return found

    def _moves_later(self) -> bool:
        rules = self.rules
        return (rules.days is not None and rules.policy == NEXT_BUSINESS_DAY) or any(
            window.action != WINDOW_SKIP for window in rules.windows
        )

    def _following(self, origin: datetime, found: Slot | None) -> datetime | None:
        """The occurrence to look at after `origin`: over a run of days off that all
        coalesce into the first business day's occurrence, jump to the last of them."""
        base = self.base
        rules = self.rules
        if found is None and rules.days is not None and rules.policy == NEXT_BUSINESS_DAY:
            local = origin.astimezone(rules.zone)
            target = rules.days.business_day(local.date(), 1)
            if target is not None:
                start = _same_local_time(target, time(0), rules.zone)
                last = _latest_at_or_before(base, start - _INSTANT)
                if last is not None and last > origin:
                    return last
        return base.next_after(origin)


def _same_local_time(day: date, at: time, zone: ZoneInfo) -> datetime:
    """`at` on `day` in `zone`, in UTC (a time a clock change skips: its first pass
    after the gap, as zoneinfo reads it)."""
    return datetime.combine(day, at, tzinfo=zone).astimezone(UTC)


def jitter_delay(job_key: str, scheduled_for: datetime, jitter_seconds: int) -> timedelta:
    """The delay in [0, jitter_seconds) of a job's run for `scheduled_for`: a hash of
    both, so every scheduler process and the preview agree without telling each other.
    Millisecond steps."""
    if jitter_seconds <= 0:
        return timedelta(0)
    text = f"{job_key}/{scheduled_for.astimezone(UTC).isoformat()}".encode()
    draw = int.from_bytes(hashlib.sha256(text).digest()[:8], "big")
    return timedelta(milliseconds=draw % (jitter_seconds * 1000))
