"""How many occurrences of a schedule fall in each bucket of a timeline, without listing
them: the Upcoming page draws density, never one mark per occurrence.

Times are whole microseconds since the epoch (UTC), so that counting is integer
arithmetic, exact like the grid itself (jobs.schedules).

- Interval schedules are a grid ``first + k * step``: a bucket's count is two ceiling
  divisions, so a job every second costs what a job every day costs.
- Cron schedules are walked with the scheduler's own CronSchedule.next_after, once per
  (expression, zone, hour) and kept (cron_times): many jobs share an expression, and a
  walk is bounded by the minutes it covers (cron has minute precision). Counting is then
  a bisection.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import pairwise

from jobs import schedules

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
MINUTE_US = 60 * 1_000_000
HOUR_US = 60 * MINUTE_US
UNIT_US: dict[str, int] = {unit: s * 1_000_000 for unit, s in schedules.UNIT_SECONDS.items()}
# Distinct (expression, zone, hour, span) walks kept. Each holds at most one value per
# minute of its span (8 bytes each: 80 kB for a week of "* * * * *").
CRON_CACHE_SIZE = 512


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


def cron_times(expression: str, zone_name: str, start: int, span: int) -> array | None:
    """Every occurrence of the cron schedule from the hour of `start` until `span` and an
    hour after it, sorted; a window of length `span` starting anywhere in that hour lies
    within. None when the expression or the zone is not valid (such a job has no
    occurrences to show)."""
    hour = start // HOUR_US
    return _cron_times(expression, zone_name, hour, span)


@lru_cache(maxsize=CRON_CACHE_SIZE)
def _cron_times(expression: str, zone_name: str, hour: int, span: int) -> array | None:
    try:
        schedule = schedules.CronSchedule(expression, zone_name)
    except schedules.ScheduleError:
        return None
    begin = hour * HOUR_US
    end = begin + HOUR_US + span
    # One occurrence per minute at most, and an hour of them more for an autumn day.
    limit = (end - begin) // MINUTE_US + 120
    times = array("q")
    at = schedule.next_after(moment(begin - 1))
    while at is not None and len(times) < limit:
        value = micros(at)
        if value >= end:
            break
        times.append(value)
        at = schedule.next_after(at)
    return times
