"""What a calendar or a blackout window does to an occurrence, in words: in the viewer's
language for the preview and the Upcoming page (the holiday's name too, where the
holidays library has it), and in English for a run's log."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from django.utils.translation import get_language, gettext, override

from jobs.calendars.days import BusinessDays, DayOff, holiday_name
from jobs.calendars.planning import Slot


def day_off_reason(days: BusinessDays, off: DayOff) -> str:
    """Why a date is off: its holiday's name (and the country), a weekday off, or one
    of the calendar's own dates off."""
    if off.holiday:
        language = (get_language() or "en").split("-")[0]
        name = holiday_name(days.country, days.subdivision, off.day, language) or off.holiday
        region = days.country + (f"-{days.subdivision}" if days.subdivision else "")
        return gettext("%(holiday)s (%(region)s)") % {"holiday": name, "region": region}
    if off.extra:
        return gettext("a day off of the calendar")
    return gettext("a weekday off")


def slot_note(
    slot: Slot, days: BusinessDays | None, zone: ZoneInfo, shown_in: ZoneInfo | None = None
) -> str:
    """What happened to the occurrence behind `slot` ("" when nothing did): dates in the
    calendar's `zone`, a deferral's time in `shown_in` (default: the same)."""
    origin = slot.origin.astimezone(zone)
    if slot.skipped and slot.window is not None:
        return gettext("skipped: inside the window “%(name)s”") % {"name": slot.window.name}
    if slot.skipped and slot.day_off is not None and days is not None:
        return gettext("not on %(date)s: %(reason)s") % {
            "date": slot.day_off.day.isoformat(),
            "reason": day_off_reason(days, slot.day_off),
        }
    notes = []
    if slot.day_off is not None and days is not None:
        notes.append(
            gettext("moved from %(date)s (%(reason)s)")
            % {"date": origin.date().isoformat(), "reason": day_off_reason(days, slot.day_off)}
        )
    if slot.window is not None:
        notes.append(
            gettext("deferred to %(time)s by the window “%(name)s”")
            % {"time": f"{slot.at.astimezone(shown_in or zone):%H:%M}", "name": slot.window.name}
        )
    return "; ".join(notes)


def log_note(slot: Slot, days: BusinessDays | None, zone: ZoneInfo, now: datetime) -> str:
    """The line a run's log starts with, in English."""
    with override("en"):
        note = slot_note(slot, days, zone)
    return f"[{now:%Y-%m-%d %H:%M:%S} UTC] {note}.\n" if note else ""
