"""The wall times a cron expression names: naive local minutes, no time zone.

cronsim reads the expression (its fields, `L`, `W`, `#`, and whether the two day fields
combine with "and" or "or"); this walks naive wall time to the next minute it names.
The walk jumps field by field (month, day, hour, minute) instead of ticking, so one step
costs a few set look-ups, and it never looks at a time zone: jobs.schedules maps the wall
times it finds onto real instants, clock changes included.
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import date, datetime, time, timedelta

from cronsim import CronSim

# cronsim's horizon: an expression that names no day within it names none at all (the
# rarest valid one, 29 February on a given weekday, comes every 28 years at most).
HORIZON_YEARS = 50

# Months whose days a matcher keeps (a few years' worth; a long walk starts afresh).
_MONTHS_KEPT = 120
_DAY = timedelta(days=1)
_MINUTE = timedelta(minutes=1)


def _first_of_next_month(day: date) -> date:
    return date(day.year + 1, 1, 1) if day.month == 12 else date(day.year, day.month + 1, 1)


class CronMatcher:
    """The minutes of a five-field cron expression, on a naive wall clock."""

    __slots__ = ("_days", "_hours", "_minutes", "_months", "_sim")

    def __init__(self, expression: str) -> None:
        # Raises cronsim's CronSimError for an invalid expression.
        self._sim = CronSim(expression, datetime(2000, 1, 1))
        self._minutes = tuple(sorted(self._sim.minutes))
        self._hours = tuple(sorted(self._sim.hours))
        self._months = frozenset(self._sim.months)
        # (year, month) -> the days of that month it names, worked out once per month
        # (a monthly job otherwise asks cronsim about every day on the way).
        self._days: dict[tuple[int, int], tuple[int, ...]] = {}

    def matches(self, wall: datetime) -> bool:
        """Whether the naive wall minute `wall` (seconds ignored) is one it names."""
        return (
            wall.minute in self._minutes
            and wall.hour in self._hours
            and wall.month in self._months
            and self._sim.match_day(wall.date())
        )

    def next_after(self, wall: datetime) -> datetime | None:
        """The first named wall minute strictly after the naive `wall`; None when there
        is none within HORIZON_YEARS (or before the year 9999 ends)."""
        try:
            return self._next_at_or_after(
                wall.replace(second=0, microsecond=0) + _MINUTE, wall.year + HORIZON_YEARS
            )
        except OverflowError:
            return None

    def _next_at_or_after(self, start: datetime, last_year: int) -> datetime | None:
        day, clock = start.date(), start.time()
        minutes, hours = self._minutes, self._hours
        while day.year <= last_year:
            if day.month not in self._months:
                day, clock = _first_of_next_month(day), time()
                continue
            days = self._days_of(day.year, day.month)
            day_index = bisect_left(days, day.day)
            if day_index == len(days):
                day, clock = _first_of_next_month(day), time()
                continue
            if days[day_index] != day.day:
                day, clock = day.replace(day=days[day_index]), time()
            hour_index = bisect_left(hours, clock.hour)
            if hour_index == len(hours):
                day, clock = day + _DAY, time()
                continue
            hour = hours[hour_index]
            first_minute = clock.minute if hour == clock.hour else 0
            minute_index = bisect_left(minutes, first_minute)
            if minute_index == len(minutes):
                # No minute left in this hour: the next hour the expression names.
                if hour_index + 1 == len(hours):
                    day, clock = day + _DAY, time()
                else:
                    clock = time(hours[hour_index + 1])
                continue
            return datetime.combine(day, time(hour, minutes[minute_index]))
        return None

    def _days_of(self, year: int, month: int) -> tuple[int, ...]:
        key = (year, month)
        days = self._days.get(key)
        if days is None:
            if len(self._days) >= _MONTHS_KEPT:
                self._days.clear()
            first = date(year, month, 1)
            length = (_first_of_next_month(first) - first).days
            days = tuple(
                d for d in range(1, length + 1) if self._sim.match_day(date(year, month, d))
            )
            self._days[key] = days
        return days
