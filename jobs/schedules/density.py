"""How many occurrences of a schedule fall in each bucket of a timeline, without listing
them: the Upcoming page draws density, never one mark per occurrence.

Times are whole microseconds since the epoch (UTC), so that counting is integer
arithmetic, exact like the grid itself (jobs.schedules.arithmetic).

- Interval schedules are a grid ``first + k * step``: a bucket's count is two ceiling
  divisions, so a job every second costs what a job every day costs.
- Cron schedules are walked with the scheduler's own CronSchedule.next_after, once per
  (expression, zone) and kept, extended as time goes on (cron_times): many jobs share an
  expression, and a walk is bounded by the minutes it covers (cron has minute
  precision). Counting is then a bisection.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from jobs.schedules import arithmetic as schedules

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
MINUTE_US = 60 * 1_000_000
HOUR_US = 60 * MINUTE_US
UNIT_US: dict[str, int] = {unit: s * 1_000_000 for unit, s in schedules.UNIT_SECONDS.items()}
# Distinct (expression, zone) walks kept. Each holds at most one value per minute of the
# window asked for (8 bytes each: 80 kB for a week of "* * * * *").
CRON_CACHE_SIZE = 512
# A walk keeps this much of the past before it is trimmed.
KEEP_BEHIND_US = 3600 * 1_000_000


def micros(moment: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch."""
    return (moment - EPOCH) // _MICROSECOND


def moment(value: int) -> datetime:
    """The aware UTC datetime of `micros`."""
    return EPOCH + timedelta(microseconds=value)


def grid_count(first: int, step: int, low: int, high: int) -> int:
    """How many points ``first + k * step`` (k >= 0) lie in [low, high)."""
    if high <= low or high <= first:
        return 0
    if low < first:
        low = first
    # ceil((high - first) / step) - ceil((low - first) / step), in integers.
    return (first - low) // step - (first - high) // step


def grid_counts(first: int, step: int, edges: Sequence[int]) -> list[int]:
    """grid_count for each bucket [edges[i], edges[i + 1])."""
    return [grid_count(first, step, low, high) for low, high in pairwise(edges)]


def sorted_count(times: Sequence[int], low: int, high: int) -> int:
    """How many of the sorted `times` lie in [low, high)."""
    if high <= low:
        return 0
    return bisect_left(times, high) - bisect_left(times, low)


def sorted_counts(times: Sequence[int], edges: Sequence[int], since: int | None = None) -> list:
    """sorted_count for each bucket [edges[i], edges[i + 1]), leaving out times before
    `since`."""
    positions = [bisect_left(times, edge if since is None else max(edge, since)) for edge in edges]
    return [max(b - a, 0) for a, b in pairwise(positions)]


class _Walk:
    """The occurrences of one cron schedule in [start, end), sorted. Never changed in
    place once handed out: a longer or shorter walk is a new array, so a reader that
    bisects the old one twice (count = two bisections) sees a consistent list."""

    __slots__ = ("end", "schedule", "start", "times")

    def __init__(self, schedule: schedules.CronSchedule, start: int) -> None:
        self.schedule = schedule
        self.start = self.end = start
        self.times = array("q")

    def cover(self, low: int, high: int) -> array:
        if not self.start <= low <= self.end:
            # Nothing kept is of use: the clock went back (a test, a changed clock), or no
            # one asked for a while. Start again from the window.
            self.start = self.end = low
            self.times = array("q")
        if high > self.end:
            self.times = self.times + self._walk(self.end, high)
        if low - self.start > KEEP_BEHIND_US:  # time went on: drop what is long past
            self.times = self.times[bisect_left(self.times, low) :]
            self.start = low
        return self.times

    def _walk(self, begin: int, end: int) -> array:
        """Occurrences in [begin, end): one next_after per occurrence, and at most one
        per minute (cron has minute precision), plus an autumn hour's repeat."""
        limit = (end - begin) // MINUTE_US + 120
        found = array("q")
        at = self.schedule.next_after(moment(begin - 1))
        while at is not None and len(found) < limit:
            value = micros(at)
            if value >= end:
                break
            found.append(value)
            at = self.schedule.next_after(at)
        self.end = end if len(found) < limit else found[-1] + 1
        return found


_walks: OrderedDict[tuple[str, str], _Walk | None] = OrderedDict()
_walks_lock = threading.Lock()


def cron_times(expression: str, zone_name: str, low: int, high: int) -> array | None:
    """The occurrences of the cron schedule, sorted, at least those in [low, high) (the
    array may hold more on either side); None when the expression or the zone is not
    valid (such a job has no occurrences to show).

    Walks are kept per (expression, zone) and extended as time goes on: each occurrence
    is found once per process, so the next request, and the next hour, cost only the
    occurrences that are new. The first request in a process walks the whole window
    (about 1,500 steps for "* * * * *" over a day: ~20 ms).
    """
    key = (expression, zone_name)
    with _walks_lock:
        if key in _walks:
            walk = _walks[key]
            _walks.move_to_end(key)
        else:
            try:
                walk = _Walk(schedules.CronSchedule(expression, zone_name), low)
            except schedules.ScheduleError:
                walk = None
            _walks[key] = walk
            if len(_walks) > CRON_CACHE_SIZE:
                _walks.popitem(last=False)
        return None if walk is None else walk.cover(low, high)


def forget_cron_walks() -> None:
    """Drop every kept walk (a benchmark of the first request in a process)."""
    with _walks_lock:
        _walks.clear()
