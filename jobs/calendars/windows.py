"""Blackout windows: planned stretches of time in which occurrences do not run (they are
skipped, or deferred to the window's end).

A window is recurring (a cron expression for its start, a duration, a zone) or fixed (a
start and an end). Pure: no database; windows are half-open, [start, end).
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import NamedTuple

from jobs.schedules import arithmetic as schedules

SKIP = "skip"
DEFER = "defer"
# How far ahead two windows are compared for overlaps, and how many starts of a
# recurring window are compared with its duration.
OVERLAP_HORIZON = timedelta(days=400)
STARTS_COMPARED = 400


class WindowError(ValueError):
    """A window's rules refused (the field it is about)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Window:
    """One blackout window and what it does to an occurrence inside it."""

    __slots__ = ("_known", "action", "cron", "duration", "end", "name", "start")

    def __init__(
        self,
        name: str,
        action: str,
        *,
        cron_expression: str = "",
        zone_name: str = "UTC",
        duration: timedelta | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> None:
        self.name = name
        self.action = action
        self.cron = None
        self.duration = duration
        self.start = start
        self.end = end
        # The last answer of end_of_window_at and the stretch [low, high) it holds for:
        # a claim asks about thousands of jobs due at the same few moments.
        self._known: tuple[datetime, datetime, datetime | None] | None = None
        if cron_expression:
            if duration is None or duration <= timedelta(0):
                raise WindowError("duration_minutes", "a recurring window needs a duration")
            try:
                self.cron = schedules.CronSchedule(cron_expression, zone_name)
            except schedules.ScheduleError as error:
                raise WindowError("cron_expression", str(error)) from error
        elif start is None or end is None:
            raise WindowError("starts_at", "a window needs a cron expression or a start and an end")
        elif end <= start:
            raise WindowError("ends_at", "the end must be after the start")

    def end_of_window_at(self, moment: datetime) -> datetime | None:
        """The end of this window when `moment` is inside it, else None."""
        if self.cron is None:
            return self.end if self.start <= moment < self.end else None  # type: ignore[operator]
        known = self._known
        if known is not None and known[0] <= moment < known[1]:
            return known[2]
        duration = self.duration
        # The first start after moment - duration: the window holding `moment` if any.
        began = self.cron.next_after(moment - duration)  # type: ignore[operator]
        if began is not None and began <= moment:
            end = began + duration  # type: ignore[operator]
            self._known = (began, end, end)
            return end
        # Outside every window until the next start (`began`).
        self._known = (moment, began, None) if began is not None else None
        return None

    def spans(self, since: datetime, until: datetime) -> list[tuple[datetime, datetime]]:
        """The window's (start, end) pairs that meet [since, until), in order."""
        if self.cron is None:
            meets = self.start < until and self.end > since  # type: ignore[operator]
            return [(self.start, self.end)] if meets else []  # type: ignore[list-item]
        found = []
        at = self.cron.next_after(since - self.duration)  # type: ignore[operator]
        while at is not None and at < until and len(found) < STARTS_COMPARED:
            found.append((at, at + self.duration))  # type: ignore[operator]
            at = self.cron.next_after(at)
        return found

    def check_recurrence(self, now: datetime) -> None:
        """Raise WindowError when the window lasts as long as its recurrence or longer
        (it would never end)."""
        if self.cron is None:
            return
        spans = self.spans(now, now + OVERLAP_HORIZON)
        for (first, _), (second, _) in itertools.pairwise(spans):
            if second - first < self.duration:  # type: ignore[operator]
                raise WindowError(
                    "duration_minutes", "the window lasts longer than the time between its starts"
                )


def first_overlap(window: Window, others: list[Window], now: datetime) -> Window | None:
    """The first of `others` one of whose spans overlaps one of `window`'s within
    OVERLAP_HORIZON from `now` (a fixed window is compared where it is)."""
    since = now if window.cron is not None else min(now, window.start)  # type: ignore[type-var]
    until = now + OVERLAP_HORIZON if window.cron is not None else window.end
    if window.cron is None and window.end < now:  # type: ignore[operator]
        since = window.start  # type: ignore[assignment]
    mine = window.spans(since, until)  # type: ignore[arg-type]
    for other in others:
        theirs = other.spans(since, until)  # type: ignore[arg-type]
        for start, end in mine:
            if any(o_start < end and start < o_end for o_start, o_end in theirs):
                return other
    return None


class Deferral(NamedTuple):
    """What the windows do to a moment: nothing (window None), skip it, or defer it to
    `until` (the end of the window `window`)."""

    window: Window | None
    until: datetime | None


_INSTANT = timedelta(microseconds=1)
NO_WINDOW = Deferral(None, None)


def window_at(windows: tuple[Window, ...], moment: datetime) -> Deferral:
    """The first window `moment` is inside, and its end."""
    for window in windows:
        end = window.end_of_window_at(moment)
        if end is not None:
            return Deferral(window, end)
    return NO_WINDOW
