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


# Up to this many times are listed one by one ("At :00 and :45 of every hour"); more
# are said as a step with its first and last time.
_MAX_LISTED = 4


def _list(texts: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(texts) == 1:
        return texts[0]
    return gettext("%(first)s and %(last)s") % {"first": ", ".join(texts[:-1]), "last": texts[-1]}


def _minute_step(step: int) -> str:
    """ "*/N" in the minute field, every hour. A step that does not divide 60 restarts at
    :00 each hour ("*/45" is :00 and :45, not every 45 minutes), so it is said as what it
    does."""
    if step == 1:
        return gettext("Every minute")
    if 60 % step == 0:
        return gettext("Every %(n)d minutes") % {"n": step}
    minutes = list(range(0, 60, step))
    if len(minutes) <= _MAX_LISTED:
        return gettext("At %(minutes)s of every hour") % {
            "minutes": _list([gettext(":%(minute)02d") % {"minute": m} for m in minutes])
        }
    return gettext("Every %(n)d minutes from :00 to :%(last)02d of every hour") % {
        "n": step,
        "last": minutes[-1],
    }


def _hour_step(minute: int, step: int) -> str:
    """ "M */N * * *": at minute M of every Nth hour from midnight, each day (a step that
    does not divide 24 restarts at midnight too)."""
    hours = list(range(0, 24, step))
    if len(hours) <= _MAX_LISTED:
        return gettext("At %(time)s every day") % {
            "time": _list([_at_time(minute, h) for h in hours])
        }
    return gettext("Every %(n)d hours from %(first)s to %(last)s every day") % {
        "n": step,
        "first": _at_time(minute, hours[0]),
        "last": _at_time(minute, hours[-1]),
    }


def _common_shape(fields: list[str]) -> str | None:
    minute, hour, day, month, weekday = fields
    if fields == ["*"] * 5:
        return gettext("Every minute")
    if minute.startswith("*/") and [hour, day, month, weekday] == ["*"] * 4:
        step = _number(minute[2:], 1, 59)
        return _minute_step(step) if step is not None else None
    m = _number(minute, 0, 59)
    if m is None or month != "*":
        return None
    if [hour, day, weekday] == ["*"] * 3:
        return gettext("At minute %(minute)d of every hour") % {"minute": m}
    if hour.startswith("*/") and [day, weekday] == ["*"] * 2:
        step = _number(hour[2:], 1, 23)
        if step == 1:
            return gettext("At minute %(minute)d of every hour") % {"minute": m}
        return _hour_step(m, step) if step is not None else None
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
