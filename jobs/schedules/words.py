"""A cron expression in words, for the lists: "At 02:30 every day".

The common shapes are described here in translatable words. Anything else is described
by cronsim's explain() when the language is English, and shown as the expression itself
otherwise (a half-translated sentence would be worse than the expression).
"""

from __future__ import annotations

from datetime import datetime

from cronsim import CronSim
from django.utils.dates import WEEKDAYS
from django.utils.translation import get_language, gettext

from jobs.schedules import arithmetic as schedules

# Cron numbers weekdays from Sunday (0 or 7); Django's WEEKDAYS from Monday (0).
_DAY_NUMBERS = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
_WORKING_DAYS = ("1-5", "MON-FRI")
_WEEKEND_DAYS = ("0,6", "6,0", "6,7", "SAT,SUN", "SUN,SAT")


def _number(field: str, low: int, high: int) -> int | None:
    """The field as one number in [low, high], or None when it is anything else."""
    if field.isdigit() and low <= int(field) <= high:
        return int(field)
    return None


def _weekday(field: str) -> str | None:
    day = _DAY_NUMBERS.get(field.upper())
    if day is None:
        day = _number(field, 0, 7)
    if day is None:
        return None
    return str(WEEKDAYS[(day - 1) % 7])


def _at_time(minute: int, hour: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _common_shape(fields: list[str]) -> str | None:
    minute, hour, day, month, weekday = fields
    if fields == ["*"] * 5:
        return gettext("Every minute")
    if minute.startswith("*/") and [hour, day, month, weekday] == ["*"] * 4:
        step = _number(minute[2:], 1, 59)
        if step == 1:
            return gettext("Every minute")
        if step is not None:
            return gettext("Every %(n)d minutes") % {"n": step}
        return None
    m = _number(minute, 0, 59)
    if m is None or month != "*":
        return None
    if [hour, day, weekday] == ["*"] * 3:
        return gettext("At minute %(minute)d of every hour") % {"minute": m}
    h = _number(hour, 0, 23)
    if h is None:
        return None
    time = _at_time(m, h)
    if day == "*" and weekday == "*":
        return gettext("At %(time)s every day") % {"time": time}
    if day == "*":
        if weekday.upper() in _WORKING_DAYS:
            return gettext("At %(time)s on weekdays (Monday to Friday)") % {"time": time}
        if weekday.upper() in _WEEKEND_DAYS:
            return gettext("At %(time)s on Saturdays and Sundays") % {"time": time}
        name = _weekday(weekday)
        if name is not None:
            return gettext("At %(time)s every %(weekday)s") % {"time": time, "weekday": name}
        return None
    if weekday == "*":
        if day.upper() == "L":
            return gettext("At %(time)s on the last day of every month") % {"time": time}
        d = _number(day, 1, 31)
        if d is not None:
            return gettext("At %(time)s on day %(day)d of every month") % {"time": time, "day": d}
    return None


def describe_cron(expression: str) -> str:
    """The expression in words; the expression itself when there are none."""
    fields = expression.split()
    if len(fields) != 5:
        return expression
    words = _common_shape(fields)
    if words is not None:
        return words
    if (get_language() or "en").startswith("en"):
        try:
            schedules.parse_cron(expression)
            return CronSim(expression, datetime(2000, 1, 1)).explain()
        except Exception:  # explain() is a convenience: never let it break a page
            pass
    return gettext("cron “%(expression)s”") % {"expression": " ".join(fields)}
