"""What daylight saving does to a schedule's occurrences, in words, for the preview.

The occurrences themselves come from jobs.schedules.arithmetic (the scheduler's code);
this module only looks at them and says what happened at a clock change, by comparing
them with the wall-clock times the expression names. It describes what
CronSchedule.next_after does (docs/scheduling.md, "Cron schedules and time zones"), it
does not decide it:

- a time in a gap (clocks forward) that the wall clock moves to the end of the gap:
  "02:30 does not exist on 29 March 2026: runs at 03:00 CEST" (several such times run
  once there); the day named is the day of the times that do not exist, which is not
  the day of the gap's end when the gap crosses midnight (Asia/Pyongyang, 2018);
- a time in a gap that elapsed time leaves out (the minute or the hour field starts
  with "*"): "02:30 does not exist on 29 March 2026: no run then";
- a time that happens twice (clocks back): "02:30 happens twice on 25 October 2026:
  the first 02:30 only (CEST)", or, when both run, a note on each; asked of the
  scheduler, never assumed from the size of the change (30 minutes in
  Australia/Lord_Howe);
- an interval, which counts real time, across a change: its local times move by the
  change.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple
from zoneinfo import ZoneInfo

from cronsim import CronSim
from django.utils.formats import date_format
from django.utils.translation import gettext, ngettext, pgettext

from jobs.schedules.arithmetic import CronSchedule, first_change

_SECOND = timedelta(seconds=1)
_TICK = timedelta(microseconds=1)
# More wall-clock matches than this in one gap or repeated hour are not listed anyway.
_MAX_MATCHES = 240


class Transition(NamedTuple):
    """A change of a zone's UTC offset."""

    at: datetime  # the first instant of the new offset, UTC
    before: datetime  # the instant just before it, in the zone (old offset)
    after: datetime  # `at` in the zone (new offset)

    @property
    def shift(self) -> timedelta:
        return self.after.utcoffset() - self.before.utcoffset()  # type: ignore[operator]

    def wall_range(self) -> tuple[datetime, datetime]:
        """The naive wall-clock times [first, end) that a spring change skips or that an
        autumn change repeats."""
        old = (self.at + self.before.utcoffset()).replace(tzinfo=None)  # type: ignore[operator]
        new = (self.at + self.after.utcoffset()).replace(tzinfo=None)  # type: ignore[operator]
        return (old, new) if new > old else (new, old)


def _offset(zone: ZoneInfo, moment: datetime) -> timedelta:
    return moment.astimezone(zone).utcoffset()  # type: ignore[return-value]


def transitions_between(zone: ZoneInfo, start: datetime, end: datetime) -> list[Transition]:
    """The offset changes in (start, end], oldest first, as the scheduler finds them
    (arithmetic.first_change).

    Only looked for when the offsets at `start` and `end` differ: two changes that cancel
    out between two occurrences (a spring and an autumn between yearly ones) leave them
    on the same clock and are not reported.
    """
    if end <= start or _offset(zone, start) == _offset(zone, end):
        return []
    found: list[Transition] = []
    at = start
    while (at := first_change(zone, at, end)) is not None:  # type: ignore[assignment]
        found.append(
            Transition(at=at, before=(at - _TICK).astimezone(zone), after=at.astimezone(zone))
        )
    return found


# --- words -----------------------------------------------------------------------------


def _day(local: datetime) -> str:
    # Translatable: Japanese writes the year first.
    return date_format(local, pgettext("daylight saving day", "j F Y"))


def _time(wall: datetime) -> str:
    return wall.strftime("%H:%M")


def _times(walls: Sequence[datetime]) -> str:
    """ "02:30", "02:00 and 02:30", "02:00, 02:20 and 02:40", "02:00 to 02:59"."""
    texts = [_time(wall) for wall in walls]
    if len(texts) == 1:
        return texts[0]
    if len(texts) > 3:
        return gettext("%(first)s to %(last)s") % {"first": texts[0], "last": texts[-1]}
    return gettext("%(first)s and %(last)s") % {"first": ", ".join(texts[:-1]), "last": texts[-1]}


