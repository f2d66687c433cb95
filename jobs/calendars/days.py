"""Which days count: a calendar's working weekdays, a country's public holidays (the
`holidays` library), and the dates a calendar adds off or back on.

Pure: no database. A BusinessDays answers "is this date a day off, and why" once per date
(kept in the instance), so a claim of thousands of jobs on one calendar asks the holidays
library once per calendar and day, not once per job.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from functools import lru_cache
from typing import NamedTuple

import holidays

# Monday = 0 ... Sunday = 6, as date.weekday() counts.
MONDAY_TO_FRIDAY = (0, 1, 2, 3, 4)
# A business day is searched for at most this far from a day off: a calendar with no
# business day within it moves nothing (its occurrences there are skipped, and say so).
MAX_DAYS_SEARCHED = 366


class DayOff(NamedTuple):
    """Why a date does not count: `holiday` is the holiday's name in English ("" when
    the date is off for another reason), `weekday` its weekday off, `extra` one of the
    calendar's own dates off."""

    day: date
    holiday: str
    weekday: bool
    extra: bool


class CalendarError(ValueError):
    """A calendar's rules the library or the rules refuse (the field it is about)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_region(country: str, subdivision: str) -> None:
    """Raise CalendarError when the holidays library knows no such country or
    subdivision of it ("" for none)."""
    if not country:
        if subdivision:
            raise CalendarError("subdivision", "a subdivision needs a country")
        return
    supported = holidays.list_supported_countries()
    if country not in supported:
        raise CalendarError("country", f"the holidays library knows no country {country!r}")
    if subdivision and subdivision not in supported[country]:
        raise CalendarError(
            "subdivision", f"the holidays library knows no subdivision {subdivision!r} of {country}"
        )


@lru_cache(maxsize=256)
def _holidays(country: str, subdivision: str, year: int, language: str) -> dict[date, str]:
    """A country's holidays of one year by date (kept: the library builds a year at a
    time, and the same few years are asked again and again)."""
    found = holidays.country_holidays(
        country, subdiv=subdivision or None, years=year, language=language or None
    )
    return dict(found.items())


def holiday_name(country: str, subdivision: str, day: date, language: str = "") -> str:
    """The holiday's name on `day` in `language` when the library has it ("" otherwise:
    English), "" when the date is no holiday."""
    if not country:
        return ""
    supported = _languages(country)
    chosen = next((code for code in supported if code.split("_")[0] == language), "")
    if not chosen:
        chosen = next((code for code in supported if code.startswith("en")), "")
    return _holidays(country, subdivision, day.year, chosen).get(day, "")


@lru_cache(maxsize=64)
def _languages(country: str) -> tuple[str, ...]:
    entity = holidays.country_holidays(country)
    return tuple(getattr(entity, "supported_languages", ()) or ())


class BusinessDays:
    """A calendar's rules: which dates are off, and the business day before or after one."""

    __slots__ = ("_known", "country", "extra_off", "extra_working", "subdivision", "weekdays")

    def __init__(
        self,
        weekdays: Iterable[int] = MONDAY_TO_FRIDAY,
        country: str = "",
        subdivision: str = "",
        extra_off: Iterable[date] = (),
        extra_working: Iterable[date] = (),
    ) -> None:
        self.weekdays = frozenset(weekdays)
        if not self.weekdays:
            raise CalendarError("weekdays", "at least one weekday must count")
        check_region(country, subdivision)
        self.country = country
        self.subdivision = subdivision
        self.extra_off = frozenset(extra_off)
        self.extra_working = frozenset(extra_working)
        self._known: dict[date, DayOff | None] = {}

    def day_off(self, day: date) -> DayOff | None:
        """Why `day` is off, or None for a business day (worked out once per date)."""
        known = self._known
        if day in known:
            return known[day]
        found = self._work_out(day)
        if len(known) > 4096:  # years of dates; a long-running process keeps a bounded set
            known.clear()
        known[day] = found
        return found

    def _work_out(self, day: date) -> DayOff | None:
        if day in self.extra_working:
            return None
        holiday = holiday_name(self.country, self.subdivision, day, "en")
        weekday = day.weekday() not in self.weekdays
        extra = day in self.extra_off
        if holiday or weekday or extra:
            return DayOff(day, holiday, weekday, extra)
        return None

    def days_off_from(self, day: date, count: int) -> list[DayOff]:
        """The first `count` days off from `day` on (included), looked for within
        MAX_DAYS_SEARCHED days: a calendar's preview."""
        found: list[DayOff] = []
        for offset in range(MAX_DAYS_SEARCHED):
            off = self.day_off(day + timedelta(days=offset))
            if off is not None:
                found.append(off)
                if len(found) == count:
                    break
        return found

    def business_day(self, day: date, step: int) -> date | None:
        """The first business day after (`step` 1) or before (-1) `day`; None when there
        is none within MAX_DAYS_SEARCHED days."""
        one = timedelta(days=step)
        candidate = day
        for _ in range(MAX_DAYS_SEARCHED):
            candidate += one
            if self.day_off(candidate) is None:
                return candidate
        return None
