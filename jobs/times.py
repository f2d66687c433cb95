"""How a moment is written on the screens and in the admin: the one place that decides.

The format is the language's DATETIME_FORMAT in jobs/formats/<language>/formats.py (read
here directly, so the screens write it the same whatever the project's
FORMAT_MODULE_PATH; the standalone site points Django's admin at the same modules). A
moment is shown in the active zone (the viewer's, jobs.web.screens) and named with it:
"2026-12-01 08:30:05 JST" in a table, "2026-12-01 08:30:05 JST (Asia/Tokyo)" where the
whole of it is wanted (a tooltip, a job's own zone).
"""

from __future__ import annotations

import functools
import importlib
import re
import zoneinfo
from datetime import datetime, tzinfo

from django.utils import dateformat, timezone
from django.utils.translation import get_language

FORMATS_PACKAGE = "jobs.formats"
FALLBACK_LANGUAGE = "en"


@functools.cache
def _format_of(language: str) -> str:
    """DATETIME_FORMAT of jobs.formats.<language> ("ja-jp" reads "ja"), else English's."""
    for candidate in (language.lower().replace("-", "_"), language.split("-")[0].lower()):
        try:
            module = importlib.import_module(f"{FORMATS_PACKAGE}.{candidate}.formats")
        except ImportError:
            continue
        return module.DATETIME_FORMAT
    if language == FALLBACK_LANGUAGE:
        raise LookupError(f"{FORMATS_PACKAGE}.{FALLBACK_LANGUAGE} has no DATETIME_FORMAT")
    return _format_of(FALLBACK_LANGUAGE)


def moment_format() -> str:
    """The active language's format of a moment (Django's date format syntax)."""
    return _format_of(get_language() or FALLBACK_LANGUAGE)


def zone_name(zone: tzinfo) -> str:
    """The IANA name of a zone ("Asia/Tokyo"); str() of a zone that has none."""
    return getattr(zone, "key", None) or str(zone)


def zone_label(zone: tzinfo | None = None, at: datetime | None = None) -> str:
    """The zone named for a person: "Asia/Tokyo (JST)", "UTC"; the abbreviation as of
    `at` (now by default: "Europe/London (BST)" in summer, "(GMT)" in winter)."""
    zone = zone or timezone.get_current_timezone()
    name = zone_name(zone)
    abbreviation = (at or timezone.now()).astimezone(zone).tzname()
    return name if not abbreviation or abbreviation == name else f"{name} ({abbreviation})"


# Django's format letters that strftime writes the same (numbers, and the zone's
# abbreviation): a format of these only is written by strftime, a sixth of the time of
# Django's dateformat, which matters at a hundred moments a page.
STRFTIME_OF_LETTER = {"Y": "%Y", "m": "%m", "d": "%d", "H": "%H", "i": "%M", "s": "%S", "T": "%Z"}


@functools.cache
def _strftime_of(django_format: str) -> str | None:
    """The strftime format writing what `django_format` writes, or None when it has a
    letter strftime writes otherwise (a month's name, a backslash's escape...)."""
    parts = []
    for char in django_format:
        if char in STRFTIME_OF_LETTER:
            parts.append(STRFTIME_OF_LETTER[char])
        elif char.isalpha() or char == "\\":
            return None
        else:
            parts.append("%%" if char == "%" else char)
    return "".join(parts)


def moment_text(moment: datetime, zone: tzinfo | None = None) -> str:
    """ "2026-12-01 08:30:05 JST": `moment` in `zone` (the active one by default)."""
    local = timezone.localtime(moment, zone)
    django_format = moment_format()
    fast = _strftime_of(django_format)
    return local.strftime(fast) if fast is not None else dateformat.format(local, django_format)


def dated_moment_text(moment: datetime, zone: tzinfo, django_format: str) -> str:
    """`moment` in `zone` written with `django_format` (a preview's "D j M Y, H:i:s T"),
    its "T" the abbreviation of that very moment. Django's own "T" is empty for a wall
    time that happens twice (the first 02:30 of a clock going back); the moment's fold
    says which of the two it is."""
    local = timezone.localtime(moment, zone)
    abbreviation = "".join(f"\\{char}" for char in (local.tzname() or ""))
    escaped = re.sub(r"(?<!\\)T", lambda _match: abbreviation, django_format)
    return dateformat.format(local, escaped)


def with_zone_name(text: str, zone: tzinfo) -> str:
    """moment_text's `text` with the zone's name after it unless the abbreviation is it:
    "… JST (Asia/Tokyo)", "… UTC"."""
    name = zone_name(zone)
    return text if text.endswith(f" {name}") else f"{text} ({name})"


def full_moment_text(moment: datetime, zone: tzinfo | None = None) -> str:
    """ "2026-12-01 08:30:05 JST (Asia/Tokyo)": moment_text with the zone's name."""
    zone = zone or timezone.get_current_timezone()
    return with_zone_name(moment_text(moment, zone), zone)


def zone_named(name: str | None) -> tzinfo | None:
    """The zone called `name`, or None for a blank or unknown name."""
    if not name:
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


def same_zone(first: tzinfo, second: tzinfo) -> bool:
    return zone_name(first) == zone_name(second)