def _amount(shift: timedelta) -> str:
    minutes = abs(int(shift.total_seconds())) // 60
    if minutes % 60 == 0:
        return ngettext("%(n)d hour", "%(n)d hours", minutes // 60) % {"n": minutes // 60}
    return ngettext("%(n)d minute", "%(n)d minutes", minutes) % {"n": minutes}


# --- cron --------------------------------------------------------------------------------


def _wall_matches(expression: str, first: datetime, end: datetime) -> list[datetime]:
    """The naive wall-clock times in [first, end) that the expression names."""
    matches: list[datetime] = []
    for wall in CronSim(expression, first - _SECOND):
        if wall >= end or len(matches) == _MAX_MATCHES:
            break
        matches.append(wall)
    return matches


def _is_occurrence(schedule: CronSchedule, moment: datetime) -> bool:
    return schedule.next_after(moment - _TICK) == moment


def _gap_note(schedule: CronSchedule, change: Transition, following: datetime) -> str | None:
    """What a spring change did, said at `following`, the first occurrence after it."""
    gap_start, gap_end = change.wall_range()
    missing = _wall_matches(schedule.expression, gap_start, gap_end)
    if not missing:
        return None
    # The day of the times that do not exist: the gap may end on the next day.
    values = {"times": _times(missing), "day": _day(missing[0])}
    if following != change.at:
        return (
            ngettext(
                "%(times)s does not exist on %(day)s: no run then",
                "%(times)s do not exist on %(day)s: no runs then",
                len(missing),
            )
            % values
        )
    values.update(time=_time(change.after), zone=change.after.tzname())
    if _wall_matches(schedule.expression, gap_end, gap_end + _SECOND):
        # The end of the gap is a time of its own: the missing ones run with it, once.
        return (
            ngettext(
                "%(times)s does not exist on %(day)s: runs once at %(time)s %(zone)s",
                "%(times)s do not exist on %(day)s: runs once at %(time)s %(zone)s",
                len(missing),
            )
            % values
        )
    return (
        ngettext(
            "%(times)s does not exist on %(day)s: runs at %(time)s %(zone)s",
            "%(times)s do not exist on %(day)s: runs once at %(time)s %(zone)s",
            len(missing),
        )
        % values
    )


def _repeat_note(schedule: CronSchedule, moment: datetime, zone: ZoneInfo) -> str | None:
    """What an autumn change does to an occurrence whose wall-clock time happens twice."""
    local = moment.astimezone(zone)
    wall = local.replace(tzinfo=None)
    first = wall.replace(tzinfo=zone, fold=0)
    second = wall.replace(tzinfo=zone, fold=1)
    if first.utcoffset() == second.utcoffset():
        return None  # this time happens once
    values = {"time": _time(wall), "day": _day(local), "zone": local.tzname()}
    if local.utcoffset() == second.utcoffset():
        return gettext("%(time)s again on %(day)s, now in %(zone)s: the clocks went back") % values
    if _is_occurrence(schedule, second.astimezone(UTC)):
        return (
            gettext("%(time)s happens twice on %(day)s: runs at both, first in %(zone)s") % values
        )
    return gettext("%(time)s happens twice on %(day)s: the first %(time)s only (%(zone)s)") % values


def cron_notes(schedule: CronSchedule, start: datetime, occurrences: Sequence[datetime]) -> list:
    """A note (str) or None for each occurrence (aware UTC, in order, the first of them
    the first after `start`)."""
    zone = schedule.zone
    notes: list[str | None] = []
    previous = start
    for moment in occurrences:
        note = _repeat_note(schedule, moment, zone)
        if note is None:
            for change in transitions_between(zone, previous, moment):
                if change.shift > timedelta(0):
                    note = _gap_note(schedule, change, moment) or note
        notes.append(note)
        previous = moment
    return notes


# --- intervals ---------------------------------------------------------------------------


def interval_notes(zone: ZoneInfo, start: datetime, occurrences: Sequence[datetime]) -> list:
    """A note (str) or None for each occurrence of an interval schedule: at the first one
    after a clock change, that its local times move with the change."""
    notes: list[str | None] = []
    previous = start
    for moment in occurrences:
        shift = _offset(zone, moment) - _offset(zone, previous)
        changes = transitions_between(zone, previous, moment) if shift else []
        notes.append(_shift_note(changes[-1], shift) if changes else None)
        previous = moment
    return notes


def _shift_note(change: Transition, shift: timedelta) -> str:
    values = {
        "shift": _amount(shift),
        "day": _day(change.after),
        "before": change.before.tzname(),
        "after": change.after.tzname(),
    }
    if shift > timedelta(0):
        text = gettext(
            "Clocks go forward %(shift)s on %(day)s (%(before)s to %(after)s): intervals "
            "count real time, so local times are %(shift)s later from here."
        )
    else:
        text = gettext(
            "Clocks go back %(shift)s on %(day)s (%(before)s to %(after)s): intervals "
            "count real time, so local times are %(shift)s earlier from here."
        )
    return text % values
