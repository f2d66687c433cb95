"""The brute-force oracle of cron occurrences: local time walked minute by minute, the
documented rules applied directly (docs, "Cron schedules and time zones"):

- elapsed time (the minute or hour field starts with "*"): every real minute whose wall
  time the expression names;
- wall clock (otherwise): every wall minute the expression names, at its first pass when
  it happens twice, and at the first instant after the gap when it does not exist.

Slow on purpose, and independent of jobs.schedules: only cronsim's parser is shared.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim

MINUTE = timedelta(minutes=1)


class Expression:
    """What an expression names, read by cronsim's parser (its sets and its day rule),
    matched minute by minute here: nothing of the code under test."""

    def __init__(self, text: str) -> None:
        self.text = text
        sim = CronSim(text, datetime(2000, 1, 1))
        self.minutes, self.hours, self.months = sim.minutes, sim.hours, sim.months
        self.match_day = sim.match_day
        minute, hour = text.split()[:2]
        self.wall_clock = not (minute.startswith("*") or hour.startswith("*"))

    def names(self, wall: datetime) -> bool:
        return (
            wall.second == 0
            and wall.minute in self.minutes
            and wall.hour in self.hours
            and wall.month in self.months
            and self.match_day(wall.date())
        )


def exists(wall: datetime, zone: ZoneInfo) -> bool:
    aware = wall.replace(tzinfo=zone)
    return aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == wall


def oracle(
    expression: Expression,
    zone: ZoneInfo,
    start: datetime,
    end: datetime,
    margin: timedelta = timedelta(days=1),
) -> list:
    """Every occurrence in (start, end], by brute force. `margin`: more than any clock
    change between them moves the wall clock (a day, as Pacific/Apia in 2011)."""
    found: set[datetime] = set()
    if not expression.wall_clock:
        at = start.replace(second=0, microsecond=0) + MINUTE
        while at <= end:
            if expression.names(at.astimezone(zone).replace(tzinfo=None)):
                found.add(at)
            at += MINUTE
    else:
        wall = (start.astimezone(zone) - margin).replace(tzinfo=None, second=0, microsecond=0)
        last = (end.astimezone(zone) + margin).replace(tzinfo=None)
        while wall <= last:
            if expression.names(wall):
                real = wall
                while not exists(real, zone):  # in a gap: the first minute after it
                    real += MINUTE
                found.add(real.replace(tzinfo=zone, fold=0).astimezone(UTC))
            wall += MINUTE
    return sorted(at for at in found if start < at <= end)


def is_named_or_substitute(expression: Expression, zone: ZoneInfo, at: datetime) -> bool:
    """`at` shows a wall time the expression names, or (wall clock) it is the first
    instant after a gap in which the expression names a time."""
    if expression.names(at.astimezone(zone).replace(tzinfo=None)):
        return True
    if not expression.wall_clock:
        return False
    before = (at - timedelta(microseconds=1)).astimezone(zone)
    after = at.astimezone(zone)
    if after.utcoffset() <= before.utcoffset():  # type: ignore[operator]
        return False
    wall = (at + before.utcoffset()).replace(tzinfo=None)  # type: ignore[operator]
    end = after.replace(tzinfo=None)
    while wall < end:
        if expression.names(wall):
            return True
        wall += MINUTE
    return False
